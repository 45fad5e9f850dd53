"""Wikilinks become followable Markdown links without moving any line."""

from __future__ import annotations

from ui.wikilinks import (
    MISSING_SCHEME,
    note_href,
    parse_href,
    relative_target,
    wikilinks_to_markdown,
)

RESOLVED = {"crdt": "Glossary/CRDT.md", "sync design review": "Meetings/2026/Sync Design Review.md"}


def test_resolved_links_point_at_note_paths() -> None:
    body = "See [[CRDT]] and [[Sync Design Review#^k7f2qa|the rule]].\n![[CRDT]]"
    out = wikilinks_to_markdown(body, RESOLVED)
    assert f"[CRDT]({note_href('Glossary/CRDT.md')})" in out
    assert f"[the rule]({note_href('Meetings/2026/Sync Design Review.md')})" in out
    assert out.splitlines()[1].startswith("↳ [CRDT](")
    assert out.count("\n") == body.count("\n")


def test_unresolved_links_and_code_are_left_recognisable() -> None:
    body = "Ask [[Nobody]].\n```\n[[CRDT]] in code\n```\n`inline` [[CRDT|c]]"
    out = wikilinks_to_markdown(body, RESOLVED)
    lines = out.split("\n")
    assert lines[0] == f"Ask [Nobody]({MISSING_SCHEME}Nobody)."
    assert lines[2] == "[[CRDT]] in code"
    assert lines[4].endswith(f"[c]({note_href('Glossary/CRDT.md')})")


def test_hrefs_round_trip_and_relative_links_resolve() -> None:
    assert parse_href(note_href("Glossary/現場.md", 12)) == ("Glossary/現場.md", 12)
    assert parse_href("https://example.com") is None
    assert relative_target("Decisions/ADR-004 Sync with CRDTs.md", "../Glossary/CRDT.md#top") == "Glossary/CRDT.md"
    assert relative_target("Decisions/A.md", "B%20c.md") == "Decisions/B c.md"
