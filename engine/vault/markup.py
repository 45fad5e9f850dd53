"""Obsidian-flavoured Markdown for display: one parser whose tokens every front end renders.

The TUI (Textual's Markdown widget) and the web view (markdown-it's HTML renderer) read
a note through `obsidian_markdown()` and `parse_markdown()`, so both show the same
constructs the same way. The block tokens are CommonMark's and GFM's only (paragraph,
heading, blockquote, lists, table, fence, hr), annotated in `meta`, so a renderer that
knows nothing of Obsidian still shows the text:

- a callout is a `blockquote_open`/`_close` with `meta["callout"]` (a `Callout`), whose
  first child is its title paragraph (`meta["callout_title"]`);
- an embedded note section is a blockquote with `meta["embed"]` (an `Embed`): a title
  paragraph (`meta["embed_title"]`) and the section's own tokens (no source map: they
  come from another file);
- a task is a `list_item_open` with `meta["task"]` (the character in `[ ]`);
- a block with an id (`^b15695`) carries `meta["block_id"]`; the id is not shown;
- footnotes are an `ordered_list_open` with `meta["footnotes"]` after an `hr`;
- math is shown as source: `$…$` is a `code_inline` and `$$…$$` a `fence` (info
  `math`), both with `meta["math"]`.

Inline, every link is a `link_open` with `meta["link"]` (a `LinkRef`, resolved with
the note's own link table); an image embed (`![[x.png|100]]`) is an `image` with
`meta["link"]`, `meta["width"]` and `meta["height"]`; `==highlights==` are
`mark_open`/`mark_close`; a tag is a `tag` token; a footnote reference a `footnote_ref`.
Single line breaks are `hardbreak`s (Obsidian's default). Comments (`%% … %%`) never
reach the parser. Nothing inside code is a link, a tag or an embed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.state_inline import Delimiter
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from engine.records import Canvas, CanvasCard, FileKind, Link, NoteSection
from engine.vault.bounded_markdown import bound_parsing, over_budget_lines, plain_block
from engine.vault.callouts import Callout, read_callout
from engine.vault.files import IMAGE_SUFFIXES, file_kind, is_icon
from engine.vault.links import WIKILINK, collector_paused, split_wikilink
from engine.vault.sections import trailing_block_id, without_comments

__all__ = ["IMAGE_SUFFIXES", "Embed", "EmbedFn", "LinkRef", "LinkTable", "RenderContext", "obsidian_markdown", "parse_markdown"]

MAX_EMBED_DEPTH = 3
MAX_EMBEDS = 40
MAX_EMBEDDED_CHARS = 200_000
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_SIZE = re.compile(r"^(\d{1,5})(?:x(\d{1,5}))?$")
_TAG = re.compile(r"#([\w/\-]+)")
_TASK = re.compile(r"\[([^\[\]\n])\](?:[ \t]+|$)")

EmbedCut = Literal["", "cycle", "depth", "missing", "limit"]


@dataclass(frozen=True)
class LinkRef:
    """Where a rendered link points: the link as written and the vault path it resolves to (None: nowhere)."""

    target: str
    heading: str | None
    block: str | None
    display: str | None
    embed: bool
    kind: Literal["wikilink", "markdown"]
    path: str | None

    @property
    def label(self) -> str:
        """What the link shows: its display text, else `Note > Heading` (Obsidian's way)."""
        if self.display:
            return self.display
        fragment = self.heading or (f"^{self.block}" if self.block else "")
        if self.target and fragment:
            return f"{self.target} > {fragment}"
        return self.target or fragment

    @property
    def is_note(self) -> bool:
        """Whether it resolves to a Markdown note."""
        return self.path is not None and self.path.lower().endswith(".md")

    @property
    def is_image(self) -> bool:
        """Whether it resolves to an image file."""
        return self.path is not None and self.path.lower().endswith(IMAGE_SUFFIXES)

    @property
    def file_kind(self) -> FileKind | None:
        """What the file it resolves to is (a note, an image, a sound, a PDF, a canvas …); None when it dangles."""
        return None if self.path is None else file_kind(self.path)

    @property
    def is_icon(self) -> bool:
        """Whether it is an inline icon (`![[lucide-cog.svg#icon]]`): drawn as a glyph, never named in text."""
        return self.embed and self.is_image and is_icon(self.heading)


@dataclass
class LinkTable:
    """A note's resolved link targets, keyed by (kind, casefolded target as the indexer read it)."""

    resolved: dict[tuple[str, str], str | None] = field(default_factory=dict)

    @classmethod
    def from_links(cls, links: Iterable[tuple[Link, str | None]]) -> LinkTable:
        """The table of a note's (Link, resolved path) pairs (`NoteView.links`, `NoteSection.links`)."""
        table = cls()
        for link, resolved in links:
            table.resolved.setdefault((link.kind, link.target.casefold()), resolved)
        return table

    def lookup(self, kind: str, target: str) -> str | None:
        """The vault path a target resolves to (None when dangling or unknown)."""
        key = target.casefold()
        found = self.resolved.get((kind, key))
        if found is None:
            other = "markdown" if kind == "wikilink" else "wikilink"
            found = self.resolved.get((other, key))
        return found


@dataclass(frozen=True)
class Embed:
    """A note, heading section or block shown inside another note, or why it is not (`cut`)."""

    link: LinkRef
    section: NoteSection | None
    cut: EmbedCut = ""


class EmbedFn(Protocol):
    """What fetches an embed's section (`Engine.embed_section`): None when there is none to show."""

    def __call__(
        self, source_path: str, target: str, *, heading: str | None = None, block: str | None = None
    ) -> NoteSection | None: ...


@dataclass
class _Budget:
    """What all the embeds of one rendering may still add, shared by every level."""

    embeds: int = MAX_EMBEDS
    chars: int = MAX_EMBEDDED_CHARS


@dataclass(frozen=True)
class RenderContext:
    """What rendering one note needs besides its text: its path, its resolved links, how to fetch embeds.

    `canvas` reads an embedded canvas's cards (`Engine.canvas`); `resolve` resolves a link
    the table does not hold, from a file that has no link table (a canvas card's text).
    """

    path: str = ""
    links: LinkTable = field(default_factory=LinkTable)
    embed: EmbedFn | None = None
    depth: int = 0
    chain: tuple[tuple[str, str, str], ...] = ()
    budget: _Budget = field(default_factory=_Budget)
    canvas: Callable[[str], Canvas] | None = None
    resolve: Callable[[str, str], str | None] | None = None

    def inside(self, section: NoteSection, key: tuple[str, str, str]) -> RenderContext:
        """The context of an embedded section, one level down."""
        return RenderContext(
            section.path,
            LinkTable.from_links(section.links),
            self.embed,
            self.depth + 1,
            (*self.chain, key),
            self.budget,
            self.canvas,
            self.resolve,
        )

    def in_canvas(self, path: str, key: tuple[str, str, str]) -> RenderContext:
        """The context of a canvas's cards: links resolved from the canvas, one level down."""
        return RenderContext(path, LinkTable(), self.embed, self.depth + 1, (*self.chain, key), self.budget, self.canvas, self.resolve)

    def lookup(self, kind: str, target: str) -> str | None:
        """Where a link target written in this note points (None: nowhere)."""
        found = self.links.lookup(kind, target)
        if found is None and self.resolve is not None and not self.links.resolved:
            found = self.resolve(self.path, target)
        return found


_PLAIN = RenderContext()


def obsidian_markdown() -> MarkdownIt:
    """A markdown-it parser for Obsidian notes (build one per front end; `parse_markdown` uses it).

    Raw HTML is shown as text and `javascript:` links are refused (markdown-it's own check).
    """
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(front_matter_plugin)
    md.use(footnote_plugin)
    # Obsidian's `$x$`: no blank inside the dollars, and `$5 and $10` is money, not math.
    md.use(dollarmath_plugin, allow_labels=False, allow_space=False, allow_digits=False, double_inline=True)
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "tag", _tag_rule)
    md.inline.ruler.before("emphasis", "mark", _mark_rule)
    md.inline.ruler2.before("emphasis", "mark", _mark_pairs)
    md.core.ruler.after("block", "obsidian_blocks", _blocks)
    md.core.ruler.push("obsidian_inline", _after_inline)
    bound_parsing(md)  # every `[` would rescan the text after it: a run of them took seconds per KB
    return md


