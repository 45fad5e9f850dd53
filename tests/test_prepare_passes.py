"""Tables for typing are prepared by one background pass at a time, and again after changes made during it."""

from __future__ import annotations

import threading
from pathlib import Path

import engine.search.searcher as searcher_module
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
        eng._session.prepare_in_background()
        assert started.wait(30)
        for _change in range(4):  # saves while the first pass runs
            eng._session.prepare_in_background()
        release.set()
        for thread in [t for t in threading.enumerate() if t.name == "prepare-search"]:
            thread.join(30)
        assert state == {"calls": 2, "active": 0, "most_active": 1}
        eng._session.prepare_in_background()  # a change after the passes ended starts a pass again
        for thread in [t for t in threading.enumerate() if t.name == "prepare-search"]:
            thread.join(30)
        assert state["calls"] == 3


def test_closing_stops_the_pass_and_waits_for_it(sample_copy: Path, tmp_path: Path) -> None:
    # The pass reads the channels that closing frees; before this, close() returned while
    # it ran, and a vector index freed under it could crash the process.
    eng = Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=None)
    eng.reindex(embed=False)
    inside, after_close = threading.Event(), []
    facts_table = searcher_module.FactsTable

    def slow_facts(catalog: object) -> object:
        inside.set()
        eng._searcher._stopping.wait(30)  # closing has begun
        return facts_table(catalog)  # type: ignore[arg-type]

    channels = eng._searcher._channels.values()
    for channel in channels:
        prepare = channel.prepare
        channel.prepare = lambda prepare=prepare: (after_close.append(eng._session._closed), prepare())  # type: ignore[method-assign]
    searcher_module.FactsTable = slow_facts  # type: ignore[assignment,misc]
    try:
        eng._searcher._facts = None
        eng._session.prepare_in_background()
        assert inside.wait(30)
        eng.close()
        assert not [t for t in threading.enumerate() if t.name == "prepare-search" and t.is_alive()]
        assert after_close == []  # no channel was prepared once closing began
        assert eng._searcher._grams == (-1, None)  # nor the phrase table built
    finally:
        searcher_module.FactsTable = facts_table  # type: ignore[misc]
