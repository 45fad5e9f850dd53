"""The link grammar: wikilinks, embeds, Markdown links and bare URLs, and resolving targets the way Obsidian does.

The indexer, rename's link updates, snippets and the renderers all read links with
these patterns; nothing inside code is a link (parse.py masks code first)."""

from __future__ import annotations

import bisect
import functools
import gc
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import unquote

from engine.folding import path_form
from engine.records import Link

# `[[target#heading|display]]`, `![[embed]]`: group 1 is the `!` of an embed, group 2 the inside.
WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_WIKILINK_FROM_BRACKETS = re.compile(r"\[\[([^\[\]\n]+)\]\]")
_LINK_TITLE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\))"
# The blanks around a destination are possessive, and a title with no destination is its
# own branch: with `\s*`, `\s+` and `\s*` in a row, `[x](` before a long run of blanks
# would try every way of sharing the run out (quadratic per bracket). Matches are the same.
# `[text](destination "title")`: group 1 is the `!` of an image, group 2 the text, group 3 the destination.
MD_LINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"  # [text], one level of nested brackets
    r"\((?:\s*+(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"  # (dest or <dest>
    rf"(?:\s++{_LINK_TITLE})?|\s++{_LINK_TITLE})\s*+\)"  # optional "title", or only one)
)
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# A bare URL's scheme starts at the first letter of its run of scheme characters. The
# lookbehind lets a scan start only where such a run begins (its leading digits and
# `+.-` are skipped possessively, outside the URL group). Retrying at every letter of a
# long word before a URL would be quadratic. Spans come from `bare_url_spans`.
_BARE_URL = re.compile(
    r"(?<![A-Za-z0-9+.\-])[0-9+.\-]*+(?P<url>[A-Za-z][A-Za-z0-9+.\-]*+://\S+)|(?P<www>www\.\S+)"
)