def parse_markdown(md: MarkdownIt, text: str, context: RenderContext | None = None) -> list[Token]:
    """The tokens of a note's LF text (frontmatter included), read the Obsidian way.

    Token maps are the file's 0-based lines: comments are taken out line for line. The lines
    past the block budget (`BLOCK_LINES_BUDGET`) are one paragraph of plain text.
    """
    with collector_paused():
        head, rest, rest_line = over_budget_lines(without_comments(text))
        tokens = md.parse(head, {"cairn": context or _PLAIN})
        return tokens + plain_block(rest, rest_line) if rest else tokens


def _context(env: Any) -> RenderContext:
    found = env.get("cairn") if isinstance(env, dict) else None
    return found if isinstance(found, RenderContext) else _PLAIN


# -- inline rules ------------------------------------------------------------------


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """`[[target#heading|display]]` is a link, `![[…]]` an embed (an image, or a link the core rule expands)."""
    src, pos = state.src, state.pos
    if not src.startswith(("[[", "![["), pos):
        return False
    found = WIKILINK.match(src, pos)  # the indexer's grammar: what the index counts as a link
    if found is None or not found.group(2).strip():
        return False
    if not silent:
        _push_wikilink(state, found.group(2), embed=bool(found.group(1)))
    state.pos = found.end()
    return True


