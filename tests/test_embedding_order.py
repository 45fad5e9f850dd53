"""The embedding backlog serves the user: opened notes first, then the newest, with an honest ETA."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from engine import backlog as backlog_module
from engine import indexer as indexer_module
from engine.api import Engine
from engine.backlog import EmbedOrder, EmbedRate, eta_seconds
from engine.catalog import BacklogText
from engine.config import EngineConfig, VectorConfig
from engine.embedder import HashEmbedder, Vectors
from engine.present import progress_text, status_to_json, vectors_text
from engine.records import Progress


class RecordingEmbedder(HashEmbedder):
    """The hash stand-in (this is about order, not meaning), remembering what it was given."""

    def __init__(self, stop_after: int | None = None) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.stop_after = stop_after
        self.engine: Engine | None = None

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen.extend(texts)
        if self.stop_after is not None and len(self.seen) >= self.stop_after and self.engine is not None:
            self.engine.stop()
        return super().embed(texts)


def _text(path: str, mtime: float, length: int) -> BacklogText:
    return BacklogText(sha=f"{path}:{length}", text="w " * length, path=path, mtime=mtime)


def test_order_is_newest_first_and_every_text_once() -> None:
    texts = [_text(f"n{i}.md", mtime=float(i), length=(7 * i) % 13 + 1) for i in range(40)]
    order = EmbedOrder(texts, batch_size=4, window=8)
    batches = []
    while batch := order.next_batch():
        batches.append(batch)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(40)), "every text exactly once"
    assert order.remaining == 0 and order.remaining_chars == 0
    # Windows of 8 by recency: the first window holds the 8 newest notes.
    assert {texts[i].path for i in flat[:8]} == {f"n{i}.md" for i in range(32, 40)}
    windows = [flat[start : start + 8] for start in range(0, 40, 8)]
    assert [min(texts[i].mtime for i in w) for w in windows] == sorted(
        (min(texts[i].mtime for i in w) for w in windows), reverse=True
    )
    # Within a window, batches go by length (padding stays small).
    for window in windows:
        lengths = [len(texts[i].text) for i in window]
        assert lengths == sorted(lengths)


def test_opened_notes_jump_the_queue_the_last_opened_first() -> None:
    texts = [_text(f"n{i}.md", mtime=float(i), length=5) for i in range(30)]
    texts += [_text("old.md", mtime=-1.0, length=3), _text("old.md", mtime=-1.0, length=9), _text("older.md", mtime=-2.0, length=4)]
    order = EmbedOrder(texts, batch_size=2, window=4)
    first = order.next_batch()
    assert {texts[i].path for i in first} <= {f"n{i}.md" for i in range(26, 30)}
    order.prefer(["older.md", "old.md"])  # old.md was opened last
    opened = order.next_batch()
    assert [texts[i].path for i in opened] == ["old.md", "old.md"]
    assert order.place.order == "opened"
    assert [texts[i].path for i in order.next_batch()] == ["older.md"]
    rest = []
    while batch := order.next_batch():
        rest.extend(batch)
    assert order.place.order == "newest"
    assert len(first) + len(opened) + 1 + len(rest) == len(texts)
    assert not {texts[i].path for i in rest} & {"old.md", "older.md"}, "nothing embedded twice"


def test_rate_and_eta() -> None:
    assert eta_seconds(0, None) == 0.0
    assert eta_seconds(1000, None) is None, "no ETA before anything was measured"
    rate = EmbedRate(previous=500.0)
    assert rate.chars_per_s == 500.0
    rate.add(1000, 0.5)
    assert rate.chars_per_s == 500.0, "half a second of this run does not outweigh the stored rate"
    rate.add(9000, 2.0)
    assert rate.chars_per_s == pytest.approx(4000.0)
    assert eta_seconds(8000, rate.chars_per_s) == pytest.approx(2.0)
    assert EmbedRate().chars_per_s is None


def _dated_vault(root: Path) -> Path:
    """Twelve notes, each changed a day after the one before."""
    root.mkdir(parents=True)
    for day in range(12):
        note = root / f"Day {day:02d}.md"
        note.write_text(f"# Day {day:02d}\n\nWhat happened on day {day} at the harbour.\n", encoding="utf-8")
        stamp = 1_700_000_000 + day * 86_400
        os.utime(note, (stamp, stamp))
    return root


def test_the_engine_embeds_opened_notes_then_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One text per batch and per window, so the order is the recency order exactly.
    monkeypatch.setattr(backlog_module, "_WINDOW", 1)
    config = EngineConfig(vectors=VectorConfig(batch_size=1))
    vault = _dated_vault(tmp_path / "vault")
    embedder = RecordingEmbedder()
    with Engine.open(vault, config, index_dir=tmp_path / "index", embedder=embedder) as engine:
        engine.reindex(embed=False)
        engine.note("Day 03.md")  # the user opens an old note while the backlog waits
        progress: list[Progress] = []
        assert engine.embed_pending(progress.append) == 12
    days = [text.split("\n", 1)[0] for text in embedder.seen]
    assert days[0] == "Day 03", "the opened note first"
    assert days[1:] == [f"Day {d:02d}" for d in (11, 10, 9, 8, 7, 6, 5, 4, 2, 1, 0)], "then newest first"
    embeds = [p for p in progress if p.phase == "embed"]
    assert embeds[-1].done == embeds[-1].total == 12
    assert embeds[1].order == "opened" and embeds[-1].order == "newest"
    assert embeds[-1].eta_s == 0.0
    assert progress_text(embeds[1]).startswith("embedding 1/12 · opened notes first · ")


def test_status_says_how_much_is_left_and_how_long_it_takes(tmp_path: Path) -> None:
    vault = _dated_vault(tmp_path / "vault")
    index = tmp_path / "index"
    embedder = RecordingEmbedder(stop_after=4)
    with Engine.open(vault, index_dir=index, embedder=embedder) as engine:
        engine.reindex(embed=False)
        before = engine.status()
        assert before.backlog is not None and before.backlog.texts == 12
        assert before.backlog.eta_s is None, "nothing measured on this machine yet"
        assert "12 chunks to embed" in vectors_text(before)
        embedder.engine = engine
        engine.embed_pending()  # stopped after a few batches
        assert 0 < len(embedder.seen) < 12
    # Another process (`engine status`) reads the rate the embedding measured and stored.
    with Engine.open(vault, index_dir=index, embedder=HashEmbedder()) as reader:
        status = reader.status()
    backlog = status.backlog
    assert backlog is not None and backlog.texts == 12 - len(embedder.seen) and not backlog.running
    assert backlog.chars_per_s is not None and backlog.chars_per_s > 0
    assert backlog.eta_s == pytest.approx(backlog.chars / backlog.chars_per_s)
    shown = status_to_json(status)["backlog"]
    assert shown["texts"] == backlog.texts and shown["eta_s"] is not None and shown["running"] is False
    assert "to embed" in vectors_text(status) and "vectors " in vectors_text(status)


def test_a_fully_embedded_index_has_no_backlog(tmp_path: Path) -> None:
    vault = _dated_vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        engine.reindex()
        status = engine.status()
    assert status.backlog is None and vectors_text(status) == "vectors ready"
    assert status_to_json(status)["backlog"] is None


def test_the_backlog_waits_while_someone_types(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between batches the backlog leaves the cores to keystrokes, and never waits for long."""
    clock = [1000.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(indexer_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(indexer_module.time, "sleep", sleep)
    vault = _dated_vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        indexer = engine._indexer
        indexer._wait_while_typing()
        assert slept == [], "nobody typed: no wait"
        indexer.note_typing()
        indexer._wait_while_typing()
        assert sum(slept) == pytest.approx(indexer_module._TYPING_QUIET_S)
        slept.clear()

        class Typist:
            """Types a key on every look at the clock (a search that never stops)."""

            def __call__(self) -> float:
                indexer._typing_at = clock[0]
                return clock[0]

        monkeypatch.setattr(indexer_module.time, "monotonic", Typist())
        indexer._wait_while_typing()
        assert sum(slept) == pytest.approx(indexer_module._TYPING_MAX_WAIT_S, abs=0.2), "bounded"


class TwoAtOnceEmbedder(HashEmbedder):
    """Says it runs two batches at once, and proves the backlog keeps two running: its
    first two batches wait for each other (a backlog that ran one at a time would leave
    the first waiting, and the barrier would break)."""

    def __init__(self) -> None:
        super().__init__()
        self.parallel_batches = 2
        self._both = threading.Barrier(2, timeout=30)
        self._calls = 0
        self._lock = threading.Lock()
        self.threads: set[str] = set()

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            self._calls += 1
            first_two = self._calls <= 2
            self.threads.add(threading.current_thread().name)
        if first_two:
            self._both.wait()
        return super().embed(texts)


def test_an_embedder_that_runs_batches_at_once_is_kept_busy_and_each_vector_lands_on_its_chunk(tmp_path: Path) -> None:
    config = EngineConfig(vectors=VectorConfig(batch_size=1))
    vault = _dated_vault(tmp_path / "vault")
    embedder = TwoAtOnceEmbedder()
    with Engine.open(vault, config, index_dir=tmp_path / "index", embedder=embedder) as engine:
        engine.reindex(embed=False)
        progress: list[Progress] = []
        assert engine.embed_pending(progress.append) == 12
        assert len(embedder.threads) == 2, "batches ran on the backlog's pool"
        assert [p.done for p in progress if p.phase == "embed"] == list(range(13))
        for day in range(12):
            text = f"# Day {day:02d}\n\nWhat happened on day {day} at the harbour."
            hits = engine.search(text, limit=1, channels=["vectors"], as_you_type=False).hits
            assert [hit.path for hit in hits] == [f"Day {day:02d}.md"], "the vector of its own chunk"
        assert engine.status().backlog is None


class BatchSizes(HashEmbedder):
    """Runs two batches at once and remembers each batch's size."""

    def __init__(self) -> None:
        super().__init__()
        self.parallel_batches = 2
        self.sizes: list[int] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            self.sizes.append(len(texts))
        return super().embed(texts)


def test_a_backlog_smaller_than_a_batch_per_core_is_split_among_them(tmp_path: Path) -> None:
    """An edit's few chunks: one batch would leave a core idle while the other runs it alone."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for number in range(6):
        (vault / f"Note {number}.md").write_text(f"# Note {number}\n\nA line about item {number}.\n", encoding="utf-8")
    embedder = BatchSizes()
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=embedder) as engine:  # batches of 8
        engine.reindex(embed=False)
        assert engine.embed_pending() == 6
    assert sorted(embedder.sizes) == [3, 3]
