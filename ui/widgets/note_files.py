"""File operations on notes (create, rename with link updates, delete to .trash), run in workers."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.widget import Widget

from engine.errors import CairnError
from ui.errors import ReportsWorkerErrors
from ui.wikilinks import retarget_markdown_links, retarget_wikilinks

if TYPE_CHECKING:
    from engine.api import Engine

_UNSAFE_NAME = re.compile(r'[\\:*?"<>|#^\[\]]')


class NoteExists(CairnError):
    """A note with that name is already there."""

    title = "Note already exists"


def note_path(folder: str, name: str) -> str:
    """The vault path for a note named `name` in `folder` (a name with '/' is a vault path)."""
    cleaned = _UNSAFE_NAME.sub("-", name.strip()).strip("/ ")
    if not cleaned.lower().endswith(".md"):
        cleaned += ".md"
    if "/" in name:
        return posixpath.normpath(cleaned)
    return posixpath.join(folder, cleaned) if folder else cleaned


class NoteFiles(ReportsWorkerErrors, Widget):
    """An invisible helper of the main screen: changes files, then tells the engine."""

    DEFAULT_CSS = "NoteFiles { display: none; }"

    @dataclass
    class Created(Message):
        """A new note was written and indexed."""

        path: str

    @dataclass
    class Renamed(Message):
        """A note moved; `sources` are the notes whose links pointed at the old path."""

        old: str
        new: str
        sources: tuple[str, ...]

    @dataclass
    class LinksUpdated(Message):
        """Links to a renamed note were rewritten in `notes` notes."""

        path: str
        links: int
        notes: int

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
        path = note_path(folder, title)
        if self.engine.resolve_path(path).exists():
            raise NoteExists(path)
        heading = posixpath.splitext(posixpath.basename(path))[0]
        self.engine.save_note(path, f"# {heading}\n\n", expected_sha=None)
        self.post_message(self.Created(path))

    @work(thread=True, exit_on_error=False, group="files")
    def rename(self, old: str, name: str) -> None:
        """Move note `old` to `name` (same folder unless a path is given) and reindex both paths."""
        new = note_path(posixpath.dirname(old), name)
        source = self.engine.resolve_path(old)
        target = self.engine.resolve_path(new)
        if target.exists():
            raise NoteExists(new)
        sources = tuple(dict.fromkeys(b.path for b in self.engine.backlinks(old) if b.path != old))
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        self.engine.reindex([old, new])
        self.post_message(self.Renamed(old, new, sources))

    @work(thread=True, exit_on_error=False, group="files")
    def update_links(self, old: str, new: str, sources: tuple[str, ...]) -> None:
        """Rewrite wikilinks and relative Markdown links to `old` in `sources`, saving each through the engine."""
        total = notes = 0
        for source in sources:
            data = self.engine.resolve_path(source).read_bytes()
            text, wiki = retarget_wikilinks(data.decode("utf-8"), old, new)
            text, markdown = retarget_markdown_links(text, source, old, new)
            changed = wiki + markdown
            if changed:
                self.engine.save_note(source, text, expected_sha=hashlib.sha256(data).hexdigest())
                total += changed
                notes += 1
        self.post_message(self.LinksUpdated(new, total, notes))

    @work(thread=True, exit_on_error=False, group="files")
    def delete(self, path: str) -> None:
        """Move `path` to `<vault>/.trash/` (never overwriting) and drop it from the index."""
        source = self.engine.resolve_path(path)
        trash = self.engine.vault / ".trash"
        target = trash / path
        stem, extension = posixpath.splitext(path)
        number = 1
        while target.exists():
            target = trash / f"{stem} ({number}){extension}"
            number += 1
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        self.engine.reindex([path])
        self.post_message(self.Deleted(path, str(target.relative_to(self.engine.vault))))
