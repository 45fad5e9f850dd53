"""Keeping the index fresh: watch the vault, absorb bursts of changes in one reindex each."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Protocol

from engine.catalog import FileState
from engine.config import EngineConfig
from engine.errors import CairnError
from engine.records import ReindexReport, SkippedFile, WatchBatch

__all__ = ["BatchFn", "VaultWatcher", "WatchBatch", "Watched", "classify", "is_ignored", "pending_changes", "run_watch"]

log = logging.getLogger("cairn.watch")

DEFAULT_DEBOUNCE_MS = 3000
"""Longest a burst is gathered before it is indexed anyway."""
DEFAULT_STEP_MS = 60
"""Quiet time that ends a burst: a `git checkout` writes its files closer together than this."""
_POLL_MS = 500
# After a failed batch (a full disk), the whole vault is compared again after 1 s, then
# 2, 4, ... up to a minute between attempts, until a comparison succeeds.
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 60.0
_TEMP_SUFFIXES = ("~", ".swp", ".swx", ".swo", ".tmp", ".crdownload", ".part")


def is_ignored(rel_path: str) -> bool:
    """Whether a vault-relative path is editor or tool noise rather than a note or folder.

    Hidden files and folders (`.obsidian/`, `.cairn/`, `.git/`, `.trash/`, Emacs `.#x`
    locks, our own `.<name>.*.tmp` atomic-write files), swap and backup files, and
    Vim's `4913` write probe are ignored.
    """
    parts = [part for part in rel_path.replace("\\", "/").split("/") if part]
    if not parts:
        return True
    if any(part.startswith(".") for part in parts):
        return True
    name = parts[-1]
    return name == "4913" or name.endswith(_TEMP_SUFFIXES) or (name.startswith("#") and name.endswith("#"))


BatchFn = Callable[[WatchBatch], None]


class Watched(Protocol):
    """What the watcher needs of an open index (the `Engine` façade is one)."""

    @property
    def vault(self) -> Path: ...

    @property
    def index_dir(self) -> Path: ...

    @property
    def config(self) -> EngineConfig: ...

    def reindex(self, paths: Iterable[str] | None = None) -> ReindexReport: ...

    def refresh(self) -> bool: ...

    def index_replaced(self) -> bool: ...

    def hold_writer(self) -> bool: ...

    def prepare_for_edits(self) -> None: ...

    def acquire_writer(self) -> None: ...

    def release_writer(self) -> None: ...

    def stop(self) -> None: ...


def classify(
    changed: Iterable[str], vault: Path, *, has_excludes: bool = False
) -> tuple[tuple[str, ...], bool]:
    """Split changed vault-relative paths into notes to reindex and whether to rescan.

    A folder, an attachment or any path that is not a note file asks for a rescan of
    the whole vault, which is how a moved folder's notes are found.
    """
    notes: set[str] = set()
    rescan = has_excludes
    for rel in changed:
        if is_ignored(rel):
            continue
        if not rel.lower().endswith(".md") or (vault / rel).is_dir():
            rescan = True
            continue
        notes.add(rel)
    return tuple(sorted(notes)), rescan


def pending_changes(
    vault: Path,
    file_states: Mapping[str, FileState],
    skipped: Iterable[SkippedFile],
    excludes: tuple[str, ...] = (),
) -> tuple[str, ...]:
    """Notes added, changed (mtime or size) or deleted on disk since they were indexed."""
    from engine.vault import scan_vault

    scan = scan_vault(vault, excludes)
    skipped_paths = {s.path for s in skipped}
    out: list[str] = []
    on_disk: set[str] = set()
    for vf in scan.notes:
        on_disk.add(vf.path)
        state = file_states.get(vf.path)
        if state is None:
            if vf.path not in skipped_paths:
                out.append(vf.path)
        elif state.mtime != vf.mtime or state.size != vf.size:
            out.append(vf.path)
    out.extend(path for path in file_states if path not in on_disk)
    return tuple(sorted(out))


def run_watch(
    engine: Watched,
    stop_event: threading.Event,
    on_batch: BatchFn | None = None,
    *,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    step_ms: int = DEFAULT_STEP_MS,
    require_writer: bool = False,
    ready: threading.Event | None = None,
) -> None:
    """Keep `engine`'s index in step with its vault until `stop_event` is set.

    This process becomes the index's writer if nobody else is: it catches up with a
    whole-vault incremental reindex, then reindexes each burst of changes. When
    another process writes, it only refreshes its view of what that process wrote,
    and takes over if the writer goes away. A batch that fails (a full disk) is
    reported and the watcher keeps running: it compares the whole vault again after
    1, 2, 4 ... (at most 60) seconds until that succeeds, which indexes every change
    made meanwhile.

    Args:
        engine: an open engine.
        stop_event: set it to stop watching (checked every few hundred ms).
        on_batch: called after every absorbed burst, from this thread.
        debounce_ms: longest a burst is gathered before it is indexed.
        step_ms: quiet time that ends a burst.
        require_writer: raise IndexLocked instead of following another writer.
        ready: set once the file system is watched and the index caught up with the disk:
            every change made after that is seen.

    Raises:
        IndexLocked: `require_writer` and another process writes the index.
    """
    import watchfiles

    emit = on_batch or (lambda _batch: None)
    vault = engine.vault
    index_dir = engine.index_dir.resolve()
    has_excludes = bool(engine.config.excludes)

    def keep(_change: object, abs_path: str) -> bool:
        path = Path(abs_path)
        if path == index_dir or index_dir in path.parents:
            return False
        try:
            rel = path.relative_to(vault).as_posix()
        except ValueError:
            return False
        return not is_ignored(rel)

    retry_at: float | None = None  # when to compare the whole vault again after a failure
    retry_delay = RETRY_FIRST_S

    def index(paths: tuple[str, ...], rescan: bool) -> None:
        nonlocal retry_at, retry_delay
        started = time.perf_counter()
        try:
            report = engine.reindex(None if rescan else paths)
        except CairnError as exc:
            error = f"{exc.title}: {exc}"
            emit(WatchBatch(paths, rescan, None, time.perf_counter() - started, True, error, retry_in=retry_delay))
            retry_at = time.monotonic() + retry_delay
            retry_delay = min(retry_delay * 2, RETRY_MAX_S)
            return
        recovered = retry_at is not None
        retry_at, retry_delay = None, RETRY_FIRST_S
        emit(WatchBatch(paths, rescan, report, time.perf_counter() - started, True, recovered=recovered))

    if require_writer:
        engine.acquire_writer()
    writer = engine.hold_writer()
    caught_up = False
    try:
        if writer:
            engine.prepare_for_edits()
        changes_seen = watchfiles.watch(
            vault,
            watch_filter=keep,
            debounce=debounce_ms,
            step=step_ms,
            stop_event=stop_event,
            rust_timeout=_POLL_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        )
        for changes in changes_seen:
            if stop_event.is_set():
                break
            if not caught_up:
                # The first answer comes once the file system is watched: only a comparison
                # made from now on is sure to miss nothing written meanwhile.
                caught_up = True
                if writer:
                    index((), True)
                if ready is not None:
                    ready.set()
                continue
            if not writer:
                writer = engine.hold_writer()
                if writer:
                    engine.prepare_for_edits()
                    index((), True)  # the previous writer is gone: catch up with what it left
                    continue
                started = time.perf_counter()
                if engine.refresh():
                    emit(WatchBatch((), False, None, time.perf_counter() - started, False))
                continue
            if retry_at is not None:
                # Changes seen while failing are left to the comparison of the whole vault.
                if time.monotonic() >= retry_at:
                    index((), True)
                continue
            if engine.index_replaced():
                # The index folder was deleted (its events are filtered out above): a
                # whole-vault pass recreates it and fills it again.
                index((), True)
                continue
            if not changes:
                continue
            rel_paths = {Path(abs_path).relative_to(vault).as_posix() for _change, abs_path in changes}
            paths, rescan = classify(rel_paths, vault, has_excludes=has_excludes)
            if paths or rescan:
                index(paths, rescan)
    finally:
        if writer:
            engine.release_writer()


class VaultWatcher:
    """Runs `run_watch` on a background thread (for the TUI): `start()`, then `stop()`."""

    def __init__(
        self,
        engine: Watched,
        on_batch: BatchFn | None = None,
        *,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        step_ms: int = DEFAULT_STEP_MS,
    ) -> None:
        self._engine = engine
        self._on_batch = on_batch
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.batches = 0
        self.ready = threading.Event()
        """Set once every change made on disk from then on is seen (the index caught up first)."""

    def start(self) -> None:
        """Start watching on a daemon thread."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="cairn-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            run_watch(
                self._engine,
                self._stop,
                self._deliver,
                debounce_ms=self._debounce_ms,
                step_ms=self._step_ms,
                ready=self.ready,
            )
        except BaseException as exc:  # kept for the front end to show; a thread cannot raise
            self.error = exc
            log.exception("the vault watcher stopped")

    def _deliver(self, batch: WatchBatch) -> None:
        self.batches += 1
        if self._on_batch is not None:
            self._on_batch(batch)

    @property
    def running(self) -> bool:
        """Whether the watcher thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching (an indexing batch in progress finishes its current step first)."""
        self._stop.set()
        self._engine.stop()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
