"""Vector channel: FAISS HNSW over chunk embeddings, best chunk per note."""

from __future__ import annotations

import json
import os
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.catalog import Catalog
from engine.channels.base import ChannelAnswer, ChannelContext, ChannelReading
from engine.channels.numbering import PathNumbers
from engine.config import VectorConfig
from engine.embedder import Embedder
from engine.errors import IndexCorrupt
from engine.query import Query, QueryPlan, embedded_text
from engine.records import ChannelHit, ChannelName
from engine.storage import load_index_json, whole_numbers

# Rows added since the last full save go to a delta file while they are at most this
# fraction of an index of at least this many rows.
_DELTA_MIN_BASE = 4096
_DELTA_MAX_FRACTION = 0.1


@dataclass(frozen=True)
class VectorReading(ChannelReading):
    """What the vector channel read from a query beside its hits."""

    # The query's clauses it searched beside the whole query (`QueryPlan.clauses`).
    clauses: tuple[str, ...] = ()


class VectorChannel:
    """HNSW (inner product on L2-normalised rows) behind an id map of chunk ids.

    Deleted chunks become tombstones filtered at search time with an ID selector;
    the index is rebuilt from cached embeddings when tombstones pile up.
    """

    name: ChannelName = "vectors"

    def __init__(
        self, path: Path, config: VectorConfig, embedder: Embedder | None, *, dims: int = 384, writable: bool = True
    ) -> None:
        """`writable`: this process may add vectors (the index's writer), so `prepare` gives
        the loaded index room to grow (`_make_room`)."""
        self._faiss: Any = None  # SWIG types are too loose for mypy to follow
        self._writable = writable
        self._roomy = False  # `_make_room` grew the index loaded now
        self._path = path
        self._config = config
        self._embedder = embedder
        self._dims = embedder.dims if embedder is not None else dims
        self._lock = threading.RLock()
        self._owner_map: dict[int, str] = {}
        # Reads the map at its first use: a search without the model never needs it (65k
        # chunks at 10k notes: 145 ms of a CLI's cold start).
        self._owner_loader: Callable[[], dict[int, str]] | None = None
        # Chunk ids whose cached vector was looked up and not there (yet): an edit does
        # not look the whole unembedded backlog up again.
        self._uncached: set[int] = set()
        self._tombstones: set[int] = set()
        # Vectors also searched exactly, besides the HNSW graph: those added by small
        # updates since the last rebuild, and any the graph does not find for
        # themselves. HNSW's recall for a few fresh near-duplicates of existing text is
        # poor (an edited note's new chunk, cosine 0.75 to the query, was not found at
        # efSearch 2,000 among 3,300 vectors); exact search keeps every edit findable.
        # The exact list: chunk id → its row in two arrays that grow in place (an edit's
        # few rows are appended, never the 37k rows of a 50k-note vault copied again).
        self._strays: dict[int, int] = {}
        self._stray_ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._stray_vectors: npt.NDArray[np.float32] = np.zeros((0, self._dims), dtype=np.float32)
        self._unavailable_reason = "" if embedder is not None else "embedding model not loaded"
        # The file on disk (size, mtime_ns) and how many rows it holds; rows added since
        # are saved to a small delta file instead of rewriting the whole index.
        self._base_stamp: tuple[int, int] | None = None
        self._base_ntotal = 0
        self._delta_path = path.with_suffix(".delta.npz")
        # The answers of the last few searches, for as long as the index does not change:
        # while a word of fewer than four letters is typed the query's vector stays the
        # same, and so does its answer.
        self._answers: OrderedDict[tuple[str, int], ChannelAnswer] = OrderedDict()
        self._version = 0  # bumped by every change to what a search can return
        # For filtered searches, per version: the live chunks as arrays a filter is applied
        # to, and the last narrow filter's chunk ids with their vectors (the filter stays
        # while its words change).
        self._layout: _Layout | None = None
        self._filtered: tuple[int, frozenset[str], list[int], npt.NDArray[np.float32]] | None = None
        # Per version: which rows of the exact list are live (not tombstoned).
        self._stray_live: tuple[int, npt.NDArray[np.bool_]] | None = None
        self._index: Any = None
        if embedder is not None:  # without a model nothing is searched: FAISS and the file stay unread
            import faiss

            self._faiss = faiss
            self._index = self._load() if path.exists() else self._empty()

    def _empty(self) -> Any:
        faiss = self._faiss
        if self._config.storage == "fp16":  # half the bytes per vector; the same neighbours found
            hnsw = faiss.IndexHNSWSQ(
                self._dims, faiss.ScalarQuantizer.QT_fp16, self._config.hnsw_m, faiss.METRIC_INNER_PRODUCT
            )
        else:
            hnsw = faiss.IndexHNSWFlat(self._dims, self._config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = self._config.ef_construction
        hnsw.hnsw.efSearch = self._config.ef_search
        return faiss.IndexIDMap2(hnsw)

    def _load(self) -> Any:
        try:
            index = self._faiss.read_index(str(self._path))
        except RuntimeError as exc:
            raise IndexCorrupt(f"vector index unreadable: {exc}") from exc
        if index.d != self._dims:
            raise IndexCorrupt(f"vector index has {index.d} dims, model has {self._dims}")
        self._base_stamp = _stamp(self._path)
        self._base_ntotal = int(index.ntotal)
        self._apply_delta(index)
        tomb_path = self._path.with_suffix(".tombstones.json")
        if tomb_path.exists():
            try:
                self._tombstones = set(whole_numbers(load_index_json(tomb_path.read_text()), "a tombstone"))
            except (OSError, ValueError) as exc:
                raise IndexCorrupt(f"vector tombstones unreadable: {str(exc)[:200]}") from exc
        self._faiss.downcast_index(index.index).hnsw.efSearch = self._config.ef_search
        strays_path = self._path.with_suffix(".strays.json")
        if strays_path.exists():
            try:
                cids = whole_numbers(load_index_json(strays_path.read_text()), "a stray id")
                if cids:
                    matrix = np.asarray(index.reconstruct_batch(np.asarray(cids, dtype=np.int64)), dtype=np.float32)
                    self._add_strays(cids, matrix)
            except (OSError, ValueError, RuntimeError) as exc:
                raise IndexCorrupt(f"vector stray list unreadable: {str(exc)[:200]}") from exc
        elif int(index.ntotal):  # written before strays were tracked: check every vector once
            ids = self._faiss.vector_to_array(index.id_map).astype(np.int64)
            self._note_strays(index, ids, index.index.reconstruct_n(0, int(index.ntotal)))
        return index

    def _apply_delta(self, index: Any) -> None:
        """Add the rows saved after the base file was written (ignored if it belongs to another base)."""
        if not self._delta_path.exists():
            return
        try:
            with np.load(self._delta_path) as delta:
                raw_stamp, raw_ids, raw_vectors = delta["stamp"], delta["ids"], delta["vectors"]
                # What save() writes, and nothing else: whole numbers, one id per row of floats.
                if (
                    raw_stamp.shape != (2,) or raw_stamp.dtype.kind not in "iu"
                    or raw_ids.ndim != 1 or raw_ids.dtype.kind not in "iu"
                    or raw_vectors.ndim != 2 or raw_vectors.dtype.kind != "f" or len(raw_vectors) != len(raw_ids)
                ):  # fmt: skip
                    raise ValueError("arrays of another shape or kind than a delta's")
                stamp = (int(raw_stamp[0]), int(raw_stamp[1]))
                ids = np.ascontiguousarray(raw_ids, dtype=np.int64)
                vectors = np.ascontiguousarray(raw_vectors, dtype=np.float32)
                if not np.isfinite(vectors).all():
                    raise ValueError("a vector holds a number that is not finite")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise IndexCorrupt(f"vector delta unreadable: {str(exc)[:200]}") from exc
        if stamp != self._base_stamp or vectors.shape[1:] != (self._dims,):
            return  # written for an older base that a full save has since replaced
        if len(ids):
            index.add_with_ids(vectors, ids)
            self._add_strays(ids.tolist(), vectors)  # small updates since the base: searched exactly

    @property
    def available(self) -> bool:
        """Whether queries can be embedded."""
        return self._embedder is not None

    @property
    def _owners(self) -> dict[int, str]:
        """The chunk id → note path map, read from the catalog at its first use."""
        if self._owner_loader is not None:
            with self._lock:
                if self._owner_loader is not None:  # another thread may have read it meanwhile
                    self._owner_map = self._owner_loader()
                    self._owner_loader = None  # after the map: a reader never sees it empty
        return self._owner_map

    @_owners.setter
    def _owners(self, owners: dict[int, str]) -> None:
        self._owner_loader = None
        self._owner_map = owners

    def attach_owners(self, owners: dict[int, str] | Callable[[], dict[int, str]]) -> None:
        """Set the chunk id → note path map (from the catalog), or how to read it when first used."""
        with self._lock:
            if callable(owners):
                self._owner_loader, self._owner_map = owners, {}
            else:
                self._owners = owners
            self._changed()

    def refresh_owners(self, catalog: Catalog, paths: Collection[str] | None = None) -> None:
        """Re-read the chunk id → note path map: all of it, or only the chunks of the notes
        at `paths` (an edit's: a few rows, not the 330k of a 50k-note vault)."""
        with self._lock:
            if paths is None:
                self.attach_owners(catalog.chunk_owners())
            else:
                self._reread_notes(catalog, set(paths))

    def _reread_notes(self, catalog: Catalog, touched: set[str]) -> list[int]:
        """Read the chunks of the notes at `touched` again: those gone are tombstoned; returns
        the new chunk ids that have no vector in the index (the caller holds the lock)."""
        before = [cid for cid, path in self._owners.items() if path in touched]
        now = catalog.chunk_owners(touched)
        owners = {cid: path for cid, path in self._owners.items() if path not in touched}
        owners.update(now)
        present = self._present_among([*before, *now])
        self._tombstones.update(cid for cid in before if cid in present and cid not in now)
        self._uncached.difference_update(cid for cid in before if cid not in now)
        self._owners = owners
        self._changed()
        return [cid for cid in now if cid not in present]

    def sync(self, catalog: Catalog, *, lagging: bool, writable: bool) -> str:
        """Add the cached vectors the index lacks and drop those of gone chunks (a killed run).

        A reader only brings its view in step (in memory; the writer saves).
        """
        if self._embedder is None:
            return ""
        if not writable:
            self.update(catalog, (), ())
            return ""
        if not lagging and self.chunk_count() == catalog.embedded_chunk_count(self._embedder.model_id):
            self.mark_backlog()
            return ""
        before = self.chunk_count()
        self.update(catalog, (), ())
        self.save()
        if lagging and self.chunk_count() != before:
            return f"vector index caught up with the catalog ({self.chunk_count()} chunks)"
        return ""

    def reload(self, catalog: Catalog) -> None:
        """Take in the vectors another process added to the catalog since."""
        if self._embedder is not None:
            self.update(catalog, (), ())

    def mark_backlog(self) -> None:
        """Note that no chunk outside the index has a cached vector (the index is in step
        with the catalog's embeddings): an edit then looks up only its own new chunks,
        not the whole embedding backlog (tens of thousands of ids at 10k notes)."""
        with self._lock:
            present = self.indexed_ids()
            self._uncached = {cid for cid in self._owners if cid not in present}

    def _present_among(self, ids: list[int]) -> set[int]:
        """Which of `ids` are in the index and not tombstoned (the caller holds the lock)."""
        if not ids or self._index is None:
            return set()
        indexed = self._faiss.vector_to_array(self._index.id_map)
        found = np.asarray(ids, dtype=np.int64)[np.isin(np.asarray(ids, dtype=np.int64), indexed)]
        return {int(cid) for cid in found.tolist()} - self._tombstones

    def indexed_ids(self) -> set[int]:
        """Chunk ids present and not tombstoned."""
        with self._lock:
            if self._index is None:
                return set()
            ids = self._faiss.vector_to_array(self._index.id_map)
            return {int(i) for i in ids} - self._tombstones

    # -- building -----------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> None:
        """Rebuild from every cached embedding of the current model."""
        if self._embedder is None:
            return
        with self._lock:
            self._index = self._empty()
            self._roomy = False
            self._changed()
            self._base_stamp = None
            self._tombstones = set()
            self._uncached = set()
            self._clear_strays()
            self._owners = catalog.chunk_owners()
            self.add_vectors(catalog.chunk_vectors(self._embedder.model_id))

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Tombstone chunks no longer in the catalog; add cached vectors of new ones."""
        if self._embedder is None:
            return
        edit = 0 < len(changed) + len(removed) <= _EDIT_NOTES
        with self._lock:
            if edit:  # a save: only the edited notes' chunks can have come or gone
                missing = self._reread_notes(catalog, {*changed, *removed})
            else:
                owners = catalog.chunk_owners()
                present = self.indexed_ids()
                self._tombstones |= present - owners.keys()
                self._changed()
                self._owners = owners
                self._uncached &= owners.keys()
                missing = [cid for cid in owners if cid not in present]
            if changed or removed:
                # An edit: chunks already looked up without a vector are the embedding
                # backlog's (embedding adds them); only the edit's new chunks are looked up.
                missing = [cid for cid in missing if cid not in self._uncached]
            if missing:
                rows = list(catalog.chunk_vectors(self._embedder.model_id, missing))
                self.add_vectors(rows, recent=edit)
                found = {cid for cid, _vector in rows}
                self._uncached.update(cid for cid in missing if cid not in found)
            total = int(self._index.ntotal)
            if total and (
                len(self._tombstones) > self._config.tombstone_rebuild_fraction * total
                or len(self._strays) > max(_EXACT_MAX, self._config.tombstone_rebuild_fraction * total)
            ):
                self.rebuild(catalog)

    def add_vectors(self, rows: Iterable[tuple[int, npt.NDArray[np.float32]]], *, recent: bool = False) -> int:
        """Add (chunk id, vector) rows; returns how many were added.

        `recent` marks an edit's chunks: they are also searched exactly until the next
        rebuild (the graph's recall for fresh near-duplicates is poor).
        """
        batch_ids: list[int] = []
        batch_vecs: list[npt.NDArray[np.float32]] = []
        added = 0
        with self._lock:
            for cid, vec in rows:
                batch_ids.append(cid)
                batch_vecs.append(vec)
                if len(batch_ids) >= 4096:
                    added += self._flush(batch_ids, batch_vecs, recent)
                    batch_ids, batch_vecs = [], []
            added += self._flush(batch_ids, batch_vecs, recent)
        return added

    def _flush(self, ids: list[int], vecs: list[npt.NDArray[np.float32]], recent: bool) -> int:
        if not ids:
            return 0
        self._changed()
        matrix = np.ascontiguousarray(np.vstack(vecs), dtype=np.float32)
        id_array = np.asarray(ids, dtype=np.int64)
        self._index.add_with_ids(matrix, id_array)
        if recent:  # an edit's chunks: searched exactly as well
            self._add_strays(ids, matrix)
        else:
            self._note_strays(self._index, id_array, matrix)
        self._tombstones.difference_update(ids)
        self._uncached.difference_update(ids)
        return len(ids)

    def _note_strays(self, index: Any, ids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        """Search the graph for each added vector; keep the ones it does not find for exact search."""
        hnsw = self._faiss.downcast_index(index.index).hnsw
        before = hnsw.efSearch
        hnsw.efSearch = max(self._config.ef_search, _STRAY_PROBE)
        try:
            _scores, found = index.search(matrix, _STRAY_PROBE)
        finally:
            hnsw.efSearch = before
        missed = [row for row, cid in enumerate(ids.tolist()) if cid not in found[row]]
        if missed:
            self._add_strays(ids[missed].tolist(), matrix[missed])

    def _stray_arrays(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The exact list as one id array and one matrix, in row order (views: each vector
        is held once, 37k rows are 57 MB at 50k notes)."""
        count = len(self._strays)
        return self._stray_ids[:count], self._stray_vectors[:count]

    def _add_strays(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Put rows on the exact list: a chunk already on it gets its new vector in its row,
        a new one the next row. The arrays grow by an eighth (at least 1,024 rows) when
        full, so an edit appends in place and the list is copied once per eighth it grows."""
        new = [cid for cid in dict.fromkeys(int(cid) for cid in ids) if cid not in self._strays]
        needed = len(self._strays) + len(new)
        if needed > len(self._stray_ids):
            capacity = max(needed, len(self._stray_ids) + max(1024, len(self._stray_ids) // 8))
            if not self._strays and needed > 1024:  # a load's list: exactly its size until an edit grows it
                capacity = needed
            grown_ids = np.zeros(capacity, dtype=np.int64)
            grown_vectors = np.zeros((capacity, self._dims), dtype=np.float32)
            count = len(self._strays)
            grown_ids[:count] = self._stray_ids[:count]
            grown_vectors[:count] = self._stray_vectors[:count]
            self._stray_ids, self._stray_vectors = grown_ids, grown_vectors
        for cid in new:
            row = self._strays[cid] = len(self._strays)
            self._stray_ids[row] = cid
        rows = np.fromiter((self._strays[int(cid)] for cid in ids), dtype=np.int64, count=len(ids))
        self._stray_vectors[rows] = vectors

    def _clear_strays(self) -> None:
        self._strays = {}
        self._stray_ids = np.zeros(0, dtype=np.int64)
        self._stray_vectors = np.zeros((0, self._dims), dtype=np.float32)

    # -- searching -----------------------------------------------------------------
    def prepare(self) -> None:
        """Lay out the live chunks for filtered searches (about 0.25 s at 50k notes), off
        the lock: a keystroke searching meanwhile does not wait for it."""
        if self._embedder is None:
            return
        with self._lock:
            if self._writable and not self._roomy:
                self._make_room()
            if self._layout is not None and self._layout.version == self._version:
                return
            version, inputs = self._version, self._layout_inputs()
            if self._strays:
                self._stray_live_rows()
        layout = _Layout.of(version, *inputs)
        with self._lock:
            if version == self._version:  # nothing changed while it was built
                self._layout = layout

    def search(self, query: Query, limit: int) -> ChannelAnswer:
        """Nearest chunks to the query embedding, max-pooled per note; with the query's
        relative clauses (`QueryPlan.clauses`), each note at its best of the two (`_with_clauses`)."""
        if self._embedder is None:
            return ChannelAnswer(hits=(), status="unavailable", message=self._unavailable_reason)
        if query.is_empty:
            return ChannelAnswer(hits=())
        with self._lock:
            if int(self._index.ntotal) == 0:
                if not self._owners:
                    return ChannelAnswer(hits=())  # no chunks at all (an empty vault): nothing is missing
                return ChannelAnswer(hits=(), status="degraded", message="no chunk embedded yet")
        text = embedded_text(query)
        if not text:
            return ChannelAnswer(hits=())  # the first word is still being typed
        candidates = getattr(query, "candidates", None)
        if candidates is not None:
            _one_search_thread(self._faiss)
            return self._search_within(self._embedder.embed_query(text).reshape(1, -1), candidates, limit)
        answer = self._nearest(text, limit)
        clauses = query.clauses if isinstance(query, QueryPlan) else ()
        if not clauses or self._config.clause_margin >= 1 or answer.status != "ok":
            return answer
        return _with_clauses(answer, [(c, self._nearest(c, limit)) for c in clauses], self._config.clause_margin, limit)

    def _nearest(self, text: str, limit: int) -> ChannelAnswer:
        """The notes whose chunks are nearest to `text`, remembered by text (a filter's
        candidates change with the words around it: only unfiltered answers are kept)."""
        assert self._embedder is not None
        with self._lock:
            remembered = self._answers.get((text, limit))
            if remembered is not None:
                self._answers.move_to_end((text, limit))
                return remembered
        vector = self._embedder.embed_query(text).reshape(1, -1)
        _one_search_thread(self._faiss)
        with self._lock:
            total = int(self._index.ntotal)
            if total == 0:
                return ChannelAnswer(hits=(), status="degraded", message="no chunk embedded yet")
            version = self._version
            k = min(total, max(limit * 4, 32))
            while True:
                best = self._nearest_notes(vector, k)
                # Chunks of the same notes can fill the k nearest: ask for more until the
                # list holds `limit` notes or every chunk was asked for.
                if len(best) >= limit or k >= total:
                    break
                k = min(total, k * 4)
        answer = _pooled(best, limit)
        with self._lock:
            if version == self._version:  # nothing changed while it ran
                self._answers[(text, limit)] = answer
                while len(self._answers) > _ANSWERS_KEPT:
                    self._answers.popitem(last=False)
        return answer

    def _nearest_notes(self, vector: npt.NDArray[np.float32], k: int) -> dict[str, tuple[float, int]]:
        """Each note's best (score, chunk id) among the `k` nearest chunks (the caller holds the lock)."""
        params = None
        if self._tombstones:
            selector = self._faiss.IDSelectorNot(
                self._faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
            )
            params = self._faiss.SearchParametersHNSW(sel=selector, efSearch=max(self._config.ef_search, k))
        else:
            self._faiss.downcast_index(self._index.index).hnsw.efSearch = max(self._config.ef_search, k)
        scores, ids = self._index.search(vector, k, params=params)
        found = list(zip(scores[0].tolist(), ids[0].tolist(), strict=True))
        if self._strays:
            found += self._best_strays(vector[0], k, self._stray_live_rows())
            found.sort(key=lambda pair: -pair[0])
        owners = self._owners
        best: dict[str, tuple[float, int]] = {}
        for score, cid in found:
            if cid < 0:
                continue
            path = owners.get(int(cid))
            if path is None:
                continue
            if path not in best or score > best[path][0]:
                best[path] = (float(score), int(cid))
        return best

    def _search_within(self, vector: npt.NDArray[np.float32], candidates: Collection[str], limit: int) -> ChannelAnswer:
        """The nearest chunks among a filter's candidate notes: every one compared exactly
        when they are few, the graph search restricted to them when they are many."""
        with self._lock:
            cached = self._filtered
            if cached is not None and cached[0] == self._version and cached[1] == candidates:
                return self._exact_among(cached[2], cached[3], vector[0], limit)
            layout = self._live_layout()
            notes = layout.numbers.mask(candidates)
            chunk_ids = layout.ids[notes[layout.notes]]
            if not len(chunk_ids):
                return ChannelAnswer(hits=())
            if len(chunk_ids) > _EXACT_FILTERED_MAX:
                return self._search_broad(vector, chunk_ids, notes[layout.stray_notes], limit)
            # Chunks in the owner map's order, as a scan of it meets them (equal scores
            # then rank as they always did).
            ids = chunk_ids.tolist()
            matrix = self._vectors_of(ids)
            self._filtered = (self._version, frozenset(candidates), ids, matrix)
            return self._exact_among(ids, matrix, vector[0], limit)

    def _search_broad(
        self,
        vector: npt.NDArray[np.float32],
        chunk_ids: npt.NDArray[np.int64],
        stray_rows: npt.NDArray[np.bool_],
        limit: int,
    ) -> ChannelAnswer:
        """A broad filter (an exclusion, a big folder): the graph search restricted to its
        chunks by a bitmap of their ids, and the exact list's rows among them (the caller
        holds the lock)."""
        member = np.zeros(int(chunk_ids.max()) + 1, dtype=bool)
        member[chunk_ids] = True
        bitmap = np.packbits(member, bitorder="little")  # FAISS reads bit i of byte i // 8
        selector = self._faiss.IDSelectorBitmap(len(member), self._faiss.swig_ptr(bitmap))
        k = min(len(chunk_ids), max(limit * 4, 32))
        params = self._faiss.SearchParametersHNSW(sel=selector, efSearch=max(self._config.ef_search, k))
        scores, ids = self._index.search(vector, k, params=params)
        found = [(s, c) for s, c in zip(scores[0].tolist(), ids[0].tolist(), strict=True) if c >= 0]
        if self._strays:
            found += self._best_strays(vector[0], k, stray_rows & self._stray_live_rows())
        owners = self._owners
        best: dict[str, tuple[float, int]] = {}
        for score, cid in found:
            path = owners.get(cid)
            if path is not None and (path not in best or score > best[path][0]):
                best[path] = (score, cid)
        return _pooled(best, limit)

    def _best_strays(
        self, vector: npt.NDArray[np.float32], k: int, rows: npt.NDArray[np.bool_]
    ) -> list[tuple[float, int]]:
        """The `k` best (score, chunk id) of the exact list's `rows`, by exact inner
        product: a sort of k, not of the whole list (tens of thousands at 50k notes)."""
        stray_ids, stray_vectors = self._stray_arrays()
        scores = stray_vectors @ vector
        scores[~rows] = -np.inf
        top = np.argpartition(-scores, k)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.isfinite(scores[top])]
        return list(zip(scores[top].tolist(), stray_ids[top].tolist(), strict=True))

    def _stray_live_rows(self) -> npt.NDArray[np.bool_]:
        """Which rows of the exact list are not tombstoned, once per version (the caller
        holds the lock)."""
        cached = self._stray_live
        if cached is not None and cached[0] == self._version and len(cached[1]) == len(self._strays):
            return cached[1]
        stray_ids, _vectors = self._stray_arrays()
        tombstones = self._tombstones
        live = np.fromiter((cid not in tombstones for cid in stray_ids.tolist()), dtype=bool, count=len(stray_ids))
        self._stray_live = (self._version, live)
        return live

    def _exact_among(
        self, ids: list[int], matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32], limit: int
    ) -> ChannelAnswer:
        """Each note's best chunk among `ids` (rows of `matrix`) by exact inner product."""
        scores = matrix @ vector
        owners = self._owners
        best: dict[str, tuple[float, int]] = {}
        for score, cid in zip(scores.tolist(), ids, strict=True):
            path = owners[cid]
            if path not in best or score > best[path][0]:
                best[path] = (float(score), int(cid))
        return _pooled(best, limit)

    def _live_layout(self) -> _Layout:
        """The live chunks (in the index or the exact list, not tombstoned) as arrays, once
        per version: a filtered keystroke then selects its candidates' chunks with a mask,
        not a loop over every chunk (the caller holds the lock)."""
        cached = self._layout
        if cached is None or cached.version != self._version:
            cached = self._layout = _Layout.of(self._version, *self._layout_inputs())
        return cached

    def _layout_inputs(
        self,
    ) -> tuple[dict[int, str], npt.NDArray[np.int64], npt.NDArray[np.int64], frozenset[int]]:
        """What a layout is made of, as of now: the owner map (replaced, never changed in
        place), the exact list's ids, the index's ids and the tombstones (the caller holds
        the lock)."""
        stray_ids, _vectors = self._stray_arrays()
        indexed = self._faiss.vector_to_array(self._index.id_map).astype(np.int64)
        return self._owners, stray_ids, indexed, frozenset(self._tombstones)

    def _make_room(self) -> None:
        """Let the loaded index grow without copying itself at an edit (the caller holds
        the lock). FAISS keeps the HNSW index's codes and links in vectors read to their
        exact size, so the first vector an edit adds reallocates and copies each (250 MB
        of fp16 codes and 85 MB of links at 50k notes) on top of a full process: 246 MB
        more at the peak, measured. Grown by one element and back here, in the background
        pass after an open, while the process is small, each keeps the doubled capacity;
        the pages past its end are not touched until rows are added."""
        index = self._index
        self._roomy = True
        try:
            inner = self._faiss.downcast_index(index.index)
            arrays = [self._faiss.downcast_index(inner.storage).codes, inner.hnsw.neighbors, index.id_map]
        except AttributeError:  # another kind of index: it grows as FAISS grows it
            return
        for array in arrays:
            size = array.size()
            array.resize(size + 1)
            array.resize(size)

    def _vectors_of(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """The vectors of `ids`, one row each: the exact list's copy, else the index's (in one call)."""
        matrix = np.empty((len(ids), self._dims), dtype=np.float32)
        in_index = [row for row, cid in enumerate(ids) if cid not in self._strays]
        if in_index:
            wanted = np.asarray([ids[row] for row in in_index], dtype=np.int64)
            matrix[in_index] = self._index.reconstruct_batch(wanted)
        for row, cid in enumerate(ids):
            stray = self._strays.get(cid)
            if stray is not None:
                matrix[row] = self._stray_vectors[stray]
        return matrix

    def _changed(self) -> None:
        """What a search can return changed: forget the remembered answers (the caller holds the lock)."""
        self._version += 1
        self._answers.clear()

    # -- lifecycle ------------------------------------------------------------------
    def save(self) -> None:
        """Persist atomically (write new, then rename): a small delta when few rows were added."""
        with self._lock:
            if self._index is None:
                return  # vectors off in this process: the file on disk stays as it is
            total = int(self._index.ntotal)
            added = total - self._base_ntotal
            # Small indexes are cheap to rewrite; big ones get a delta for a few added rows.
            small = self._base_ntotal >= _DELTA_MIN_BASE and 0 <= added <= _DELTA_MAX_FRACTION * self._base_ntotal
            # Another process may have replaced the base file since it was loaded here.
            if self._base_stamp is not None and small and self._path.exists() and _stamp(self._path) == self._base_stamp:
                self._save_delta(added)
            else:
                self._save_full()
            live_strays = sorted(cid for cid in self._strays if cid not in self._tombstones)
            strays_tmp = self._path.with_suffix(".strays.json.tmp")
            strays_tmp.write_text(json.dumps(live_strays))
            _fsync(strays_tmp)
            os.replace(strays_tmp, self._path.with_suffix(".strays.json"))
            tomb_tmp = self._path.with_suffix(".tombstones.json.tmp")
            tomb_tmp.write_text(json.dumps(sorted(self._tombstones)))
            _fsync(tomb_tmp)
            os.replace(tomb_tmp, self._path.with_suffix(".tombstones.json"))

    def _save_full(self) -> None:
        tmp = self._path.with_suffix(".faiss.tmp")
        self._faiss.write_index(self._index, str(tmp))
        _fsync(tmp)
        os.replace(tmp, self._path)
        self._base_stamp = _stamp(self._path)
        self._base_ntotal = int(self._index.ntotal)
        self._delta_path.unlink(missing_ok=True)  # a leftover names the old base's stamp anyway

    def _save_delta(self, added: int) -> None:
        assert self._base_stamp is not None
        start = self._base_ntotal
        ids = self._faiss.vector_to_array(self._index.id_map)[start:].astype(np.int64)
        vectors = (
            self._index.index.reconstruct_n(start, added) if added else np.zeros((0, self._dims), dtype=np.float32)
        )
        tmp = self._delta_path.with_suffix(".tmp")
        with tmp.open("wb") as handle:
            np.savez(handle, stamp=np.asarray(self._base_stamp, dtype=np.int64), ids=ids, vectors=vectors)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self._delta_path)

    def count(self) -> int:
        """Notes with at least one live embedded chunk."""
        with self._lock:
            live = self.indexed_ids()
            return len({self._owners[c] for c in live if c in self._owners})

    def chunk_count(self) -> int:
        """Live embedded chunks."""
        with self._lock:
            if self._index is None:
                return 0
            return int(self._index.ntotal) - len(self._tombstones)

    def close(self) -> None:
        """Drop the in-memory index."""
        with self._lock:
            if self._index is not None:
                self._index = self._empty()
                self._roomy = False
            self._changed()
            self._owners = {}
            self._clear_strays()


# Answers remembered for repeated searches (a few keystrokes' worth).
_ANSWERS_KEPT = 32
# Query-time FAISS search runs on the calling thread alone: one HNSW query gains nothing
# from OpenMP's threads and waits for them when the cores are busy (commit a425709; its
# figures were not written down). Set per thread (OpenMP's thread count is per thread).
_SEARCH_THREADS = 1
_thread_state = threading.local()


def _one_search_thread(faiss: Any) -> None:
    """Make FAISS calls from this thread run on it alone (once per thread)."""
    if getattr(_thread_state, "omp_threads", None) != _SEARCH_THREADS:
        faiss.omp_set_num_threads(_SEARCH_THREADS)
        _thread_state.omp_threads = _SEARCH_THREADS


# A vector counts as reachable when a search for it finds it among this many.
_STRAY_PROBE = 16
# An edit's vectors are also searched exactly until the exact list outgrows
# _EXACT_MAX (or the tombstone fraction of the index) and the graph is rebuilt.
_EXACT_MAX = 4096
# An update of at most this many notes is an edit (a bigger one is a batch reindex).
_EDIT_NOTES = 64


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return (stat.st_size, stat.st_mtime_ns)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_channel(context: ChannelContext) -> tuple[VectorChannel, str]:
    """The vector channel over `<index>/vectors.faiss`; rebuilt from the cached embeddings when
    unreadable, or when the manifest says another model made it."""
    path = context.index_dir / "vectors.faiss"
    embedder = context.embedder
    model_id = embedder.model_id if embedder else ""
    note = ""
    if context.writable and path.exists():
        if embedder is not None and context.recorded_model not in ("", model_id):
            note = f"model changed from {context.recorded_model} to {model_id}; vector index rebuilt"
            path.unlink()
        elif context.discard:
            path.unlink()
    dims = embedder.dims if embedder else 384
    try:
        channel = VectorChannel(path, context.config.vectors, embedder, dims=dims, writable=context.writable)
    except IndexCorrupt as exc:
        if not context.writable:
            raise
        path.unlink(missing_ok=True)
        channel = VectorChannel(path, context.config.vectors, embedder, dims=dims, writable=context.writable)
        channel.rebuild(context.catalog)
        note = f"{exc}; rebuilt from cached embeddings"
    channel.attach_owners(context.catalog.chunk_owners)  # read when first used
    return channel, note


# Up to this many chunks, a filtered search compares every one exactly.
_EXACT_FILTERED_MAX = 8192


@dataclass(frozen=True)
class _Layout:
    """The live chunks of one version of the index, as arrays a filter is applied to.

    `ids` are in the owner map's order and `notes` holds each one's note ordinal (notes
    numbered by their first chunk); `stray_notes` is the note ordinal of each row of the
    exact list, -1 where the row has no live note.
    """

    version: int
    ids: npt.NDArray[np.int64]
    notes: npt.NDArray[np.int64]
    stray_notes: npt.NDArray[np.int64]
    numbers: PathNumbers  # note ordinals; one slot more at the end, always False, which -1 reads

    @classmethod
    def of(
        cls,
        version: int,
        owners: dict[int, str],
        stray_ids: npt.NDArray[np.int64],
        indexed: npt.NDArray[np.int64],
        tombstones: frozenset[int],
    ) -> _Layout:
        """The layout of the chunks `owners` names that are in the index or the exact list
        and not tombstoned."""
        owner_ids = np.fromiter(owners, dtype=np.int64, count=len(owners))
        present = np.isin(owner_ids, np.concatenate([indexed, stray_ids]))
        if tombstones:
            present &= ~np.isin(owner_ids, np.fromiter(tombstones, dtype=np.int64, count=len(tombstones)))
        paths = list(owners.values())
        ordinal: dict[str, int] = {}
        notes = np.fromiter(
            (ordinal.setdefault(paths[row], len(ordinal)) for row in np.flatnonzero(present).tolist()),
            dtype=np.int64,
            count=int(present.sum()),
        )
        stray_notes = np.fromiter(
            (ordinal.get(owners.get(cid, ""), -1) for cid in stray_ids.tolist()), dtype=np.int64, count=len(stray_ids)
        )
        return cls(version, owner_ids[present], notes, stray_notes, PathNumbers(ordinal, len(ordinal) + 1))


def _with_clauses(
    whole: ChannelAnswer, clauses: Sequence[tuple[str, ChannelAnswer]], margin: float, limit: int
) -> ChannelAnswer:
    """The whole question's answer with its clauses': each note at the best of its cosine
    to the question and its cosine to a clause less `margin`, with the chunk that gave it."""
    best = {hit.path: hit for hit in whole.hits}
    for clause, answer in clauses:
        for hit in answer.hits:
            score = hit.score - margin
            held = best.get(hit.path)
            if held is None or score > held.score:
                best[hit.path] = ChannelHit(path=hit.path, score=score, chunk_id=hit.chunk_id, clause=clause)
    ranked = sorted(best.values(), key=lambda hit: -hit.score)[:limit]
    hits = tuple(replace(hit, rank=rank) for rank, hit in enumerate(ranked, start=1))
    reading = VectorReading(clauses=tuple(c for c, _ in clauses))
    return ChannelAnswer(hits=hits, status=whole.status, message=whole.message, reading=reading)


def _pooled(best: dict[str, tuple[float, int]], limit: int) -> ChannelAnswer:
    """Each note's best chunk, best notes first, cut to `limit`."""
    ranked = sorted(best.items(), key=lambda kv: -kv[1][0])[:limit]
    hits = tuple(
        ChannelHit(path=path, score=score, rank=rank, chunk_id=cid)
        for rank, (path, (score, cid)) in enumerate(ranked, start=1)
    )
    return ChannelAnswer(hits=hits)
