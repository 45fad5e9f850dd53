"""The graph channel patched after edits answers exactly like one rebuilt from the same catalog."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from vault_copy import copy_sample_vault

from engine.api import Engine
from engine.channels.graph import GraphChannel
from engine.query import Planner
from engine.tools.synth import SynthSpec, generate

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_QUERIES = [
    line.split("\t", 1)[1]
    for line in (ROOT / "tests/data/sample_queries.tsv").read_text(encoding="utf-8").splitlines()[1:]
    if "\t" in line
]


def _open(vault: Path, index_dir: Path) -> Engine:
    eng = Engine.open(vault, index_dir=index_dir, embedder=None)
    eng.reindex(embed=False)
    return eng


def _assert_same_as_rebuilt(eng: Engine, queries: list[str], paths: list[str]) -> None:
    """Search answers, recognised entities and neighbors equal a fresh build's."""
    live: GraphChannel = eng._graph
    fresh = GraphChannel(eng.config.graph)
    fresh.rebuild(eng._catalog)
    assert live.count() == fresh.count()
    assert live.entity_count() == fresh.entity_count()
    for text in queries:
        for as_you_type in (False, True):
            live_plan = Planner(recognize=live.entity_matches).plan(text, as_you_type=as_you_type)
            fresh_plan = Planner(recognize=fresh.entity_matches).plan(text, as_you_type=as_you_type)
            assert live_plan == fresh_plan, text
            assert live.search(live_plan, 20) == fresh.search(fresh_plan, 20), text
        assert live.recognize(text) == fresh.recognize(text), text
    for path in paths:
        assert live.neighbors(path) == fresh.neighbors(path), path
    # What context assembly reads: degrees and edges (an edge an edit emptied is no edge).
    live_view, fresh_view = live.view(), fresh.view()
    assert live_view is not None and fresh_view is not None
    keys = [f"note:{path}" for path in paths]
    for a in keys:
        assert live_view.entity(a) == fresh_view.entity(a), a
        for b in keys:
            assert live_view.edge(a, b) == fresh_view.edge(a, b), (a, b)


