"""One writer per index: the lock names its holder, dies with it, and readers never repair."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine.api import Engine
from engine.errors import IndexLocked
from engine.storage import WriterLock, process_label

HOLD = """
import sys, time
from pathlib import Path
from engine.storage import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
time.sleep(300)
"""


def test_second_holder_is_refused_with_the_first_ones_name(tmp_path: Path) -> None:
    first, second = WriterLock(tmp_path / "writer.lock"), WriterLock(tmp_path / "writer.lock")
    assert first.holder() is None
    first.acquire()
    assert not second.try_acquire()
    with pytest.raises(IndexLocked, match=f"the index is being written by pid {os.getpid()} \\(pytest\\)$"):
        second.acquire()
    holder = second.holder()
    assert holder is not None and holder.pid == os.getpid()
    first.release()
    assert second.holder() is None
    assert second.try_acquire()
    second.release()


def test_held_is_reentrant_and_releases(tmp_path: Path) -> None:
    lock = WriterLock(tmp_path / "writer.lock")
    with lock.held():
        with lock.held():
            assert lock.held_here
        assert lock.held_here, "the inner block does not release the outer hold"
    assert not lock.held_here
    assert WriterLock(tmp_path / "writer.lock").try_acquire()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        lock = WriterLock(path)
        holder = lock.holder()
        assert holder is not None and holder.pid == proc.pid
        assert not lock.try_acquire()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert lock.try_acquire(), "the kernel dropped the dead holder's lock"
    lock.release()


@pytest.mark.parametrize(
    ("argv", "label"),
    [
        (["/venv/bin/engine", "watch", "/vault"], "engine watch"),
        (["/repo/engine/__main__.py", "reindex", "/vault"], "engine reindex"),
        (["/venv/bin/cairn", "/vault"], "cairn"),
        (["/venv/bin/pytest", "-q"], "pytest"),
        ([], "python"),
    ],
)
def test_process_label(argv: list[str], label: str) -> None:
    assert process_label(argv) == label


def test_a_reader_does_not_repair_while_another_process_writes(sample_copy: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index_dir, embedder=None) as engine:
        engine.reindex()
    manifest = index_dir / "manifest.json"
    manifest.unlink()
    other = WriterLock(index_dir / "writer.lock")
    other.acquire()
    try:
        with Engine.open(sample_copy, index_dir=index_dir, embedder=None) as reader:
            assert reader.repairs == [] and not manifest.exists(), "a reader writes nothing"
            assert reader.writer == f"pid {os.getpid()} (pytest)"
            assert reader.search("SQLCipher", as_you_type=False).hits
            with pytest.raises(IndexLocked):
                reader.reindex()
    finally:
        other.release()
    with Engine.open(sample_copy, index_dir=index_dir, embedder=None) as writer:
        assert manifest.exists(), "the next process that can write repairs"
        assert writer.writer is None


def test_engines_take_turns_writing_and_see_each_others_work(sample_copy: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    first = Engine.open(sample_copy, index_dir=index_dir, embedder=None)
    second = Engine.open(sample_copy, index_dir=index_dir, embedder=None)
    try:
        first.reindex()
        (sample_copy / "Inbox" / "Kookaburra.md").write_text("# Kookaburra\n\nlaughing bird\n", encoding="utf-8")
        first.reindex()
        report = second.reindex()  # nothing new on disk, but second's views are stale
        assert not report.added
        fulltext = ("fulltext",)
        assert [h.path for h in second.search("kookaburra", channels=fulltext, as_you_type=False).hits] == ["Inbox/Kookaburra.md"]
        assert "Inbox/Kookaburra.md" in [path for path, _ in second.notes()]
        assert second.status().channel_counts["graph"] == second.status().notes
        (sample_copy / "Inbox" / "Kookaburra.md").unlink()
        second.reindex()
        assert first.refresh(), "first notices what second wrote"
        assert not first.refresh()
        assert first.search("kookaburra", channels=fulltext, as_you_type=False).hits == ()
        assert first.status().channel_counts["graph"] == first.status().notes
    finally:
        first.close()
        second.close()


def test_a_process_that_takes_over_from_a_killed_writer_catches_up_its_channels(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer dies after writing its catalog batch and before its full-text one: the
    process that writes next (a TUI's watcher taking over) brings full text in step."""
    index_dir = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index_dir, embedder=None) as engine:
        engine.reindex()
    follower = Engine.open(sample_copy, index_dir=index_dir, embedder=None)
    dying = WriterLock(index_dir / "writer.lock")
    dying.acquire()  # the writer, from the follower's point of view
    try:
        (sample_copy / "Inbox" / "Kookaburra.md").write_text("# Kookaburra\n\nlaughing bird\n", encoding="utf-8")
        writer = Engine.open(sample_copy, index_dir=index_dir, embedder=None)
        from engine.channels.fulltext import FulltextChannel

        def killed(*_args: object, **_kwargs: object) -> None:
            raise KeyboardInterrupt("killed between the catalog and full text")

        monkeypatch.setattr(FulltextChannel, "update", killed)
        dying.release()
        with pytest.raises(KeyboardInterrupt):
            writer.reindex()
        monkeypatch.undo()
        writer._session._lock.release()  # a killed process holds no lock
        assert follower.hold_writer()
        follower.reindex()
        fulltext = ("fulltext",)
        hits = follower.search("kookaburra", channels=fulltext, as_you_type=False).hits
        assert [h.path for h in hits] == ["Inbox/Kookaburra.md"]
        assert follower.status().channel_counts["fulltext"] == follower.status().notes
    finally:
        follower.close()


@pytest.mark.parametrize("phase", ["fulltext", "embed"])
def test_closing_while_another_thread_indexes_waits_for_it_and_loses_nothing(
    sample_copy: Path, tmp_path: Path, phase: str
) -> None:
    """A front end's first index runs on its own thread; the front end closing (an MCP client
    leaving) must not close the catalog under it ("Cannot operate on a closed database")."""
    import threading
    import time

    from engine.embedder import load_default_embedder
    from engine.errors import IndexClosed
    from engine.records import Progress

    engine = Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=load_default_embedder())
    reached, closing = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def progress(step: Progress) -> None:
        if step.phase == phase and not reached.is_set():
            reached.set()
            # Carry on only once close() was called, and a little later: what closing
            # does without waiting has been done by then. Waiting close() passes or fails
            # the same whatever this pause is.
            closing.wait(60)
            time.sleep(0.3)

    def index() -> None:
        try:
            engine.reindex(progress=progress)
        except IndexClosed:
            pass  # closed before the thread's turn: nothing half-written
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=index)
    thread.start()
    assert reached.wait(120), f"the reindex never reached {phase}"
    closing.set()
    engine.close()
    closed_state = _files_state(tmp_path / "index")
    thread.join(120)
    assert not thread.is_alive()
    assert failures == []
    assert _files_state(tmp_path / "index") == closed_state, "nothing was written after close() returned"
    with pytest.raises(IndexClosed):
        engine.reindex()
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=None) as again:
        status = again.status()
        assert not again.repairs, again.repairs
        assert status.notes == 63 and status.channel_counts["fulltext"] == 63
        assert again.search("tombstone", as_you_type=False).hits[0].path == "Glossary/Tombstone.md"


def _files_state(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}
