"""The graph saved next to the index: reopened instead of rebuilt, never trusted when stale or damaged."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import pytest

from engine.api import Engine
from engine.channels.graph import GraphChannel
from engine.channels.graph.sums import decode
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


def test_a_graph_saved_with_other_words_is_rebuilt(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new relation phrase names relations the saved graph never read: an upgrade that
    changes the lexicon's words rebuilds the graph, as one that changes its format does."""
    from engine.lexicon import Lexicon

    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.origin == "saved"
    monkeypatch.setattr(Lexicon, "fingerprint", property(lambda _self: "other words"))
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.origin == "built"
        assert eng.repairs == []  # other words are not damage
        assert _graph_answers(eng) == _built_answers(eng)


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


def _edit(vault: Path) -> str:
    path = "Projects/Atlas/Offline Sync Conflicts.md"
    note = vault / path
    note.write_text(note.read_text(encoding="utf-8") + "\nReviewed with [[Marcus Chen]] and Zanzibar Quill.\n", "utf-8")
    return path


def test_an_open_reads_only_what_search_needs_and_an_edit_the_rest(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        built = _graph_answers(eng)
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph._build is None and eng._graph._writer_part is not None, "the notes' parts wait for an edit"
        assert _graph_answers(eng) == built
        assert eng._graph.count() == len(eng.notes())
        eng.reindex(embed=False)  # nothing changed: still nothing more read
        assert eng._graph._build is None
        eng.reindex([_edit(sample_copy)], embed=False)
        assert eng._graph._build is not None and eng._graph.origin == "saved", "patched, not rebuilt"
        assert _graph_answers(eng) == _built_answers(eng)


def test_damage_in_the_notes_parts_is_found_at_the_first_edit_and_rebuilt(
    sample_copy: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        built = _graph_answers(eng)
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        part, _searchable = eng._graph._writer_part  # type: ignore[misc]
        data = bytearray((index / "graph.pickle").read_bytes())
        data[part.offset + 10 : part.offset + 400] = b"\x00" * 390  # same size: only reading it tells
        (index / "graph.pickle").write_bytes(bytes(data))
        assert _graph_answers(eng) == built
        with caplog.at_level("WARNING", logger="cairn.graph"):
            eng.reindex([_edit(sample_copy)], embed=False)
        assert "saved graph unreadable" in caplog.text
        assert eng._graph.origin == "built"
        assert _graph_answers(eng) == _built_answers(eng)


def test_a_graph_saved_by_another_process_since_the_open_is_not_mixed_in(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
    reader = Engine.open(sample_copy, index_dir=index, embedder=None)
    try:
        with Engine.open(sample_copy, index_dir=index, embedder=None) as writer:
            (sample_copy / "Inbox.md").write_text("# Inbox\n\nCall [[Priya Kumar]] about Quokka Labs.\n", "utf-8")
            writer.reindex(embed=False)  # a rebuild, saved at once: the file the reader opened is gone
        reader.reindex(embed=False)  # catches up with the other process, then edits
        reader.reindex([_edit(sample_copy)], embed=False)
        assert _graph_answers(reader) == _built_answers(reader)
        assert reader._graph.recognize("Quokka Labs")
    finally:
        reader.close()


def test_the_rest_of_a_replaced_file_is_not_read(sample_copy: Path, tmp_path: Path) -> None:
    from engine.channels.graph import store

    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        generation = eng._catalog.generation
        stamp = eng._graph._stamp(generation)
    loaded = store.load(index / "graph.pickle", stamp)
    assert loaded is not None
    searchable, rest = loaded
    assert store.load_writer(rest, searchable) is not None
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        (sample_copy / "Inbox.md").write_text("# Inbox\n\nCall [[Priya Kumar]].\n", "utf-8")
        eng.reindex(embed=False)  # saves a graph with another stamp over the file
    assert store.load_writer(rest, searchable) is None


def _canonical(graph: GraphChannel) -> dict[str, object]:
    """A graph's notes' parts and sums in vertex keys (a patched graph numbers new vertices otherwise)."""
    build = graph._writer_build()
    assert build is not None
    keys = build.keys

    def pair(edge: tuple[int, int]) -> tuple[str, str]:
        a, b = keys[edge[0]], keys[edge[1]]
        return (a, b) if a < b else (b, a)

    lists = build.lists
    return {
        "parts": {path: build.parts[path] for path in build.parts},
        # An edge an edit emptied keeps its number and a sum of zeros (engine/channels/graph/sums.py).
        "units": {pair(edge): units[:4] for edge, units in build.sums.items() if any(units[:4])},
        "edges": {
            pair(lists.end(at)): (lists.weights[at], lists.relations[at]) for at in range(len(lists)) if lists.weights[at] > 0
        },
        "placed": sorted(units[4] for _edge, units in build.sums.items()) == list(range(len(lists)))
        and all(lists.end(units[4]) == edge for edge, units in build.sums.items()),
        "contexts": {pair(decode(code)): context for code, context in build.contexts.items()},
        "named": {
            pair(decode(code)): (
                keys[subject], relation, explicit, tuple((keys[s], r, e) for s, r, e in others)
            )
            for code, (subject, relation, explicit, others) in build.named.items()
        },
        "link_dirs": {(keys[a], keys[b]) for a, b in map(decode, build.link_dirs)},
        "surfaces": {key: spelled for key, spelled in build.surfaces.items() if spelled},
        "people": build.people,
    }


def _count_part_reads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every note's part unpickled from now on (one entry per part read)."""
    from engine.channels.graph import build as graph_build

    reads: list[object] = []
    unpickle = graph_build._PlainUnpickler.load

    def counted(self: pickle.Unpickler) -> object:
        reads.append(self)
        return unpickle(self)

    monkeypatch.setattr(graph_build._PlainUnpickler, "load", counted)
    return reads


def test_an_edit_of_a_saved_graph_reads_only_the_parts_it_touches(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
    reads = _count_part_reads(monkeypatch)
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        path = _edit(sample_copy)
        eng.reindex([path], embed=False)
        assert eng._graph.origin == "saved", "patched, not rebuilt"
        edited = reads.copy()
        build = eng._graph._build
        assert build is not None
        part = build.parts[path]
        related = {*part.contexts, *part.typed}  # the notes whose sentences about this one are read again
        assert 0 < len(edited) <= len(related) + 3 < len(build.parts)
        fresh = GraphChannel(eng.config.graph)
        fresh.rebuild(eng._catalog)
        assert _canonical(eng._graph) == _canonical(fresh)


def test_the_entities_of_a_notes_chunks_read_its_part_once(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index"
    path = "Projects/Atlas/Offline Sync Conflicts.md"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        built = eng._graph.chunk_entities([(path, 0), (path, 1), (path, 2)])
    assert any(built), "the note's chunks name entities"
    reads = _count_part_reads(monkeypatch)
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng._graph.chunk_entities([(path, 0), (path, 1), (path, 2), ("Missing.md", 0)]) == [*built, ()]
    assert len(reads) == 1


def test_a_save_whose_two_pickles_disagree_keeps_the_file_it_had(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rest of the graph is pickled twice (once to count its bytes, once to the file);
    were the two ever to differ, the save fails and the previous file stays whole."""
    from engine.channels.graph import store

    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
    before = (index / "graph.pickle").read_bytes()

    class _Miscount(store._ByteCount):
        def write(self, data: bytes | memoryview) -> int:
            size = super().write(data)
            self.count += 1  # one byte too many per write
            return size

    monkeypatch.setattr(store, "_ByteCount", _Miscount)
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        note = sample_copy / "Projects/Atlas/Offline Sync Conflicts.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nReviewed with Zanzibar Quill.\n", "utf-8")
        eng.reindex(["Projects/Atlas/Offline Sync Conflicts.md"], embed=False)
        graph: GraphChannel = eng._graph
        with pytest.raises(OSError, match="two different lengths"):
            graph.save()
    assert (index / "graph.pickle").read_bytes() == before
    assert not list(index.glob("graph.pickle.*.tmp"))


def test_parts_are_kept_compressed_and_a_plain_pickle_of_an_older_save_still_reads() -> None:
    from engine.channels.graph.build import _PART_FIELDS, Part, Parts

    part = Part(
        title="Atlas kickoff", aliases=("Kickoff",), person=False,
        edges={("note:a.md", "person:priya", 1): 3}, surfaces={("person:priya", "Priya"): 2},
        link_dirs=frozenset({"note:b.md"}), contexts={},
    )
    parts = Parts()
    parts["a.md"] = part
    parts.pack()
    held = parts._parts["a.md"]
    plain = pickle.dumps(tuple(getattr(part, name) for name in _PART_FIELDS), protocol=pickle.HIGHEST_PROTOCOL)
    assert isinstance(held, bytes) and held[:1] != plain[:1]  # compressed, not a pickle
    assert parts["a.md"] == part
    parts._parts["older.md"] = plain  # as a graph saved before compression holds it
    assert parts["older.md"] == part
    parts.pack()
    assert parts._parts["older.md"][:1] != plain[:1] and parts["older.md"] == part  # compressed at the next save


@pytest.mark.parametrize("collecting", [True, False])
def test_opening_an_index_runs_no_collection_and_leaves_the_collector_as_it_was(
    sample_copy: Path, tmp_path: Path, collecting: bool
) -> None:
    # Each cyclic collection while an index loads walks everything loaded so far: at
    # 10k notes they were a third of the CLI's time to its first result.
    import gc

    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    was = gc.isenabled()
    gc.set_threshold(100, 1, 1)  # a collection every hundred containers, were the collector on
    gc.callbacks.append(count)
    try:
        if not collecting:
            gc.disable()
        with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
            assert started == []
            assert gc.isenabled() is collecting
            assert eng.search("Atlas", limit=3).hits
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(700, 10, 10)
        (gc.enable if was else gc.disable)()
