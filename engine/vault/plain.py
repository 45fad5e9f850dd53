"""Markdown source as a reader sees it, line for line: what snippets and backlink contexts show.

`[!tip]- Title` is its title, `**Settings**` is Settings, `[[a|b]]` is b, fences,
quote marks, heading marks, list and task markers, comments, block ids and table
pipes are gone. Every input line gives one output line (maybe empty), so line
arithmetic on the result still matches the file. Each pass is linear in the text.
"""

from __future__ import annotations

import html
import re

from engine.vault.callouts import read_callout
from engine.vault.files import IMAGE_SUFFIXES, is_icon
from engine.vault.links import WikiParts, shown_links
from engine.vault.sections import trailing_block_id

_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"[ \t]{0,3}(?:>[ \t]?)+")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]+|$)")
_LIST = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[([^\[\]\n])\][ \t]+)?")
_TABLE_RULE_CHARS = frozenset("|-: \t")
_BACKTICKS = re.compile(r"`+")
# Emphasis, strike-through and highlight marks at a word's edge (`**bold**`, `==mark==`);
# inside a word (`snake_case`, `2*3`) they are text. No pairing, so no backtracking.
_EMPHASIS = re.compile(r"(?<![\w*_~=])(?:\*{1,3}|_{1,3}|~~|==)(?=[^\s*_~=])|(?<=[^\s*_~=])(?:\*{1,3}|_{1,3}|~~|==)(?![\w*_~=])")
_FOOTNOTE_REF = re.compile(r"\[\^[^\[\]\s]+\]")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_CELL_BAR = re.compile(r"(?<!\\)\|")
_SIZE = re.compile(r"\d{1,5}(?:x\d{1,5})?$")
# A named or numeric character reference, with its semicolon (CommonMark decodes only those).
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


# The fence a line is inside: its opening run (```` closes only on four or more backticks)
# and whether it opened inside a quote or callout (its lines then carry `> `).
Fence = tuple[str, bool]
NO_FENCE: Fence = ("", False)


def plain_text(text: str, fence: Fence = NO_FENCE) -> str:
    """`text` (LF Markdown, any part of a note) as rendered text, one output line per input line.

    `fence` is the fence `text` starts inside, when it is a piece cut from inside a code block.
    """
    out: list[str] = []
    in_comment = False
    lines = text.split("\n")
    if not fence[0]:
        lines[0] = _cut_link_tail(lines[0])
    for line in lines:
        if fence[0] or not in_comment:
            fence, code = _fence_step(line, fence)
            if code is not None:
                out.append(code)  # code is shown as it is written; a fence's own marks are not
                continue
        line, in_comment = _uncommented(line, in_comment)
        out.append(plain_line(line))
    return "\n".join(out)


def fence_after(text: str, fence: Fence = NO_FENCE) -> Fence:
    """The fence still open at the end of `text`, which starts inside `fence`."""
    if not fence[0] and "```" not in text and "~~~" not in text:
        return NO_FENCE
    for line in text.split("\n"):
        fence, _code = _fence_step(line, fence)
    return fence


def _fence_step(line: str, fence: Fence) -> tuple[Fence, str | None]:
    """The fence after `line`, and what the line shows as code ("" for a fence mark, None if no code)."""
    run, quoted = fence
    quote = _QUOTE.match(line)
    inner = line[quote.end():] if quote else line
    if run and quoted and quote is None:
        run = ""  # the quote ended, and the fence inside it with it
    if run:
        code = inner if quoted else line
        closing = _FENCE.match(code)
        if closing and closing.group(1)[0] == run[0] and len(closing.group(1)) >= len(run) and not code[closing.end():].strip():
            return NO_FENCE, ""
        return (run, quoted), code
    opened = _FENCE.match(inner)
    if opened:
        return (opened.group(1), quote is not None), ""
    return NO_FENCE, None


def _cut_link_tail(first: str) -> str:
    """A passage cut inside a wikilink (`Glossary/CRDT|CRDTs]] and …`) starts with what the link shows."""
    close = first.find("]]")
    if close < 0:
        return first
    opening = first.find("[[")
    if 0 <= opening < close:
        return first
    return first[:close].rpartition("|")[2] + first[close + 2 :]


def _uncommented(line: str, in_comment: bool) -> tuple[str, bool]:
    """A line without the parts inside `%% … %%`, and whether a comment is still open at its end."""
    if not in_comment and "%%" not in line:
        return line, False
    kept: list[str] = []
    pos = 0
    while True:
        mark = line.find("%%", pos)
        if in_comment:
            if mark < 0:
                return "".join(kept), True
            in_comment = False
        else:
            if mark < 0:
                kept.append(line[pos:])
                return "".join(kept), False
            kept.append(line[pos:mark])
            in_comment = True
        pos = mark + 2