def _edit(vault: Path, path: str, old: str, new: str) -> None:
    file = vault / path
    text = file.read_text(encoding="utf-8")
    assert old in text, (path, old)
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def _append(vault: Path, path: str, text: str) -> None:
    file = vault / path
    file.write_text(file.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.fixture
def sample(tmp_path: Path) -> Iterator[tuple[Engine, Path]]:
    vault = tmp_path / "vault"
    copy_sample_vault(vault)
    eng = _open(vault, tmp_path / "index")
    yield eng, vault
    eng.close()


def test_sample_vault_edits_match_a_rebuild(sample: tuple[Engine, Path]) -> None:
    eng, vault = sample
    hana, tomasz = "People/Hana Sato.md", "People/Tomasz Nowak.md"
    queries = [*SAMPLE_QUERIES, "Quillon Varga", "who advises Hana Sato", "who knows Tomasz", "Kitsune Games"]
    paths = [hana, tomasz, "Projects/Hokkaido Pilot.md", "Glossary/CRDT.md"]
    _assert_same_as_rebuilt(eng, queries, paths)
    build = eng._graph._build

    # Body text: a new name, and a link written in a sentence that names a relation.
    _append(vault, hana, "\nHana asked Quillon Varga for advice; she invested time with [[Tomasz Nowak]] on tests.\n")
    eng.reindex([hana], embed=False)
    _assert_same_as_rebuilt(eng, queries, paths)
    assert eng._graph._build is build  # patched, not rebuilt
    assert eng._graph.recognize("Quillon Varga")

    # A link removed, and the new name gone again (its vertex and dictionary entry with it).
    _edit(vault, hana, "\nHana asked Quillon Varga for advice; she invested time with [[Tomasz Nowak]] on tests.\n", "\n")
    eng.reindex([hana], embed=False)
    _assert_same_as_rebuilt(eng, queries, paths)
    assert eng._graph._build is build
    assert not eng._graph.recognize("Quillon Varga")

    # A name written only in a heading is no name until a sentence of another note writes it:
    # then the heading's note names it too, patched, and no longer once that sentence goes.
    _append(vault, tomasz, "\n## Quillon Varga\n\nA contact from the pilot.\n")
    eng.reindex([tomasz], embed=False)
    assert not eng._graph.recognize("Quillon Varga")
    _append(vault, hana, "\nHana asked Quillon Varga for advice.\n")
    eng.reindex([hana], embed=False)
    _assert_same_as_rebuilt(eng, queries, paths)
    assert eng._graph._build is build
    assert "Quillon Varga" in {n.name for n in eng.neighbors(tomasz, limit=100)}
    _edit(vault, hana, "\nHana asked Quillon Varga for advice.\n", "\n")
    eng.reindex([hana], embed=False)
    _assert_same_as_rebuilt(eng, queries, paths)
    assert eng._graph._build is build
    assert not eng._graph.recognize("Quillon Varga")
    _edit(vault, tomasz, "\n## Quillon Varga\n\nA contact from the pilot.\n", "\n")
    eng.reindex([tomasz], embed=False)

    # Tags: a note becomes a person; two notes edited in one update.
    _edit(vault, "Glossary/CRDT.md", "# CRDT", "---\ntags: [person, glossary]\n---\n# CRDT")
    _append(vault, tomasz, "\nTomasz reviewed the [[CRDT]] notes with Kitsune Games.\n")
    eng.reindex(["Glossary/CRDT.md", tomasz], embed=False)
    _assert_same_as_rebuilt(eng, queries, paths)

    # A note added, a title renamed, a note deleted: names move, so these rebuild.
    (vault / "People/Quillon Varga.md").write_text("# Quillon Varga\n\nAdvises [[Hana Sato]].\n", encoding="utf-8")
    eng.reindex(["People/Quillon Varga.md"], embed=False)
    _assert_same_as_rebuilt(eng, queries, [*paths, "People/Quillon Varga.md"])
    _edit(vault, "People/Quillon Varga.md", "# Quillon Varga", "---\naliases: [QV]\n---\n# Quillon V. Varga")
    eng.reindex(["People/Quillon Varga.md"], embed=False)
    _assert_same_as_rebuilt(eng, [*queries, "QV"], [*paths, "People/Quillon Varga.md"])
    (vault / "People/Quillon Varga.md").unlink()
    eng.reindex(["People/Quillon Varga.md"], embed=False)
    _assert_same_as_rebuilt(eng, queries, paths)


def test_synthetic_vault_edits_match_a_rebuild(tmp_path: Path) -> None:
    synth = generate(tmp_path / "vault", SynthSpec(300, seed=5))
    vault = synth.root
    eng = _open(vault, tmp_path / "index")
    try:
        people = [Path(p).stem for p in synth.paths if p.startswith("People/")][:6]
        notes = sorted(p for p in synth.paths if not p.startswith("People/"))[:8]
        queries = [*people, *synth.projects[:6], *(f"who works with {name}" for name in people[:3])]
        paths = [*notes, *(p for p in synth.paths if p.startswith("People/"))][:14]
        assert people and synth.projects
        build = eng._graph._build
        for step, path in enumerate(notes):
            other = people[step % len(people)]
            _append(vault, path, f"\n\nDiscussed {synth.projects[step % len(synth.projects)]} with [[{other}]] today.\n")
            eng.reindex([path], embed=False)
            _assert_same_as_rebuilt(eng, queries, paths)
        assert eng._graph._build is build
        # Undo half the edits (links and mentions removed again).
        for path in notes[::2]:
            text = (vault / path).read_text(encoding="utf-8")
            (vault / path).write_text(text[: text.rindex("\n\nDiscussed")] + "\n", encoding="utf-8")
            eng.reindex([path], embed=False)
        _assert_same_as_rebuilt(eng, queries, paths)
        # Written again: the emptied edges come back under their own numbers, never twice.
        for step, path in list(enumerate(notes))[::2]:
            other = people[step % len(people)]
            _append(vault, path, f"\n\nDiscussed {synth.projects[step % len(synth.projects)]} with [[{other}]] today.\n")
            eng.reindex([path], embed=False)
        _assert_same_as_rebuilt(eng, queries, paths)
        assert eng._graph._build is build
        assert not eng._graph._snapshot.cache.graph.has_multiple()
    finally:
        eng.close()
