"""Snippets and backlink contexts show rendered text (engine/vault/plain.py), line for line."""

from __future__ import annotations

import pytest

from engine.catalog import StoredChunk
from engine.records import Chunk
from engine.search.evidence import build_snippet
from engine.vault.plain import plain_line, plain_text


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("> [!tip]- Open the **Settings**", "Open the Settings"),
        ("> [!faq]", "Faq"),
        ("> > quoted twice", "quoted twice"),
        ("## Heading ##", "Heading"),
        ("- [ ] a task", "☐ a task"),
        ("- [x] done", "☑ done"),
        ("1. first", "first"),
        ("Use [[Settings|the settings]] and [[Note#Part]] and [[Note#^b15695]]", "Use the settings and Note > Part and Note > ^b15695"),
        ("![[Diagram.png|100x60]] and ![alt](x.png)", "Diagram.png and alt"),
        ("![[Attachments/Engelbart.jpg#outline|100]] and [[Handbook.pdf|the handbook]]", "Engelbart.jpg and the handbook"),
        ("==marked== and ~~struck~~ and *em* and __strong__", "marked and struck and em and strong"),
        ("snake_case, 2*3*4 and a == b stay", "snake_case, 2*3*4 and a == b stay"),
        ("`[[not a link]]` and `**not bold**`", "[[not a link]] and **not bold**"),
        ("A paragraph ending in its id ^b15695", "A paragraph ending in its id"),
        ("| a | [[Note\\|alias]] | x \\| y |", "a · alias · x | y"),
        ("|---|:---:|", ""),
        ("Footnote[^1] and \\*escaped\\*", "Footnote and *escaped*"),
    ],
)
def test_a_line_as_rendered_text(line: str, shown: str) -> None:
    assert plain_line(line) == shown


def test_fences_comments_and_line_count() -> None:
    text = "before\n```python\nx = [[code]]  # kept\n```\nafter %% hidden\nstill hidden %% shown\nlast"
    shown = plain_text(text)
    assert shown.split("\n") == ["before", "", "x = [[code]]  # kept", "", "after ", " shown", "last"]


def test_a_fence_inside_a_callout_is_code_without_its_marks_or_quote_marks() -> None:
    # Callouts.md of the Obsidian help vault shows CSS this way inside a folded tip.
    text = "> [!tip]- Further customization\n> For example:\n>\n> ```css\n> .callout { display: none; }\n> ```\n>\n> Or its border."
    assert plain_text(text).split("\n") == ["Further customization", "For example:", "", "", ".callout { display: none; }", "", "", "Or its border."]
    # The quote's end ends its fence: what follows is text again.
    assert plain_text("> ```\n> code\nAfter **it**.").split("\n") == ["", "code", "After it."]


def test_a_longer_fence_holds_a_shorter_one_as_code() -> None:
    # Search.md of the help vault shows a ```query block inside a ```` fence.
    text = "Add a block:\n````\n```query\nembed OR search\n```\n````\nThen [[Search|search]]."
    assert plain_text(text).split("\n") == ["Add a block:", "", "```query", "embed OR search", "```", "", "Then search."]
    # A fence's own lines that look like quotes stay as written.
    assert plain_text("```md\n> [!note]\n```\n**b**").split("\n") == ["", "> [!note]", "", "b"]


def test_a_snippet_of_a_chunk_that_starts_inside_a_code_block_reads_its_close_as_a_close() -> None:
    # The help vault's "Quotes" section: a chunk cut inside a fence, then a folded tip.
    body = "Quote it:\n\n```md\n> Human beings face problems.\n\\- Doug Engelbart, 1961\n```\n\n> [!tip]- Tip\n> Turn it into a [[Callouts|callout]] with **care**.\n"
    cut = body.index("\\- Doug")
    first = StoredChunk(1, "Basic.md", Chunk(0, body[:cut + 8], ("Quotes",), 0, cut + 8, 1, 5), "")
    second = StoredChunk(2, "Basic.md", Chunk(1, body[cut:], ("Quotes",), cut, len(body), 5, 9), "")
    snippet = build_snippet([first, second], matches=lambda word: word.lower().startswith("callout"), hint_terms=["callout"])
    assert "Turn it into a callout with care." in snippet.text
    assert "[!tip]" not in snippet.text and "[[" not in snippet.text and "**" not in snippet.text
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["callout"]


def test_snippet_highlights_fall_on_the_words_of_the_rendered_text() -> None:
    text = "> [!tip]- Working with Priya\n> Send her **Settings** changes before ==noon==.\n"
    chunk = StoredChunk(1, "Priya.md", Chunk(0, text, ("Priya Kumar",), 0, len(text), 7, 8), "")
    wanted = {"settings", "noon"}
    snippet = build_snippet([chunk], matches=lambda word: word.lower() in wanted, hint_terms=["settings", "noon"])
    assert "**" not in snippet.text and "==" not in snippet.text and "[!tip]" not in snippet.text
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["Settings", "noon"]
    assert snippet.line == 8


def test_a_passage_cut_inside_a_wikilink_starts_with_what_the_link_shows() -> None:
    assert plain_text("Glossary/CRDT|CRDTs]]. Watched demos.\nnext [[a|b]]") == "CRDTs. Watched demos.\nnext b"
    assert plain_text("tail]] then [[Note]]") == "tail then Note"
    assert plain_text("[[Note]] and x]]") == "Note and x]]"
