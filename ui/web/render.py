"""Markdown to safe HTML for note pages: raw HTML escaped, wikilinks resolved, line anchors."""

from __future__ import annotations

import gc
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from engine.present import WIKILINK, split_wikilink
from ui.web.tasklists import tasklists_plugin

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass
class LinkTable:
    """Resolved link targets of one note, keyed by (kind, casefolded target as the engine wrote it)."""

    resolved: dict[tuple[str, str], str | None] = field(default_factory=dict)

    @classmethod
    def from_links(cls, links: Iterable[tuple[Any, str | None]]) -> LinkTable:
        """Build the table from `NoteView.links` ((Link, resolved path) pairs)."""
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


def note_url(path: str, *, line: int | None = None, heading: str | None = None) -> str:
    """The URL of a note page, optionally at a source line or heading."""
    url = "/note/" + quote(path, safe="/")
    if line is not None:
        return f"{url}#L{line}"
    if heading:
        return f"{url}#{heading_id(heading)}"
    return url


def file_url(path: str) -> str:
    """The URL that serves a vault file (an image or other attachment)."""
    return "/file/" + quote(path, safe="/")


def heading_id(text: str) -> str:
    """A stable element id for a heading text (the same for links and headings)."""
    slug = re.sub(r"[^\w]+", "-", text.casefold()).strip("-")
    return f"h-{slug or 'section'}"


def _strip_md(target: str) -> str:
    return target[:-3] if target.lower().endswith(".md") else target


def _split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """(target, heading, display) of the inside of `[[...]]`, parsed by the engine's grammar."""
    parts = split_wikilink(inner)
    return parts.target, parts.heading, parts.display


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule: `[[target#heading|display]]` and `![[embed]]` become one `wikilink` token."""
    src, pos = state.src, state.pos
    if not src.startswith(("[[", "![["), pos):
        return False
    found = WIKILINK.match(src, pos)  # the engine's grammar: what the index counts as a link
    if found is None or not found.group(2).strip():
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = found.group(2)
        token.meta = {"embed": bool(found.group(1))}
    state.pos = found.end()
    return True


def _render_wikilink(tokens: Sequence[Token], idx: int, env: dict[str, Any]) -> str:
    token = tokens[idx]
    target, heading, display = _split_wikilink(token.content)
    table: LinkTable = env.get("links") or LinkTable()
    source: str = env.get("path", "")
    resolved = table.lookup("wikilink", target) if target else source
    shown = display or (f"{target} › {heading}" if target and heading else target or heading or "")
    if resolved is None:
        return (
            f'<a class="wikilink dangling" title="No note named {html.escape(target)}">'
            f"{html.escape(shown)}</a>"
        )
    embed = bool(token.meta.get("embed"))
    if resolved.lower().endswith(IMAGE_SUFFIXES):
        if embed:
            width = f' width="{int(display)}"' if display and display.isdigit() else ""
            alt = html.escape(target if display and display.isdigit() else shown)
            return f'<img class="embed" src="{html.escape(file_url(resolved))}" alt="{alt}"{width}>'
        return f'<a class="wikilink" href="{html.escape(file_url(resolved))}">{html.escape(shown)}</a>'
    if not resolved.lower().endswith(".md"):
        return f'<a class="wikilink" href="{html.escape(file_url(resolved))}">{html.escape(shown)}</a>'
    href = html.escape(note_url(resolved, heading=heading))
    if embed:
        return f'<a class="wikilink embed-note" href="{href}">↪ {html.escape(shown)}</a>'
    return f'<a class="wikilink" href="{href}">{html.escape(shown)}</a>'


def _relative_target(href: str) -> tuple[str, str | None] | None:
    """(target, heading) of a relative Markdown link destination, or None for URLs and anchors."""
    if not href or href.startswith(("#", "/")) or _SCHEME.match(href):
        return None
    raw, sep, fragment = href.partition("#")
    heading = unquote(fragment).strip() if sep else None
    return _strip_md(unquote(raw).strip()), (heading if heading and not heading.startswith("^") else None)


def _annotate(state: StateCore) -> None:
    """Core rule: source line anchors, heading ids, and vault-relative link/image targets."""
    table: LinkTable = state.env.get("links") or LinkTable()
    used_ids: set[str] = set()
    # The last suffix tried per id, so that the 10,000th "## Notes" does not try 9,999
    # taken ids first: the search for a free `-N` resumes where it stopped last time.
    last_suffix: dict[str, int] = {}
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.map and token.nesting >= 0 and token.type not in ("inline", "front_matter"):
            token.attrSet("data-line", str(token.map[0] + 1))
        if token.type == "heading_open" and index + 1 < len(tokens):
            base = heading_id(tokens[index + 1].content)
            ident, counter = base, last_suffix.get(base, 1)
            if counter > 1:
                ident = f"{base}-{counter}"
            while ident in used_ids:
                counter += 1
                ident = f"{base}-{counter}"
            last_suffix[base] = counter
            used_ids.add(ident)
            token.attrSet("id", ident)
        if token.type == "inline" and token.children:
            for child in token.children:
                _rewrite_vault_link(child, table)


def _rewrite_vault_link(token: Token, table: LinkTable) -> None:
    attr = "href" if token.type == "link_open" else "src" if token.type == "image" else None
    if attr is None:
        return
    value = str(token.attrGet(attr) or "")
    if _SCHEME.match(value):
        token.attrSet("rel", "noopener noreferrer")
        return
    parsed = _relative_target(value)
    if parsed is None:
        return
    target, heading = parsed
    resolved = table.lookup("markdown", target)
    if resolved is None:
        token.attrSet("class", "dangling")
        return
    if attr == "src" or not resolved.lower().endswith(".md"):
        token.attrSet(attr, file_url(resolved))
    else:
        token.attrSet(attr, note_url(resolved, heading=heading))


def _render_front_matter(tokens: Sequence[Token], idx: int) -> str:
    content = tokens[idx].content.strip()
    if not content:
        return ""
    return (
        '<details class="properties" data-line="1"><summary>Properties</summary>'
        f"<pre>{html.escape(content)}</pre></details>\n"
    )


def _build() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(front_matter_plugin).use(tasklists_plugin)
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.core.ruler.push("cairn_annotate", _annotate)
    md.add_render_rule("wikilink", lambda self, tokens, idx, options, env: _render_wikilink(tokens, idx, env))
    md.add_render_rule("front_matter", lambda self, tokens, idx, options, env: _render_front_matter(tokens, idx))
    return md


_MD = _build()


def render_note(text: str, *, path: str, links: LinkTable) -> str:
    """A note's Markdown as HTML: raw HTML escaped, `javascript:` links dropped, lines anchored."""
    # Tokens hold no reference cycles; the cyclic collector walking them again and again
    # as they pile up made a 1 MB page nearly twice as slow per KB as a 16 KB one.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return str(_MD.render(text, {"links": links, "path": path}))
    finally:
        if collecting:
            gc.enable()


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
