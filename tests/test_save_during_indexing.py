"""A save made while the first index is still embedding goes through at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from engine.api import Engine
from engine.embedder import HashEmbedder, Vectors
from engine.records import Progress


class SlowEmbedder(HashEmbedder):
    """A stand-in for a model busy with a long backlog: its second batch lasts until a save waits its turn.

    The save then arrives in the middle of the backlog however slowly the test thread
    gets to it (a fixed delay per batch raced against that); `_writers_waiting` is what
    the backlog checks between batches to step aside.
    """

    def __init__(self) -> None:
        super().__init__()
        self.engine: Engine | None = None
        self.batches = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.batches += 1
        if self.batches == 2 and self.engine is not None:
            deadline = time.monotonic() + 120
            while not self.engine._session.writers_waiting() and time.monotonic() < deadline:
                time.sleep(0.01)  # polling a condition, not waiting for time to pass
        return super().embed(texts)


def test_save_does_not_wait_for_the_embedding_backlog(sample_copy: Path, tmp_path: Path) -> None:
    for i in range(150):
        (sample_copy / "Inbox" / f"Backlog {i}.md").write_text(
            f"# Backlog {i}\n\n" + f"Paragraph {i} about harbour cranes. " * 12, encoding="utf-8"
        )
    slow = SlowEmbedder()
    engine = Engine.open(sample_copy, index_dir=tmp_path / "idx", embedder=slow)
    slow.engine = engine
    embedding = threading.Event()

    def on_progress(progress: Progress) -> None:
        if progress.phase == "embed" and progress.done > 0:
            embedding.set()

    background = threading.Thread(target=engine.reindex, kwargs={"progress": on_progress})
    background.start()
    try:
        assert embedding.wait(timeout=120), "the background reindex never started embedding"
        path = "Inbox/Reading list.md"
        engine.save_note(path, "# Reading list\n\nA treatise on narwhal tusks.\n", expected_sha=engine.read_note(path).sha)
        assert background.is_alive(), "the save waited for the whole backlog"
        assert engine.status().embedded_fraction < 1.0
        results = engine.search("narwhal tusks", as_you_type=False)
        assert results.hits[0].path == path
        assert {"fulltext", "vectors"} <= set(results.hits[0].channels)
    finally:
        background.join(timeout=300)
        engine.close()
    assert not background.is_alive()
