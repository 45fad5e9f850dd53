"""Quitting during the first index stops its embedding after the batches running, not after the whole vault."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

from pilot_support import SIZE, run
from vault_copy import copy_sample_vault

from app.config import AppConfig
from app.wiring import build_app, open_engine
from engine.embedder import HashEmbedder, Vectors

# The longest the first batch waits for a stop before it lets the index go on (only a
# failing test waits that long: the app asks for the stop when it quits).
_GUARD_S = 60.0


class _WaitsForStop(HashEmbedder):
    """A hash embedder whose batches wait until the indexing is asked to stop."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.stop_requested: threading.Event | None = None
        self.batches = 0
        self._waited = False

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.batches += 1
        self.started.set()
        assert self.stop_requested is not None
        if not self._waited:  # once: a failing run goes on at full speed after the guard
            self._waited = True
            self.stop_requested.wait(_GUARD_S)
        return super().embed(texts)


def test_quitting_during_the_first_index_stops_it(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    copy_sample_vault(vault)
    embedder = _WaitsForStop()
    engine = open_engine(vault, AppConfig(), embedder=embedder)
    embedder.stop_requested = engine._indexer._stop
    try:

        async def body() -> None:
            app = build_app(engine, index_on_start=True, cursor_blink=False)
            async with app.run_test(size=SIZE) as pilot:
                assert await asyncio.to_thread(embedder.started.wait, _GUARD_S), "the first index reached its embedding"
                assert not engine._indexer._stop.is_set()
                await pilot.press("ctrl+q")
            # run_test returns once the app has exited, its index worker included.

        run(body())
        assert engine._indexer._stop.is_set(), "quitting asked the index to stop"
        chunks = sum(len(engine._catalog.chunks_for(path)) for path, _ in engine.notes())
        assert embedder.parallel_batches == 1
        assert embedder.batches == 1 < chunks // 8, "no batch started after the quit"
        assert len(engine._vectors.indexed_ids()) < chunks, "the rest waits for the next start"
    finally:
        engine.close()
