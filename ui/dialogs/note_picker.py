"""A modal note picker: type part of a title or alias, choose among the notes it names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from engine.records import NoteChoice

if TYPE_CHECKING:
    from engine.api import Engine

# Choices shown at once.
_SHOWN = 8
_HOW = {"alias": "alias", "nearest": "close spelling"}


class NotePicker(ModalScreen[str | None]):
    """Offers the notes that match what is typed (titles, aliases, paths; the nearest spellings
    when nothing matches); dismisses with the chosen note's path (None on escape)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", "Next", show=False, priority=True),
        Binding("up", "move(-1)", "Previous", show=False, priority=True),
    ]

    @dataclass
    class ChoicesReady(Message, bubble=False):
        """The engine offered `choices` for `text`."""

        text: str
        choices: list[NoteChoice]

    def __init__(self, engine: Engine, title: str, hint: str, value: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.engine = engine
        self._title = title
        self._hint = hint
        self._value = value
        self.choices: list[NoteChoice] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="dialog-title", markup=False)
            yield Label(self._hint, id="dialog-question", markup=False)
            yield Input(self._value, id="picker-input", placeholder="Type part of a title or an alias")
            yield OptionList(id="picker-choices")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._choose(self._value)

    @on(Input.Changed, "#picker-input")
    def _typed(self, event: Input.Changed) -> None:
        self._choose(event.value)

    @work(thread=True, exclusive=True, exit_on_error=False, group="picker")
    def _choose(self, text: str) -> None:
        choices = self.engine.note_choices(text, limit=_SHOWN) if text.strip() else []
        if not get_current_worker().is_cancelled:
            self.post_message(self.ChoicesReady(text, choices))

    @on(ChoicesReady)
    def _offered(self, message: ChoicesReady) -> None:
        if message.text != self.query_one(Input).value:
            return  # typed on meanwhile
        self.choices = message.choices
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(self._line(choice), id=choice.path) for choice in message.choices])
        if message.choices:
            options.highlighted = 0

    @staticmethod
    def _line(choice: NoteChoice) -> Content:
        parts: list[tuple[str, str] | str] = [(choice.title, "bold")]
        if choice.how == "nearest":
            parts.append(("  close spelling", "italic $text-muted"))
        elif choice.matched != choice.title and choice.matched not in choice.path:
            parts.append((f"  alias “{choice.matched}”", "italic $text-muted"))
        parts.extend(["  ", (choice.path, "$text-muted")])
        return Content.assemble(*parts)

    def action_move(self, delta: int) -> None:
        """Move the highlight through the choices while the typing goes on."""
        options = self.query_one(OptionList)
        if options.option_count:
            current = options.highlighted if options.highlighted is not None else -1
            options.highlighted = max(0, min(options.option_count - 1, current + delta))

    def action_cancel(self) -> None:
        """Dismiss without a note."""
        self.dismiss(None)

    @on(Input.Submitted, "#picker-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._pick()

    @on(OptionList.OptionSelected, "#picker-choices")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def _pick(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)
            return
        text = self.query_one(Input).value.strip()
        if text:
            self.notify(f"No note is named “{text}”; type part of a title or an alias.", severity="warning")
