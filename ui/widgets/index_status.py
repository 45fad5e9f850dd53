"""A one-line status bar: index counts, vector readiness (what is embedded now, how long the rest takes) and reindex progress."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar

from engine.present import progress_text, vectors_text
from engine.records import IndexStatus, Progress


class IndexStatusBar(Horizontal):
    """Shows what the index holds and, while it is updated, a progress bar."""

    def compose(self) -> ComposeResult:
        yield Label("opening index…", id="index-label", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="index-progress")

    watching = False
    show_times = True

    def show_status(self, status: IndexStatus, writer: str | None = None) -> None:
        """Index counts, vector readiness, freshness and who writes the index."""
        parts = [f"{status.notes} notes", f"{status.chunks} chunks", vectors_text(status)]
        if status.skipped:
            parts.append(f"{len(status.skipped)} skipped")
        if status.last_update and self.show_times:
            parts.append("updated " + time.strftime("%H:%M:%S", time.localtime(status.last_update)))
        if writer and not self.watching:
            parts.append(f"index written by {writer}")
        elif self.watching:
            parts.append("watching for changes")
        self.query_one("#index-label", Label).update(" · ".join(parts))

    def show_progress(self, progress: Progress) -> None:
        """Display a reindex step; the bar hides again with `done()`."""
        self.add_class("-busy")
        bar = self.query_one("#index-progress", ProgressBar)
        if progress.total:
            bar.update(total=progress.total, progress=progress.done)
        else:
            bar.update(total=None)
        self.query_one("#index-label", Label).update(progress_text(progress))

    def done(self, status: IndexStatus, writer: str | None = None) -> None:
        """Indexing finished: hide the bar and show the new counts."""
        self.remove_class("-busy")
        self.show_status(status, writer)
