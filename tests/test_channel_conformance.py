"""One contract, three channels: every channel builds, searches, updates and persists alike."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.api import Engine
from engine.channels.base import Channel
from engine.embedder import HashEmbedder
from engine.query import QueryPlan

CHANNELS = ["fulltext", "vectors", "graph"]

NOTES = {
    "People/Quentin Marsh.md": "---\naliases: [Q]\ntags: [person]\n---\n# Quentin Marsh\n\nQuentin maintains the [[Heliograph]] relay.\n",
    "Projects/Heliograph.md": "# Heliograph\n\nThe heliograph relay flashes mirrors across the valley. Owner: [[Quentin Marsh]].\n",
    "Projects/Saltmarsh Survey.md": "# Saltmarsh Survey\n\nCounting herons and egrets along the saltmarsh with [[Wren Adeyemi]].\n",
    "People/Wren Adeyemi.md": "# Wren Adeyemi\n\nWren studies wading birds and tidal estuaries.\n",
    "Meetings/Valley Sync.md": "# Valley Sync\n\nAttendees: [[Quentin Marsh]], [[Wren Adeyemi]]\n\nWe discussed mirrors and herons.\n",
    "Inbox/Loose Thought.md": "# Loose Thought\n\nPerhaps a lighthouse would outshine the heliograph.\n",
}


@pytest.fixture
def built(tmp_path: Path) -> Iterator[tuple[Engine, Path]]:
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    engine = Engine.open(vault, index_dir=tmp_path / "idx", embedder=HashEmbedder(dims=128))
    engine.reindex()
    yield engine, vault
    engine.close()


def channel_of(engine: Engine, name: str) -> Channel:
    global PLANNER
    PLANNER = lambda text: engine.plan(text, as_you_type=False)  # noqa: E731
    return engine._searcher._channels[name]  # type: ignore[return-value]


PLANNER: Callable[[str], QueryPlan]


def search(channel: Channel, text: str, limit: int = 10) -> list[str]:
    answer = channel.search(PLANNER(text), limit)
    ranks = [hit.rank for hit in answer.hits]
    assert ranks == list(range(1, len(ranks) + 1)), "ranks are 1-based and consecutive"
    scores = [hit.score for hit in answer.hits]
    assert scores == sorted(scores, reverse=True), "best first"
    paths = [hit.path for hit in answer.hits]
    assert len(paths) == len(set(paths)), "one hit per note"
    assert len(paths) <= limit
    return paths


@pytest.mark.parametrize("name", CHANNELS)
def test_builds_every_note(built: tuple[Engine, Path], name: str) -> None:
    engine, _ = built
    assert channel_of(engine, name).count() == len(NOTES)


@pytest.mark.parametrize("name", CHANNELS)
def test_finds_a_note_by_its_name(built: tuple[Engine, Path], name: str) -> None:
    engine, _ = built
    paths = search(channel_of(engine, name), "Heliograph")
    assert "Projects/Heliograph.md" in paths[:2]
    assert set(paths) <= set(NOTES)


@pytest.mark.parametrize("name", CHANNELS)
def test_empty_query_and_limit(built: tuple[Engine, Path], name: str) -> None:
    engine, _ = built
    channel = channel_of(engine, name)
    assert channel.search(PLANNER("  ?! "), 10).hits == ()
    assert len(search(channel, "Quentin Marsh heliograph herons", limit=1)) <= 1


@pytest.mark.parametrize("name", CHANNELS)
def test_update_and_remove(built: tuple[Engine, Path], name: str) -> None:
    engine, vault = built
    channel = channel_of(engine, name)
    (vault / "Inbox" / "Loose Thought.md").unlink()
    (vault / "Projects" / "Heliograph.md").write_text(
        "# Heliograph\n\nDecommissioned; replaced by the Marigold Beacon.\n", encoding="utf-8"
    )
    (vault / "Projects" / "Marigold Beacon.md").write_text("# Marigold Beacon\n\nA radio beacon.\n", encoding="utf-8")
    engine.reindex()
    assert channel.count() == len(NOTES)  # one removed, one added
    everything = search(channel, "Heliograph Marigold Beacon lighthouse Loose Thought", limit=50)
    assert "Inbox/Loose Thought.md" not in everything
    assert "Projects/Marigold Beacon.md" in search(channel, "Marigold Beacon")[:2]


@pytest.mark.parametrize("name", CHANNELS)
def test_survives_reopen(built: tuple[Engine, Path], name: str, tmp_path: Path) -> None:
    engine, vault = built
    before = search(channel_of(engine, name), "Wren Adeyemi herons")
    engine.close()
    reopened = Engine.open(vault, index_dir=tmp_path / "idx", embedder=HashEmbedder(dims=128))
    try:
        assert search(channel_of(reopened, name), "Wren Adeyemi herons") == before
        assert reopened.repairs == []
    finally:
        reopened.close()


@pytest.mark.parametrize("name", CHANNELS)
def test_rebuild_is_idempotent(built: tuple[Engine, Path], name: str) -> None:
    engine, _ = built
    channel = channel_of(engine, name)
    before = search(channel, "mirrors valley Quentin")
    channel.rebuild(engine._catalog)
    assert search(channel, "mirrors valley Quentin") == before
