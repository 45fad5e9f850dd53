"""Keeping the index fresh: watch the vault, absorb bursts of changes in one reindex each."""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import CairnError
from engine.records import ChannelName, ReindexReport, SkippedFile

if TYPE_CHECKING:
    from engine.api import Engine

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


@dataclass(frozen=True)
class WatchBatch:
    """One burst of changes absorbed by the watcher.

    `report` is None when another process is the index's writer and this one only
    picked up what it wrote; `rescan` says a folder or non-note path changed, so the
    whole vault was compared (an incremental reindex that skips unchanged files).
    When indexing failed, `error` says why and `retry_in` when the watcher compares the
    whole vault again; `recovered` marks the first batch that succeeded after failures.
    """

    paths: tuple[str, ...]
    rescan: bool
    report: ReindexReport | None
    seconds: float
    writer: bool
    error: str = ""
    retry_in: float = 0.0
    recovered: bool = False

    @property
    def changed_notes(self) -> int:
        """Notes added, updated or removed by this batch."""
        if self.report is None:
            return 0
        return len(self.report.added) + len(self.report.updated) + len(self.report.removed)


BatchFn = Callable[[WatchBatch], None]


def describe(batch: WatchBatch) -> str:
    """One line for a batch: what changed and how long it took."""
    clock = time.strftime("%H:%M:%S")
    if batch.error:
        scope = "vault rescan" if batch.rescan else f"{len(batch.paths)} paths changed"
        return (
            f"{clock} watch: {scope}; indexing failed: {batch.error}; still watching, "
            f"the whole vault is compared again in {batch.retry_in:.0f}s"
        )
    if batch.report is None:
        return f"{clock} watch: picked up changes written by another process ({batch.seconds:.2f}s)"
    report = batch.report
    scope = "vault rescan" if batch.rescan else f"{len(batch.paths)} files"
    if batch.recovered:
        scope = f"indexing works again, caught up by a {scope}"
    return (
        f"{clock} watch: {scope}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {len(report.skipped)} skipped, "
        f"{report.embedded_chunks} chunks embedded in {batch.seconds:.2f}s"
    )


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
    file_states: Mapping[str, tuple[float, int, str]],
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
        elif state[0] != vf.mtime or state[1] != vf.size:
            out.append(vf.path)
    out.extend(path for path in file_states if path not in on_disk)
    return tuple(sorted(out))


def run_watch(
    engine: Engine,
    stop_event: threading.Event,
    on_batch: BatchFn | None = None,
    *,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    step_ms: int = DEFAULT_STEP_MS,
    require_writer: bool = False,
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
    try:
        if writer:
            index((), True)
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
            if not writer:
                writer = engine.hold_writer()
                if writer:
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
        engine: Engine,
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


def measure_watch_to_searchable(vault: Path, index_dir: Path, *, edits: int = 5) -> float:
    """Median ms from an external edit of a note to the edit being in every channel.

    Indexes `vault` (a private copy: one note is edited) with the default model first.
    """
    from engine.api import Engine

    with Engine.open(vault, index_dir=index_dir) as engine:
        engine.reindex()
        return measure_watch_latency(engine, edits=edits)["median_ms"]


def measure_watch_latency(engine: Engine, *, edits: int = 5) -> dict[str, float]:
    """Edit one note of an open, indexed engine's vault `edits` times under a watcher.

    Each edit adds a fresh word the way an editor saves (temp file, rename); the time
    runs until the watcher's batch has updated every channel and full-text search
    finds the word. Returns median and max ms.
    """
    notes = engine.notes()
    if not notes:
        raise CairnError(f"{engine.vault} has no notes to edit")
    target = notes[len(notes) // 2][0]
    done = threading.Condition()
    indexed: list[float] = []

    def on_batch(batch: WatchBatch) -> None:
        if batch.report is not None and target in batch.report.updated:
            with done:
                indexed.append(time.perf_counter())
                done.notify_all()

    watcher = VaultWatcher(engine, on_batch)
    watcher.start()
    samples: list[float] = []
    try:
        _wait_for(lambda: watcher.batches >= 1 or watcher.error is not None, 120.0)
        fulltext_only: tuple[ChannelName, ...] = ("fulltext",)
        for attempt in range(edits):
            word = f"zyxwatch{os.getpid()}x{attempt}"
            file = engine.vault / target
            text = file.read_text(encoding="utf-8")
            started = time.perf_counter()
            _external_write(file, f"{text}\n\nEdited {word} here.\n")
            expected = attempt + 1
            with done:
                if not done.wait_for(lambda: len(indexed) >= expected, 30.0):  # noqa: B023
                    raise CairnError("the watcher did not index an edit within 30 s")
            hits = engine.search(word, channels=fulltext_only, as_you_type=False).hits
            if not any(hit.path == target for hit in hits):
                raise CairnError(f"edit {attempt} indexed but not found by search")
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        watcher.stop()
    return {"median_ms": round(statistics.median(samples), 1), "max_ms": round(max(samples), 1), "edits": float(edits)}


def _external_write(path: Path, text: str) -> None:
    """Write the way an editor does: a temp file, then rename over the note."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _wait_for(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise CairnError("timed out waiting for the watcher")
        time.sleep(0.01)
