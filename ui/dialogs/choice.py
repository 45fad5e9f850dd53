"""A modal question with a few labelled answers (confirmations, save conflicts)."""

from __future__ import annotations

from collections.abc import Collection
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ChoiceDialog(ModalScreen[str]):
    """Asks a question; dismisses with the chosen answer's key (escape: `cancel`).

    The focus starts on the `safe` answer, so enter never throws work away; a
    `destructive` answer is drawn as a warning and takes a deliberate move (tab or
    an arrow key, then enter, or a click).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose('cancel')", "Cancel"),
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
    ]

    def __init__(
        self,
        title: str,
        question: str,
        choices: list[tuple[str, str]],
        *,
        safe: str | None = None,
        destructive: Collection[str] = (),
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._title = title
        self._question = question
        self._choices = choices
        keys = [key for key, _label in choices]
        self.safe = safe if safe in keys else "cancel" if "cancel" in keys else keys[0]
        self._destructive = frozenset(destructive)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title, id="dialog-title", markup=False)
            yield Label(self._question, id="dialog-question", markup=False)
            with Horizontal(id="dialog-buttons"):
                for key, label in self._choices:
                    if key in self._destructive:
                        yield Button(label, id=f"choice-{key}", variant="error")
                    else:
                        yield Button(label, id=f"choice-{key}", variant="primary" if key == self.safe else "default")

    def on_mount(self) -> None:
        self.query_one(f"#choice-{self.safe}", Button).focus()

    def action_choose(self, key: str) -> None:
        """Dismiss with `key`."""
        self.dismiss(key)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "choice-cancel").removeprefix("choice-"))
