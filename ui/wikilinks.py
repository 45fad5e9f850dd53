"""Where a link in the TUI's note view goes: hrefs for the engine's resolved links, read back on a click."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from urllib.parse import quote, unquote

from engine.present import LinkRef

NOTE_SCHEME = "note:"
MISSING_SCHEME = "missing:"
FILE_SCHEME = "file:"
TAG_SCHEME = "tag:"


@dataclass(frozen=True)
class NoteTarget:
    """A note a link opens, and where: a file line, a heading (`A#B`) or a block id (0/None: the top)."""

    path: str
    line: int = 0
    heading: str | None = None
    block: str | None = None


def note_href(path: str, line: int = 0, *, heading: str | None = None, block: str | None = None) -> str:
    """The href a rendered link to a vault note carries (at a line, a heading or a block)."""
    href = f"{NOTE_SCHEME}{quote(path)}"
    if line:
        return f"{href}#L{line}"
    if block:
        return f"{href}#^{quote(block)}"
    if heading:
        return f"{href}#{quote(heading)}"
    return href


def parse_href(href: str) -> NoteTarget | None:
    """The note target of a note href, or None for any other href."""
    if not href.startswith(NOTE_SCHEME):
        return None
    path, _, anchor = href[len(NOTE_SCHEME) :].partition("#")
    path = unquote(path)
    if anchor.startswith("L") and anchor[1:].isdigit():
        return NoteTarget(path, int(anchor[1:]))
    if anchor.startswith("^"):
        return NoteTarget(path, block=unquote(anchor[1:]) or None)
    return NoteTarget(path, heading=unquote(anchor) or None)


def href_for(ref: LinkRef) -> str:
    """The href of one of the engine's resolved links: a note (at its heading or block), a file, or nowhere."""
    if ref.path is None:
        return f"{MISSING_SCHEME}{quote(ref.target)}"
    if ref.is_note:
        return note_href(ref.path, heading=ref.heading, block=ref.block)
    return f"{FILE_SCHEME}{quote(ref.path)}"


def relative_target(current: str, href: str) -> str:
    """A Markdown link's href resolved against the folder of the note that holds it."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(current), unquote(href.partition("#")[0])))
