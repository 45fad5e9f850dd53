"""The graph saved next to the index: reopened instead of rebuilt, never trusted when stale or damaged."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

from engine.api import Engine
from engine.channels.graph import GraphChannel
from engine.query import Planner, QueryPlan

QUERIES = ["who attended the Atlas kickoff", "SQLCipher", "Priya", "offline sync", "Beacon roadmap"]


def _plan(graph: GraphChannel, text: str) -> QueryPlan:
    """A query's plan with the entities this graph knows."""
    return Planner(recognize=graph.entity_matches).plan(text, as_you_type=False)


def _graph_answers(eng: Engine) -> list[object]:
    graph: GraphChannel = eng._graph
    return [graph.search(_plan(graph, q), 20) for q in QUERIES]


def _built_answers(eng: Engine) -> list[object]:
    fresh = GraphChannel(eng.config.graph)
    fresh.rebuild(eng._catalog)
    return [fresh.search(_plan(fresh, q), 20) for q in QUERIES]


def test_reopen_loads_the_saved_graph(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        built = _graph_answers(eng)
    assert (index / "graph.pickle").is_file()
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.origin == "saved"
        assert eng.repairs == []
        assert _graph_answers(eng) == built


def test_incremental_edits_are_saved_at_close(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        note = sample_copy / "Projects/Atlas/Offline Sync Conflicts.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nReviewed with [[Marcus Chen]] and Zanzibar Quill.\n", "utf-8")
        eng.reindex(["Projects/Atlas/Offline Sync Conflicts.md"], embed=False)
        assert eng._graph.origin == "built"  # patched in memory, not rebuilt
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.origin == "saved"
        assert _graph_answers(eng) == _built_answers(eng)
        assert any("Zanzibar Quill" in surface for surface, _ in eng._graph.recognize("Zanzibar Quill"))


def test_a_stale_saved_graph_is_rebuilt(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
    old = tmp_path / "old.pickle"
    shutil.copy(index / "graph.pickle", old)
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        (sample_copy / "Inbox.md").write_text("# Inbox\n\nCall [[Priya Kumar]] about Quokka Labs.\n", "utf-8")
        eng.reindex(embed=False)
    os.replace(old, index / "graph.pickle")  # as if the process was killed before saving
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.origin == "built"
        assert eng.repairs == []  # out of date is normal, not damage
        assert _graph_answers(eng) == _built_answers(eng)
        assert eng._graph.recognize("Quokka Labs")


def test_a_damaged_saved_graph_is_reported_and_rebuilt(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        built = _graph_answers(eng)
    saved = index / "graph.pickle"
    saved.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.origin == "built"
        assert any("saved graph unreadable" in r for r in eng.repairs)
        assert _graph_answers(eng) == built
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.origin == "saved"  # the repaired graph was written back at close


class _Exploit:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (os.mkdir, (str(self.marker),))


def test_a_saved_graph_cannot_run_code(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
    marker = tmp_path / "pwned"
    (index / "graph.pickle").write_bytes(pickle.dumps(_Exploit(marker)))
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert not marker.exists()
        assert any("does not belong in a saved graph" in r for r in eng.repairs)
        assert eng._graph.origin == "built"
