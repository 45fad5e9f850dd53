"""`engine bench --fill-vectors`: a full-size vector index without embedding the whole vault.

The chunks the model did not embed get deterministic stand-in vectors, stored in the
catalog's embedding cache under the model's id and added to the index by the engine's
own path (a reindex takes cached vectors in), so keystrokes, cold open, memory and the
index size are measured against an index of the vault's full size. Each stand-in is a
vector the model did make, moved by seeded noise (cosine about 0.75 to it): the index
holds clusters as real embeddings do, not uniform noise, which HNSW searches unlike
anything a vault produces. Search results over stand-ins mean nothing; only their cost
is measured, and the bench reports how many vectors were stand-ins.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

# Norm of the noise added to a real vector (before normalising again): cosine ~0.75.
_NOISE_NORM = 0.9
_STORE_BATCH = 4096
# Real vectors sampled as the centres the stand-ins scatter around.
_MAX_CENTRES = 8192


def fill_vectors(engine: Any, index_dir: Path, model_id: str, dims: int) -> dict[str, Any]:
    """Give every chunk text without a cached vector a stand-in; returns counts and timings."""
    from engine.catalog import Catalog

    catalog = Catalog(index_dir / "catalog.sqlite")
    try:
        missing = [text.sha for text in catalog.embedding_backlog(model_id)]
        centres = _centres(catalog, model_id, dims)
        started = time.perf_counter()
        for start in range(0, len(missing), _STORE_BATCH):
            shas = missing[start : start + _STORE_BATCH]
            catalog.store_embeddings(model_id, [(sha, stand_in(sha, centres)) for sha in shas])
        stored_s = time.perf_counter() - started
    finally:
        catalog.close()
    started = time.perf_counter()
    engine.reindex(embed=False)  # the vector channel takes the cached vectors in, as after a rebuild
    added_s = time.perf_counter() - started
    return {
        "filled_texts": len(missing),
        "centres": len(centres),
        "store_s": round(stored_s, 3),
        "index_add_s": round(added_s, 3),
    }


def stand_in(sha: str, centres: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The deterministic stand-in vector of one chunk text (seeded by its sha)."""
    rng = np.random.default_rng(int(sha[:16], 16))
    dims = centres.shape[1]
    noise: npt.NDArray[np.float32] = np.asarray(rng.standard_normal(dims), dtype=np.float32)
    noise *= _NOISE_NORM / max(float(np.linalg.norm(noise)), 1e-12)
    row: npt.NDArray[np.float32] = centres[int(rng.integers(len(centres)))] + noise
    row /= max(float(np.linalg.norm(row)), 1e-12)
    return row.astype(np.float32)


def _centres(catalog: Any, model_id: str, dims: int) -> npt.NDArray[np.float32]:
    """Real vectors to scatter around (the origin when the model embedded nothing)."""
    rows = []
    for _cid, vector in catalog.chunk_vectors(model_id):
        rows.append(vector)
        if len(rows) >= _MAX_CENTRES:
            break
    if rows:
        return np.vstack(rows).astype(np.float32)
    return np.zeros((1, dims), dtype=np.float32)  # nothing to scatter around: uniform on the sphere