def _push_wikilink(state: StateInline, inner: str, *, embed: bool) -> None:
    parts = split_wikilink(inner)
    context = _context(state.env)
    path = context.lookup("wikilink", parts.target) if parts.target else (context.path or None)
    ref = LinkRef(parts.target, parts.heading, parts.block, parts.display, embed, "wikilink", path)
    if embed and ref.is_image:
        size = _SIZE.match(parts.display or "")
        image = state.push("image", "img", 0)
        name = posixpath.basename(parts.target) or parts.target
        alt = name if size or not parts.display else parts.display
        image.attrs = {"src": "", "alt": alt}
        image.content = alt
        alt_text = Token("text", "", 0)
        alt_text.content = alt
        image.children = [alt_text]
        image.meta = {
            "link": ref,
            "width": int(size.group(1)) if size else None,
            "height": int(size.group(2)) if size and size.group(2) else None,
            "icon": ref.is_icon,
        }
        return
    opening = state.push("link_open", "a", 1)
    opening.attrs = {"href": ""}
    opening.meta = {"link": ref}
    text = state.push("text", "", 0)
    text.content = posixpath.basename(ref.label) if embed and not parts.display and not ref.is_note else ref.label
    state.push("link_close", "a", -1)


def _tag_rule(state: StateInline, silent: bool) -> bool:
    """`#tag` after a blank or at the start: a tag (it needs a character that is not a digit, as in Obsidian)."""
    src, pos = state.src, state.pos
    if src[pos] != "#" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    found = _TAG.match(src, pos)
    if found is None:
        return False
    tag = found.group(1).rstrip("/")
    if not tag or all(c.isdigit() or c in "-/" for c in tag):
        return False
    if not silent:
        token = state.push("tag", "", 0)
        token.content = tag
        token.markup = "#"
    state.pos = pos + 1 + len(tag)
    return True


