"""markdown-it kept linear and bounded for display: each `[` finds its `]` once, and a note's
inline marks are read up to a budget.

markdown-it finds a link's text by scanning from its `[` to the `]` that closes it,
skipping over the tokens in between (`parseLinkLabel`). Every `[` starts such a scan, so a
run of `[` re-reads the same text from each of them: 800 KB of `[` took 15-24 s to show.
The scan here gives the same answers and remembers them: a `[` met inside a scan is a
label of its own, and its `]` is recorded when the scan reaches it, so a later scan from
that `[` (or one that meets it) jumps straight to its end. A footnote reference
(`[^label]`) looks for the end of its label the same way, once for every `[^` after it.

Linear is not yet quick: markdown-it tries each of its inline rules at every mark
character (`[`, `*`, `<`, `#` …), a few microseconds each, so a note of nothing but marks
(8 MB may be indexed) would still take a minute. Marks beyond a note's budget are shown
as the text they are: the blocks that would exceed it are not parsed inline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, MutableMapping
from types import SimpleNamespace
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

__all__ = ["BLOCK_LINES_BUDGET", "INLINE_MARKS_BUDGET", "MAX_FOOTNOTE_LABEL", "bound_parsing", "over_budget_lines"]

BLOCK_LINES_BUDGET = 50_000
"""Lines of a note read for block structure; the lines after them are shown as plain text.