@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for a block (and restored as it was found)."""
    # The parser's objects (markdown-it tokens, links, spans) hold no reference cycles,
    # yet every collection walks all the live ones again as they pile up: with it
    # running, a 1 MB note of headings was masked at 2.6 ms per KB, 2.4 times the 16 KB
    # rate, and links were found 1.6 times slower per KB; paused, both are flat.
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@dataclass(frozen=True)
class WikiParts:
    """The inside of `[[...]]` read as the indexer reads it: target (no `.md`), heading or block, display."""

    target: str
    heading: str | None
    block: str | None
    display: str | None


@functools.lru_cache(maxsize=8192)
def split_wikilink(inner: str) -> WikiParts:
    """The parts of the text between `[[` and `]]` (remembered: a vault links the same
    names again and again)."""
    pipe = inner.find("|")
    display: str | None = None
    if pipe >= 0:
        target_part = inner[:pipe]
        if target_part.endswith("\\"):
            # `[[Note\|shown]]` inside a table: the backslash only protects the table cell.
            target_part = target_part[:-1]
        display = inner[pipe + 1 :].strip() or None
    else:
        target_part = inner
    target, heading, block = _split_fragment(target_part)
    return WikiParts(_strip_md(target.strip()), heading, block, display)


def _wikilink(m: re.Match[str], line: int) -> Link | None:
    parts = split_wikilink(m.group(2))
    if not parts.target and parts.heading is None and parts.block is None:
        return None
    return Link(parts.target, parts.display, parts.heading, parts.block, bool(m.group(1)), line, "wikilink")


def shown_links(text: str, wikilink: Callable[[WikiParts], str]) -> str:
    """`text` with every wikilink replaced by `wikilink(parts)` and every Markdown link by its text.

    Not code-aware: for sentences and passages already cut from a note.
    """
    if "[[" in text:
        # WIKILINK's matches, found from their `[[` (a pattern starting with `!?` is tried
        # at every character; one starting `[[` skips to the next `[[` in C): an embed's
        # `!` is the character before.
        shown: list[str] = []
        last = 0
        for m in _WIKILINK_FROM_BRACKETS.finditer(text):
            start = m.start() - (text[m.start() - 1 : m.start()] == "!")
            shown += (text[last:start], wikilink(split_wikilink(m.group(1))))
            last = m.end()
        shown.append(text[last:])
        text = "".join(shown)
    if "](" in text:
        text = MD_LINK.sub(lambda m: m.group(2), text)
    return text


def blank_links(text: str) -> str:
    """`text` with every wikilink and Markdown link blanked (a name inside one is no plain mention)."""
    if "[[" in text:
        text = WIKILINK.sub(" ", text)
    if "](" in text:
        text = MD_LINK.sub(" ", text)
    return text


def _split_fragment(target: str) -> tuple[str, str | None, str | None]:
    head, sep, frag = target.partition("#")
    if not sep:
        return head, None, None
    frag = frag.strip()
    if frag.startswith("^"):
        return head, None, frag[1:].strip() or None
    return head, frag or None, None


def _strip_md(target: str) -> str:
    return target[:-3] if target.lower().endswith(".md") else target


def _markdown_link(m: re.Match[str], line: int) -> Link | None:
    dest = (m.group(3) or "").strip()  # None: a title and no destination
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1].strip()
    if not dest or _URL_SCHEME.match(dest) or dest.startswith("//"):
        return None
    raw_target, sep, frag = dest.partition("#")
    target = _strip_md(_unquote(raw_target).strip())
    heading: str | None = None
    block: str | None = None
    if sep:
        frag = _unquote(frag).strip()
        if frag.startswith("^"):
            block = frag[1:] or None
        else:
            heading = frag or None
    if not target and heading is None and block is None:
        return None
    display = m.group(2).strip() or None
    return Link(target, display, heading, block, bool(m.group(1)), line, "markdown")


def _unquote(text: str) -> str:
    return unquote(text) if "%" in text else text


class LineIndex:
    """Maps character offsets to 0-based line numbers by bisecting line starts."""

    def __init__(self, text: str) -> None:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1


def blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(" " * (end - start))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def bare_url_spans(text: str) -> Iterable[tuple[int, int]]:
    """Spans of bare URLs (`scheme://...`, `www....`) in text, left to right."""
    for m in _BARE_URL.finditer(text):
        yield m.span("url") if m.group("url") is not None else m.span("www")


@collector_paused()
def find_links(masked: str, index: LineIndex, first_line: int) -> tuple[list[Link], str]:
    """Links in already code-masked text, and the text with links and URLs blanked (for tags)."""
    found, rest = link_matches(masked, index, first_line)
    return [link for _, link in found], rest


def link_matches(masked: str, index: LineIndex, first_line: int) -> tuple[list[tuple[re.Match[str], Link]], str]:
    """(match, link) of every link in code-masked text in text order, and the text with links and URLs blanked."""
    found: list[tuple[re.Match[str], Link]] = []
    wiki_spans: list[tuple[int, int]] = []
    if "[[" in masked:
        for m in WIKILINK.finditer(masked):
            wiki_spans.append(m.span())
            link = _wikilink(m, first_line + index.line_of(m.start()))
            if link is not None:
                found.append((m, link))
    rest = blank(masked, wiki_spans) if wiki_spans else masked
    md_spans: list[tuple[int, int]] = []
    if "](" in rest:
        for m in MD_LINK.finditer(rest):
            md_spans.append(m.span())
            link = _markdown_link(m, first_line + index.line_of(m.start()))
            if link is not None:
                found.append((m, link))
    if md_spans:
        rest = blank(rest, md_spans)
    if "://" in rest or "www." in rest:
        rest = blank(rest, bare_url_spans(rest))
    found.sort(key=lambda item: item[0].start())
    return found, rest


@dataclass(frozen=True)
class LinkSpan:
    """Where a link sits in a note's text: the whole link, and the part that names its target."""

    link: Link
    start: int
    end: int
    target_start: int
    target_end: int


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _fold(text: str) -> str:
    """A name as links match it: case aside, and one Unicode form (a file name written on macOS
    spells "é" as "e" and a combining accent, a link typed elsewhere as one character)."""
    return path_form(text).casefold()


