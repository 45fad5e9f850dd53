"""The open note as Obsidian shows it (the engine's reading), with followable links and a highlighted passage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from engine.present import parse_markdown
from engine.records import NoteView as NoteRecord
from ui.widgets.note_markdown import NOTE_PARSER, NoteMarkdown, Prepared
from ui.wikilinks import (
    FILE_SCHEME,
    MISSING_SCHEME,
    TAG_SCHEME,
    href_for,
    parse_href,
    relative_target,
)


class NoteView(VerticalScroll, can_focus=True):
    """Renders one note; clicking a link asks to follow it."""

    # Out of the footer, as the arrow keys they repeat are: at 80 columns it keeps Quit in sight.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "scroll_down", "Down", show=False),
        Binding("k", "scroll_up", "Up", show=False),
    ]

    @dataclass
    class LinkFollowed(Message):
        """The user followed a link to another note: at a line, a heading or a block (none: the top)."""

        path: str
        line: int = 0
        heading: str | None = None
        block: str | None = None

    @dataclass
    class MissingLink(Message):
        """The user followed a link whose target note does not exist."""

        target: str

    @dataclass
    class TagChosen(Message):
        """The user clicked a tag (without its `#`)."""

        tag: str

    @dataclass
    class FileChosen(Message):
        """The user clicked a link to a vault file that is not a note (an image, a PDF)."""

        path: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.note: NoteRecord | None = None
        self.passage_line = 0
        self._tokens: list[Token] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="note-meta")
        yield NoteMarkdown(href_for, parser_factory=self._parser, id="note-body")

    def _parser(self) -> MarkdownIt:
        return Prepared(self._tokens)

    @property
    def path(self) -> str | None:
        """The path of the note shown, if any."""
        return self.note.info.path if self.note else None

    async def show(self, note: NoteRecord, tokens: list[Token], line: int = 0) -> None:
        """Render `note` from the engine's `tokens`; scroll to and highlight the block holding file line `line`."""
        self.note = note
        self._tokens = tokens
        self.query_one("#note-meta", Static).update(_meta(note, tokens))
        await self.query_one("#note-body", Markdown).update(note.text)
        self.passage_line = 0
        if line > 0:
            self.highlight_line(line)
        else:
            self.scroll_home(animate=False)

    async def show_text(self, markdown: str) -> None:
        """Show a Markdown message instead of a note (e.g. the welcome text)."""
        self.note = None
        self._tokens = parse_markdown(NOTE_PARSER, markdown)
        self.query_one("#note-meta", Static).update("")
        await self.query_one("#note-body", Markdown).update(markdown)

    def clear(self) -> None:
        """Show nothing (e.g. after the open note was deleted)."""
        self.note = None
        self._tokens = []
        self.query_one("#note-meta", Static).update("")
        self.query_one("#note-body", Markdown).update("")

    def block_at(self, line: int) -> MarkdownBlock | None:
        """The top-level block whose source lines include file line `line` (1-based)."""
        index = line - 1
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
            self.post_message(self.LinkFollowed(target.path, target.line, target.heading, target.block))
        elif href.startswith(MISSING_SCHEME):
            self.post_message(self.MissingLink(unquote(href[len(MISSING_SCHEME) :])))
        elif href.startswith(TAG_SCHEME):
            self.post_message(self.TagChosen(href[len(TAG_SCHEME) :]))
        elif href.startswith(FILE_SCHEME):
            self.post_message(self.FileChosen(unquote(href[len(FILE_SCHEME) :])))
        elif href.startswith("#fn-"):
            self._show_footnotes()
        elif href.startswith(("http://", "https://", "mailto:")):
            self.app.open_url(href)
        elif self.path is not None:
            self.post_message(self.LinkFollowed(relative_target(self.path, href)))

    def _show_footnotes(self) -> None:
        markdown = self.query_one("#note-body", Markdown)
        blocks = [block for block in markdown.children if isinstance(block, MarkdownBlock)]
        found = next((b for b in reversed(blocks) if b._token.meta.get("footnotes")), None)
        if found is not None:
            self.scroll_to_widget(found, animate=False, top=True)


def _meta(note: NoteRecord, tokens: list[Token]) -> Content:
    """The line above a note: its title as Obsidian shows it (unless its first heading says it), the path
    where another note has the same title, then aliases and tags."""
    info = note.info
    first_heading = next(
        (tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and i + 1 < len(tokens)),
        None,
    )
    parts: list[Content | str] = []
    if first_heading is None or first_heading.strip().casefold() != info.title.strip().casefold():
        parts.append(Content.styled(info.title, "bold $text"))
    if note.same_title:
        others = ", ".join(note.same_title[:2]) + (" …" if len(note.same_title) > 2 else "")
        parts.append(Content.assemble(info.path, (f" (same title as {others})", "$text-muted")))
    extra = []
    if info.aliases:
        extra.append("aka " + ", ".join(info.aliases))
    if info.tags:
        extra.append(" ".join(f"#{tag}" for tag in info.tags))
    if extra:
        parts.append(" · ".join(extra))
    if not parts:
        parts.append(info.path)
    return Content("\n").join(Content(p) if isinstance(p, str) else p for p in parts)
