"""Parts of a note that links and embeds point at: a heading's section, a block (`^id`), comments.

Everything here reads a note's LF text line by line, once, outside code.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from engine.records import Heading, Link, NoteSection
from engine.vault.parse import code_masked, parse_note

_ID_CHARS = frozenset(string.ascii_letters + string.digits + "-")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")
# Obsidian drops these from a heading when it writes a link to it (`## Step 1: set up`
# is linked as `#Step 1 set up`), so a link and its heading are compared without them.
_LINK_UNSAFE = str.maketrans({c: " " for c in "#|^:[]%\\"})


def trailing_block_id(line: str) -> tuple[str, str] | None:
    """(the line before it, the id) when a line ends in a block id, as in `… motion. ^b15695`.

    The id follows a blank, or an embed or link directly (`![[diagram.png]]^figure`, as
    Obsidian's own help vault writes one).
    """
    stripped = line.rstrip()
    head, sep, ident = stripped.rpartition("^")
    if not sep or not ident or not all(c in _ID_CHARS for c in ident):
        return None
    if head and not (head[-1].isspace() or head.endswith("]]")):
        return None
    return head.rstrip(), ident


def comment_spans(masked: str, start: int = 0) -> list[tuple[int, int]]:
    """Spans of `%% comments %%` in code-masked text from `start`; an unclosed `%%` runs to the end."""
    spans: list[tuple[int, int]] = []
    opening = masked.find("%%", start)
    while opening >= 0:
        closing = masked.find("%%", opening + 2)
        if closing < 0:
            spans.append((opening, len(masked)))
            break
        spans.append((opening, closing + 2))
        opening = masked.find("%%", closing + 2)
    return spans


def without_comments(text: str) -> str:
    """A note's LF text with its `%% comments %%` taken out, every line kept (a comment's lines stay, empty)."""
    if "%%" not in text:
        return text
    masked, body_start = code_masked(text)
    pieces: list[str] = []
    last = 0
    for start, end in comment_spans(masked, body_start):
        pieces.append(text[last:start])
        pieces.append("\n" * text.count("\n", start, end))
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _link_key(text: str) -> str:
    return " ".join(text.translate(_LINK_UNSAFE).split()).casefold()


def heading_lines(lines: Sequence[str], headings: Sequence[Heading], heading: str) -> tuple[int, int] | None:
    """0-based [start, end) lines of the section under `heading` (`A#B`: B under A), up to the next heading as high."""
    parts = [_link_key(part) for part in heading.split("#") if part.strip()]
    if not parts:
        return None
    wanted, parent = parts[-1], parts[-2] if len(parts) > 1 else None
    chain: list[Heading] = []  # the headings above the current one, outermost first
    found: Heading | None = None
    for item in headings:
        while chain and chain[-1].level >= item.level:
            chain.pop()
        if _link_key(item.text) == wanted and (
            parent is None or any(_link_key(above.text) == parent for above in chain)
        ):
            found = item
            break
        chain.append(item)
    if found is None and parent is not None:
        # A heading path that does not match as nested still names its last heading.
        found = next((h for h in headings if _link_key(h.text) == wanted), None)
    if found is None:
        return None
    start = found.line - 1
    end = next((h.line - 1 for h in headings if h.line > found.line and h.level <= found.level), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def block_lines(text: str, block: str) -> tuple[int, int] | None:
    """0-based [start, end) lines of the block whose id is `block` (outside code), or None."""
    masked, _body_start = code_masked(text)
    lines = masked.split("\n")
    wanted = block.strip().casefold()
    at = -1
    for number, line in enumerate(lines):
        if "^" in line:
            found = trailing_block_id(line)
            if found is not None and found[1].casefold() == wanted:
                at = number
                break
    if at < 0:
        return None
    head = trailing_block_id(lines[at])
    assert head is not None
    if not head[0].strip():
        # An id on a line of its own names the block just before it (a list, a table, a quote).
        last = at - 1
        while last >= 0 and not lines[last].strip():
            last -= 1
        if last < 0:
            return None
        return _paragraph_start(lines, last), last + 1
    if _LIST_ITEM.match(lines[at]):
        indent = len(lines[at]) - len(lines[at].lstrip())
        end = at + 1
        while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > indent:
            end += 1
        return at, end
    return _paragraph_start(lines, at), at + 1


def _paragraph_start(lines: Sequence[str], line: int) -> int:
    start = line
    while start > 0 and lines[start - 1].strip() and not _HEADING.match(lines[start - 1]):
        start -= 1
    return start


MAX_SECTION_CHARS = 20_000


def note_section(
    path: str,
    title: str,
    text: str,
    *,
    heading: str | None = None,
    block: str | None = None,
    links: tuple[tuple[Link, str | None], ...] = (),
) -> NoteSection | None:
    """The part of a note's LF text an embed shows (the body, a heading's section, a block), cut to size.

    None when the note has no such heading or block.
    """
    lines = text.split("\n")
    if block:
        span = block_lines(text, block)
    elif heading:
        span = heading_lines(lines, parse_note(path, text).headings, heading)
    else:
        _masked, body_start = code_masked(text)
        start = text.count("\n", 0, body_start)
        span = (start, len(lines))
    if span is None:
        return None
    start, end = span
    kept: list[str] = []
    size = 0
    truncated = False
    for line in lines[start:end]:
        size += len(line) + 1
        if size > MAX_SECTION_CHARS and kept:
            truncated = True
            break
        kept.append(line[:MAX_SECTION_CHARS])
    while kept and not kept[-1].strip():
        kept.pop()
    return NoteSection(path, title, heading, block, start + 1, "\n".join(kept), truncated, links)
