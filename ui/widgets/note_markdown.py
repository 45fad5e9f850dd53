"""Textual's Markdown widget over the engine's Obsidian tokens: callouts, embeds, tasks, tags, highlights.

The engine reads the note (engine.present.parse_markdown, the same reading the web
view renders); these blocks only say how each construct looks in a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content, Span
from textual.style import Style
from textual.widgets import Markdown

# The block classes are public names of a private module: textual.widgets.markdown exports only a few.
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBlockQuote,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownH1,
    MarkdownH2,
    MarkdownH3,
    MarkdownH4,
    MarkdownH5,
    MarkdownH6,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
    MarkdownTD,
    MarkdownTH,
    MarkdownUnorderedListItem,
)

from engine.present import (
    Callout,
    Embed,
    LinkRef,
    cut_reason,
    footnote_number,
    obsidian_markdown,
)

Href = Callable[[LinkRef], str]
_BLANKS = re.compile(r"\s+")
MARK_STYLE = "on $warning-muted"
TAG_STYLE = "$text-accent"
DANGLING_STYLE = "$text-muted italic"
MUTED_STYLE = "$text-muted"
CODE_STYLE = ".code_inline"
_INLINE_STYLES = {"em_open": ".em", "strong_open": ".strong", "s_open": ".s"}
# The TUI's one parser (markdown-it parsers are safe to share: each parse has its own state).
NOTE_PARSER = obsidian_markdown()


class Prepared(MarkdownIt):
    """A 'parser' that hands Textual tokens the engine already read (in a worker, with its embeds)."""

    def __init__(self, tokens: list[Token]) -> None:
        super().__init__("zero")
        self._tokens = tokens

    def parse(self, src: str, env: Any = None) -> list[Token]:
        """The prepared tokens (`src` is the text they were read from)."""
        return self._tokens


def inline_content(token: Token, href: Href) -> Content:
    """An inline token's children as styled Content; links carry `@click` actions with `href(ref)`."""
    pieces: list[str] = []
    spans: list[Span] = []
    stack: list[tuple[tuple[str | Style, ...], int]] = []
    position = 0

    def add(text: str, *styles: str | Style) -> None:
        nonlocal position
        # A theme colour ("$text-muted") and a click action are two spans: the first is
        # resolved when drawn, against the app's theme.
        spans.extend(Span(position, position + len(text), style) for style in styles)
        pieces.append(text)
        position += len(text)

    def close() -> None:
        if stack:
            styles, start = stack.pop()
            spans.extend(Span(start, position, style) for style in styles)

    skipping = False  # inside a file embed shown as its placeholder
    for child in token.children or ():
        kind = child.type
        if skipping:
            skipping = kind != "link_close"
            continue
        if kind == "text":
            add(_BLANKS.sub(" ", child.content))
        elif kind in ("hardbreak", "softbreak"):
            add("\n")
        elif kind == "code_inline":
            add(child.content, CODE_STYLE)
        elif kind in ("em_open", "strong_open", "s_open", "mark_open"):
            stack.append(((_INLINE_STYLES.get(kind, MARK_STYLE),), position))
        elif kind == "link_open" and isinstance(child.meta.get("link"), LinkRef) and child.meta["link"].embed and (
            child.meta["link"].file_kind in MEDIA_PLACEHOLDERS
        ):
            ref = child.meta["link"]
            add(file_placeholder(ref), MUTED_STYLE, _click(href(ref)))
            skipping = True
        elif kind == "link_open":
            ref = child.meta.get("link")
            target = href(ref) if isinstance(ref, LinkRef) else str(child.attrs.get("href", ""))
            dangling = isinstance(ref, LinkRef) and ref.path is None
            stack.append(((_click(target), DANGLING_STYLE) if dangling else (_click(target),), position))
        elif kind == "image" and child.meta.get("icon"):
            continue  # an inline icon is a glyph in Obsidian; a terminal leaves it out
        elif kind == "image":
            ref = child.meta.get("link")
            target = href(ref) if isinstance(ref, LinkRef) else str(child.attrs.get("src", ""))
            add(image_placeholder(child), MUTED_STYLE, _click(target))
        elif kind == "tag":
            add(f"#{child.content}", TAG_STYLE, _click(f"tag:{child.content}"))
        elif kind == "footnote_ref":
            number = footnote_number(child)
            add(f"[{number}]", MUTED_STYLE, _click(f"#fn-{number}"))
        elif kind.endswith("_close"):
            close()
    return Content("".join(pieces), spans=spans)


