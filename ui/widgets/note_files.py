"""File operations on notes (create, rename with link updates, delete to .trash), run in workers.

The engine does the work (engine/notes.py); this widget only runs it off the UI thread
and posts what happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.widget import Widget

from engine.records import LinkUpdate, RenameResult, SaveResult
from ui.errors import ReportsWorkerErrors

if TYPE_CHECKING:
    from engine.api import Engine


class NoteFiles(ReportsWorkerErrors, Widget):
    """An invisible helper of the main screen: asks the engine to change files, posts the outcome."""

    DEFAULT_CSS = "NoteFiles { display: none; }"

    @dataclass
    class Created(Message):
        """A new note was written (and indexed, unless `save.warnings` say otherwise)."""

        save: SaveResult

        @property
        def path(self) -> str:
            """The new note's vault path."""
            return self.save.path

    @dataclass
    class Renamed(Message):
        """A note moved; `result.linking` are the notes whose links pointed at the old path."""

        result: RenameResult

    @dataclass
    class LinksUpdated(Message):
        """Links to a renamed note were rewritten (or, if `update.untouched`, none were)."""

        update: LinkUpdate

    @dataclass
    class Deleted(Message):
        """A note was moved to the trash and dropped from the index."""

        path: str
        trash_path: str

    def __init__(self, engine: Engine, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.engine = engine

    @work(thread=True, exit_on_error=False, group="files")
    def create(self, folder: str, title: str) -> None:
        """Write a new note `title` in `folder` and index it."""
        self.post_message(self.Created(self.engine.create_note(folder, title)))

    @work(thread=True, exit_on_error=False, group="files")
    def rename(self, old: str, name: str) -> None:
        """Move note `old` to `name` (same folder unless a path is given) and reindex both paths."""
        self.post_message(self.Renamed(self.engine.rename_note(old, name)))

    @work(thread=True, exit_on_error=False, group="files")
    def update_links(self, renamed: RenameResult) -> None:
        """Point the links to a renamed note at its new path, in every linking note or none."""
        self.post_message(self.LinksUpdated(self.engine.update_links(renamed)))

    @work(thread=True, exit_on_error=False, group="files")
    def delete(self, path: str) -> None:
        """Move `path` to `<vault>/.trash/` (never overwriting) and drop it from the index."""
        self.post_message(self.Deleted(path, self.engine.trash_note(path)))
