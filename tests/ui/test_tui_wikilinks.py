"""Links in the TUI's note view: hrefs for the engine's resolved links, read back on a click."""

from __future__ import annotations

from engine.present import LinkRef, LinkTable, RenderContext, obsidian_markdown, parse_markdown
from engine.records import Link
from ui.widgets.note_markdown import image_placeholder, inline_content
from ui.wikilinks import (
    FILE_SCHEME,
    MISSING_SCHEME,
    NoteTarget,
    href_for,
    note_href,
    parse_href,
    relative_target,
)

LINKS = LinkTable.from_links(
    [
        (Link("CRDT", None, None, None, False, 1), "Glossary/CRDT.md"),
        (Link("Sync Design Review", None, None, "k7f2qa", False, 1), "Meetings/2026/Sync Design Review.md"),
        (Link("diagram.png", None, None, None, True, 1), "Attachments/diagram.png"),
    ]
)


def _hrefs(text: str) -> list[str]:
    tokens = parse_markdown(obsidian_markdown(), text, RenderContext("Notes/Here.md", LINKS))
    out: list[str] = []
    for token in tokens:
        for child in token.children or ():
            ref = child.meta.get("link")
            if isinstance(ref, LinkRef):
                out.append(href_for(ref))
    return out


def test_links_point_at_their_note_and_where_in_it() -> None:
    hrefs = _hrefs("See [[CRDT]], [[CRDT#Merging|merges]] and [[Sync Design Review#^k7f2qa|the rule]].")
    assert hrefs == [
        note_href("Glossary/CRDT.md"),
        note_href("Glossary/CRDT.md", heading="Merging"),
        note_href("Meetings/2026/Sync Design Review.md", block="k7f2qa"),
    ]
    assert parse_href(hrefs[1]) == NoteTarget("Glossary/CRDT.md", heading="Merging")
    assert parse_href(hrefs[2]) == NoteTarget("Meetings/2026/Sync Design Review.md", block="k7f2qa")


def test_unresolved_links_files_and_code() -> None:
    hrefs = _hrefs("Ask [[Nobody]].\n\n```\n[[CRDT]] in code\n```\n\n`[[CRDT]]` and [[diagram.png]]")
    assert hrefs == [f"{MISSING_SCHEME}Nobody", f"{FILE_SCHEME}Attachments/diagram.png"]


def test_an_image_embed_is_a_placeholder_with_its_name_and_size() -> None:
    tokens = parse_markdown(obsidian_markdown(), "![[diagram.png|100x60]]", RenderContext("Here.md", LINKS))
    image = next(child for token in tokens for child in token.children or () if child.type == "image")
    assert image_placeholder(image) == "[image: diagram.png · 100×60 px]"
    inline = next(token for token in tokens if token.type == "inline")
    assert inline_content(inline, href_for).plain == "[image: diagram.png · 100×60 px]"


def test_hrefs_round_trip_and_relative_links_resolve() -> None:
    assert parse_href(note_href("Glossary/現場.md", 12)) == NoteTarget("Glossary/現場.md", 12)
    assert parse_href(note_href("A#b.md", heading="Step 1: set up")) == NoteTarget("A#b.md", heading="Step 1: set up")
    assert parse_href("https://example.com") is None
    assert relative_target("Decisions/ADR-004 Sync with CRDTs.md", "../Glossary/CRDT.md#top") == "Glossary/CRDT.md"
    assert relative_target("Decisions/A.md", "B%20c.md") == "Decisions/B c.md"
