"""Note pages as safe HTML: the engine's Obsidian tokens (engine.present) rendered by markdown-it.

Callouts, embeds, tasks, tags, highlights, footnotes and math are read by the engine,
the same way the TUI reads them; this module only says how each looks in HTML. Raw
HTML is escaped, `javascript:` links are dropped, every block has its source line.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import OptionsDict

from engine.present import (
    IMAGE_SUFFIXES,
    Callout,
    Embed,
    EmbedFn,
    LinkRef,
    LinkTable,
    RenderContext,
    cut_reason,
    footnote_number,
    obsidian_markdown,
    parse_markdown,
)
from engine.records import Canvas, CanvasCard

__all__ = ["IMAGE_SUFFIXES", "LinkTable", "file_url", "heading_id", "highlight", "note_url", "render_note"]

_UNCHECKED = '<input class="task-list-item-checkbox" disabled="disabled" type="checkbox">'
_CHECKED = '<input class="task-list-item-checkbox" checked="checked" disabled="disabled" type="checkbox">'
e = html.escape


def note_url(path: str, *, line: int | None = None, heading: str | None = None, block: str | None = None) -> str:
    """The URL of a note page, optionally at a source line, a heading (`A#B`: B) or a block."""
    url = "/note/" + quote(path, safe="/")
    if line is not None:
        return f"{url}#L{line}"
    if block:
        return f"{url}#{quote(block_id(block))}"
    if heading:
        return f"{url}#{heading_id(heading.rstrip('#').rpartition('#')[2])}"
    return url


def file_url(path: str) -> str:
    """The URL that serves a vault file (an image or other attachment)."""
    return "/file/" + quote(path, safe="/")


def heading_id(text: str) -> str:
    """A stable element id for a heading text (the same for links and headings)."""
    slug = re.sub(r"[^\w]+", "-", text.casefold()).strip("-")
    return f"h-{slug or 'section'}"


def block_id(ident: str) -> str:
    """The element id of a block with id `ident` (`^b15695`), as Obsidian writes its links."""
    return f"^{ident}"


def _top_level(state: StateCore) -> bool:
    context = state.env.get("cairn")
    return not isinstance(context, RenderContext) or context.depth == 0


def _annotate(state: StateCore) -> None:
    """Source line anchors, heading ids and block ids (in the note itself, not in what it embeds)."""
    if not _top_level(state):
        return
    used_ids: set[str] = set()
    # The last suffix tried per id, so that the 10,000th "## Notes" does not try 9,999
    # taken ids first: the search for a free `-N` resumes where it stopped last time.
    last_suffix: dict[str, int] = {}
    tokens = state.tokens
    embedded = 0  # how deep inside embeds: what they show has no ids of this page
    for index, token in enumerate(tokens):
        if token.map and token.nesting >= 0 and token.type not in ("inline", "front_matter"):
            token.attrSet("data-line", str(token.map[0] + 1))
        if token.meta and isinstance(token.meta.get("embed"), Embed):
            embedded += token.nesting
            continue
        if embedded:
            continue
        ident = token.meta.get("block_id") if token.meta else None
        if token.type == "heading_open" and index + 1 < len(tokens):
            base = heading_id(tokens[index + 1].content)
            unique, counter = base, last_suffix.get(base, 1)
            if counter > 1:
                unique = f"{base}-{counter}"
            while unique in used_ids:
                counter += 1
                unique = f"{base}-{counter}"
            last_suffix[base] = counter
            used_ids.add(unique)
            token.attrSet("id", unique)
            if ident:
                token.attrSet("data-block", block_id(str(ident)))
        elif ident and token.nesting == 1:
            token.attrSet("id", block_id(str(ident)))


def _attrs(renderer: RendererHTML, token: Token) -> str:
    return str(renderer.renderAttrs(token))


def _blockquote_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    callout = token.meta.get("callout")
    if isinstance(callout, Callout):
        tag = "details" if callout.foldable else "div"
        shown = " open" if callout.foldable and not callout.folded else ""
        return (
            f'<{tag} class="callout" data-callout="{e(callout.style.name)}" data-tone="{e(callout.style.tone)}"'
            f' data-kind="{e(callout.kind)}"{_attrs(renderer, token)}{shown}>\n'
        )
    embed = token.meta.get("embed")
    if isinstance(embed, Embed):
        cut = f' data-cut="{e(embed.cut)}"' if embed.cut else ""
        if token.meta.get("canvas") is not None:
            return f'<div class="embed canvas"{cut}{_attrs(renderer, token)}>\n'
        if embed.link.block and embed.section is not None:
            # An embedded block is its text alone, as in Obsidian; a small mark opens its note.
            href = note_url(embed.section.path, block=embed.link.block)
            return (
                f'<div class="embed embed-block"{_attrs(renderer, token)}>'
                f'<a class="embed-open" href="{e(href)}" title="Open {e(embed.link.label)}" aria-label="Open the block">↗</a>'
                '<div class="embed-content">\n'
            )
        return f'<div class="embed"{cut}{_attrs(renderer, token)}>\n'
    card = token.meta.get("canvas_card")
    if isinstance(card, CanvasCard):
        color = f' data-color="{e(card.color)}"' if card.color else ""
        return f'<div class="canvas-card" data-kind="{e(card.kind)}"{color}>\n'
    return str(renderer.renderToken(tokens, idx, options, env))


def _blockquote_close(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    callout = token.meta.get("callout")
    if isinstance(callout, Callout):
        return f"</div></{'details' if callout.foldable else 'div'}>\n"
    if isinstance(token.meta.get("embed"), Embed):
        return "</div></div>\n"
    if isinstance(token.meta.get("canvas_card"), CanvasCard):
        return "</div>\n"
    return str(renderer.renderToken(tokens, idx, options, env))


def _paragraph_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    callout = token.meta.get("callout_title")
    if isinstance(callout, Callout):
        tag = "summary" if callout.foldable else "div"
        return (
            f'<{tag} class="callout-title"{_attrs(renderer, token)}>'
            f'<span class="callout-icon" aria-hidden="true">{e(callout.style.icon)}</span>'
            '<span class="callout-title-inner">'
        )
    if isinstance(token.meta.get("embed_title"), Embed):
        return '<div class="embed-title"><span class="embed-mark" aria-hidden="true">↳</span> '
    return str(renderer.renderToken(tokens, idx, options, env))


def _paragraph_close(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    opening = _opener(tokens, idx)
    callout = opening.meta.get("callout_title") if opening else None
    if isinstance(callout, Callout):
        return f"</span></{'summary' if callout.foldable else 'div'}>\n<div class=\"callout-content\">\n"
    embed = opening.meta.get("embed_title") if opening else None
    if isinstance(embed, Embed):
        reason = cut_reason(embed)
        note = f' <span class="embed-cut-reason">· {e(reason)}</span>' if reason else ""
        return f'{note}</div>\n<div class="embed-content">\n'
    return str(renderer.renderToken(tokens, idx, options, env))


def _opener(tokens: Sequence[Token], idx: int) -> Token | None:
    """The opening token of the paragraph that `tokens[idx]` closes (a paragraph holds one inline)."""
    return tokens[idx - 2] if idx >= 2 and tokens[idx - 2].type == "paragraph_open" else None


def _link_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    ref = token.meta.get("link")
    if not isinstance(ref, LinkRef):
        token.attrSet("rel", "noopener noreferrer")
        return str(renderer.renderToken(tokens, idx, options, env))
    kind = "wikilink" if ref.kind == "wikilink" else "internal"
    if ref.path is None:
        if ref.kind == "markdown":
            return '<a class="dangling">'
        return f'<a class="wikilink dangling" title="No note named {e(ref.target)}">'
    href = note_url(ref.path, heading=ref.heading, block=ref.block) if ref.is_note else file_url(ref.path)
    media = ref.file_kind if ref.embed else None
    if media in ("audio", "video", "pdf"):
        # The page's script fetches the file with the token and plays or shows it here.
        page = f' data-fragment="{e(ref.heading)}"' if ref.heading else ""
        player = f'<span class="embed-file" data-kind="{e(media or "")}" data-file-src="{e(href)}"{page}></span>'
        return f'{player}<a class="{kind} embed-file-link" href="{e(href)}">'
    return f'<a class="{kind}" href="{e(href)}">'


def _image(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    size = "".join(f' {name}="{int(value)}"' for name in ("width", "height") if (value := token.meta.get(name)))
    ref = token.meta.get("link")
    if isinstance(ref, LinkRef):
        if ref.path is None:
            return f'<span class="embed-missing" title="No file named {e(ref.target)}">🖼 {e(alt or ref.target)}</span>'
        if token.meta.get("icon"):
            return f'<img class="icon" src="{e(file_url(ref.path))}" alt="" aria-hidden="true">'
        cls = ' class="embed"' if ref.kind == "wikilink" else ""
        return f'<img{cls} src="{e(file_url(ref.path))}" alt="{e(alt)}"{size}>'
    src = str(token.attrGet("src") or "")
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", src) and not src.startswith("data:"):
        # The page loads nothing from other sites: an outside image is a link to it.
        width, height = token.meta.get("width"), token.meta.get("height")
        shown = f" · {width}×{height} px" if width and height else f" · {width} px" if width else ""
        return f'<a class="external-image" href="{e(src)}" rel="noopener noreferrer">🖼 {e(alt or src)}{shown}</a>'
    return f'<img src="{e(src)}" alt="{e(alt)}"{size}>'


def _list_item_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    task = token.meta.get("task")
    number = token.meta.get("footnote")
    if number:
        token.attrSet("id", f"fn-{number}")
    if task is None:
        return str(renderer.renderToken(tokens, idx, options, env))
    token.attrSet("class", "task-list-item")
    token.attrSet("data-task", str(task))
    return str(renderer.renderToken(tokens, idx, options, env)) + (_UNCHECKED if task == " " else _CHECKED)


def _list_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    if token.meta.get("tasks"):
        token.attrSet("class", "contains-task-list")
    if token.meta.get("footnotes"):
        token.attrSet("class", "footnotes")
    return str(renderer.renderToken(tokens, idx, options, env))


def _code_inline(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    cls = ' class="math"' if token.meta.get("math") else ""
    return f"<code{cls}{_attrs(renderer, token)}>{e(token.content)}</code>"


def _fence(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    if token.meta.get("math"):
        return f'<pre class="math"{_attrs(renderer, token)}><code>{e(token.content)}</code></pre>\n'
    if token.info.strip().casefold() == "mermaid":
        # Drawn by the vendored mermaid in the page; until then (or without it) the source shows.
        return f'<pre class="mermaid-source"{_attrs(renderer, token)}><code>{e(token.content)}</code></pre>\n'
    return str(RendererHTML.fence(renderer, tokens, idx, options, env))


def _tag(tokens: Sequence[Token], idx: int) -> str:
    tag = tokens[idx].content
    return f'<a class="tag" href="/?q={e(quote("#" + tag))}">#{e(tag)}</a>'


def _footnote_ref(tokens: Sequence[Token], idx: int) -> str:
    number = footnote_number(tokens[idx])
    return f'<sup class="footnote-ref"><a href="#fn-{number}">{number}</a></sup>'


def _render_front_matter(tokens: Sequence[Token], idx: int) -> str:
    content = tokens[idx].content.strip()
    if not content:
        return ""
    return (
        '<details class="properties" data-line="1" open><summary>Properties</summary>'
        f"<pre>{html.escape(content)}</pre></details>\n"
    )


def _build() -> MarkdownIt:
    md = obsidian_markdown()
    md.core.ruler.push("cairn_annotate", _annotate)
    rules = {
        "blockquote_open": _blockquote_open,
        "blockquote_close": _blockquote_close,
        "paragraph_open": _paragraph_open,
        "paragraph_close": _paragraph_close,
        "link_open": _link_open,
        "image": _image,
        "list_item_open": _list_item_open,
        "bullet_list_open": _list_open,
        "ordered_list_open": _list_open,
        "code_inline": _code_inline,
        "fence": _fence,
    }
    for name, rule in rules.items():
        md.add_render_rule(name, rule)
    md.add_render_rule("table_open", lambda self, tokens, idx, options, env: '<div class="table-wrap">' + self.renderToken(tokens, idx, options, env))
    md.add_render_rule("table_close", lambda self, tokens, idx, options, env: self.renderToken(tokens, idx, options, env) + "</div>\n")
    md.add_render_rule("mark_open", lambda self, tokens, idx, options, env: '<mark class="highlight">')
    md.add_render_rule("mark_close", lambda self, tokens, idx, options, env: "</mark>")
    md.add_render_rule("tag", lambda self, tokens, idx, options, env: _tag(tokens, idx))
    md.add_render_rule("footnote_ref", lambda self, tokens, idx, options, env: _footnote_ref(tokens, idx))
    md.add_render_rule("front_matter", lambda self, tokens, idx, options, env: _render_front_matter(tokens, idx))
    return md


_MD = _build()


def render_note(
    text: str,
    *,
    path: str,
    links: LinkTable,
    embed: EmbedFn | None = None,
    canvas: Callable[[str], Canvas] | None = None,
    resolve: Callable[[str, str], str | None] | None = None,
) -> str:
    """A note's Markdown as HTML, read by the engine's Obsidian parser.

    Args:
        text: the note's LF text, frontmatter included.
        path: its vault path (links without a target point here).
        links: its resolved links (`LinkTable.from_links(view.links)`).
        embed: fetches what `![[Note#Heading]]` shows (`Engine.embed_section`); None shows embeds as links.
    """
    env: dict[str, Any] = {}
    tokens = parse_markdown(_MD, text, RenderContext(path, links, embed, canvas=canvas, resolve=resolve))
    return str(_MD.renderer.render(tokens, _MD.options, env))


def highlight(text: str, spans: Iterable[Sequence[int]]) -> str:
    """`text` HTML-escaped with each (start, end) span wrapped in <mark>."""
    pieces: list[str] = []
    last = 0
    for start, end in sorted((int(s), int(e)) for s, e in spans):
        if start < last or end <= start:
            continue
        pieces.append(html.escape(text[last:start]))
        pieces.append(f"<mark>{html.escape(text[start:end])}</mark>")
        last = end
    pieces.append(html.escape(text[last:]))
    return "".join(pieces)
