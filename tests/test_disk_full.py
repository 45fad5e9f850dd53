"""A full disk under the index: a clear error, nothing half-indexed for good, and a watcher that keeps going.

The CLI test fills a real (small tmpfs) file system when user namespaces allow it. The
others inject the failure where the operating system reports it to the engine, SQLite
saying "database or disk is full" and a file write raising ENOSPC, because a real full
disk cannot be made inside an ordinary test.
"""

from __future__ import annotations

import builtins
import errno
import os
import queue
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_watch import Batches, consistent
from vault_copy import copy_sample_vault

from engine.api import Engine
from engine.catalog import Catalog
from engine.console import Exit
from engine.embedder import HashEmbedder
from engine.errors import CairnError, IndexWriteFailed
from engine.present import watch_line as describe
from engine.records import WatchBatch
from engine.storage import WriterLock, write_failure
from engine.tools.cli import main
from engine.watch import VaultWatcher

ROOT = Path(__file__).resolve().parent.parent
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "COMMIT")


class FullDisk:
    """The disk under one index: full or not, for SQLite's writes and for files opened for writing."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = str(index_dir)
        self.full = False
        self.catalog_full = True  # whether the catalog's writes fail too, or only other files'
        self.notes_before_full: int | None = None  # fill up after this many more notes were written
        self.failures = 0

    def sqlite_write(self, sql: str) -> None:
        words = sql.split(None, 2)
        if not words or words[0].upper() not in _WRITES:
            return
        if self.notes_before_full is not None and sql.startswith("INSERT INTO notes"):
            if self.notes_before_full == 0:
                self.full = True
            self.notes_before_full -= 1
        if self.full and self.catalog_full:
            self.failures += 1
            raise sqlite3.OperationalError("database or disk is full")

    def file_write(self, file: object, mode: str) -> None:
        if self.full and any(m in mode for m in "wax+") and os.fspath(file).startswith(self.index_dir):  # type: ignore[call-overload]
            self.failures += 1
            raise OSError(errno.ENOSPC, "No space left on device", os.fspath(file))  # type: ignore[call-overload]


class _Connection:
    """A SQLite connection whose writes go through FullDisk first."""

    def __init__(self, conn: sqlite3.Connection, disk: FullDisk) -> None:
        self._conn = conn
        self._disk = disk

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._disk.sqlite_write(sql)
        return self._conn.execute(sql, *args)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        rows = list(rows)
        if rows:
            self._disk.sqlite_write(sql)
        return self._conn.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FullDisk:
    """The index at tmp_path/index sits on a disk a test can fill and empty."""
    full_disk = FullDisk(tmp_path / "index")
    conn_of = Catalog._conn
    monkeypatch.setattr(Catalog, "_conn", lambda self: _Connection(conn_of(self), full_disk))
    real_open = builtins.open

    def open_on_disk(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, os.PathLike)):
            full_disk.file_write(file, mode)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", open_on_disk)
    return full_disk


@pytest.fixture
def engine(sample_copy: Path, tmp_path: Path, disk: FullDisk) -> Iterator[Engine]:
    opened = Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder())
    opened.reindex()
    yield opened
    opened.close()


def _note(vault: Path, rel: str, text: str) -> None:
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_text(text, encoding="utf-8")


def _found(engine: Engine, word: str) -> list[str]:
    return [hit.path for hit in engine.search(word, channels=("fulltext",), as_you_type=False).hits]


@pytest.mark.parametrize(
    ("exc", "says"),
    [
        (sqlite3.OperationalError("database or disk is full"), "the disk is full"),
        (sqlite3.OperationalError("disk is full"), "the disk is full"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "read-only"),
        (OSError(errno.ENOSPC, "No space left on device", "/x/seg.tmp"), "the disk is full (/x/seg.tmp)"),
        (OSError(errno.EROFS, "Read-only file system"), "read-only"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "quota"),
        (RuntimeError("write error in /i/vectors.faiss.tmp: 4051 != 16000 (No space left on device)"), "the disk is full"),
    ],
)
def test_full_and_read_only_disks_are_recognised(exc: BaseException, says: str) -> None:
    failure = write_failure(exc)
    assert isinstance(failure, IndexWriteFailed) and isinstance(failure, CairnError)
    assert says in str(failure)
    assert failure.title == "Could not write the index"


@pytest.mark.parametrize(
    "exc",
    [sqlite3.OperationalError("no such table: notes"), OSError(errno.ENOENT, "No such file"), RuntimeError("bug")],
)
def test_other_errors_are_not_write_failures(exc: BaseException) -> None:
    assert write_failure(exc) is None


def test_a_full_disk_during_reindex_is_a_clear_error(engine: Engine, disk: FullDisk) -> None:
    vault = engine.vault
    _note(vault, "Inbox/Quoll.md", "# Quoll\n\nA quollword note linking [[Atlas]].\n")
    disk.full = True
    with pytest.raises(IndexWriteFailed, match="the disk is full"):
        engine.reindex()
    assert disk.failures
    assert engine.search("atlas sync", as_you_type=False).hits, "what was indexed still answers"
    disk.full = False
    report = engine.reindex()
    assert report.added == ("Inbox/Quoll.md",)
    assert _found(engine, "quollword") == ["Inbox/Quoll.md"]
    consistent(engine)


@pytest.mark.parametrize("fails", ["full text", "second catalog batch"])
def test_a_reindex_stopped_half_way_is_caught_up_by_the_next(
    engine: Engine, disk: FullDisk, tmp_path: Path, fails: str
) -> None:
    """Notes the catalog took before the disk filled look unchanged to the next scan; they are indexed anyway."""
    vault = engine.vault
    if fails == "full text":
        disk.catalog_full = False  # the catalog's pages fit; the new full-text segment does not
        disk.full = True
        _note(vault, "Inbox/Quoll.md", "# Quoll\n\nA quollword note linking [[Atlas]].\n")
    else:
        disk.notes_before_full = 450  # the catalog commits one batch of 400 notes, then the disk is full
        for i in range(900):
            _note(vault, f"Bulk/Bulk {i:03}.md", f"# Bulk {i:03}\n\nbulkword{i} links [[Bulk {(i + 1) % 900:03}]] and [[Atlas]].\n")
    with pytest.raises(IndexWriteFailed):
        engine.reindex()
    disk.full = False
    disk.notes_before_full = None
    engine.reindex()
    if fails == "full text":
        assert _found(engine, "quollword") == ["Inbox/Quoll.md"]
    else:
        assert _found(engine, "bulkword3") == ["Bulk/Bulk 003.md"], "a note of the batch committed before"
        assert _found(engine, "bulkword899") == ["Bulk/Bulk 899.md"]
    consistent(engine)
    # Every link resolves as a fresh index of the same vault resolves it.
    with Engine.open(vault, index_dir=tmp_path / "fresh", embedder=None) as fresh:
        fresh.reindex()
        expected = {(row.source, row.link.line, row.link.target): row.resolved for row in fresh._catalog.links()}
    assert {(row.source, row.link.line, row.link.target): row.resolved for row in engine._catalog.links()} == expected
    assert engine.search("Quoll" if fails == "full text" else "Bulk 003", as_you_type=False).channels["graph"].status == "ok"


def test_searches_answer_after_a_first_index_filled_the_disk(sample_copy: Path, tmp_path: Path, disk: FullDisk) -> None:
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        disk.notes_before_full = 20  # a batch of notes is written, the full-text index never
        with pytest.raises(IndexWriteFailed):
            engine.reindex()
        for typed in ("o", "off", "offline sync", "offline sync conflicts"):
            results = engine.search(typed)
            assert all(st.status != "unavailable" for st in results.channels.values()), results.channels
        disk.full = False
        disk.notes_before_full = None
        engine.reindex()
        assert "Projects/Atlas/Offline Sync Conflicts.md" in [hit.path for hit in engine.search("offline sync conflicts").hits[:3]]
        consistent(engine)


def test_the_watcher_keeps_running_through_a_full_disk_and_catches_up(engine: Engine, disk: FullDisk) -> None:
    batches = Batches()
    watcher = VaultWatcher(engine, batches)
    watcher.start()
    try:
        batches.wait(lambda items: len(items) >= 1, "the start-up catch-up")
        start = len(batches.items)
        disk.full = True
        _note(engine.vault, "Inbox/Quoll.md", "# Quoll\n\nA quollword note.\n")

        def failures(items: list[WatchBatch]) -> list[WatchBatch]:
            return [b for b in items[start:] if b.error]

        items = batches.wait(lambda items: len(failures(items)) >= 2, "a failed batch and a failed retry")
        first, second = failures(items)[:2]
        assert "Could not write the index" in first.error and "the disk is full" in first.error
        assert first.retry_in == 1.0 and second.retry_in == 2.0, "the retries back off"
        assert second.rescan, "a retry compares the whole vault"
        line = describe(first)
        assert "indexing failed: Could not write the index" in line and "still watching" in line
        assert watcher.running and watcher.error is None
        _note(engine.vault, "Inbox/Numbat.md", "# Numbat\n\nA numbatword note, written while the disk was full.\n")
        disk.full = False
        items = batches.wait(lambda items: any(b.recovered for b in items[start:]), "the catch-up after space returned")
        recovered = next(b for b in items[start:] if b.recovered)
        assert recovered.report is not None
        assert set(recovered.report.added) == {"Inbox/Quoll.md", "Inbox/Numbat.md"}
        assert "indexing works again" in describe(recovered)
        assert _found(engine, "quollword") == ["Inbox/Quoll.md"]
        assert _found(engine, "numbatword") == ["Inbox/Numbat.md"]
        consistent(engine)
        start = len(batches.items)
        _note(engine.vault, "Inbox/Bilby.md", "# Bilby\n\nbilbyword\n")
        batches.wait(
            lambda items: any(b.report is not None and "Inbox/Bilby.md" in b.report.added for b in items[start:]),
            "an ordinary batch afterwards",
        )
    finally:
        watcher.stop()
    assert watcher.error is None


def test_reindex_cli_says_the_disk_is_full(engine: Engine, disk: FullDisk, capsys: pytest.CaptureFixture[str]) -> None:
    _note(engine.vault, "Inbox/Quoll.md", "# Quoll\n\nquollword\n")
    index_dir = engine.index_dir
    engine.close()
    disk.full = True
    code = main(["reindex", str(engine.vault), "--index-dir", str(index_dir), "--no-model"])
    err = capsys.readouterr().err
    assert code == Exit.ERROR
    assert "error: Could not write the index: the disk is full" in err and "Traceback" not in err


def test_the_writer_lock_is_taken_when_its_holder_cannot_be_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)
    lock = WriterLock(tmp_path / "writer.lock")
    assert lock.try_acquire(), "the flock is the lock; the name of its holder is a courtesy"
    assert not WriterLock(tmp_path / "writer.lock").try_acquire()
    lock.release()
    assert WriterLock(tmp_path / "writer.lock").try_acquire()


def _user_namespaces() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _user_namespaces(), reason="needs unprivileged user namespaces to mount a small tmpfs")
def test_engine_watch_on_a_really_full_disk(tmp_path: Path) -> None:
    vault = copy_sample_vault(tmp_path / "vault")
    index_dir = tmp_path / "index"
    index_dir.mkdir()
    script = 'mount -t tmpfs -o size=24m tmpfs "$0" && exec "$@"'
    watch = subprocess.Popen(
        ["unshare", "-rm", "sh", "-c", script, str(index_dir),
         sys.executable, "-m", "engine", "watch", str(vault), "--index-dir", str(index_dir), "--no-model"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []
    threading.Thread(target=lambda: [lines.put(line) for line in watch.stderr or ()], daemon=True).start()

    def wait_for(needle: str) -> str:
        while True:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                raise AssertionError(f"no line with {needle!r} in {seen}") from None
            seen.append(line)
            if needle in line:
                return line

    try:
        wait_for("vault rescan: 63 added")
        mounted = Path(f"/proc/{watch.pid}/root") / index_dir.relative_to("/")  # the watcher's view of its tmpfs
        filler = mounted / "filler"
        with filler.open("wb") as handle:
            try:
                while True:
                    handle.write(b"\0" * (1 << 20))
                    handle.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        with Engine.open(vault, index_dir=mounted, embedder=None) as reader:
            assert reader.search("offline sync conflicts", as_you_type=False).hits, "a full disk still answers searches"
        _note(vault, "Inbox/Quoll.md", "# Quoll\n\nA quollword note written while the disk is full.\n")
        failed = wait_for("indexing failed")
        assert "Could not write the index: the disk is full" in failed and "still watching" in failed, failed
        assert watch.poll() is None, "the watcher keeps running"
        filler.unlink()
        caught_up = wait_for("indexing works again")
        assert "1 added" in caught_up, caught_up
        with Engine.open(vault, index_dir=mounted, embedder=None) as reader:
            assert _found(reader, "quollword") == ["Inbox/Quoll.md"]
    finally:
        watch.send_signal(signal.SIGTERM)
        code = watch.wait(60)
    assert code == 0, seen
    assert not any("Traceback" in line for line in seen), seen
