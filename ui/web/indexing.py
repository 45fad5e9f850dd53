"""The web view's background reindex: search answers at once while the index catches up."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import CairnError
from engine.present import progress_text

if TYPE_CHECKING:
    from engine.api import Engine
    from engine.records import Progress

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
        }


class BackgroundIndexer:
    """Runs `engine.reindex()` once in a daemon thread and reports its progress."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._state = IndexingState()
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> IndexingState:
        """A snapshot of the current state."""
        with self._lock:
            return self._state

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

    def stop(self) -> None:
        """Ask the embedding phase to stop after its batch and wait for the thread."""
        if self._thread is None:
            return
        self._engine.stop()
        self._thread.join()

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
