"""A sentence-embedding ONNX model the user keeps in a local folder (`[vectors] model = "onnx:/path"`).

The folder holds the model and its Hugging Face `tokenizer.json`; everything else is
optional and read when present:

```
my-model/
  model.onnx              the model (or onnx/model.onnx, or the file cairn-model.json names)
  tokenizer.json          its tokenizer (the `tokenizers` library's format)
  cairn-model.json        optional: {"id", "dims", "pooling", "max_tokens", "query_prefix",
                          "passage_prefix", "model"}
  1_Pooling/config.json   optional (a sentence-transformers export): the pooling mode
  sentence_bert_config.json  optional: max_seq_length
```

Pooling is `mean` (as models/ does), `cls` or `max`, then L2 normalisation; a model whose
output is already one row per text (`sentence_embedding`) is only normalised. The
dimensions are read from the model's output. The model id is the folder's name (or the
manifest's `id`) and a fingerprint of the files and settings, so a changed model or
pooling is a new model to the embedding cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.embedder import OnnxEmbedder, Vectors
from engine.embedders.cache import QueryCache
from engine.errors import ModelUnavailable

__all__ = ["MANIFEST_NAME", "FolderModel", "FolderOnnxEmbedder", "load_folder_model", "read_folder"]

MANIFEST_NAME = "cairn-model.json"
_MANIFEST_KEYS = frozenset({"id", "dims", "pooling", "max_tokens", "query_prefix", "passage_prefix", "model"})
_POOLINGS = ("mean", "cls", "max")
_DEFAULT_MAX_TOKENS = 512
_LAYOUT = "a folder with model.onnx (or onnx/model.onnx) and tokenizer.json"
# The fingerprint reads the model's size and its first and last MiB, not the whole file:
# opening the index must not hash hundreds of megabytes.
_FINGERPRINT_BYTES = 1 << 20


@dataclass(frozen=True)
class FolderModel:
    """What a model folder says about its model (see the module docstring)."""

    folder: Path
    model_path: Path
    tokenizer_path: Path
    name: str
    pooling: str
    max_tokens: int
    query_prefix: str
    passage_prefix: str
    dims: int | None

    @property
    def model_id(self) -> str:
        """`onnx:<name>:<fingerprint>`: the files and every setting that changes a vector."""
        digest = hashlib.sha256()
        size = self.model_path.stat().st_size
        with self.model_path.open("rb") as handle:
            digest.update(handle.read(_FINGERPRINT_BYTES))
            if size > _FINGERPRINT_BYTES:
                handle.seek(max(_FINGERPRINT_BYTES, size - _FINGERPRINT_BYTES))
                digest.update(handle.read())
        digest.update(self.tokenizer_path.read_bytes())
        settings = [str(size), self.pooling, str(self.max_tokens), self.query_prefix, self.passage_prefix]
        digest.update("\x00".join(settings).encode("utf-8"))
        return f"onnx:{self.name}:{digest.hexdigest()[:12]}"


def read_folder(folder: Path) -> FolderModel:
    """Resolve a model folder's files and settings.

    Raises:
        ModelUnavailable: the folder, the model or the tokenizer is missing, or a
            settings file is unreadable or names an unknown setting.
    """
    if not folder.is_dir():
        raise ModelUnavailable(f"model folder {folder} does not exist (expected {_LAYOUT})")
    manifest = _json(folder / MANIFEST_NAME)
    unknown = sorted(set(manifest) - _MANIFEST_KEYS)
    if unknown:
        raise ModelUnavailable(
            f"{folder / MANIFEST_NAME}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_MANIFEST_KEYS))})"
        )
    candidates = [folder / str(manifest["model"])] if "model" in manifest else [folder / "model.onnx", folder / "onnx" / "model.onnx"]
    model_path = next((path for path in candidates if path.is_file()), None)
    if model_path is None:
        raise ModelUnavailable(f"no ONNX model in {folder} (looked for {', '.join(str(p) for p in candidates)})")
    tokenizer_path = folder / "tokenizer.json"
    if not tokenizer_path.is_file():
        raise ModelUnavailable(f"no tokenizer.json in {folder} (expected {_LAYOUT})")
    pooling = str(manifest.get("pooling") or _pooling_of(folder))
    if pooling not in _POOLINGS:
        raise ModelUnavailable(f"{folder / MANIFEST_NAME}: pooling {pooling!r} is not one of {', '.join(_POOLINGS)}")
    max_tokens = _positive(manifest.get("max_tokens", _json(folder / "sentence_bert_config.json").get("max_seq_length", _DEFAULT_MAX_TOKENS)), "max_tokens", folder)
    dims = _positive(manifest["dims"], "dims", folder) if "dims" in manifest else None
    return FolderModel(
        folder=folder,
        model_path=model_path,
        tokenizer_path=tokenizer_path,
        name=str(manifest.get("id") or folder.resolve().name),
        pooling=pooling,
        max_tokens=max_tokens,
        query_prefix=str(manifest.get("query_prefix", "")),
        passage_prefix=str(manifest.get("passage_prefix", "")),
        dims=dims,
    )


def load_folder_model(folder: Path, *, query_cache_size: int = 256) -> FolderOnnxEmbedder:
    """The embedder of a model folder, loaded and checked with one probe embedding.

    Raises:
        ModelUnavailable: see `read_folder`; also when ONNX Runtime cannot run the model
            or its output is not a sentence or token embedding.
    """
    return FolderOnnxEmbedder(read_folder(folder), query_cache_size=query_cache_size)


class FolderOnnxEmbedder(OnnxEmbedder):
    """An ONNX sentence-embedding model from a folder: its pooling, prefixes and dimensions."""

    def __init__(self, spec: FolderModel, *, query_cache_size: int = 256) -> None:
        try:
            model_id = spec.model_id
        except OSError as exc:
            raise ModelUnavailable(f"could not read {spec.model_path}: {exc}") from exc
        super().__init__(
            spec.model_path,
            spec.tokenizer_path,
            model_id=model_id,
            dims=spec.dims or 0,
            max_tokens=spec.max_tokens,
            query_cache_size=query_cache_size,
        )
        self.spec = spec
        _pad_as_trained(self._tokenizer)
        outputs = self._session.get_outputs()
        # A sentence-transformers export may give a pooled row per text; otherwise the
        # first output is one vector per token.
        pooled = [i for i, node in enumerate(outputs) if node.name == "sentence_embedding"]
        self._output = pooled[0] if pooled else 0
        self._queries = QueryCache(query_cache_size)
        try:
            probe = self.run(self.tokenize(["dimension probe"]))
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelUnavailable(f"{spec.model_path.name} did not run: {exc}") from exc
        found = int(probe.shape[-1])
        if spec.dims is not None and spec.dims != found:
            raise ModelUnavailable(f"{spec.folder / MANIFEST_NAME} says {spec.dims} dimensions, the model gives {found}")
        self.dims = found

    def run(self, feeds: dict[str, npt.NDArray[np.int64]]) -> Vectors:
        """Run the model and pool its output to L2-normalised rows, as the folder says."""
        output: Any = self._session.run(None, feeds)[self._output]
        if output.ndim == 2:
            rows = output.astype(np.float32)
        elif output.ndim == 3:
            rows = _pool(output, feeds["attention_mask"], self.spec.pooling)
        else:
            raise ModelUnavailable(f"{self.spec.model_path.name} gives a {output.ndim}-dimensional output, not embeddings")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        result: Vectors = (rows / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token count per passage after truncation, its prefix included."""
        return super().count_tokens([self.spec.passage_prefix + text for text in texts])

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed passages (with the folder's passage prefix)."""
        return super().embed([self.spec.passage_prefix + text for text in texts])

    def embed_query(self, text: str) -> Vectors:
        """Embed one query (with the folder's query prefix), cached."""
        return self._queries.get(text, self._query)

    def _query(self, text: str) -> Vectors:
        row: Vectors = super().embed([self.spec.query_prefix + text])[0]
        return row


def _pool(hidden: Any, mask: npt.NDArray[np.int64], pooling: str) -> npt.NDArray[np.float32]:
    weights = mask[..., None].astype(np.float32)
    if pooling == "cls":
        first: npt.NDArray[np.float32] = hidden[:, 0, :].astype(np.float32)
        return first
    if pooling == "max":
        masked = np.where(weights > 0, hidden, -np.inf)
        best: npt.NDArray[np.float32] = masked.max(axis=1).astype(np.float32)
        return best
    summed = (hidden * weights).sum(axis=1)
    mean: npt.NDArray[np.float32] = (summed / np.clip(weights.sum(axis=1), 1e-9, None)).astype(np.float32)
    return mean


def _pad_as_trained(tokenizer: Any) -> None:
    """Pad with the tokenizer's own pad token (XLM-R's is `<pad>`, id 1, not BERT's `[PAD]`, id 0)."""
    for token in ("[PAD]", "<pad>", "<PAD>"):
        token_id = tokenizer.token_to_id(token)
        if token_id is not None:
            tokenizer.enable_padding(pad_id=int(token_id), pad_token=token)
            return


def _pooling_of(folder: Path) -> str:
    """The pooling a sentence-transformers export names in 1_Pooling/config.json (mean if none)."""
    config = _json(folder / "1_Pooling" / "config.json")
    if config.get("pooling_mode_cls_token"):
        return "cls"
    if config.get("pooling_mode_max_tokens"):
        return "max"
    return "mean"


def _json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelUnavailable(f"{path} is unreadable: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelUnavailable(f"{path} should hold a JSON object")
    return data


def _positive(value: Any, key: str, folder: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelUnavailable(f"{folder}: {key} must be a whole number of at least 1, not {value!r}")
    return value
