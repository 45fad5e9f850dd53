"""One contract, three channels: every channel builds, searches, updates and persists alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import Engine
from engine.catalog import Catalog
from engine.channels import fulltext, graph, vectors
from engine.channels.base import ChannelContext, ChannelOpener
from engine.channels.fulltext import analyze_text
from engine.config import EngineConfig
from engine.embedder import HashEmbedder
from engine.lexicon.en import ENGLISH
from engine.query import Planner

CHANNELS = ["fulltext", "vectors", "graph"]
OPENERS: dict[str, ChannelOpener] = {
    "fulltext": fulltext.open_channel,
    "vectors": vectors.open_channel,
    "graph": graph.open_channel,
}
EMBEDDER = HashEmbedder(dims=128)

NOTES = {
    "People/Quentin Marsh.md": "---\naliases: [Q]\ntags: [person]\n---\n# Quentin Marsh\n\nQuentin maintains the [[Heliograph]] relay.\n",
    "Projects/Heliograph.md": "# Heliograph\n\nThe heliograph relay flashes mirrors across the valley. Owner: [[Quentin Marsh]].\n",
    "Projects/Saltmarsh Survey.md": "# Saltmarsh Survey\n\nCounting herons and egrets along the saltmarsh with [[Wren Adeyemi]].\n",
    "People/Wren Adeyemi.md": "# Wren Adeyemi\n\nWren studies wading birds and tidal estuaries.\n",
    "Meetings/Valley Sync.md": "# Valley Sync\n\nAttendees: [[Quentin Marsh]], [[Wren Adeyemi]]\n\nWe discussed mirrors and herons.\n",
    "Inbox/Loose Thought.md": "# Loose Thought\n\nPerhaps a lighthouse would outshine the heliograph.\n",
}


@pytest.fixture
def built(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A vault of NOTES indexed once by the engine: (vault, index folder)."""
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    index = tmp_path / "idx"
    with Engine.open(vault, index_dir=index, embedder=EMBEDDER) as engine:
        engine.reindex()
    yield vault, index


class Opened:
    """One channel opened through its module's `open_channel`, as the engine opens it, with its catalog."""

    def __init__(self, index: Path, name: str) -> None:
        self.catalog = Catalog(index / "catalog.sqlite")
        context = ChannelContext(index, EngineConfig(), self.catalog, EMBEDDER, ENGLISH)
        self.channel, self.note = OPENERS[name](context)
        recognize = getattr(self.channel, "entity_matches", None)  # the graph knows the vault's names
        self.planner = Planner(ENGLISH, stem=analyze_text, recognize=recognize)

    def search(self, text: str, limit: int = 10) -> list[str]:
        answer = self.channel.search(self.planner.plan(text, as_you_type=False), limit)
        ranks = [hit.rank for hit in answer.hits]
        assert ranks == list(range(1, len(ranks) + 1)), "ranks are 1-based and consecutive"
        scores = [hit.score for hit in answer.hits]
        assert scores == sorted(scores, reverse=True), "best first"
        paths = [hit.path for hit in answer.hits]
        assert len(paths) == len(set(paths)), "one hit per note"
        assert len(paths) <= limit
        return paths

    def close(self) -> None:
        self.channel.close()
        self.catalog.close()


@pytest.fixture
def opened(built: tuple[Path, Path], request: pytest.FixtureRequest) -> Iterator[Opened]:
    _vault, index = built
    channel = Opened(index, request.param)
    yield channel
    channel.close()


@pytest.mark.parametrize("opened", CHANNELS, indirect=True)
def test_opens_what_the_engine_built_without_repairs(opened: Opened) -> None:
    assert opened.note == ""
    assert opened.channel.count() == len(NOTES)
    assert opened.channel.sync(opened.catalog, lagging=True, writable=True) == ""


@pytest.mark.parametrize("opened", CHANNELS, indirect=True)
def test_finds_a_note_by_its_name(opened: Opened) -> None:
    paths = opened.search("Heliograph")
    assert "Projects/Heliograph.md" in paths[:2]
    assert set(paths) <= set(NOTES)


@pytest.mark.parametrize("opened", CHANNELS, indirect=True)
def test_empty_query_and_limit(opened: Opened) -> None:
    assert opened.channel.search(opened.planner.plan("  ?! "), 10).hits == ()
    assert len(opened.search("Quentin Marsh heliograph herons", limit=1)) <= 1


@pytest.mark.parametrize("name", CHANNELS)
def test_update_and_remove(built: tuple[Path, Path], name: str) -> None:
    vault, index = built
    opened = Opened(index, name)
    try:
        (vault / "Inbox" / "Loose Thought.md").unlink()
        (vault / "Projects" / "Heliograph.md").write_text(
            "# Heliograph\n\nDecommissioned; replaced by the Marigold Beacon.\n", encoding="utf-8"
        )
        (vault / "Projects" / "Marigold Beacon.md").write_text("# Marigold Beacon\n\nA radio beacon.\n", encoding="utf-8")
        with Engine.open(vault, index_dir=index, embedder=EMBEDDER) as engine:
            engine.reindex()  # the catalog (and the engine's own channels) take the change
        changed = ["Projects/Heliograph.md", "Projects/Marigold Beacon.md"]
        opened.channel.reload(opened.catalog)
        opened.channel.update(opened.catalog, changed, ["Inbox/Loose Thought.md"])
        assert opened.channel.count() == len(NOTES)  # one removed, one added
        everything = opened.search("Heliograph Marigold Beacon lighthouse Loose Thought", limit=50)
        assert "Inbox/Loose Thought.md" not in everything
        assert "Projects/Marigold Beacon.md" in opened.search("Marigold Beacon")[:2]
    finally:
        opened.close()


@pytest.mark.parametrize("name", CHANNELS)
def test_survives_reopen(built: tuple[Path, Path], name: str) -> None:
    _vault, index = built
    first = Opened(index, name)
    before = first.search("Wren Adeyemi herons")
    first.channel.save()
    first.close()
    again = Opened(index, name)
    try:
        assert again.note == ""
        assert again.search("Wren Adeyemi herons") == before
    finally:
        again.close()


@pytest.mark.parametrize("opened", CHANNELS, indirect=True)
def test_rebuild_is_idempotent(opened: Opened) -> None:
    before = opened.search("mirrors valley Quentin")
    opened.channel.rebuild(opened.catalog)
    assert opened.search("mirrors valley Quentin") == before


@pytest.mark.parametrize("opened", CHANNELS, indirect=True)
def test_a_filter_keeps_only_its_candidates_and_prepare_changes_no_answer(opened: Opened) -> None:
    """Every channel answers a filtered plan inside the filter, ranked from 1, the cut after
    the filter; building the filter tables ahead (`prepare`) changes nothing."""
    from dataclasses import replace

    plan = opened.planner.plan("Quentin Marsh heliograph herons mirrors", as_you_type=False)
    unfiltered = [hit.path for hit in opened.channel.search(plan, 10).hits]
    kept = frozenset(set(NOTES) - {unfiltered[0]})  # a filter leaving out the best note: an exclusion
    before = opened.channel.search(replace(plan, candidates=kept), 2)
    opened.channel.prepare()
    after = opened.channel.search(replace(plan, candidates=kept), 2)
    assert [h.path for h in before.hits] == [h.path for h in after.hits]
    assert [h.rank for h in after.hits] == list(range(1, len(after.hits) + 1))
    assert [h.path for h in after.hits] == [p for p in unfiltered if p in kept][:2]
