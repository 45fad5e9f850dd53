"""The display parser stays linear and bounded on hostile notes, and reads ordinary ones as markdown-it does.

A note page is one parse of the note (the TUI and the web view render the same tokens).
The hostile notes below are the largest the indexer reads (8 MB); a child process
capped at 30 s of CPU runs each parse (tests/test_linear_time.py), so a regression fails
instead of hanging the suite. Timings per KB: `engine bench --parsers`, stage "display".
"""

from __future__ import annotations

from functools import partial

import markdown_it.helpers
import markdown_it.rules_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote.index import footnote_inline, footnote_ref
from test_linear_time import _within_limit

from engine.config import EngineConfig
from engine.vault.bounded_markdown import BLOCK_LINES_BUDGET, INLINE_MARKS_BUDGET
from engine.vault.markup import obsidian_markdown, parse_markdown

OURS = obsidian_markdown()
MAX_NOTE_BYTES = EngineConfig().max_file_bytes  # the largest note the indexer reads


def _markdown_it_as_shipped() -> MarkdownIt:
    """The same parser with markdown-it's own label scans and inline rule, to compare with."""
    md = obsidian_markdown()
    md.helpers = markdown_it.helpers
    md.inline.ruler.at("footnote_ref", partial(footnote_ref, always_match=False))
    md.inline.ruler.at("footnote_inline", footnote_inline)
    md.core.ruler.at("inline", markdown_it.rules_core.inline)
    return md


STOCK = _markdown_it_as_shipped()


def _shape(tokens: list[Token]) -> list[object]:
    return [(t.type, t.content, t.tag, sorted((t.attrs or {}).items()), _shape(t.children or [])) for t in tokens]


def _parse(text: str) -> int:
    """Parse in the child process; hand back only a count (tokens are large to send back)."""
    return len(parse_markdown(obsidian_markdown(), text))


def _shown_text(text: str) -> str:
    tokens = parse_markdown(obsidian_markdown(), text)
    return "".join(child.content for token in tokens for child in token.children or [] if child.type == "text")


PIECES = ["[", "]", "(", ")", "!", "^", "<", ">", "`", "*", "\\", "a", " ", "\n", ":", "[^1]", "[[", "]]",
          "](u)", "[^1]: x\n\n", "[r]: /u\n\n", "http://x", "<a>", "![[a]]", "==", "#t", "$"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=80).map("".join))
def test_the_tokens_are_markdown_it_s_own(text: str) -> None:
    assert _shape(parse_markdown(OURS, text)) == _shape(parse_markdown(STOCK, text))


@pytest.mark.parametrize(
    "text",
    [
        "[[[[a]]]] [b](u) [[c]] ![d](i.png) [e]",
        "[a [b](u) c](v) and [x [y] z](w)",
        "^[an inline [note] here] and [^1]\n\n[^1]: defined",
        "[^1] [^2] [^long label]\n\n[^1]: one\n[^long label]: three",
        "[" * 30 + "a" + "]" * 30 + "(u)",
        "[ref] and [ref][] and [text][ref]\n\n[ref]: /target",
    ],
)
def test_links_footnotes_and_nesting_read_as_before(text: str) -> None:
    assert _shape(parse_markdown(OURS, text)) == _shape(parse_markdown(STOCK, text))


@pytest.mark.parametrize(
    ("head", "unit"),
    [
        ("", "["),
        ("", "!["),
        ("", "^["),
        ("", "[<"),
        ("", "[a"),
        ("", "[a]("),
        ("[^1]: a footnote\n\n", "[^"),
        ("[^1]: a footnote\n\n", "[^a"),
        ("", "[" * 60 + "\n"),
    ],
)
def test_a_note_of_brackets_is_read_fast(head: str, unit: str) -> None:
    # Every `[` scanned to its paragraph's end for a `]`: 800 KB of `[` took 15-24 s to show,
    # and a footnote reference (`[^`) read to the next blank from each: 16 KB took 12 s.
    text = head + unit * ((MAX_NOTE_BYTES - len(head)) // len(unit)) + " alpha\n"
    assert _within_limit(_parse, text) > 0


def test_a_block_beyond_the_budget_is_shown_as_its_text() -> None:
    text = "[a](u) *b* first\n\n" + "[" * (INLINE_MARKS_BUDGET + 10) + " tail\n\nlast [[c]] *d*\n"
    tokens = parse_markdown(OURS, text)
    inline = [token for token in tokens if token.type == "inline"]
    assert [child.type for child in inline[0].children or []][:3] == ["link_open", "text", "link_close"]
    assert [child.content for child in inline[1].children or []] == ["[" * (INLINE_MARKS_BUDGET + 10) + " tail"]
    assert "link_open" in [child.type for child in inline[2].children or []], "later blocks that fit are read"
    lines = 40_000  # within the block budget; six marks a line, over the inline one
    assert 6 * lines > INLINE_MARKS_BUDGET and lines < BLOCK_LINES_BUDGET
    shown = _within_limit(_shown_text, "*a*b*c*d*\n" * lines)
    assert shown.count("*a*b*c*d*") == lines, "every line is kept, marks as they are"


@pytest.mark.parametrize("unit", ["|a|b|\n", "- [ ] task\n", "## Notes\ntext\n", "a\n", "> quote\n"])
def test_a_note_of_many_lines_is_read_fast_and_every_line_is_shown(unit: str) -> None:
    # markdown-it's block rules cost up to ~40 microseconds a line: 8 MB of table rows took a
    # minute to show. Past the block budget the lines are one block of plain text.
    head = "|a|b|\n|-|-|\n" if unit.startswith("|") else ""
    text = head + unit * ((MAX_NOTE_BYTES - len(head)) // len(unit))
    assert _within_limit(_parse, text) > 0
    tokens = parse_markdown(OURS, text)
    rest = tokens[-1]
    assert rest.type == "fence" and rest.meta["unparsed"] == text.count("\n") - BLOCK_LINES_BUDGET
    assert rest.map == [BLOCK_LINES_BUDGET, text.count("\n")]
    assert text.endswith(rest.content) and text.splitlines()[BLOCK_LINES_BUDGET] == rest.content.split("\n", 1)[0]


def test_a_note_within_the_block_budget_is_read_whole() -> None:
    text = "| a | b |\n|---|---|\n" + "| x | y |\n" * (BLOCK_LINES_BUDGET - 4) + "\nlast [[Link]]\n"
    assert text.count("\n") == BLOCK_LINES_BUDGET
    tokens = parse_markdown(OURS, text)
    assert not any(token.meta and "unparsed" in token.meta for token in tokens)
    assert tokens[-1].type == "paragraph_close"
