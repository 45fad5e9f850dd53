"""The note editor: TextArea, ctrl+s saves through the engine, conflicts are resolved in a modal."""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Label, TextArea
from textual.worker import Worker, WorkerState

from engine.errors import SaveConflict
from ui.dialogs.choice import ChoiceDialog
from ui.errors import ReportsWorkerErrors

if TYPE_CHECKING:
    from engine.api import Engine


def markdown_highlighting_available() -> bool:
    """Whether tree-sitter and its Markdown grammar are installed (textual[syntax])."""
    from textual._tree_sitter import TREE_SITTER, get_language

    return bool(TREE_SITTER) and get_language("markdown") is not None


def sha_of(data: bytes) -> str:
    """sha256 hex of bytes, as the engine's save check computes it."""
    return hashlib.sha256(data).hexdigest()


class EditorScreen(ReportsWorkerErrors, Screen[str | None]):
    """Edits one note; dismisses with its path (or the copy's) once closed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "close", "Close", priority=True),
    ]

    @dataclass
    class Loaded(Message, bubble=False):
        """The note's bytes were read from disk."""

        text: str
        sha: str | None

    @dataclass
    class Saved(Message, bubble=False):
        """The note was written and reindexed; `sha` is of the bytes now on disk."""

        path: str
        sha: str
        text: str

    @dataclass
    class Conflicted(Message, bubble=False):
        """Saving was refused: the file changed on disk since it was loaded."""

        text: str

    def __init__(self, engine: Engine, path: str, *, line: int = 0, soft_wrap: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.engine = engine
        self.path = path
        self.line = line
        self.soft_wrap = soft_wrap
        self.loaded_sha: str | None = None
        self.saved_text: str | None = None
        self.saving = False
        self._after_save: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        yield Label("", id="editor-title")
        if markdown_highlighting_available():
            editor = TextArea.code_editor("", language="markdown", soft_wrap=self.soft_wrap, id="editor")
        else:
            # Without tree-sitter, TextArea cannot highlight Markdown: a plain editor it is.
            editor = TextArea("", soft_wrap=self.soft_wrap, show_line_numbers=True, tab_behavior="indent", id="editor")
        editor.disabled = True
        yield editor
        yield Footer()

    @property
    def editor(self) -> TextArea:
        """The TextArea holding the note."""
        return self.query_one("#editor", TextArea)

    @property
    def dirty(self) -> bool:
        """Whether the text differs from what is on disk."""
        return self.saved_text is not None and self.editor.text != self.saved_text

    def on_mount(self) -> None:
        self._update_title()
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="editor-io")
    def _load(self) -> None:
        target = self.engine.resolve_path(self.path)
        data = target.read_bytes() if target.exists() else b""
        self.post_message(self.Loaded(data.decode("utf-8", errors="replace"), sha_of(data) if target.exists() else None))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        self.loaded_sha = message.sha
        self.saved_text = message.text
        editor = self.editor
        editor.load_text(message.text)
        editor.disabled = False
        editor.focus()
        if self.line > 0:
            editor.move_cursor((self.line - 1, 0), center=True)
        self._update_title()

    @on(TextArea.Changed, "#editor")
    def _changed(self) -> None:
        self._update_title()

    def _update_title(self) -> None:
        mark = " (saving…)" if self.saving else " ●" if self.dirty else ""
        plain = "" if markdown_highlighting_available() else "  (plain text: install textual[syntax] for Markdown highlighting)"
        self.query_one("#editor-title", Label).update(Content(f"Editing {self.path}{mark}{plain}"))

    def action_save(self, then: Callable[[], None] | None = None) -> None:
        """Save through the engine (atomic write, then reindex), checking the file did not change."""
        self._after_save = then
        self.saving = True
        self._update_title()
        self._save(self.path, self.editor.text, self.loaded_sha, check=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="editor-io")
    def _save(self, path: str | None, text: str, expected: str | None, check: bool) -> None:
        """Save `text` to `path` (None: to a new copy next to the note)."""
        target = path if path is not None else self._copy_path()
        try:
            self.engine.save_note(target, text, expected_sha=expected if check else None)
        except SaveConflict:
            self.post_message(self.Conflicted(text))
            return
        self.post_message(self.Saved(target, sha_of(text.encode("utf-8")), text))

    @on(Saved)
    def _saved(self, message: Saved) -> None:
        self.saving = False
        self.path = message.path
        self.loaded_sha = message.sha
        self.saved_text = message.text
        self._update_title()
        self.notify(f"Saved {message.path}", timeout=2)
        then, self._after_save = self._after_save, None
        if then is not None:
            then()

    @on(Conflicted)
    def _conflicted(self, message: Conflicted) -> None:
        self.saving = False
        self._update_title()
        self._after_save = None
        self.app.push_screen(
            ChoiceDialog(
                "Note changed on disk",
                f"{self.path} changed on disk since you opened it.",
                [("reload", "Reload (drop my edits)"), ("overwrite", "Overwrite"), ("copy", "Save as copy"), ("cancel", "Cancel")],
                id="conflict-dialog",
            ),
            lambda choice: self._resolve(choice or "cancel", message.text),
        )

    def _resolve(self, choice: str, text: str) -> None:
        if choice == "reload":
            self._load()
        elif choice in ("overwrite", "copy"):
            self.saving = True
            self._update_title()
            self._save(self.path if choice == "overwrite" else None, text, None, check=False)

    def _copy_path(self) -> str:
        """A free `<name> (copy).md` path (runs in the save worker: it looks at the disk)."""
        stem, extension = posixpath.splitext(self.path)
        number = 1
        while True:
            candidate = f"{stem} (copy{'' if number == 1 else f' {number}'}){extension or '.md'}"
            if not self.engine.resolve_path(candidate).exists():
                return candidate
            number += 1

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed save is no longer in progress (the mixin shows the error)."""
        super().on_worker_state_changed(event)
        if event.state in (WorkerState.ERROR, WorkerState.CANCELLED) and self.saving:
            self.saving = False
            self._after_save = None
            self._update_title()

    def action_close(self) -> None:
        """Leave the editor, asking first if there are unsaved changes."""
        self.close_then(None)

    def close_then(self, then: Callable[[], None] | None) -> None:
        """Close (asking about unsaved changes), then run `then`."""

        def finish() -> None:
            self.dismiss(self.path)
            if then is not None:
                then()

        if not self.dirty:
            finish()
            return

        def answered(choice: str | None) -> None:
            if choice == "save":
                self.action_save(then=finish)
            elif choice == "discard":
                finish()

        self.app.push_screen(
            ChoiceDialog(
                "Unsaved changes",
                f"{self.path} has unsaved changes.",
                [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")],
                id="unsaved-dialog",
            ),
            answered,
        )
