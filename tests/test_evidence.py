"""Snippets read like the note, not like its Markdown source."""

from __future__ import annotations

from engine.catalog import StoredChunk
from engine.records import Chunk
from engine.search.evidence import build_snippet, readable


def test_readable_shows_links_by_their_text() -> None:
    source = (
        "## Context\nSee [[ADR-004 Sync with CRDTs]], [[Projects/Atlas/Sync Engine|the sync engine]],\n"
        "![[diagram.png]], [[Note#Heading]], [[#Local]], [[X\\|Y]] and [the guide](Local%20Dev%20Setup.md)."
    )
    assert readable(source) == (
        "Context\nSee ADR-004 Sync with CRDTs, the sync engine,\n"
        "diagram.png, Note > Heading, Local, Y and the guide."
    )


def test_snippet_highlights_point_at_the_words_after_cleaning() -> None:
    text = "# Plan\n\nAsk [[Priya Kumar|Priya]] about the [[Tombstone]] retention.\n"
    chunk = StoredChunk(id=1, path="a.md", chunk=Chunk(0, text, ("Plan",), 0, len(text), 5, 8), text_sha="x")
    snippet = build_snippet([chunk], matches=lambda w: w.lower() in {"tombstone", "priya"}, hint_terms=["tombstone"])
    assert "[[" not in snippet.text and "#" not in snippet.text
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["Priya", "Tombstone"]
    assert snippet.line == 7  # the first match is on the chunk's third line
