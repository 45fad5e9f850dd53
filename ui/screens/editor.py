"""The note editor: TextArea, ctrl+s saves through the engine, conflicts are resolved in a modal."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, TextArea
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState, get_current_worker

from engine.errors import EncodingMismatch, NoteNotEditable, NoteNotSaved, SaveConflict
from engine.records import LinkCompletion
from ui.dialogs.choice import ChoiceDialog
from ui.editor_text import NotEditableHere, from_editor, to_editor
from ui.errors import ReportsWorkerErrors, show_error
from ui.widgets.note_editor import NoteEditor, markdown_highlighting_available

if TYPE_CHECKING:
    from engine.api import Engine


log = logging.getLogger("cairn.ui")

class EditorScreen(ReportsWorkerErrors, Screen[str | None]):
    """Edits one note; dismisses with its path (or the copy's) once closed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "close", "Close", priority=True),
    ]

    @dataclass
    class Loaded(Message, bubble=False):
        """The note was read from disk (LF text; `sha` of its bytes, None for a new note)."""

        text: str
        sha: str | None
        encoding: str = ""

    @dataclass
    class LoadFailed(Message, bubble=False):
        """The note cannot be edited as text (binary, too large, unreadable)."""

        error: NoteNotSaved

    @dataclass
    class Saved(Message, bubble=False):
        """The note was written and reindexed; `sha` is of the bytes now on disk."""

        path: str
        sha: str
        text: str
        warnings: tuple[str, ...] = ()
        as_utf8: bool = False

    @dataclass
    class Conflicted(Message, bubble=False):
        """Saving was refused: the file changed on disk since it was loaded (`current_sha`: as it is now)."""

        text: str
        current_sha: str | None

    @dataclass
    class Unencodable(Message, bubble=False):
        """Saving was refused: the note's encoding cannot hold the text."""

        text: str
        error: EncodingMismatch

    def __init__(self, engine: Engine, path: str, *, line: int = 0, soft_wrap: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.engine = engine
        self.path = path
        self.line = line
        self.soft_wrap = soft_wrap
        self.loaded_sha: str | None = None
        self.encoding = ""
        self.saved_text: str | None = None
        self.saving = False
        self._after_save: Callable[[], None] | None = None
        # A save asked for while one runs: it follows, against the version that one writes.
        self._save_again = False

    def compose(self) -> ComposeResult:
        yield Label("", id="editor-title")
        # Without tree-sitter, TextArea cannot highlight Markdown: a plain editor it is.
        language = "markdown" if markdown_highlighting_available() else None
        editor = NoteEditor(
            "", language=language, soft_wrap=self.soft_wrap, show_line_numbers=True, tab_behavior="indent", id="editor"
        )
        editor.disabled = True
        yield editor
        suggestions = OptionList(id="link-suggestions")
        suggestions.display = False
        suggestions.can_focus = False
        editor.suggestions = suggestions
        yield suggestions
        yield Footer()

    @property
    def editor(self) -> TextArea:
        """The TextArea holding the note."""
        return self.query_one("#editor", TextArea)

    @property
    def note_text(self) -> str:
        """The note's text as it stands in the editor (what a save writes)."""
        return from_editor(self.editor.text)

    @property
    def dirty(self) -> bool:
        """Whether the text differs from what is on disk."""
        return self.saved_text is not None and self.note_text != self.saved_text

    def on_mount(self) -> None:
        self._update_title()
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="editor-io")
    def _load(self) -> None:
        try:
            note = self.engine.read_note(self.path)
            to_editor(note.text)  # refuses the one text the editor cannot hold
        except NoteNotSaved as exc:
            self.post_message(self.LoadFailed(exc))
            return
        except NotEditableHere as exc:
            self.post_message(self.LoadFailed(NoteNotEditable(f"{self.path}: {exc}")))
            return
        encoding = "" if note.format.codec == "utf-8" and not note.format.bom else note.format.label
        self.post_message(self.Loaded(note.text, note.sha, encoding))

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
        show_error(self.app, message.error)
        self.dismiss(None)

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        self.loaded_sha = message.sha
        self.encoding = message.encoding
        self.saved_text = message.text
        editor = self.editor
        editor.load_text(to_editor(message.text))
        editor.disabled = False
        editor.focus()
        if self.line > 0:
            editor.move_cursor((self.line - 1, 0), center=True)
        self._update_title()

    @dataclass
    class Suggested(Message, bubble=False):
        """The engine's ways to finish the link being typed."""

        typed: str
        completions: list[LinkCompletion]

    @on(TextArea.Changed, "#editor")
    def _changed(self) -> None:
        self._update_title()

    @on(NoteEditor.LinkTyped)
    def _link_typed(self, message: NoteEditor.LinkTyped) -> None:
        editor = self.query_one("#editor", NoteEditor)
        if message.typed is None:
            editor.hide_suggestions()
            return
        self._complete(message.typed)

    @work(thread=True, exclusive=True, exit_on_error=False, group="complete")
    def _complete(self, typed: str) -> None:
        completions = self.engine.complete_link(typed, source=self.path, limit=12)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Suggested(typed, completions))

    @on(Suggested)
    def _suggested(self, message: Suggested) -> None:
        editor = self.query_one("#editor", NoteEditor)
        if editor.typed_link() != message.typed:
            return  # typed on since: a newer answer follows
        suggestions = self.query_one("#link-suggestions", OptionList)
        editor.completions = message.completions
        suggestions.clear_options()
        if not message.completions:
            suggestions.display = False
            return
        suggestions.add_options(
            Option(Content.assemble(c.label, ("  " + c.detail, "$text-muted")), id=str(index))
            for index, c in enumerate(message.completions)
        )
        suggestions.highlighted = 0
        suggestions.display = True
        # The list takes the editor's bottom rows: the line being typed scrolls up out from under it.
        editor.call_after_refresh(editor.scroll_cursor_visible)

    @on(OptionList.OptionSelected, "#link-suggestions")
    def _suggestion_clicked(self, event: OptionList.OptionSelected) -> None:
        editor = self.query_one("#editor", NoteEditor)
        editor.accept(event.option_index)
        editor.focus()

    def _update_title(self) -> None:
        mark = " (saving…)" if self.saving else " ●" if self.dirty else ""
        stored = f"  [{self.encoding}]" if self.encoding else ""
        plain = "" if markdown_highlighting_available() else "  (plain text: install textual[syntax] for Markdown highlighting)"
        self.query_one("#editor-title", Label).update(Content(f"Editing {self.path}{mark}{stored}{plain}"))

    def action_save(self, then: Callable[[], None] | None = None) -> None:
        """Save through the engine (atomic write, then reindex), checking the file did not change."""
        if self.saving:  # the running save has not said which version it wrote yet
            self._save_again = True
            self._after_save = then or self._after_save
            return
        self._after_save = then
        self.saving = True
        self._update_title()
        self._save(self.path, self.note_text, self.loaded_sha)

    def keep_copy(self) -> str | None:
        """Save the text as it is now to a new copy beside the note, at once (the app is
        ending); the copy's path, or None when even that could not be written."""
        try:
            target = self.engine.conflict_copy_path(self.path)
            self.engine.save_note(target, self.note_text, expected_sha=None, as_utf8=True)
        except Exception:  # a full disk, a vanished folder: nothing is left to tell the user
            log.exception("could not keep the unsaved edits of %s", self.path)
            return None
        return target

    @work(thread=True, exclusive=True, exit_on_error=False, group="editor-io")
    def _save(self, path: str | None, text: str, expected: str | None, *, as_utf8: bool = False) -> None:
        """Save `text` to `path` if it is still the version `expected` (path None: to a new copy)."""
        target = path if path is not None else self.engine.conflict_copy_path(self.path)
        try:
            result = self.engine.save_note(target, text, expected_sha=expected, as_utf8=as_utf8)
        except SaveConflict as exc:
            self.post_message(self.Conflicted(text, exc.current_sha))
            return
        except EncodingMismatch as exc:
            self.post_message(self.Unencodable(text, exc))
            return
        self.post_message(self.Saved(target, result.sha, text, result.warnings, as_utf8))

    @on(Saved)
    def _saved(self, message: Saved) -> None:
        self.saving = False
        self.path = message.path
        self.loaded_sha = message.sha
        self.saved_text = message.text
        if message.as_utf8:
            self.encoding = ""
        if self._save_again:
            self._save_again = False
            then, self._after_save = self._after_save, None
            self.action_save(then)
            return
        self._update_title()
        if message.warnings:
            self.notify("\n".join(message.warnings), title=f"Saved {message.path}", severity="warning")
        else:
            self.notify(f"Saved {message.path}", timeout=2)
        then, self._after_save = self._after_save, None
        if then is not None:
            then()

    @on(Conflicted)
    def _conflicted(self, message: Conflicted) -> None:
        self.saving = False
        self._save_again = False
        self._update_title()
        self._after_save = None
        self.app.push_screen(
            ChoiceDialog(
                "Note changed on disk",
                f"{self.path} changed on disk since you opened it.",
                [
                    ("cancel", "Keep editing"),
                    ("copy", "Save as copy"),
                    ("overwrite", "Overwrite"),
                    ("reload", "Reload (drop my edits)"),
                ],
                safe="cancel",
                destructive=("overwrite", "reload"),
                id="conflict-dialog",
            ),
            lambda choice: self._resolve(choice or "cancel", message.text, message.current_sha),
        )

    def _resolve(self, choice: str, text: str, current_sha: str | None) -> None:
        if choice == "reload":
            self._load()
        elif choice in ("overwrite", "copy"):
            self.saving = True
            self._update_title()
            if choice == "overwrite":
                # Replaces the version the dialog was about, knowingly, and never a newer one.
                self._save(self.path, text, current_sha)
            else:
                self._save(None, text, None)

    @on(Unencodable)
    def _unencodable(self, message: Unencodable) -> None:
        self.saving = False
        self._save_again = False
        self._update_title()
        self._after_save = None

        def answered(choice: str | None) -> None:
            if choice == "utf8":
                self.saving = True
                self._update_title()
                self._save(self.path, message.text, self.loaded_sha, as_utf8=True)

        self.app.push_screen(
            ChoiceDialog(
                message.error.title,
                f"{self.path}: {message.error}",
                [("cancel", "Keep editing"), ("utf8", "Save as UTF-8")],
                safe="cancel",
                id="encoding-dialog",
            ),
            answered,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed save is no longer in progress (the mixin shows the error)."""
        super().on_worker_state_changed(event)
        if event.state in (WorkerState.ERROR, WorkerState.CANCELLED) and self.saving:
            self.saving = False
            self._save_again = False
            self._after_save = None
            self._update_title()

    def action_close(self) -> None:
        """Hide the link suggestions if they show; else leave the editor, asking first if there are unsaved changes."""
        editor = self.query_one("#editor", NoteEditor)
        if editor.suggesting:
            editor.hide_suggestions()
            return
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
                safe="save",
                destructive=("discard",),
                id="unsaved-dialog",
            ),
            answered,
        )
