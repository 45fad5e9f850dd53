"""A modal question with a few labelled answers (confirmations, save conflicts)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ChoiceDialog(ModalScreen[str]):
    """Asks a question; dismisses with the chosen answer's key (escape: `cancel`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose('cancel')", "Cancel"),
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
    ]

    def __init__(self, title: str, question: str, choices: list[tuple[str, str]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._title = title
        self._question = question
        self._choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="dialog-title")
            yield Label(self._question, id="dialog-question")
            with Horizontal(id="dialog-buttons"):
                for number, (key, label) in enumerate(self._choices):
                    yield Button(label, id=f"choice-{key}", variant="primary" if number == 0 else "default")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    def action_choose(self, key: str) -> None:
        """Dismiss with `key`."""
        self.dismiss(key)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "choice-cancel").removeprefix("choice-"))