class LinkResolver:
    """Resolves link targets to note or attachment paths the way Obsidian does."""

    def __init__(
        self,
        notes: Iterable[tuple[str, str, tuple[str, ...]]],
        attachments: Iterable[str] = (),
    ) -> None:
        # Every path suffix on a `/` boundary (without `.md` for notes) maps to the files
        # ending that way, so `Note`, `folder/Note` and `a/folder/Note` are all one lookup.
        self._suffix: dict[str, list[str]] = {}
        self._exact: dict[str, str] = {}
        self._names: dict[str, list[str]] = {}
        for path, title, aliases in notes:
            stem = path[:-3] if path.lower().endswith(".md") else path
            self._index_path(_fold(stem), path)
            self._exact.setdefault(_fold(path), path)
            for name in (*aliases, title):
                key = _fold(name.strip())
                if key:
                    bucket = self._names.setdefault(key, [])
                    if path not in bucket:
                        bucket.append(path)
        for path in attachments:
            self._index_path(_fold(path), path)
            self._exact.setdefault(_fold(path), path)
        # Ambiguous names are pre-ordered (shortest path, then alphabetical) so that only
        # the same-folder preference needs looking at per call.
        for table in (self._suffix, self._names):
            for paths in table.values():
                if len(paths) > 1:
                    paths.sort(key=lambda p: (len(p), p))
        self._by_folder: dict[tuple[str, str], str] = {}
        for key, paths in self._suffix.items():
            if len(paths) > 1:
                for p in paths:
                    self._by_folder.setdefault((key, _fold(_folder(p))), p)

    def _index_path(self, key: str, path: str) -> None:
        parts = key.split("/")
        for i in range(len(parts)):
            suffix = "/".join(parts[i:])
            bucket = self._suffix.setdefault(suffix, [])
            if not bucket or bucket[-1] != path:
                bucket.append(path)

    def _pick(self, key: str, paths: list[str], source_folder: str) -> str:
        if len(paths) == 1:
            return paths[0]
        if "/" in key:
            # A path written out in full beats a longer path that merely ends the same way.
            exact = self._exact.get(key + ".md") or self._exact.get(key)
            if exact is not None and exact in paths:
                return exact
        same = self._by_folder.get((key, source_folder))
        if same is not None:
            return same
        return paths[0]

    def resolve(self, target: str, source_path: str) -> str | None:
        """The vault path a link target points to, or None if it dangles."""
        target = target.strip().replace("\\", "/")
        if not target:
            return source_path
        source_folder = _fold(_folder(source_path))
        key = _fold(target)
        if key.endswith(".md"):
            key = key[:-3]
        if key.startswith(("./", "../")) or "/./" in key or "/../" in key:
            # Markdown-style relative links: try relative to the source note first.
            joined = posixpath.normpath(posixpath.join(source_folder, key))
            hit = self._exact.get(joined + ".md") or self._exact.get(joined)
            if hit is not None:
                return hit
            key = posixpath.normpath(key)
            while key.startswith("../"):
                key = key[3:]
            key = key.removeprefix("./")
        if key.startswith("/"):
            key = key.lstrip("/")
            hit = self._exact.get(key + ".md") or self._exact.get(key)
            if hit is not None:
                return hit
        paths = self._suffix.get(key)
        if paths:
            return self._pick(key, paths, source_folder)
        names = self._names.get(key) or self._names.get(_fold(target.strip()))
        if names:
            for p in names:
                if _fold(_folder(p)) == source_folder:
                    return p
            return names[0]
        return None

