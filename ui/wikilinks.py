"""Wikilinks in note text, turned into followable Markdown links for the TUI's note view."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from urllib.parse import quote, unquote

from engine.present import link_spans
from engine.records import Link

NOTE_SCHEME = "note:"
MISSING_SCHEME = "missing:"



def note_href(path: str, line: int = 0) -> str:
    """The href a rendered link to a vault note carries."""
    return f"{NOTE_SCHEME}{quote(path)}" + (f"#L{line}" if line else "")


def parse_href(href: str) -> tuple[str, int] | None:
    """(path, line) of a note href, or None for any other href."""
    if not href.startswith(NOTE_SCHEME):
        return None
    path, _, anchor = href[len(NOTE_SCHEME):].partition("#L")
    return unquote(path), int(anchor) if anchor.isdigit() else 0


def wikilinks_to_markdown(body: str, resolved: dict[str, str]) -> str:
    """Rewrite `[[Target#h|shown]]` as `[shown](note:path)`; unresolved ones get a missing: href.

    Links are found with the engine's link grammar, so nothing inside code is a link.
    `resolved` maps a lower-cased link target to its note path; no line is added or
    removed, so block line numbers still match the file.
    """
    pieces: list[str] = []
    last = 0
    for span in link_spans(body):
        if span.link.kind != "wikilink":
            continue
        pieces.append(body[last : span.start])
        pieces.append(_render(span.link, resolved))
        last = span.end
    pieces.append(body[last:])
    return "".join(pieces)


def _render(link: Link, resolved: dict[str, str]) -> str:
    fragment = link.heading or link.block or ""
    target = link.target
    shown = link.display or (f"{target} › {fragment}" if target and fragment else target or fragment)
    shown = shown.replace("[", "(").replace("]", ")")
    path = resolved.get(target.lower())
    prefix = "↳ " if link.embed else ""
    if path is None:
        return f"{prefix}[{shown}]({MISSING_SCHEME}{quote(target)})"
    return f"{prefix}[{shown}]({note_href(path)})"


def resolution_map(links: Iterable[tuple[Link, str | None]]) -> dict[str, str]:
    """Lower-cased link target → resolved note path, from a NoteView's links."""
    return {link.target.lower(): path for link, path in links if path}


def relative_target(current: str, href: str) -> str:
    """A Markdown link's href resolved against the folder of the note that holds it."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(current), unquote(href.partition("#")[0])))
