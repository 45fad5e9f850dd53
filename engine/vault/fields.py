"""Which property a link is the value of: a frontmatter property, a Dataview-style inline field or a typed-link quote.

`company: "[[Acme]]"` in frontmatter, `works_at:: [[Acme]]` (or `[works_at:: [[Acme]]]`)
in the body, and a quoted line that opens with a bold key (`> **Owner:** [[Priya]]`, the
typed-link convention some vaults keep) say how the note relates to the note it links: the
graph names the relation. Every pass is one scan of a line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

__all__ = ["frontmatter_keys", "inline_fields", "key_at"]

# `key:: value` at the start of a line (after a quote, a list marker, bold marks).
_LINE_FIELD = re.compile(
    r"^[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+|\d{1,9}[.)][ \t]+)?(?:\*\*|__)?([A-Za-z][\w \-]{0,60}?)(?:\*\*|__)?::"
)
# `> **key:** value` (or `> **key**: value`): a quoted line opening with a bold key.
_QUOTED_KEY = re.compile(
    r"^[ \t]*(?:>[ \t]*)+(?:[-*+][ \t]+)?(\*\*|__)([A-Za-z][\w \-]{0,60}?)(?::\1|\1:)"
)
# `[key:: value]` or `(key:: value)` anywhere in a line.
_BRACKETED_FIELD = re.compile(r"[\[(]([A-Za-z][\w\-]{0,60})::")


def inline_fields(line: str) -> list[tuple[int, str]]:
    """(column where its value starts, key) of each inline field of a body line, in order."""
    if "::" not in line:
        quoted = _QUOTED_KEY.match(line) if ">" in line else None
        return [(quoted.end(), quoted.group(2).strip())] if quoted is not None else []
    found: list[tuple[int, str]] = []
    at_start = _LINE_FIELD.match(line)
    if at_start is not None:
        found.append((at_start.end(), at_start.group(1).strip()))
    found.extend((m.end(), m.group(1)) for m in _BRACKETED_FIELD.finditer(line))
    found.sort()
    return found


def frontmatter_keys(raw: str, first_line: int) -> list[tuple[int, str]]:
    """(file line, key) of each top-level property of a YAML frontmatter block, in order.

    `raw` is the block without its fences; its first line is file line `first_line`.
    A top-level key starts at column 0 (not a list item, comment or continuation).
    """
    keys: list[tuple[int, str]] = []
    for number, line in enumerate(raw.split("\n")):
        if not line or line[0] in " \t-#" or ":" not in line:
            continue
        key = line.split(":", 1)[0].strip().strip("\"'").strip()
        if key:
            keys.append((first_line + number, key))
    return keys


def key_at(keys: Sequence[tuple[int, str]]) -> Callable[[int], str | None]:
    """A lookup of the key of the last entry (sorted by start) at or before a position (a line or a column)."""
    starts = [start for start, _ in keys]

    def find(position: int) -> str | None:
        at = bisect.bisect_right(starts, position) - 1
        return keys[at][1] if at >= 0 else None

    return find
