"""The notes' names and tags have an index of their own, added to older catalogs when it can be."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.api import Engine
from engine.catalog import Catalog

NAMES = "SELECT path, title, aliases FROM notes ORDER BY path"


def _catalog(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Ada.md").write_text("---\naliases: [Countess]\ntags: [person]\n---\n# Ada\n\nNotes.\n", "utf-8")
    (vault / "Engine.md").write_text("# Engine\n\nBy [[Ada]].\n", "utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
    return tmp_path / "index" / "catalog.sqlite"


def _drop_index(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX notes_names")
    conn.commit()
    conn.close()


def _plan(catalog: Catalog) -> str:
    return " ".join(str(row[-1]) for row in catalog._conn().execute(f"EXPLAIN QUERY PLAN {NAMES}"))


def test_an_older_catalog_gets_the_name_index_and_reads_names_from_it(tmp_path: Path) -> None:
    path = _catalog(tmp_path)
    _drop_index(path)
    catalog = Catalog(path)
    try:
        assert "COVERING INDEX notes_names" in _plan(catalog)
        assert [(n.path, n.title, n.aliases) for n in catalog.note_names()] == [
            ("Ada.md", "Ada", ("Countess",)),
            ("Engine.md", "Engine", ()),
        ]
        assert [path for path, _tags in catalog.tags_mentioning(["person"])] == ["Ada.md"]
    finally:
        catalog.close()


def test_a_catalog_another_process_is_writing_opens_without_waiting_for_the_index(tmp_path: Path) -> None:
    path = _catalog(tmp_path)
    _drop_index(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the catalog's write lock
    try:
        catalog = Catalog(path)  # would wait out the 30 s busy timeout if it insisted
        try:
            assert "notes_names" not in _plan(catalog)
            assert [n.path for n in catalog.note_names()] == ["Ada.md", "Engine.md"]
            assert catalog._conn().execute("PRAGMA busy_timeout").fetchone()[0] == 30_000  # restored
        finally:
            catalog.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    catalog = Catalog(path)  # the next process that can write adds it
    try:
        assert "COVERING INDEX notes_names" in _plan(catalog)
    finally:
        catalog.close()
