"""Lexical speed references for `engine bench`, run on the same vault and queries in the same run:
ripgrep (a scan of the files) and SQLite FTS5 (an inverted index with BM25 ranking)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# FTS5 answers as a search box would: the best 20 by its BM25.
_FTS_LIMIT = 20


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50 (median), p95, max and count of a list of milliseconds."""
    if not values:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0, "n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2), "max": round(ordered[-1], 2), "n": len(ordered)}


def ripgrep(vault: Path, queries: list[str]) -> dict[str, Any] | None:
    """ripgrep over the same vault: any query word, case-insensitive, matching files listed."""
    rg = shutil.which("rg")
    if rg is None:
        return None
    times: list[float] = []
    for query in queries:
        words = [w for w in query.split() if len(w) > 2] or query.split()
        command = [rg, "-l", "-i", "-F", *(arg for w in words for arg in ("-e", w)), str(vault)]
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - started) * 1000)
    return percentiles(times)


def fts5(vault: Path, queries: list[str], workdir: Path, log: Callable[[str], None]) -> dict[str, Any] | None:
    """SQLite FTS5 over the vault's notes: build time and size, the keyword queries (any word,
    BM25-ranked top 20) and every prefix of them as typed (the last word a prefix query)."""
    database = workdir / "fts5.sqlite"
    database.unlink(missing_ok=True)
    conn = sqlite3.connect(database)
    try:
        try:
            conn.execute("CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, body, tokenize='porter unicode61')")
        except sqlite3.OperationalError as exc:
            log(f"SQLite FTS5 not available ({exc}); skipping that reference")
            return None
        started = time.perf_counter()
        rows = ((str(p.relative_to(vault)), p.read_text(encoding="utf-8", errors="replace")) for p in vault.rglob("*.md"))
        with conn:
            conn.executemany("INSERT INTO notes(path, body) VALUES(?, ?)", rows)
        build_s = time.perf_counter() - started
        count = int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])

        def run(match: str) -> float:
            began = time.perf_counter()
            if match:
                conn.execute("SELECT path FROM notes WHERE notes MATCH ? ORDER BY rank LIMIT ?", (match, _FTS_LIMIT)).fetchall()
            return (time.perf_counter() - began) * 1000

        keyword = [run(fts_query(q, prefix=False)) for q in queries]
        typed = [run(fts_query(q[:end], prefix=not q[:end].endswith(" "))) for q in queries for end in range(1, len(q) + 1)]
    finally:
        conn.close()
    return {
        "notes": count,
        "build_s": round(build_s, 3),
        "bytes": os.path.getsize(database),
        "keyword_ms": percentiles(keyword),
        "as_you_type_ms": percentiles(typed),
    }


def fts_query(text: str, *, prefix: bool) -> str:
    """An FTS5 MATCH expression: any of the words (quoted), the last one a prefix when typing."""
    words = ["".join(ch for ch in word if ch.isalnum()) for word in text.split()]
    words = [w for w in words if w]
    if not words:
        return ""
    quoted = [f'"{w}"' for w in words]
    if prefix:
        quoted[-1] += "*"
    return " OR ".join(quoted)
