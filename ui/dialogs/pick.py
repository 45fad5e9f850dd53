"""A modal list to pick one entry from (the outline's headings, the vault's tags, a note's files)."""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option


class PickDialog(ModalScreen[str | None]):
    """Lists (key, label) entries, filtered as you type; enter picks one, escape picks none."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "pick_none", "Close")]

    def __init__(self, title: str, entries: list[tuple[str, str]], *, empty: str = "Nothing to list.", id: str | None = None) -> None:
        super().__init__(id=id)
        self._title = title
        self._entries = entries
        self._empty = empty

    def compose(self) -> ComposeResult:
        with Vertical(id="pick"):
            yield Label(self._title, id="pick-title", markup=False)
            yield Input(placeholder="Filter…", id="pick-filter")
            yield OptionList(id="pick-list")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one("#pick-filter", Input).focus()

    def _fill(self, text: str) -> None:
        words = text.casefold().split()
        shown = [
            Option(Content(label), id=key)
            for key, label in self._entries
            if all(word in label.casefold() for word in words)
        ]
        options = self.query_one("#pick-list", OptionList)
        options.clear_options()
        if shown:
            options.add_options(shown)
            options.highlighted = 0
        else:
            options.add_option(Option(Content(self._empty), disabled=True))

    @on(Input.Changed, "#pick-filter")
    def _filtered(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_key(self, event: events.Key) -> None:
        """Up and down move through the list while the filter has the focus."""
        if event.key in ("down", "up") and isinstance(self.focused, Input):
            options = self.query_one("#pick-list", OptionList)
            if event.key == "down":
                options.action_cursor_down()
            else:
                options.action_cursor_up()
            event.stop()

    @on(Input.Submitted, "#pick-filter")
    def _submitted(self) -> None:
        options = self.query_one("#pick-list", OptionList)
        if options.highlighted is not None:
            option = options.get_option_at_index(options.highlighted)
            if not option.disabled:
                self.dismiss(option.id)

    @on(OptionList.OptionSelected, "#pick-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_pick_none(self) -> None:
        """Close without picking."""
        self.dismiss(None)
