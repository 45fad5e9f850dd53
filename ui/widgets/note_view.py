"""The open note rendered as Markdown, with followable wikilinks and a highlighted passage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from engine.records import NoteView as NoteRecord
from ui.wikilinks import (
    MISSING_SCHEME,
    parse_href,
    relative_target,
    resolution_map,
    wikilinks_to_markdown,
)


class NoteView(VerticalScroll, can_focus=True):
    """Renders one note; clicking a link asks to follow it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("j", "scroll_down", "Down"),
        ("k", "scroll_up", "Up"),
    ]

    @dataclass
    class LinkFollowed(Message):
        """The user followed a link to another note (line 0: the top)."""

        path: str
        line: int = 0

    @dataclass
    class MissingLink(Message):
        """The user followed a link whose target note does not exist."""

        target: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.note: NoteRecord | None = None
        self.passage_line = 0
        self._line_offset = 0

    def compose(self) -> ComposeResult:
        yield Static("", id="note-meta")
        yield Markdown("", id="note-body", open_links=False)

    @property
    def path(self) -> str | None:
        """The path of the note shown, if any."""
        return self.note.info.path if self.note else None

    async def show(self, note: NoteRecord, line: int = 0) -> None:
        """Render `note`; scroll to and highlight the block holding file line `line`."""
        self.note = note
        lines = note.text.split("\n")
        self._line_offset = note.body_line_offset
        body = "\n".join(lines[note.body_line_offset:])
        meta = []
        if note.info.aliases:
            meta.append("aka " + ", ".join(note.info.aliases))
        if note.info.tags:
            meta.append(" ".join(f"#{tag}" for tag in note.info.tags))
        meta_widget = self.query_one("#note-meta", Static)
        meta_widget.update(" · ".join(meta) or note.info.path)
        markdown = self.query_one("#note-body", Markdown)
        await markdown.update(wikilinks_to_markdown(body, resolution_map(note.links)))
        self.passage_line = 0
        if line > 0:
            self.highlight_line(line)
        else:
            self.scroll_home(animate=False)

    async def show_text(self, markdown: str) -> None:
        """Show a Markdown message instead of a note (e.g. the welcome text)."""
        self.note = None
        self.query_one("#note-meta", Static).update("")
        await self.query_one("#note-body", Markdown).update(markdown)

    def clear(self) -> None:
        """Show nothing (e.g. after the open note was deleted)."""
        self.note = None
        self.query_one("#note-meta", Static).update("")
        self.query_one("#note-body", Markdown).update("")

    def block_at(self, line: int) -> MarkdownBlock | None:
        """The top-level block whose source lines include file line `line` (1-based)."""
        index = line - 1 - self._line_offset
        best: MarkdownBlock | None = None
        markdown = self.query_one("#note-body", Markdown)
        for block in markdown.children:
            if not isinstance(block, MarkdownBlock):
                continue
            start, end = block.source_range
            if start <= index < end:
                return block
            if start <= index:
                best = block
        return best

    def highlight_line(self, line: int) -> None:
        """Mark the passage at file line `line` and scroll it to the top."""
        for old in self.query(".-passage"):
            old.remove_class("-passage")
        block = self.block_at(line)
        self.passage_line = line
        if block is None:
            return
        block.add_class("-passage")
        self.call_after_refresh(self.scroll_to_widget, block, animate=False, top=True)

    @on(Markdown.LinkClicked)
    def _link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        href = event.href
        target = parse_href(href)
        if target is not None:
            self.post_message(self.LinkFollowed(*target))
        elif href.startswith(MISSING_SCHEME):
            from urllib.parse import unquote

            self.post_message(self.MissingLink(unquote(href[len(MISSING_SCHEME):])))
        elif href.startswith(("http://", "https://", "mailto:")):
            self.app.open_url(href)
        elif self.path is not None:
            self.post_message(self.LinkFollowed(relative_target(self.path, href)))