markdown-it's block rules cost about 5-40 microseconds a line (a table row the most): an
8 MB note of table rows took a minute to show. A note of prose this long is over 2 MB.
"""

INLINE_MARKS_BUDGET = 200_000
"""Mark characters (markdown-it's inline terminators) one note's text blocks are parsed for.

A note of prose has one in 30-50 characters (line ends, hyphens, colons), so this is a
note of several megabytes; parsing it costs at most about a second.
"""

MAX_FOOTNOTE_LABEL = 999
"""Longest footnote label read as one: CommonMark's limit for link labels (999 characters)."""

_FOOTNOTE_STOP = re.compile(r"[ \n\]]")
_NOT_FOUND = -1

InlineRule = Callable[[StateInline, bool], bool]


def _labels(state: StateInline, nested_links: bool) -> dict[int, int]:
    """The label ends found so far in this inline text, for scans of one kind and extent.

    A link rule parses its own text with the same state and a smaller `posMax`, where a
    label may not close, so answers are kept per end of the text scanned.
    """
    memo: dict[tuple[bool, int], dict[int, int]] | None = getattr(state, "_cairn_labels", None)
    if memo is None:
        memo = {}
        state._cairn_labels = memo  # type: ignore[attr-defined]
    return memo.setdefault((nested_links, state.posMax), {})


def parse_link_label(state: StateInline, start: int, disableNested: bool = False) -> int:
    """Where the label opened by the `[` at `start` closes (the `]`), or -1: markdown-it's
    `parseLinkLabel`, remembering every label it passes.

    Args:
        state: the inline state (its `pos` is left as it was).
        start: the position of the `[`.
        disableNested: fail on a link inside the label (a link's text holds no link).
    """
    memo = _labels(state, disableNested)
    known = memo.get(start)
    if known is not None:
        return known
    old_pos = state.pos
    src, end = state.src, state.posMax
    skip = state.md.inline.skipToken
    opened = [start]  # the text `[`s whose `]` this scan has not reached yet, innermost last
    state.pos = start + 1
    try:
        while state.pos < end:
            marker = src[state.pos]
            if marker == "]":
                closed = opened.pop()
                memo[closed] = state.pos
                if not opened:
                    return state.pos
            before = state.pos
            skip(state)
            if marker != "[":
                continue
            if before != state.pos - 1:  # a token (a link, an image) starting with `[`
                if disableNested:
                    break
                continue
            # A `[` of plain text opens a label of its own, which closes where this one's
            # level comes back down: where its own scan ends, when that is known.
            inner = memo.get(before)
            if inner is None:
                opened.append(before)
            elif inner == _NOT_FOUND:
                break  # it never closes, so neither does anything around it
            else:
                state.pos = inner + 1  # its `]` is plain text, one character
        for label in opened:
            memo[label] = _NOT_FOUND
        return _NOT_FOUND
    finally:
        state.pos = old_pos


def _next_footnote_stop(state: StateInline, pos: int) -> int:
    """The first blank, line end or `]` at or after `pos` (or `posMax`), each found once."""
    found: tuple[int, int, int] | None = getattr(state, "_cairn_footnote_stop", None)
    if found is not None and found[0] <= pos <= found[1] and found[2] == state.posMax:
        return found[1]
    match = _FOOTNOTE_STOP.search(state.src, pos, state.posMax)
    stop = match.start() if match else state.posMax
    state._cairn_footnote_stop = (pos, stop, state.posMax)  # type: ignore[attr-defined]
    return stop


def _footnote_ref(original: InlineRule) -> InlineRule:
    """The footnote plugin's `[^label]` rule, which reads a label only where a defined one ends.

    The plugin reads from every `[^` to the next blank or `]`: a run of `[^` read the
    rest of the line from each of them. Here that end is found once for all of them,
    and only a label the note defines is handed to the plugin.
    """

    def rule(state: StateInline, silent: bool) -> bool:
        start = state.pos
        if not state.src.startswith("[^", start) or start + 3 > state.posMax:
            return False
        footnotes = state.env.get("footnotes") if isinstance(state.env, dict) else None
        refs = footnotes.get("refs") if isinstance(footnotes, dict) else None
        if not refs:
            return False  # the plugin matches defined labels only
        stop = _next_footnote_stop(state, start + 2)
        if stop >= state.posMax or state.src[stop] != "]":
            return False
        length = stop - start - 2
        if not 0 < length <= min(MAX_FOOTNOTE_LABEL, _longest_label(state.env, refs)):
            return False
        if ":" + state.src[start + 2 : stop] not in refs:
            return False
        return original(state, silent)

    return rule


def _longest_label(env: MutableMapping[str, Any], refs: dict[str, int]) -> int:
    """The longest footnote label the note defines (definitions are all read before any text)."""
    cached = env.get("_cairn_longest_footnote")
    if not isinstance(cached, tuple) or cached[0] != len(refs):
        cached = (len(refs), max((len(key) - 1 for key in refs), default=0))
        env["_cairn_longest_footnote"] = cached
    return int(cached[1])


def _footnote_inline(original: InlineRule) -> InlineRule:
    """The footnote plugin's `^[text]` rule, which fails at once where the label does not close."""

    def rule(state: StateInline, silent: bool) -> bool:
        start = state.pos
        if not state.src.startswith("^[", start) or start + 2 >= state.posMax:
            return False
        if parse_link_label(state, start + 1) < 0:
            return False
        return original(state, silent)

    return rule


def _inline_within_budget(state: StateCore) -> None:
    """markdown-it's core `inline` rule, parsing text blocks while the note's mark budget lasts.

    A block whose marks would exceed what is left is shown as its plain lines; the blocks
    after it are still parsed if they fit.
    """
    marks = state.md.inline.terminator_re
    left = INLINE_MARKS_BUDGET
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        count = len(marks.findall(token.content))
        if count <= left:
            left -= count
            state.md.inline.parse(token.content, state.md, state.env, token.children)
        else:
            token.children.extend(_plain_lines(token.content))
            token.meta = {**(token.meta or {}), "unparsed": count}


def over_budget_lines(text: str) -> tuple[str, str, int]:
    """`text` cut after BLOCK_LINES_BUDGET lines: (the lines to parse, the rest, the rest's first line)."""
    at = -1
    for _ in range(BLOCK_LINES_BUDGET):
        at = text.find("\n", at + 1)
        if at < 0:
            return text, "", 0
    return text[: at + 1], text[at + 1 :], BLOCK_LINES_BUDGET


def plain_block(text: str, first_line: int) -> list[Token]:
    """Lines shown as written, one code block (a single token, whatever their number) whose
    source map starts at `first_line`; `meta["unparsed"]` says how many lines it holds."""
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    block = Token("fence", "code", 0)
    block.content = text if text.endswith("\n") else text + "\n"
    block.markup = "```"
    block.map = [first_line, first_line + lines]
    block.meta = {"unparsed": lines}
    return [block]


def _plain_lines(content: str) -> list[Token]:
    """A block's lines as text tokens, a line break between two."""
    tokens: list[Token] = []
    for number, line in enumerate(content.split("\n")):
        if number:
            tokens.append(Token("softbreak", "br", 0))
        text = Token("text", "", 0)
        text.content = line
        tokens.append(text)
    return tokens


def bound_parsing(md: MarkdownIt) -> None:
    """Make `md`'s link, image and footnote rules find each label's end once, and its inline
    parsing stop at the note's mark budget (this parser only)."""
    helpers: Any = SimpleNamespace(**{name: getattr(md.helpers, name) for name in dir(md.helpers) if not name.startswith("_")})
    helpers.parseLinkLabel = parse_link_label
    md.helpers = helpers
    rules = {rule.name: rule for rule in md.inline.ruler.__rules__}
    wrappers = {"footnote_ref": _footnote_ref, "footnote_inline": _footnote_inline}
    for name, wrap in wrappers.items():
        if name in rules:
            md.inline.ruler.at(name, wrap(rules[name].fn))
    md.core.ruler.at("inline", _inline_within_budget)