def _mark_rule(state: StateInline, silent: bool) -> bool:
    """`==` runs become delimiters that `_mark_pairs` turns into `mark_open`/`mark_close` (as `~~` does for `s`)."""
    start = state.pos
    if silent or state.src[start] != "=":
        return False
    scanned = state.scanDelims(start, True)
    length = scanned.length
    if length < 2:
        return False
    if length % 2:
        token = state.push("text", "", 0)
        token.content = "="
        length -= 1
    for _ in range(length // 2):
        token = state.push("text", "", 0)
        token.content = "=="
        state.delimiters.append(
            Delimiter(ord("="), 0, len(state.tokens) - 1, -1, scanned.can_open, scanned.can_close)
        )
    state.pos += scanned.length
    return True


def _mark_pairs(state: StateInline) -> None:
    _pair_marks(state, state.delimiters)
    for meta in state.tokens_meta:
        if meta and "delimiters" in meta:
            _pair_marks(state, meta["delimiters"])


def _pair_marks(state: StateInline, delimiters: list[Delimiter]) -> None:
    for opener in delimiters:
        if opener.marker != 0x3D or opener.end == -1:
            continue
        closer = delimiters[opener.end]
        for index, kind, nesting in ((opener.token, "mark_open", 1), (closer.token, "mark_close", -1)):
            token = state.tokens[index]
            token.type, token.tag, token.nesting, token.markup, token.content = kind, "mark", nesting, "==", ""  # type: ignore[assignment]


# -- block structure (before inline parsing) ------------------------------------------


def _blocks(state: StateCore) -> None:
    """Callouts get their type and title; block ids come off the text and onto their block."""
    tokens = state.tokens
    out: list[Token] = []
    # Callout blockquotes need their meta on the closing token too: renderers close what
    # they opened. Open blockquotes are stacked (their meta, or None).
    quotes: list[dict[str, Any] | None] = []
    # The latest opening token at each nesting level, and the one before it: a paragraph
    # of only `^id` names the block before it.
    latest: dict[int, Token] = {}
    before: dict[int, Token | None] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "blockquote_open":
            callout = _callout_at(tokens, index)
            quotes.append({"callout": callout} if callout else None)
            if callout is not None:
                token.meta = {**token.meta, "callout": callout}
                out.append(token)
                index = _title_paragraph(tokens, index, callout, out)
                continue
        elif token.type == "blockquote_close":
            found = quotes.pop() if quotes else None
            if found:
                token.meta = {**token.meta, **found}
        elif token.type == "inline" and "^" in token.content and _take_block_id(tokens, index, out, before):
            level = tokens[index - 1].level
            previous = before.get(level)
            if previous is None:
                latest.pop(level, None)
            else:
                latest[level] = previous
            index += 2  # the paragraph held only the id: its inline and closing token go too
            continue
        if token.nesting == 1:
            before[token.level] = latest.get(token.level)
            latest[token.level] = token
        out.append(token)
        index += 1
    state.tokens = out


def _callout_at(tokens: list[Token], index: int) -> Callout | None:
    if index + 2 >= len(tokens) or tokens[index + 1].type != "paragraph_open":
        return None
    inline = tokens[index + 2]
    if inline.type != "inline" or not inline.content.startswith("[!"):
        return None
    return read_callout(inline.content.partition("\n")[0])


def _title_paragraph(tokens: list[Token], index: int, callout: Callout, out: list[Token]) -> int:
    """Put the callout's title paragraph in `out`; the index to go on from (what is left of its first paragraph)."""
    opening, inline, closing = tokens[index + 1], tokens[index + 2], tokens[index + 3]
    title_open = Token("paragraph_open", "p", 1)
    title_open.map = [opening.map[0], opening.map[0] + 1] if opening.map else None
    title_open.level = opening.level
    title_open.block = True
    title_open.meta = {"callout_title": callout}
    title = Token("inline", "", 0)
    title.content = callout.title
    title.map = title_open.map
    title.level = inline.level
    title.children = []
    title_close = Token("paragraph_close", "p", -1)
    title_close.level = closing.level
    title_close.block = True
    out.extend((title_open, title, title_close))
    rest = inline.content.partition("\n")[2]
    if not rest.strip():
        return index + 4
    inline.content = rest
    if opening.map:
        opening.map = [opening.map[0] + 1, opening.map[1]]
        inline.map = opening.map
    return index + 1


def _take_block_id(tokens: list[Token], index: int, out: list[Token], before: dict[int, Token | None]) -> bool:
    """Move a trailing `^id` from an inline's text to its block's meta; True when nothing else was there."""
    inline = tokens[index]
    head, sep, last_line = inline.content.rpartition("\n")
    found = trailing_block_id(last_line)
    if found is None:
        return False
    kept, ident = found
    opening = out[-1] if out else None
    if kept or sep:
        inline.content = f"{head}{sep}{kept}" if kept else head
        if opening is not None:
            owner = out[-2] if len(out) > 1 and out[-2].type == "list_item_open" and opening.hidden else opening
            owner.meta = {**owner.meta, "block_id": ident}
        return False
    if opening is None or opening.type != "paragraph_open":
        inline.content = ""
        return False
    # A paragraph of only `^id` names the block before it, and is not shown.
    out.pop()
    named = before.get(opening.level)
    if named is not None:
        named.meta = {**named.meta, "block_id": ident}
    return True


# -- after inline parsing ---------------------------------------------------------------


def _after_inline(state: StateCore) -> None:
    """Tasks, vault links, math, line breaks and footnotes take their shown form; note embeds are expanded."""
    context = _context(state.env)
    tokens = state.tokens
    last_at_level: dict[int, int] = {}
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "inline":
            _inline_children(token, context)
        elif kind == "list_item_open" and index + 2 < len(tokens):
            _task(token, tokens[index + 1], tokens[index + 2], tokens, last_at_level)
        elif kind == "math_block":
            token.type, token.tag, token.info, token.markup = "fence", "code", "math", "$$"
            token.content = token.content.strip("\n") + "\n"
            token.meta = {**token.meta, "math": True}
        elif kind.startswith("footnote_"):
            _footnote_block(token)
        if token.nesting == 1:
            last_at_level[token.level] = index
    shown: list[Token] = []
    for token in tokens:
        if token.type == "footnote_anchor":
            continue
        if token.type == "ordered_list_open" and token.meta.get("footnotes"):
            rule = Token("hr", "hr", 0)
            rule.block, rule.markup = True, "---"
            shown.append(rule)
        shown.append(token)
    state.tokens = _expanded(state.md, shown, context)


def _inline_children(inline: Token, context: RenderContext) -> None:
    for child in inline.children or ():
        kind = child.type
        if kind == "softbreak":
            child.type, child.tag = "hardbreak", "br"  # Obsidian keeps a single line break
        elif kind in ("math_inline", "math_inline_double"):
            child.type, child.tag, child.markup = "code_inline", "code", "$"
            child.meta = {**child.meta, "math": True}
        elif kind == "link_open" and "link" not in child.meta:
            _markdown_link(child, context, "href")
        elif kind == "image" and "link" not in child.meta:
            _markdown_link(child, context, "src")


def _markdown_link(token: Token, context: RenderContext, attr: str) -> None:
    """A Markdown link or image to a vault file gets its `LinkRef`; an image alt of `100x145` is its size."""
    value = str(token.attrGet(attr) or "")
    if attr == "src":
        alt = token.content
        name, bar, size_text = alt.rpartition("|")
        size = _SIZE.match(size_text if bar else alt)
        if size:
            token.meta = {**token.meta, "width": int(size.group(1)), "height": int(size.group(2)) if size.group(2) else None}
            # A size is no words: the image is named by the rest of its alt, else by its file (as a wikilink's is).
            alt = name if bar else posixpath.basename(unquote(value.partition("#")[0].partition("?")[0])) or value
            alt_text = Token("text", "", 0)
            alt_text.content = alt
            token.content, token.children = alt, [alt_text]
            token.attrSet("alt", alt)
    if not value or value.startswith("#") or _SCHEME.match(value) or value.startswith("//"):
        return
    raw, sep, fragment = value.partition("#")
    target = unquote(raw).strip()
    target = target[:-3] if target.lower().endswith(".md") else target
    fragment = unquote(fragment).strip() if sep else ""
    heading = fragment if fragment and not fragment.startswith("^") else None
    block = fragment[1:] or None if fragment.startswith("^") else None
    path = context.lookup("markdown", target) if target else (context.path or None)
    token.meta = {**token.meta, "link": LinkRef(target, heading, block, None, attr == "src", "markdown", path)}


def _task(
    item: Token, paragraph: Token, inline: Token, tokens: list[Token], last_at_level: dict[int, int]
) -> None:
    """`- [ ] todo` and `- [x] done` (any one character in the box): the item's meta says which."""
    if paragraph.type != "paragraph_open" or inline.type != "inline":
        return
    found = _TASK.match(inline.content)
    if found is None or not inline.children or inline.children[0].type != "text":
        return
    first = inline.children[0]
    if not first.content.startswith(found.group(0)):
        return
    item.meta = {**item.meta, "task": found.group(1)}
    first.content = first.content[found.end() :]
    inline.content = inline.content[found.end() :]
    owner = last_at_level.get(item.level - 1)
    if owner is not None:
        tokens[owner].meta = {**tokens[owner].meta, "tasks": True}


def _footnote_block(token: Token) -> None:
    """The footnote plugin's block tokens as an ordered list (standard tokens every renderer knows)."""
    if token.type == "footnote_block_open":
        token.type, token.tag, token.nesting = "ordered_list_open", "ol", 1
        token.meta = {**token.meta, "footnotes": True}
    elif token.type == "footnote_block_close":
        token.type, token.tag, token.nesting = "ordered_list_close", "ol", -1
    elif token.type == "footnote_open":
        number = int(token.meta.get("id", 0)) + 1
        token.type, token.tag, token.nesting, token.info, token.markup = "list_item_open", "li", 1, str(number), "."
        token.meta = {**token.meta, "footnote": number}
    elif token.type == "footnote_close":
        token.type, token.tag, token.nesting = "list_item_close", "li", -1


def footnote_number(token: Token) -> int:
    """The number a `footnote_ref` token shows (1-based)."""
    return int(token.meta.get("id", 0)) + 1


# -- embeds -------------------------------------------------------------------------------


def _expanded(md: MarkdownIt, tokens: list[Token], context: RenderContext) -> list[Token]:
    """Paragraphs made only of note embeds become the embedded sections; the rest stays as it is."""
    if context.embed is None:
        return tokens
    out: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "paragraph_open" and index + 2 < len(tokens) and tokens[index + 1].type == "inline":
            refs = _only_embeds(tokens[index + 1])
            if refs:
                for ref in refs:
                    out.extend(_embed_tokens(md, ref, token, context))
                index += 3
                continue
        out.append(token)
        index += 1
    return out


def _only_embeds(inline: Token) -> list[LinkRef]:
    """The note embeds an inline holds when it holds nothing else (blanks and line breaks aside)."""
    refs: list[LinkRef] = []
    inside = False
    for child in inline.children or ():
        if child.type == "link_open":
            ref = child.meta.get("link")
            if not isinstance(ref, LinkRef) or not ref.embed or ref.kind != "wikilink" or ref.is_image:
                return []
            if ref.path is not None and not ref.is_note and ref.file_kind != "canvas":
                return []  # a PDF, a sound: an inline player or viewer, as each front end has one
            refs.append(ref)
            inside = True
        elif child.type == "link_close":
            inside = False
        elif inside or child.type in ("hardbreak", "softbreak") or (child.type == "text" and not child.content.strip()):
            continue
        else:
            return []
    return refs


def _embed_tokens(md: MarkdownIt, ref: LinkRef, paragraph: Token, context: RenderContext) -> list[Token]:
    """A blockquote holding the embed's title and its section, parsed as a note of its own one level down."""
    key = (ref.path or "", (ref.heading or "").casefold(), (ref.block or "").casefold())
    section: NoteSection | None = None
    cut: EmbedCut = ""
    if ref.file_kind == "canvas":
        return _canvas_tokens(md, ref, paragraph, context, key)
    if ref.path is None or context.embed is None:
        cut = "missing"
    elif key in context.chain or (ref.path == context.path and not ref.heading and not ref.block):
        cut = "cycle"
    elif context.depth >= MAX_EMBED_DEPTH:
        cut = "depth"
    elif context.budget.embeds <= 0 or context.budget.chars <= 0:
        cut = "limit"
    else:
        context.budget.embeds -= 1
        section = context.embed(context.path, ref.target, heading=ref.heading, block=ref.block)
        if section is None:
            cut = "missing"
        else:
            context.budget.chars -= len(section.text)
    embed = Embed(ref, section, cut)
    level = paragraph.level
    opening = Token("blockquote_open", "blockquote", 1)
    opening.map, opening.level, opening.block, opening.markup = paragraph.map, level, True, ">"
    opening.meta = {"embed": embed}
    closing = Token("blockquote_close", "blockquote", -1)
    closing.level, closing.block, closing.markup = level, True, ">"
    closing.meta = {"embed": embed}
    title_open = Token("paragraph_open", "p", 1)
    title_open.level, title_open.block = level + 1, True
    title_open.meta = {"embed_title": embed}
    title = Token("inline", "", 0)
    title.level = level + 2
    title.content = ref.label
    link_open = Token("link_open", "a", 1)
    link_open.attrs = {"href": ""}
    link_open.meta = {"link": LinkRef(ref.target, ref.heading, ref.block, ref.display, False, ref.kind, ref.path)}
    label = Token("text", "", 0)
    label.content = ref.label
    title.children = [link_open, label, Token("link_close", "a", -1)]
    title_close = Token("paragraph_close", "p", -1)
    title_close.level, title_close.block = level + 1, True
    body: list[Token] = []
    if section is not None:
        inner = section.text + ("\n\n…" if section.truncated else "")
        child = context.inside(section, key)
        with collector_paused():
            body = md.parse(without_comments(inner), {"cairn": child})
        for token in body:
            token.map = None  # lines of another file: never anchors of this one
            token.level += level + 1
        if ref.block:
            # Obsidian shows an embedded block as its text alone, with no `Note > ^id` above it.
            return [opening, *body, closing]
    return [opening, title_open, title, title_close, *body, closing]


def _quote(level: int, meta: dict[str, Any], paragraph: Token | None = None) -> tuple[Token, Token]:
    opening = Token("blockquote_open", "blockquote", 1)
    opening.level, opening.block, opening.markup, opening.meta = level, True, ">", meta
    opening.map = paragraph.map if paragraph is not None else None
    closing = Token("blockquote_close", "blockquote", -1)
    closing.level, closing.block, closing.markup, closing.meta = level, True, ">", meta
    return opening, closing


def _title_tokens(ref: LinkRef, level: int, meta: dict[str, Any]) -> list[Token]:
    title_open = Token("paragraph_open", "p", 1)
    title_open.level, title_open.block, title_open.meta = level, True, meta
    title = Token("inline", "", 0)
    title.level = level + 1
    title.content = ref.label
    link_open = Token("link_open", "a", 1)
    link_open.attrs = {"href": ""}
    link_open.meta = {"link": LinkRef(ref.target, ref.heading, ref.block, ref.display, False, ref.kind, ref.path)}
    label = Token("text", "", 0)
    label.content = posixpath.basename(ref.label)
    title.children = [link_open, label, Token("link_close", "a", -1)]
    title_close = Token("paragraph_close", "p", -1)
    title_close.level, title_close.block = level, True
    return [title_open, title, title_close]


def canvas_card_markdown(card: CanvasCard) -> str:
    """A canvas card as the Markdown its card shows: its text, a link to its note or file, its web page, its group's name."""
    if card.kind == "file":
        target = card.path[:-3] if card.path and card.path.lower().endswith(".md") else card.path or card.text
        shown = posixpath.basename(target)
        return f"![[{target}]]" if file_kind(target) == "image" else f"[[{target}|{shown}]]" if shown != target else f"[[{target}]]"
    if card.kind == "link":
        return f"<{card.text}>" if card.text.startswith(("http://", "https://")) else card.text
    if card.kind == "group":
        return f"**{card.text}**" if card.text.strip() else ""
    return card.text


def _canvas_tokens(md: MarkdownIt, ref: LinkRef, paragraph: Token, context: RenderContext, key: tuple[str, str, str]) -> list[Token]:
    """An embedded canvas: a blockquote (`meta["canvas"]`) of its cards, each a blockquote (`meta["canvas_card"]`) of its text."""
    canvas: Canvas | None = None
    cut: EmbedCut = ""
    if ref.path is None or context.canvas is None:
        cut = "missing"
    elif key in context.chain or context.depth >= MAX_EMBED_DEPTH:
        cut = "depth"
    elif context.budget.embeds <= 0 or context.budget.chars <= 0:
        cut = "limit"
    else:
        context.budget.embeds -= 1
        canvas = context.canvas(ref.path)
        if canvas.problem:
            cut = "missing"
    embed = Embed(ref, None, cut)
    level = paragraph.level
    meta: dict[str, Any] = {"embed": embed, "canvas": canvas}
    opening, closing = _quote(level, meta, paragraph)
    out = [opening, *_title_tokens(ref, level + 1, {"embed_title": embed})]
    if canvas is not None and not canvas.problem and ref.path is not None:
        child = context.in_canvas(ref.path, key)
        for card in sorted(canvas.cards, key=lambda c: (c.kind != "group", c.y, c.x)):
            text = canvas_card_markdown(card)
            context.budget.chars -= len(text)
            card_open, card_close = _quote(level + 1, {"canvas_card": card})
            with collector_paused():
                body = md.parse(without_comments(text), {"cairn": child}) if text.strip() else []
            for token in body:
                token.map = None
                token.level += level + 2
            out.extend((card_open, *body, card_close))
    out.append(closing)
    return out


def cut_reason(embed: Embed) -> str:
    """Why an embed shows only its title, in a few words ("" when it shows its section)."""
    if embed.cut == "missing":
        if embed.link.path is None:
            named = embed.link.target.rpartition("/")[2]
            return "no such file" if "." in named and not named.lower().endswith(".md") else "no such note"
        wanted = embed.link.heading or (f"^{embed.link.block}" if embed.link.block else "")
        return f"no “{wanted}” in it" if wanted else "cannot be read"
    return {
        "cycle": "not shown again: it embeds itself",
        "depth": f"embeds nested deeper than {MAX_EMBED_DEPTH} are links",
        "limit": "too many embeds in this note to show them all",
    }.get(embed.cut, "")
