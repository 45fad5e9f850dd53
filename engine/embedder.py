"""Sentence embeddings with ONNX Runtime: tokenize, run, mean-pool, L2-normalise."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from engine.errors import ModelUnavailable

Vectors = npt.NDArray[np.float32]
_log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows.

    One that may run several batches at once from different threads says how many in
    an attribute `parallel_batches` (`parallel_batches_of`); without it, one at a time.
    """

    model_id: str
    dims: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed a batch of texts (one row per text)."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Embed one query, cached; returns shape (dims,)."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token count per text after truncation."""
        ...


class OnnxEmbedder:
    """all-MiniLM-L6-v2 (or any BERT-style encoder) via ONNX Runtime and `tokenizers`."""

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        model_id: str,
        dims: int,
        max_tokens: int = 256,
        threads: int = 0,
        query_cache_size: int = 256,
    ) -> None:
        """`threads` 0 runs batches one thread each, as many at once as there are cores
        (`parallel_batches`); a number runs one batch at a time on that many threads."""
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - dependency missing
            raise ModelUnavailable(f"{exc.name} is not installed (pip install onnxruntime tokenizers)") from exc
        try:
            self._session = _session(ort, model_path, batch_session_options(ort, threads or BATCH_THREADS))
            self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelUnavailable(f"could not load {model_path.name}: {exc}") from exc
        self._model_path = model_path
        self._query_session: Any = None  # query_session_options; built by prepare_queries or the first query
        self._query_session_lock = threading.Lock()
        self._preparing: threading.Thread | None = None
        self._tokenizer_path = tokenizer_path
        self._counter: Any = None  # an untruncated tokenizer for `text_tokens`, loaded when first asked
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()
        self._input_names = {node.name for node in self._session.get_inputs()}
        self.model_id = model_id
        self.dims = dims
        self.parallel_batches = batch_runs() if not threads else 1
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._cache_size = query_cache_size
        self._cache_lock = threading.Lock()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token count per text after truncation (special tokens included)."""
        encodings = self._tokenizer.encode_batch(list(texts))
        return [int(sum(e.attention_mask)) for e in encodings]

    def text_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text, whole (no truncation, no special tokens): for token budgets."""
        if self._counter is None:
            from tokenizers import Tokenizer

            self._counter = Tokenizer.from_file(str(self._tokenizer_path))
            self._counter.no_truncation()
            self._counter.no_padding()
        return [len(e.ids) for e in self._counter.encode_batch(list(texts), add_special_tokens=False)]

    def tokenize(self, texts: Sequence[str]) -> dict[str, npt.NDArray[np.int64]]:
        """The padded model inputs for a batch."""
        encodings = self._tokenizer.encode_batch(list(texts))
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        return {name: value for name, value in feeds.items() if name in self._input_names}

    def run(self, feeds: dict[str, npt.NDArray[np.int64]]) -> Vectors:
        """Run the model on prepared inputs and pool to normalised sentence vectors."""
        return self._run_on(self._session, feeds)

    def prepare_queries(self) -> threading.Thread | None:
        """Build the query session in the background (about a quarter of a second), for a
        front end that stays open: the first keystroke then finds it ready. A one-shot
        search builds it at its query instead. The thread is not a daemon: a process that
        exits meanwhile waits for it (onnxruntime aborts when torn down mid-build)."""
        if type(self).embed_query is not OnnxEmbedder.embed_query:  # a subclass embeds queries its own way
            return None
        with self._query_session_lock:
            if self._query_session is None and self._preparing is None:
                self._preparing = threading.Thread(target=self._for_queries, name="query-session")
                self._preparing.start()
            return self._preparing

    def _for_queries(self) -> Any:
        """The session that embeds queries: its own threads, so a keystroke never queues
        behind a batch of the embedding backlog."""
        with self._query_session_lock:
            if self._query_session is None:
                import onnxruntime as ort

                self._query_session = _session(ort, self._model_path, query_session_options(ort))
                _return_freed_heap()
            return self._query_session

    def _run_on(self, session: Any, feeds: dict[str, npt.NDArray[np.int64]]) -> Vectors:
        hidden: Any = session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        summed = (hidden * mask).sum(axis=1)
        counts = np.clip(mask.sum(axis=1), 1e-9, None)
        pooled = summed / counts
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed a batch, running the model on one text at a time (`unpadded_rows`)."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.concatenate([self.run(row) for row in unpadded_rows(self.tokenize(texts))])

    def embed_query(self, text: str) -> Vectors:
        """Embed one query with a small LRU cache (as-you-type repeats prefixes)."""
        with self._cache_lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        vector: Vectors = self._run_on(self._for_queries(), self.tokenize([text]))[0]
        with self._cache_lock:
            self._cache[text] = vector
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return vector


def unpadded_rows(feeds: dict[str, npt.NDArray[np.int64]]) -> Iterator[dict[str, npt.NDArray[np.int64]]]:
    """A padded batch's inputs as one run per text, each without its padding.

    The model runs faster one text at a time than on a padded batch of eight, even when the
    batch is sorted by length (issue 20's fifth round, `git show 0398263:docs/BENCHMARKS.md`),
    and a text's vector then never depends on the texts it was batched with (the int8 model
    quantises its activations per run).
    """
    mask = feeds["attention_mask"]
    for row in range(mask.shape[0]):
        keep = mask[row] != 0
        yield {name: value[row : row + 1][:, keep] for name, value in feeds.items()}


# ONNX Runtime settings, chosen by measurement on 2 cores (docs/BENCHMARKS.md, "What each part
# costs"; the runs: `git show 0398263:docs/BENCHMARKS.md`, "Embedding: the query session").
# Batches: one intra-op thread each, one batch per core at once, no spin-waiting between
# runs (one text per run is too small to split well across cores).
BATCH_THREADS = 1
BATCH_SPINNING = False
# Queries (a dozen word pieces): one thread.
QUERY_THREADS = 1


def parallel_batches_of(embedder: object) -> int:
    """How many batches an embedder may run at once (1 unless it says more)."""
    runs = getattr(embedder, "parallel_batches", 1)
    return runs if isinstance(runs, int) and runs > 1 else 1


def batch_runs() -> int:
    """How many batches to run at once: one per core this process may use (at most 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


def batch_session_options(ort: Any, threads: int = BATCH_THREADS) -> Any:
    """Session options for embedding chunks in batches: `threads` intra-op threads (0: one per
    core), the full graph optimisation, and threads that sleep between runs instead of
    spinning (between two batches the cores tokenise, store and index vectors)."""
    return _options(ort, threads, spinning=BATCH_SPINNING)


def query_session_options(ort: Any) -> Any:
    """Session options for one query while typing: a thread of its own, no spinning."""
    return _options(ort, QUERY_THREADS, spinning=False)


def _options(ort: Any, threads: int, *, spinning: bool) -> Any:
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    return options


def _return_freed_heap() -> None:
    """Hand the heap freed while a session was built back to the system (glibc keeps
    about 70 MB of it otherwise); a no-op where there is no glibc."""
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own symbols: glibc's, on Linux
    except (OSError, AttributeError, TypeError):  # not glibc (or no dlopen of the process)
        return
    trim(0)


def _session(ort: Any, model_path: Path, options: Any) -> Any:
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


def embed_in_batches(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    batch_size: int,
    on_batch: Callable[[list[int], Vectors], None],
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Embed texts in length-sorted batches, handing each batch's rows to `on_batch`.

    Sorting by length keeps padding (wasted compute) small. Returns how many texts
    were embedded before `should_stop` said to stop.
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    embedded = 0
    for start in range(0, len(order), batch_size):
        if should_stop():
            break
        indices = order[start : start + batch_size]
        vectors = embedder.embed([texts[i] for i in indices])
        on_batch(indices, vectors)
        embedded += len(indices)
    return embedded


def load_default_embedder(query_cache_size: int = 256) -> OnnxEmbedder:
    """The manifest's default model, checksum-verified: its int8 version derived on this
    machine (`models.derive`, built at the first load when the install did not), or the
    pinned weights themselves when that cannot be built (the reason is logged).

    Raises:
        ModelUnavailable: the package is missing, a checksum differs, or ONNX fails.
    """
    from models import ModelAssetError, load_spec, verify
    from models.derive import runnable

    try:
        spec = load_spec()
        verify(spec)
    except ModelAssetError as exc:
        raise ModelUnavailable(str(exc)) from exc
    chosen = runnable(spec)
    if not chosen.derived:
        _log.warning("embedding with %s", chosen.note)
    return OnnxEmbedder(
        chosen.path,
        spec.tokenizer_path,
        model_id=chosen.model_id,
        dims=spec.dims,
        max_tokens=spec.max_tokens,
        query_cache_size=query_cache_size,
    )


class HashEmbedder:
    """A deterministic stand-in embedder for tests that are about something else.

    Texts sharing words get similar vectors (hashed bag of words), so ranking
    still means something; it is never used unless a caller passes it explicitly.
    """

    def __init__(self, dims: int = 64) -> None:
        self.model_id = f"hash-bow-{dims}"
        self.dims = dims
        self.parallel_batches = 1

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Whitespace token count per text."""
        return [len(t.split()) for t in texts]

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Hashed bag-of-words rows, L2-normalised."""
        import hashlib

        rows = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
                rows[row, bucket % self.dims] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        result: Vectors = rows / np.clip(norms, 1e-12, None)
        return result

    def embed_query(self, text: str) -> Vectors:
        """One query row."""
        row: Vectors = self.embed([text])[0]
        return row
