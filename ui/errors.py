"""Errors on screen: every worker failure becomes one notification, rendered in one place."""

from __future__ import annotations

from textual.app import App
from textual.worker import Worker, WorkerState

from engine.errors import CairnError


def show_error(app: App[object], error: BaseException) -> None:
    """Notify the user of `error` with its title (CairnError.title) — never a traceback."""
    title = error.title if isinstance(error, CairnError) else f"Unexpected error ({type(error).__name__})"
    app.notify(str(error) or title, title=title, severity="error", timeout=8)


class ReportsWorkerErrors:
    """Mixin for screens and widgets that start workers: their errors become notifications."""

    app: App[object]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker.StateChanged does not bubble, so each worker owner forwards failures here."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            show_error(self.app, event.worker.error)
