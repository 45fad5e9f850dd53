"""What connects notes: names, links, backlinks, unlinked mentions, tags and the local graph.

Read from the index's link table (as the indexer resolved each link) and, for the lines
a link sits on, from the notes as they are on disk now.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from typing import TYPE_CHECKING

from engine.errors import NoteNotFound
from engine.folding import entity_key
from engine.localgraph import local_graph
from engine.notes import NoteFiles
from engine.pickers import choose_notes
from engine.records import (
    Backlink,
    Canvas,
    ChannelName,
    LinkCompletion,
    LinkedNote,
    LocalGraph,
    Neighbor,
    NoteChoice,
    NoteSection,
    TagCount,
)
from engine.vault import complete
from engine.vault.files import is_icon, read_canvas
from engine.vault.links import blank_links
from engine.vault.plain import plain_text

if TYPE_CHECKING:
    from engine.session import IndexSession

_FULLTEXT_ONLY: tuple[ChannelName, ...] = ("fulltext",)
# Longer titles and aliases are not looked for as unlinked mentions.
_MAX_MENTION_CHARS = 200
# A backlink shows its line, and a longer line this much of it around the link.
_CONTEXT_CHARS = 300


class Links:
    """The notes a note links to and from, by name and by link, with the lines that do."""

    def __init__(self, index: IndexSession, notes: NoteFiles) -> None:
        self._index = index
        self._notes = notes

    def find_note(self, name: str) -> str | None:
        """The note a path, title or alias names (case and accents aside), or None."""
        name = name.strip()
        if not name:
            return None
        names = self._index.catalog.note_names()
        paths = {row.path for row in names}
        for candidate in (name, f"{name}.md"):
            if candidate in paths:
                return candidate
        key = entity_key(name.removesuffix(".md"))
        for row in names:
            stem = posixpath.basename(row.path).removesuffix(".md")
            if key in (entity_key(row.title), entity_key(stem), entity_key(row.path.removesuffix(".md"))):
                return row.path
        for row in names:
            if any(entity_key(alias) == key for alias in row.aliases):
                return row.path
        return None

    def nearest_notes(self, name: str, *, limit: int = 5) -> list[tuple[str, str]]:
        """(path, title) of the notes whose title, alias or path is closest to `name`, closest first."""
        names = self._index.catalog.note_names()
        choices: dict[str, str] = {}
        for row in names:
            for written in (row.title, *row.aliases, row.path.removesuffix(".md")):
                choices.setdefault(entity_key(written), row.path)
        key = entity_key(name.removesuffix(".md"))
        close = difflib.get_close_matches(key, list(choices), n=limit * 3, cutoff=0.5)
        close += [k for k in choices if key and key in k and k not in close]
        titles = {row.path: row.title for row in names}
        out = list(dict.fromkeys(choices[k] for k in close))[:limit]
        return [(p, titles[p]) for p in out]

    def note_choices(self, text: str, *, limit: int = 8) -> list[NoteChoice]:
        """The notes a note picker offers for `text`, best first: titles and aliases matched as the
        quick switcher matches them (whole, from the start, a word's start, anywhere, the letters
        in order), then the nearest spellings, so that a picker never comes back empty-handed
        for a typo.

        Args:
            text: what was typed (case and accents aside); empty: no choices.
            limit: how many choices at most.
        """
        return choose_notes(self._index.catalog.note_names(), text, limit=limit)

    def embed_section(
        self, source_path: str, target: str, *, heading: str | None = None, block: str | None = None
    ) -> NoteSection | None:
        """What `![[target#heading]]` (or `#^block`) written in `source_path` shows: its target resolved like a link.

        Returns:
            The section, or None when the target is no indexed note or has no such part.
        """
        path = self.link_path(source_path, target)
        if path is None or not path.lower().endswith(".md"):
            return None
        return self._notes.section(path, heading=heading, block=block)

    def resolve_link(self, source_path: str, target: str) -> str | None:
        """Where a link target written in `source_path` points (a vault path), as Obsidian resolves it; None: nowhere."""
        return self.link_path(source_path, target)

    def link_path(self, source_path: str, target: str) -> str | None:
        """Where a link target written in a note points, as the indexer resolved it (or would)."""
        if not target.strip():
            return source_path
        key = target.strip().casefold()
        for row in self._index.catalog.links_from(source_path):
            if row.link.target.strip().casefold() == key:
                return row.resolved
        # Not a link the index read in this note (it was edited since): resolve it now.
        return self._index.link_resolver().resolve(target, source_path)

    def complete_link(self, typed: str, *, source: str | None = None, limit: int = complete.DEFAULT_LIMIT) -> list[LinkCompletion]:
        """The ways to finish a `[[` link whose text so far is `typed`, best first (engine/vault/complete.py).

        Args:
            typed: what follows `[[` up to the cursor: `atl`, `Atlas#ris`, `Atlas#^b1`, `#Set` (this note).
            source: the note being edited: links resolve from it, and `#…` alone completes its headings.
            limit: at most this many.
        """
        names = self._index.names()
        return complete.complete_link(
            typed,
            names,
            source=source,
            resolve=lambda target: self.link_path(source or "", target),
            note_text=self._notes.current_text,
            headings=self._notes.outline,
            limit=limit,
        )

    def tags(self) -> list[TagCount]:
        """Every tag of the vault with how many notes carry it (a nested tag counts for its parents too), by name."""
        counts: dict[str, int] = {}
        for info in self._index.catalog.note_infos():
            carried: set[str] = set()
            for tag in info.tags:
                parts = tag.split("/")
                carried.update("/".join(parts[: depth + 1]) for depth in range(len(parts)))
            for tag in carried:
                counts[tag] = counts.get(tag, 0) + 1
        return [TagCount(tag, count) for tag, count in sorted(counts.items(), key=lambda item: item[0].casefold())]

    def canvas(self, path: str) -> Canvas:
        """An Obsidian canvas as its cards and arrows (file cards resolved like links from the canvas).

        Raises:
            UnsafePath: the path is outside the vault.
        """
        target = self._notes.resolve_path(path)
        try:
            data = target.read_bytes() if target.stat().st_size <= self._index.config.max_file_bytes else b""
        except OSError as exc:
            return Canvas(path, problem=f"cannot be read: {exc.strerror or exc}")
        if not data:
            return Canvas(path, problem="the canvas is empty or too large to show")
        return read_canvas(path, data, lambda written: self.link_path(path, written))

    def local_graph(self, path: str) -> LocalGraph:
        """The note, the notes it links to and from, and its graph neighbours, laid out for drawing.

        Raises:
            NoteNotFound: the note is not indexed.
        """
        info = self._index.catalog.note_info(path)
        if info is None:
            raise NoteNotFound(path)
        links = [(n.path, n.title) for n in self.outgoing_links(path) if n.path.lower().endswith(".md")]
        backlinks = list({b.path: (b.path, b.title) for b in self.backlinks(path)}.values())

        def links_from(source: str) -> list[str]:
            return [row.resolved for row in self._index.catalog.links_from(source) if row.resolved]

        return local_graph(path, info.title, links, backlinks, self.neighbors(path, limit=20), links_from)

    def recent_notes(self, limit: int = 10) -> list[tuple[str, str]]:
        """(path, title) of the notes changed last (by modification time as indexed), newest first."""
        infos = sorted(self._index.catalog.note_infos(), key=lambda info: (-info.mtime, info.path))
        return [(info.path, info.title) for info in infos[:limit]]

    def outgoing_links(self, path: str) -> list[LinkedNote]:
        """The notes and files `path` links to, each once, titled, with the first line that links (as text)."""
        out: list[LinkedNote] = []
        seen: set[str] = set()
        lines: list[str] | None = None
        for row in self._index.catalog.links_from(path):
            target = row.resolved
            if target is None or target == path or target in seen:
                continue
            if row.link.embed and is_icon(row.link.heading):
                continue  # an inline icon is a glyph of the text, not something the note links to
            seen.add(target)
            if lines is None:
                lines = self._notes.current_text(path).split("\n")
            info = self._index.catalog.note_info(target)
            title = info.title if info is not None else posixpath.basename(target)
            line = lines[row.link.line - 1] if 0 < row.link.line <= len(lines) else ""
            out.append(LinkedNote(target, title, row.link.line, _line_context(plain_text(line), title)))
        return out

    def backlinks(self, path: str) -> list[Backlink]:
        """Notes linking to `path`, each with the linking line."""
        out: list[Backlink] = []
        cache: dict[str, list[str]] = {}
        titles: dict[str, str] = {}
        # One context per linking line: a line of thousands of links is cut once, not per link.
        contexts: dict[tuple[str, int], str] = {}
        for row in self._index.catalog.links_to(path):
            if row.source == path:
                continue
            if row.source not in cache:
                body = self._index.catalog.note_body(row.source)
                cache[row.source] = body.text.split("\n") if body else []
                offset = body.line_offset if body else 0
                cache[row.source] = [""] * offset + cache[row.source]
                info = self._index.catalog.note_info(row.source)
                titles[row.source] = info.title if info else row.source
            lines = cache[row.source]
            key = (row.source, row.link.line)
            context = contexts.get(key)
            if context is None:
                line = lines[row.link.line - 1] if 0 < row.link.line <= len(lines) else ""
                context = contexts[key] = _line_context(plain_text(line), row.link.display or row.link.target)
            out.append(Backlink(row.source, titles[row.source], row.link.line, context))
        return out

    def unlinked_mentions(self, path: str, *, limit: int = 50) -> list[Backlink]:
        """Notes that name this note (title or alias, as whole words) without linking to it."""
        info = self._index.catalog.note_info(path)
        if info is None:
            raise self._notes.not_indexed(path)
        linking = {row.source for row in self._index.catalog.links_to(path)}
        # A name longer than a line of prose is never written as a mention, and the
        # case-blind pattern compares each name at every word start of every line.
        names = [n for n in (info.title, *info.aliases) if 3 <= len(n) <= _MAX_MENTION_CHARS]
        if not names:
            return []
        pattern = re.compile(
            r"(?<!\w)(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?!\w)",
            re.IGNORECASE,
        )
        candidates: dict[str, str] = {}
        for name in names:
            results = self._index.searcher.search(name, limit=limit, channels=_FULLTEXT_ONLY, as_you_type=False)
            for hit in results.hits:
                candidates.setdefault(hit.path, hit.title)
        out: list[Backlink] = []
        for source, title in candidates.items():
            if source == path or source in linking:
                continue
            body = self._index.catalog.note_body(source)
            if body is None:
                continue
            for number, line in enumerate(body.text.split("\n"), start=body.line_offset + 1):
                found = pattern.search(blank_links(line))
                if found:
                    out.append(Backlink(source, title, number, _line_context(plain_text(line), found.group())))
                    break
        return sorted(out, key=lambda b: b.path)[:limit]

    def neighbors(self, path: str, *, limit: int = 20) -> list[Neighbor]:
        """The note's strongest entity-graph neighbors."""
        return self._index.graph.neighbors(path, limit)


def _line_context(line: str, near: str) -> str:
    """A note line as a backlink shows it: stripped, and cut around `near` when it is long.

    A line of thousands of links would otherwise be copied whole into every backlink
    it holds, and shown whole in each of them.
    """
    line = line.strip()
    if len(line) <= _CONTEXT_CHARS:
        return line
    at = max(0, line.find(near))
    start = max(0, min(at - _CONTEXT_CHARS // 3, len(line) - _CONTEXT_CHARS))
    end = start + _CONTEXT_CHARS
    return ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")