def _click(href: str) -> Style:
    """The style that makes a span a link: clicking it runs the block's `link` action with `href`."""
    return Style.from_meta({"@click": f"link({href!r})"})


# How a terminal shows an embedded file it cannot play or draw; `x` (or a click) opens it outside.
MEDIA_PLACEHOLDERS = {"audio": "♪ sound", "video": "▶ video", "pdf": "📄 PDF", "other": "📎 file"}


def file_placeholder(ref: LinkRef) -> str:
    """An embedded sound, video, PDF or other file in a terminal: `[♪ sound: talk.ogg · x opens it]`."""
    name = ref.target.rpartition("/")[2]
    return f"[{MEDIA_PLACEHOLDERS.get(ref.file_kind or 'other', '📎 file')}: {name} · x opens it]"


def image_placeholder(token: Token) -> str:
    """How an image shows in a terminal: its file name and size in brackets, `[image: Engelbart.jpg · 100 px]`."""
    ref = token.meta.get("link")
    name = ref.target.rpartition("/")[2] if isinstance(ref, LinkRef) else str(token.attrs.get("src", "")).rpartition("/")[2]
    width, height = token.meta.get("width"), token.meta.get("height")
    size = f" · {width}×{height} px" if width and height else f" · {width} px" if width else ""
    missing = " (missing)" if isinstance(ref, LinkRef) and ref.path is None else ""
    return f"[image: {name or 'image'}{size}{missing}]"


class _Inline:
    """Makes a block read its inline text with `inline_content` (links, tags, highlights, images).

    Not a widget itself: Textual's CSS follows a widget's first widget base, which
    stays the block it extends (so `MarkdownH2`'s margins still apply).
    """

    def _token_to_content(self, token: Token) -> Content:
        assert isinstance(self, MarkdownBlock)
        href: Href = getattr(self._markdown, "href", _no_href)
        return inline_content(token, href)


def _no_href(ref: LinkRef) -> str:
    return ""


class NoteParagraph(_Inline, MarkdownParagraph):
    """A paragraph; a callout's or an embed's title line."""

    def __init__(self, markdown: Markdown, token: Token, *args: Any, **kwargs: Any) -> None:
        super().__init__(markdown, token, *args, **kwargs)
        self.callout: Callout | None = token.meta.get("callout_title")
        self.embed: Embed | None = token.meta.get("embed_title")
        self.folded = self.callout is not None and self.callout.folded
        self._title = Content()
        if self.callout is not None:
            self.add_class("callout-title", f"-tone-{self.callout.style.tone}")
        elif self.embed is not None:
            self.add_class("embed-title")

    def _token_to_content(self, token: Token) -> Content:
        content = super()._token_to_content(token)
        if self.callout is not None:
            self._title = content
            return self._callout_title()
        if self.embed is not None:
            reason = cut_reason(self.embed)
            return Content.assemble(("↳ ", MUTED_STYLE), content, (f"  · {reason}" if reason else "", MUTED_STYLE))
        return content

    def _callout_title(self) -> Content:
        assert self.callout is not None
        fold = (" ▸" if self.folded else " ▾") if self.callout.foldable else ""
        return Content.assemble(f"{self.callout.style.icon} ", self._title.stylize("bold"), fold)

    def show_fold(self, folded: bool) -> None:
        """Say on a callout's title whether it is folded (▸) or open (▾)."""
        self.folded = folded
        self.set_content(self._callout_title())

    def on_click(self, event: events.Click) -> None:
        """A click on a foldable callout's title folds or unfolds it."""
        if self.callout is not None and self.callout.foldable and isinstance(self.parent, NoteQuote):
            self.parent.toggle_fold()


