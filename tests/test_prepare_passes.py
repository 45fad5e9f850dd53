"""Tables for typing are prepared by one background pass at a time, and again after changes made during it."""

from __future__ import annotations

import threading
from pathlib import Path

from engine.api import Engine


def test_changes_during_a_pass_ask_for_one_more_pass_not_one_each(sample_copy: Path, tmp_path: Path) -> None:
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        started, release = threading.Event(), threading.Event()
        state = {"calls": 0, "active": 0, "most_active": 0}
        lock = threading.Lock()

        def prepare() -> None:
            with lock:
                state["calls"] += 1
                state["active"] += 1
                state["most_active"] = max(state["most_active"], state["active"])
            started.set()
            release.wait(30)
            with lock:
                state["active"] -= 1

        eng._searcher.prepare = prepare  # type: ignore[method-assign]
        eng._prepare_in_background()
        assert started.wait(30)
        for _change in range(4):  # saves while the first pass runs
            eng._prepare_in_background()
        release.set()
        for thread in [t for t in threading.enumerate() if t.name == "prepare-search"]:
            thread.join(30)
        assert state == {"calls": 2, "active": 0, "most_active": 1}
        eng._prepare_in_background()  # a change after the passes ended starts a pass again
        for thread in [t for t in threading.enumerate() if t.name == "prepare-search"]:
            thread.join(30)
        assert state["calls"] == 3
