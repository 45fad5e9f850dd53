"""The embedding cache's layout: compact on disk, and an older catalog's vectors carried over."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from engine.catalog import SCHEMA_VERSION, Catalog


def _vectors(count: int, dims: int = 384) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(3)
    return [(f"{i:064x}", rng.standard_normal(dims).astype(np.float32)) for i in range(count)]


def test_vectors_take_little_more_than_their_bytes(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite")
    rows = _vectors(2000)
    catalog.store_embeddings("model", rows)
    catalog.close()
    conn = sqlite3.connect(tmp_path / "catalog.sqlite")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE '%embeddings%'").fetchone()[0]
    finally:
        conn.close()
    per_vector = pages / len(rows)
    assert per_vector < 2.3 * 1536, f"{per_vector:.0f} bytes per 1,536-byte vector"


def test_a_schema_1_catalog_keeps_its_vectors(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    rows = _vectors(50)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE embeddings (
            model_id TEXT NOT NULL, text_sha TEXT NOT NULL, vector BLOB NOT NULL,
            PRIMARY KEY (model_id, text_sha)
        ) WITHOUT ROWID;
        """
    )
    conn.executemany("INSERT INTO embeddings VALUES ('model', ?, ?)", [(sha, vec.tobytes()) for sha, vec in rows])
    conn.commit()
    conn.close()

    catalog = Catalog(path)
    try:
        assert catalog.get_meta("schema_version") == str(SCHEMA_VERSION) == "2"
        sql = catalog._conn().execute("SELECT sql FROM sqlite_master WHERE name='embeddings'").fetchone()[0]
        assert "WITHOUT ROWID" not in sql
        stored = dict(catalog._conn().execute("SELECT text_sha, vector FROM embeddings WHERE model_id='model'"))
        assert len(stored) == len(rows)
        for sha, vector in rows:
            assert np.frombuffer(stored[sha], dtype=np.float32).tolist() == vector.tolist()
        catalog.store_embeddings("model", rows[:3])  # replacing a cached vector keeps one row per text
        assert catalog._conn().execute("SELECT count(*) FROM embeddings").fetchone()[0] == len(rows)
    finally:
        catalog.close()
    assert Catalog(path).get_meta("schema_version") == "2", "opening again migrates nothing"
