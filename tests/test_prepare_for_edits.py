"""A writer that stays open builds ahead of time what its first save needs, and that save
comes out as it would have without the preparation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import engine.indexer
from engine.api import Engine
from engine.catalog import Catalog
from engine.channels.graph import store
from engine.query import Planner
from engine.vault import LinkResolver

NOTE = "Projects/Atlas/Offline Sync Conflicts.md"


class _Counted:
    """Counts the link resolvers and the graph's writable parts built while it is on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.resolvers = 0
        self.writer_parts = 0
        real_load = store.load_writer

        def resolver(*args: Any) -> LinkResolver:
            self.resolvers += 1
            return LinkResolver(*args)

        def load_writer(*args: Any) -> Any:
            self.writer_parts += 1
            return real_load(*args)

        monkeypatch.setattr(engine.indexer, "LinkResolver", resolver)
        monkeypatch.setattr(store, "load_writer", load_writer)


def _graph_answer(eng: Engine, text: str) -> object:
    graph = eng._graph
    return graph.search(Planner(recognize=graph.entity_matches).plan(text, as_you_type=False), 20)


def _edit(vault: Path) -> None:
    """A save that changes a body's words and links, not a note's names."""
    note = vault / NOTE
    note.write_text(note.read_text(encoding="utf-8") + "\nReviewed with [[Marcus Chen]] and [[Nowhere Yet]].\n", "utf-8")


def _saved(vault: Path, index: Path, *, prepare: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[_Counted, dict[str, Any]]:
    """Open the index as its writer (prepared or not), save one edit; what the save built, and what it wrote."""
    with Engine.open(vault, index_dir=index, embedder=None) as eng:
        assert eng.hold_writer()
        if prepare:
            eng.prepare_for_edits()
        counted = _Counted(monkeypatch)
        _edit(vault)
        eng.reindex([NOTE], embed=False)
        monkeypatch.undo()
        result = {
            "links": sorted(eng._catalog.link_resolutions().values(), key=str),
            "graph": [_graph_answer(eng, q) for q in ("Marcus Chen", "offline sync", "Nowhere Yet")],
            "hits": [h.path for h in eng.search("Marcus Chen offline sync", limit=10, as_you_type=False).hits],
        }
    return counted, result


@pytest.fixture
def two_indexes(sample_copy: Path, tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """Two copies of the same vault, each indexed, closed (the graph saved next to it)."""
    other = tmp_path / "other"
    other.mkdir()
    for path in sample_copy.rglob("*"):
        target = other / path.relative_to(sample_copy)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    indexes = (tmp_path / "index-a", tmp_path / "index-b")
    for vault, index in zip((sample_copy, other), indexes, strict=True):
        with Engine.open(vault, index_dir=index, embedder=None) as eng:
            eng.reindex(embed=False)
    return sample_copy, indexes[0], other, indexes[1]


def test_a_prepared_first_save_builds_nothing_and_writes_the_same(
    two_indexes: tuple[Path, Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault_a, index_a, vault_b, index_b = two_indexes
    plain, plain_result = _saved(vault_a, index_a, prepare=False, monkeypatch=monkeypatch)
    prepared, prepared_result = _saved(vault_b, index_b, prepare=True, monkeypatch=monkeypatch)
    assert (plain.resolvers, plain.writer_parts) == (1, 1), "unprepared, the first save builds both"
    assert (prepared.resolvers, prepared.writer_parts) == (0, 0), "prepared, the first save builds neither"
    assert prepared_result == plain_result
    assert "Nowhere Yet" not in str(prepared_result["links"]), "a link to no note stays unresolved"


def test_a_resolver_prepared_before_another_process_wrote_is_not_used(
    two_indexes: tuple[Path, Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, index, _other, _other_index = two_indexes
    with Engine.open(vault, index_dir=index, embedder=None) as eng:
        assert eng.hold_writer()
        eng.prepare_for_edits()
        outside = Catalog(index / "catalog.sqlite")  # another process's write, between prepare and save
        with outside.transaction() as conn:
            outside.bump_generation(conn)
        outside.close()
        counted = _Counted(monkeypatch)
        _edit(vault)
        eng.reindex([NOTE], embed=False)
        assert counted.resolvers == 1, "the catalog moved on since: the resolver is built again"


def test_a_preparation_that_fails_leaves_the_save_to_build_it(
    two_indexes: tuple[Path, Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, index, _other, _other_index = two_indexes
    failures: list[str] = []

    def broken(*_args: Any) -> LinkResolver:
        failures.append("resolver")
        raise OSError("the catalog went away for a moment")

    with Engine.open(vault, index_dir=index, embedder=None) as eng:
        assert eng.hold_writer()
        monkeypatch.setattr(engine.indexer, "LinkResolver", broken)
        eng.prepare_for_edits()  # ahead of time only: never raises
        monkeypatch.undo()
        assert failures == ["resolver"]
        _edit(vault)
        report = eng.reindex([NOTE], embed=False)
        assert report.updated == (NOTE,)
        hits = [h.path for h in eng.search("Nowhere Yet Marcus", limit=5, as_you_type=False).hits]
        assert NOTE in hits