def plain_line(line: str) -> str:
    """One line of Markdown (outside a fence) as rendered text."""
    line = line[_QUOTE.match(line).end() :] if line.lstrip().startswith(">") else line  # type: ignore[union-attr]
    if line.startswith("[!"):
        callout = read_callout(line)
        if callout is not None:
            return _inline(callout.title)
    heading = _HEADING.match(line)
    if heading:
        line = line[heading.end() :].rstrip()
        bare = line.rstrip("#")
        line = bare.rstrip() if len(bare) < len(line) and (not bare or bare[-1] in " \t") else line
    else:
        listed = _LIST.match(line)
        if listed:
            box = listed.group(1)
            line = ("" if box is None else "☐ " if box == " " else "☑ ") + line[listed.end() :]
    if "^" in line:
        found = trailing_block_id(line)
        if found is not None:
            line = found[0]
    if "|" in line:
        stripped = line.strip()
        if "-" in stripped and _TABLE_RULE_CHARS.issuperset(stripped):
            return ""
        if stripped.startswith("|") or stripped.endswith("|"):
            cells = (cell.strip() for cell in _CELL_BAR.split(stripped.strip("|")))
            line = " · ".join(cell for cell in cells if cell)
    return _inline(line)


def _inline(line: str) -> str:
    """Inline Markdown as text: code spans keep their text as written, the rest loses its marks."""
    if "`" not in line:
        return _marks_off(line)
    pieces: list[str] = []
    last = 0
    runs = list(_BACKTICKS.finditer(line))
    # The next run of each length after a given run: a code span closes on the same length.
    following: dict[int, int] = {}
    next_of: list[int] = [-1] * len(runs)
    for index in range(len(runs) - 1, -1, -1):
        length = len(runs[index].group())
        next_of[index] = following.get(length, -1)
        following[length] = index
    index = 0
    while index < len(runs):
        closer = next_of[index]
        if closer < 0:
            index += 1
            continue
        opening, closing = runs[index], runs[closer]
        pieces.append(_marks_off(line[last : opening.start()]))
        pieces.append(line[opening.end() : closing.start()].strip(" ") or " ")
        last = closing.end()
        index = closer + 1
    pieces.append(_marks_off(line[last:]))
    return "".join(pieces)


def _shown(parts: WikiParts) -> str:
    """A wikilink as a passage shows it: its display, else `Note > Heading` (or what there is).

    A file's link or embed shows its name: `|100x145` is an image's size and `#outline`
    a style, not words.
    """
    name = parts.target.rpartition("/")[2]
    if is_icon(parts.heading) and name.lower().endswith(IMAGE_SUFFIXES):
        return ""  # an inline icon (`![[lucide-cog.svg#icon]]`) is a glyph, no words
    if "." in name and not name.lower().endswith(".md"):
        return parts.display if parts.display and not _SIZE.match(parts.display) else name
    if parts.display:
        return parts.display
    fragment = parts.heading or (f"^{parts.block}" if parts.block else "")
    if fragment and parts.target:
        return f"{parts.target} > {fragment}"
    return fragment or parts.target


def _marks_off(text: str) -> str:
    if not text:
        return text
    text = shown_links(text, _shown)
    if "&" in text:
        text = _entities_off(text)
    if "[^" in text:
        text = _FOOTNOTE_REF.sub("", text)
    if "\\" not in text:
        return _emphasis_off(text)
    # An escaped mark (`\*`) is text: the parts between escapes lose their marks, escapes their `\`.
    pieces: list[str] = []
    last = 0
    for escape in _ESCAPE.finditer(text):
        pieces.append(_emphasis_off(text[last : escape.start()]))
        pieces.append(escape.group(1))
        last = escape.end()
    pieces.append(_emphasis_off(text[last:]))
    return "".join(pieces)


def _entities_off(text: str) -> str:
    """HTML entities as the characters they name (`Line&nbsp;height`), as Obsidian shows them; others stay."""
    return _ENTITY.sub(lambda m: html.unescape(m.group()), text)


def _emphasis_off(text: str) -> str:
    return _EMPHASIS.sub("", text) if any(mark in text for mark in "*_~=") else text


def find_in_text(text: str, query: str) -> list[tuple[int, int, int]]:
    """Where `query` occurs in a note as a reader sees it (case aside): (1-based line, start, end) on
    `plain_text(text)`'s lines, in order. Linear in the text; an empty query finds nothing."""
    needle = query.strip()
    if not needle:
        return []
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    return [
        (number, found.start(), found.end())
        for number, line in enumerate(plain_text(text).split("\n"), start=1)
        for found in pattern.finditer(line)
    ]
