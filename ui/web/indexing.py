"""The web view's background reindex and watcher: search answers at once, and the index follows the disk."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import CairnError
from engine.present import progress_text

if TYPE_CHECKING:
    from engine.api import Engine, Watcher
    from engine.records import Progress, WatchBatch

log = logging.getLogger("cairn.web")


@dataclass(frozen=True)
class IndexingState:
    """What the background reindex is doing, for /api/status."""

    running: bool = False
    phase: str = ""
    done: int = 0
    total: int = 0
    error: str = ""
    finished_at: float | None = None
    # While embedding: the time left at the measured rate and the order ("opened", "newest").
    eta_s: float | None = None
    order: str = ""
    text: str = ""
    # Whether the watcher follows edits made outside the web view (another editor, git, a sync).
    watching: bool = False
    watch_error: str = ""

    def to_json(self) -> dict[str, Any]:
        """The state as a JSON-ready mapping."""
        return {
            "running": self.running,
            "phase": self.phase,
            "done": self.done,
            "total": self.total,
            "error": self.error,
            "finished_at": self.finished_at,
            "eta_s": self.eta_s,
            "order": self.order,
            "text": self.text,
            "watching": self.watching,
            "watch_error": self.watch_error,
        }


class BackgroundIndexer:
    """Runs `engine.reindex()` once in a daemon thread and reports its progress, then watches.

    Once the first reindex ends (or fails: another process may hold the index, and the
    watcher then follows what that process writes), the engine's own vault watcher keeps
    the index in step with the disk, exactly as in the terminal UI.
    """

    def __init__(self, engine: Engine, *, watch: bool = True) -> None:
        self._engine = engine
        self._watch = watch
        self._state = IndexingState()
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._watcher: Watcher | None = None

    @property
    def state(self) -> IndexingState:
        """A snapshot of the current state."""
        with self._lock:
            watcher = self._watcher
            state = self._state
        watching = watcher is not None and watcher.ready.is_set() and watcher.running
        return state if state.watching == watching else IndexingState(**(state.to_json() | {"watching": watching}))

    def start(self) -> None:
        """Start the reindex thread (once)."""
        if self._thread is not None:
            return
        self._set(running=True, phase="scan")
        self._thread = threading.Thread(target=self._run, name="cairn-web-reindex", daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the reindex finished (True) or `timeout` passed (False)."""
        return self._finished.wait(timeout)

    def start_watching(self) -> None:
        """Follow changes made on disk from now on (once; never after `stop`)."""
        with self._lock:
            if self._watcher is not None or self._stopping.is_set():
                return
            self._watcher = self._engine.watcher(self._on_batch)
            self._watcher.start()

    def stop(self) -> None:
        """Stop watching, ask the embedding phase to stop after its batch, and wait for both."""
        self._stopping.set()
        with self._lock:
            watcher = self._watcher
        if watcher is not None:
            watcher.stop()
        if self._thread is None:
            return
        self._engine.stop()
        self._thread.join()

    def _on_batch(self, batch: WatchBatch) -> None:
        self._set(watch_error=batch.error or "")

    def _run(self) -> None:
        try:
            self._engine.reindex(progress=self._on_progress)
        except CairnError as exc:
            log.warning("background reindex failed: %s", exc)
            self._set(error=f"{exc.title}: {exc}")
        except Exception as exc:
            # Keep serving what is indexed; the status bar shows the failure.
            log.exception("background reindex crashed")
            self._set(error=f"Reindex failed: {exc}")
        finally:
            self._set(running=False, finished_at=time.time())
            self._finished.set()
        if self._watch:
            self.start_watching()

    def _on_progress(self, progress: Progress) -> None:
        self._set(
            phase=progress.phase,
            done=progress.done,
            total=progress.total,
            eta_s=round(progress.eta_s, 1) if progress.eta_s is not None else None,
            order=progress.order,
            text=progress_text(progress),
        )

    def _set(self, **changes: Any) -> None:
        with self._lock:
            values = self._state.to_json() | changes
            self._state = IndexingState(**values)
