"""Checks the crash and corruption tests share: read the catalog behind the engine's back."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def notes_with_embedded_chunks(index_dir: Path, model_id: str) -> int:
    """Notes having at least one chunk whose vector is cached, straight from the catalog file."""
    conn = sqlite3.connect(index_dir / "catalog.sqlite")
    try:
        row = conn.execute(
            "SELECT count(DISTINCT c.note_id) FROM chunks c WHERE EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.model_id=? AND e.text_sha=c.text_sha)",
            (model_id,),
        ).fetchone()
        return int(row[0])
    finally:
        conn.close()
