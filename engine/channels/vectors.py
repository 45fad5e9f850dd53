"""Vector channel: FAISS HNSW over chunk embeddings, best chunk per note."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.catalog import Catalog
from engine.channels.base import ChannelAnswer
from engine.config import VectorConfig
from engine.embedder import Embedder
from engine.errors import IndexCorrupt
from engine.query import Query
from engine.records import ChannelHit, ChannelName


class VectorChannel:
    """HNSW (inner product on L2-normalised rows) behind an id map of chunk ids.

    Deleted chunks become tombstones filtered at search time with an ID selector;
    the index is rebuilt from cached embeddings when tombstones pile up.
    """

    name: ChannelName = "vectors"

    def __init__(
        self, path: Path, config: VectorConfig, embedder: Embedder | None, *, dims: int = 384
    ) -> None:
        import faiss

        self._faiss: Any = faiss  # SWIG types are too loose for mypy to follow
        self._path = path
        self._config = config
        self._embedder = embedder
        self._dims = embedder.dims if embedder is not None else dims
        self._lock = threading.RLock()
        self._owners: dict[int, str] = {}
        self._tombstones: set[int] = set()
        self._unavailable_reason = "" if embedder is not None else "embedding model not loaded"
        self._index = self._load() if path.exists() else self._empty()

    def _empty(self) -> Any:
        faiss = self._faiss
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
        tomb_path = self._path.with_suffix(".tombstones.json")
        if tomb_path.exists():
            try:
                self._tombstones = set(json.loads(tomb_path.read_text()))
            except ValueError as exc:
                raise IndexCorrupt(f"vector tombstones unreadable: {exc}") from exc
        self._faiss.downcast_index(index.index).hnsw.efSearch = self._config.ef_search
        return index

    @property
    def available(self) -> bool:
        """Whether queries can be embedded."""
        return self._embedder is not None

    def attach_owners(self, owners: dict[int, str]) -> None:
        """Set the chunk id → note path map (from the catalog)."""
        with self._lock:
            self._owners = owners

    def indexed_ids(self) -> set[int]:
        """Chunk ids present and not tombstoned."""
        with self._lock:
            ids = self._faiss.vector_to_array(self._index.id_map)
            return {int(i) for i in ids} - self._tombstones

    # -- building -----------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> None:
        """Rebuild from every cached embedding of the current model."""
        if self._embedder is None:
            return
        with self._lock:
            self._index = self._empty()
            self._tombstones = set()
            self._owners = catalog.chunk_owners()
            self.add_vectors(catalog.chunk_vectors(self._embedder.model_id))

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Tombstone chunks no longer in the catalog; add cached vectors of new ones."""
        if self._embedder is None:
            return
        with self._lock:
            owners = catalog.chunk_owners()
            present = self.indexed_ids()
            gone = present - owners.keys()
            self._tombstones |= gone
            self._owners = owners
            missing = [cid for cid in owners if cid not in present]
            if missing:
                self.add_vectors(catalog.chunk_vectors(self._embedder.model_id, missing))
            total = int(self._index.ntotal)
            if total and len(self._tombstones) > self._config.tombstone_rebuild_fraction * total:
                self.rebuild(catalog)

    def add_vectors(self, rows: Iterable[tuple[int, npt.NDArray[np.float32]]]) -> int:
        """Add (chunk id, vector) rows; returns how many were added."""
        batch_ids: list[int] = []
        batch_vecs: list[npt.NDArray[np.float32]] = []
        added = 0
        with self._lock:
            for cid, vec in rows:
                batch_ids.append(cid)
                batch_vecs.append(vec)
                if len(batch_ids) >= 4096:
                    added += self._flush(batch_ids, batch_vecs)
                    batch_ids, batch_vecs = [], []
            added += self._flush(batch_ids, batch_vecs)
        return added

    def _flush(self, ids: list[int], vecs: list[npt.NDArray[np.float32]]) -> int:
        if not ids:
            return 0
        matrix = np.ascontiguousarray(np.vstack(vecs), dtype=np.float32)
        self._index.add_with_ids(matrix, np.asarray(ids, dtype=np.int64))
        self._tombstones.difference_update(ids)
        return len(ids)

    # -- searching -----------------------------------------------------------------
    def search(self, query: Query, limit: int) -> ChannelAnswer:
        """Nearest chunks to the query embedding, max-pooled per note."""
        if self._embedder is None:
            return ChannelAnswer(hits=(), status="unavailable", message=self._unavailable_reason)
        if query.is_empty:
            return ChannelAnswer(hits=())
        vector = self._embedder.embed_query(query.text).reshape(1, -1)
        with self._lock:
            total = int(self._index.ntotal)
            if total == 0:
                return ChannelAnswer(hits=(), status="degraded", message="no chunk embedded yet")
            k = min(total, max(limit * 4, 32))
            params = None
            if self._tombstones:
                selector = self._faiss.IDSelectorNot(
                    self._faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
                )
                params = self._faiss.SearchParametersHNSW(sel=selector, efSearch=max(self._config.ef_search, k))
            else:
                self._faiss.downcast_index(self._index.index).hnsw.efSearch = max(self._config.ef_search, k)
            scores, ids = self._index.search(vector, k, params=params)
            owners = self._owners
        best: dict[str, tuple[float, int]] = {}
        for score, cid in zip(scores[0], ids[0], strict=True):
            if cid < 0:
                continue
            path = owners.get(int(cid))
            if path is None:
                continue
            if path not in best or score > best[path][0]:
                best[path] = (float(score), int(cid))
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])[:limit]
        hits = tuple(
            ChannelHit(path=path, score=score, rank=rank, chunk_id=cid)
            for rank, (path, (score, cid)) in enumerate(ranked, start=1)
        )
        return ChannelAnswer(hits=hits)

    # -- lifecycle ------------------------------------------------------------------
    def save(self) -> None:
        """Write the index and tombstones atomically (write new, then rename)."""
        with self._lock:
            tmp = self._path.with_suffix(".faiss.tmp")
            self._faiss.write_index(self._index, str(tmp))
            _fsync(tmp)
            tomb_tmp = self._path.with_suffix(".tombstones.json.tmp")
            tomb_tmp.write_text(json.dumps(sorted(self._tombstones)))
            _fsync(tomb_tmp)
            os.replace(tomb_tmp, self._path.with_suffix(".tombstones.json"))
            os.replace(tmp, self._path)

    def count(self) -> int:
        """Notes with at least one live embedded chunk."""
        with self._lock:
            live = self.indexed_ids()
            return len({self._owners[c] for c in live if c in self._owners})

    def chunk_count(self) -> int:
        """Live embedded chunks."""
        with self._lock:
            return int(self._index.ntotal) - len(self._tombstones)

    def close(self) -> None:
        """Drop the in-memory index."""
        with self._lock:
            self._index = self._empty()
            self._owners = {}


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
