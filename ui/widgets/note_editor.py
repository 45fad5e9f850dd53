"""The note editor's TextArea: Markdown highlighting and `[[` link completion from the engine."""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import OptionList, TextArea

from engine.records import LinkCompletion

# What follows an unclosed `[[` on the line before the cursor: the link being typed.
_TYPING_LINK = re.compile(r"\[\[([^\[\]|\n]*)$")


def markdown_highlighting_available() -> bool:
    """Whether tree-sitter and its Markdown grammar are installed (textual[syntax])."""
    return "markdown" in TextArea().available_languages


class NoteEditor(TextArea):
    """A TextArea that says when a `[[` link is being typed, and takes up/down/enter/tab/escape
    for the suggestion list while it is shown."""

    @dataclass
    class LinkTyped(Message):
        """The text after an open `[[` before the cursor changed (None: no link is being typed)."""

        typed: str | None

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.suggestions: OptionList | None = None
        self.completions: list[LinkCompletion] = []

    def typed_link(self) -> str | None:
        """What follows the open `[[` before the cursor on its line, or None."""
        row, column = self.cursor_location
        found = _TYPING_LINK.search(self.document.get_line(row)[:column])
        return found.group(1) if found else None

    def on_text_area_changed(self) -> None:
        self.post_message(self.LinkTyped(self.typed_link()))

    @property
    def suggesting(self) -> bool:
        """Whether the suggestion list is shown."""
        return self.suggestions is not None and self.suggestions.display and bool(self.completions)

    def hide_suggestions(self) -> None:
        """Hide the list (escape, or the link was finished)."""
        self.completions = []
        if self.suggestions is not None:
            self.suggestions.display = False

    def on_key(self, event: events.Key) -> None:
        """While suggestions show: arrows move through them, enter or tab takes one, escape hides them."""
        if not self.suggesting or self.suggestions is None:
            return
        if event.key in ("up", "down"):
            if event.key == "down":
                self.suggestions.action_cursor_down()
            else:
                self.suggestions.action_cursor_up()
        elif event.key in ("enter", "tab"):
            self.accept(self.suggestions.highlighted or 0)
        elif event.key == "escape":
            self.hide_suggestions()
        else:
            return
        event.prevent_default()
        event.stop()

    def accept(self, index: int) -> None:
        """Write the chosen link in place of what was typed after `[[`, closing it with `]]`."""
        typed = self.typed_link()
        if typed is None or not 0 <= index < len(self.completions):
            self.hide_suggestions()
            return
        link = self.completions[index].link
        row, column = self.cursor_location
        start = (row, column - len(typed))
        line = self.document.get_line(row)
        closed = line[column : column + 2] == "]]"
        self.replace(link if closed else f"{link}]]", start, (row, column))
        self.move_cursor((row, start[1] + len(link) + 2))
        self.hide_suggestions()