class NoteQuote(MarkdownBlockQuote):
    """A blockquote; a callout (its tone, folded or not) or an embedded note section."""

    def __init__(self, markdown: Markdown, token: Token, *args: Any, **kwargs: Any) -> None:
        super().__init__(markdown, token, *args, **kwargs)
        self.callout: Callout | None = token.meta.get("callout")
        embed = token.meta.get("embed")
        if self.callout is not None:
            self.add_class("callout", f"-tone-{self.callout.style.tone}")
            self.set_class(self.callout.folded, "-folded")
        elif isinstance(embed, Embed):
            self.add_class("embed")

    @property
    def foldable(self) -> bool:
        """Whether this is a callout the reader may fold."""
        return self.callout is not None and self.callout.foldable

    def toggle_fold(self) -> None:
        """Fold or unfold a foldable callout, and say so on its title."""
        if not self.foldable:
            return
        self.toggle_class("-folded")
        for child in self.children:
            if isinstance(child, NoteParagraph) and child.callout is not None:
                child.show_fold(self.has_class("-folded"))
                break


class NoteListItem(MarkdownUnorderedListItem):
    """A bullet; a task shows its box (`☐`, `☑`)."""

    def __init__(self, markdown: Markdown, token: Token, bullet: str) -> None:
        task = token.meta.get("task")
        if task is not None:
            bullet = "☐ " if task == " " else "☑ "
        super().__init__(markdown, token, bullet)
        self.set_class(task is not None and task != " ", "-done")


class NoteBulletList(MarkdownBulletList):
    """Textual's bullet list, whose rows keep their item's classes (a done task is drawn struck through)."""

    def compose(self) -> ComposeResult:
        for block in self._blocks:
            if isinstance(block, MarkdownListItem):
                bullet = MarkdownBullet()
                bullet.symbol = block.bullet
                yield Horizontal(bullet, Vertical(*block._blocks), classes="-done" if block.has_class("-done") else "")
        self._blocks.clear()


class NoteOrderedListItem(MarkdownOrderedListItem):
    """A numbered item; a task shows its box after the number (`1. ☑`)."""

    def __init__(self, markdown: Markdown, token: Token, bullet: str) -> None:
        super().__init__(markdown, token, bullet)
        task = token.meta.get("task")
        self.box = "" if task is None else "☐ " if task == " " else "☑ "
        self.set_class(task is not None and task != " ", "-done")


class NoteOrderedList(MarkdownOrderedList):
    """Textual's numbered list, whose rows keep their item's classes and task boxes."""

    def compose(self) -> ComposeResult:
        items = [block for block in self._blocks if isinstance(block, MarkdownListItem)]
        start = 1
        if items:
            try:
                start = int(items[0].bullet)
            except ValueError:
                pass
        symbols = [f"{number}. " + (getattr(item, "box", "")) for number, item in enumerate(items, start)]
        width = max((len(symbol) for symbol in symbols), default=0)
        for symbol, item in zip(symbols, items, strict=True):
            bullet = MarkdownBullet()
            bullet.symbol = symbol.rjust(width + 1)
            yield Horizontal(bullet, Vertical(*item._blocks), classes="-done" if item.has_class("-done") else "")
        self._blocks.clear()


class NoteH1(_Inline, MarkdownH1):
    pass


class NoteH2(_Inline, MarkdownH2):
    pass


class NoteH3(_Inline, MarkdownH3):
    pass


class NoteH4(_Inline, MarkdownH4):
    pass


class NoteH5(_Inline, MarkdownH5):
    pass


class NoteH6(_Inline, MarkdownH6):
    pass


class NoteTH(_Inline, MarkdownTH):
    pass


class NoteTD(_Inline, MarkdownTD):
    pass


class NoteMarkdown(Markdown):
    """Textual's Markdown widget with the blocks above; `href` says where a link goes."""

    BLOCKS = {  # noqa: RUF012 (Textual's own mapping, extended)
        **Markdown.BLOCKS,
        "h1": NoteH1,
        "h2": NoteH2,
        "h3": NoteH3,
        "h4": NoteH4,
        "h5": NoteH5,
        "h6": NoteH6,
        "paragraph_open": NoteParagraph,
        "blockquote_open": NoteQuote,
        "list_item_unordered_open": NoteListItem,
        "bullet_list_open": NoteBulletList,
        "list_item_ordered_open": NoteOrderedListItem,
        "ordered_list_open": NoteOrderedList,
        "th_open": NoteTH,
        "td_open": NoteTD,
    }

    def __init__(self, href: Href, *, parser_factory: Callable[[], MarkdownIt], id: str | None = None) -> None:
        super().__init__("", id=id, parser_factory=parser_factory, open_links=False)
        self.href = href
