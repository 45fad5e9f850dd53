"""The engine's reading tools both front ends share: link completion, outline, tags, find, files, canvases,
the local graph and the Obsidian URI (on sample_vault with the deterministic stub embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from media_files import canvas_json
from vault_copy import copy_sample_vault

from engine.api import Engine
from engine.embedder import HashEmbedder
from engine.present import (
    LinkTable,
    RenderContext,
    find_in_text,
    obsidian_markdown,
    parse_markdown,
    plain_text,
)
from engine.vault.complete import Names, complete_link, fuzzy_score


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("reading-tools")
    vault = copy_sample_vault(base / "vault")
    (vault / "Projects" / "Plan.canvas").write_text(canvas_json("Projects/Atlas/Atlas.md"), encoding="utf-8")
    (vault / "Projects" / "talk.wav").write_bytes(b"RIFF")
    opened = Engine.open(vault, index_dir=base / "index", embedder=HashEmbedder())
    opened.reindex()
    yield opened
    opened.close()


def test_completion_ranks_a_title_prefix_over_letters_in_order(engine: Engine) -> None:
    links = [c.link for c in engine.complete_link("tile pa")]
    assert links[0] == "Tile Pack"


def test_completion_reads_word_starts_as_the_quick_switcher_does() -> None:
    # "crdt" is the whole of one name and only scattered letters of the other.
    assert fuzzy_score("crdt", "crdt") > fuzzy_score("crdt", "conflict resolution data types") > 0
    assert fuzzy_score("il", "internal links") > fuzzy_score("il", "initial") > 0
    assert fuzzy_score("xyz", "atlas") is None


_LETTERS = st.text(alphabet="abcé nN-1", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    titles=st.lists(_LETTERS, min_size=1, max_size=25),
    aliases=st.lists(_LETTERS, max_size=5),
    links=st.lists(st.text(alphabet="abcé nN-1", max_size=8), min_size=1, max_size=4),
)
def test_typing_on_narrows_to_what_all_the_names_would_give(titles: list[str], aliases: list[str], links: list[str]) -> None:
    # One Names is kept between keystrokes and links (the engine's cache); a fresh one scores every name.
    notes = [(f"F{number}/{title}.md", title, tuple(aliases) if number == 0 else ()) for number, title in enumerate(titles)]
    kept = Names(notes, ("x/abc.png", "é n.pdf"))

    def completions(names: Names, text: str) -> list[tuple[str, str]]:
        found = complete_link(text, names, source=None, resolve=lambda _t: None, note_text=str, headings=lambda _p: [], limit=50)
        return [(c.link, c.label) for c in found]

    for typed in links:  # each typed key by key, the next one typed after it
        for end in range(len(typed) + 1):
            assert completions(kept, typed[:end]) == completions(Names(notes, kept.attachments), typed[:end])


def test_a_note_indexed_since_the_last_keystroke_is_offered(engine: Engine) -> None:
    assert engine.complete_link("quillwort") == []
    (engine.vault / "Inbox" / "Quillwort survey.md").write_text("# Quillwort survey\n", encoding="utf-8")
    engine.reindex(["Inbox/Quillwort survey.md"])
    assert [c.link for c in engine.complete_link("quillwort")] == ["Quillwort survey"]


def test_preparing_for_typing_folds_the_names_before_the_first_bracket(engine: Engine) -> None:
    engine.prepare_for_typing(wait=True)
    cached = engine._session._names
    # The first keystroke finds the names folded for the catalog as it is, and keeps them.
    assert cached is not None and "_scored" in vars(cached[1])
    engine.complete_link("a")
    assert engine._session._names is cached


def test_a_note_named_twice_is_linked_by_its_path(engine: Engine) -> None:
    links = {c.link for c in engine.complete_link("roadmap")}
    assert {"Projects/Atlas/Roadmap", "Projects/Beacon/Roadmap"} <= links


def test_an_alias_is_offered_as_the_note_with_that_display(engine: Engine) -> None:
    found = [c for c in engine.complete_link("atlas mob") if c.kind == "alias"]
    assert found[0].link == "Atlas|Atlas mobile"
    assert found[0].path == "Projects/Atlas/Atlas.md"


def test_headings_of_the_chosen_note_follow_a_hash(engine: Engine) -> None:
    found = engine.complete_link("Atlas#arch", source="Daily/2026-03-02.md")
    assert found[0].link == "Atlas#Architecture"
    assert found[0].kind == "heading"
    own = engine.complete_link("#team", source="Projects/Atlas/Atlas.md")
    assert own[0].link == "#Team"


def test_blocks_of_the_chosen_note_follow_a_caret(engine: Engine) -> None:
    found = engine.complete_link("2026-02-09 Sync Design Review#^")
    assert found and all(c.kind == "block" and "#^" in c.link for c in found)


def test_attachments_complete_by_file_name(engine: Engine) -> None:
    found = engine.complete_link("plan.can")
    assert found[0].link == "Plan.canvas"
    assert found[0].kind == "file"


def test_nothing_is_offered_after_a_bar_or_for_a_pasted_paragraph(engine: Engine) -> None:
    assert engine.complete_link("Atlas|the app") == []
    assert engine.complete_link("word " * 100) == []


def test_outline_lists_the_headings_with_their_lines(engine: Engine) -> None:
    outline = engine.outline("Projects/Atlas/Atlas.md")
    assert [(h.level, h.text, h.line) for h in outline[:3]] == [(1, "Atlas", 8), (2, "Who uses it", 12), (2, "Architecture", 16)]


def test_tags_are_counted_per_note(engine: Engine) -> None:
    counts = {t.tag: t.notes for t in engine.tags()}
    tagged = sum(1 for info in engine.notes() if "glossary" in engine.note(info[0]).info.tags)
    assert counts["glossary"] == tagged > 0


def test_vault_files_list_attachments_with_their_kind(engine: Engine) -> None:
    kinds = {entry.path: entry.kind for entry in engine.vault_files()}
    assert kinds["Projects/Plan.canvas"] == "canvas"
    assert kinds["Projects/talk.wav"] == "audio"
    assert kinds["Glossary/CRDT.md"] == "note"


def test_a_canvas_reads_as_its_cards_and_arrows(engine: Engine) -> None:
    canvas = engine.canvas("Projects/Plan.canvas")
    assert not canvas.problem
    assert [card.kind for card in canvas.cards] == ["group", "text", "file", "link"]
    assert canvas.cards[2].path == "Projects/Atlas/Atlas.md"
    assert canvas.edges[0].label == "explains"


def test_an_embedded_canvas_renders_as_cards(engine: Engine) -> None:
    md = obsidian_markdown()
    context = RenderContext("Inbox/x.md", LinkTable(), engine.embed_section, canvas=engine.canvas, resolve=engine.resolve_link)
    tokens = parse_markdown(md, "![[Plan.canvas]]\n", context)
    cards = [t.meta["canvas_card"] for t in tokens if t.type == "blockquote_open" and "canvas_card" in t.meta]
    assert len(cards) == 4
    links = [c.meta.get("link") for t in tokens if t.children for c in t.children if c.type == "link_open"]
    assert any(ref is not None and ref.path == "Projects/Atlas/Atlas.md" for ref in links)


def test_the_local_graph_centres_the_note_with_its_links_and_backlinks(engine: Engine) -> None:
    graph = engine.local_graph("Projects/Atlas/Atlas.md")
    center = graph.nodes[0]
    assert (center.path, center.role, center.x, center.y) == ("Projects/Atlas/Atlas.md", "center", 0.5, 0.5)
    linked = {n.path for n in graph.nodes if n.role in ("link", "both")}
    assert {n.path for n in engine.outgoing_links("Projects/Atlas/Atlas.md") if n.path.endswith(".md")} <= linked
    assert all(0 <= n.x <= 1 and 0 <= n.y <= 1 for n in graph.nodes)


def test_obsidian_uri_only_for_an_obsidian_vault(engine: Engine) -> None:
    assert engine.obsidian_uri("Glossary/CRDT.md") is None
    (engine.vault / ".obsidian").mkdir()
    try:
        uri = engine.obsidian_uri("Glossary/CRDT.md")
    finally:
        (engine.vault / ".obsidian").rmdir()
    assert uri == f"obsidian://open?vault={engine.vault.name}&file=Glossary%2FCRDT"


def test_find_matches_the_text_as_a_reader_sees_it() -> None:
    text = "# Sync\n\nThe **sync** engine\n\n```\nsync()\n```\n[[Sync|the other]]"
    assert find_in_text(text, "SYNC") == [(1, 0, 4), (3, 4, 8), (6, 0, 4)]
    assert find_in_text(text, "  ") == []


def test_snippets_decode_entities_and_leave_icons_out() -> None:
    assert plain_text("| Line&nbsp;height | a &amp; b |") == "Line\u00a0height · a & b"
    assert plain_text("Open ![[lucide-cog.svg#icon]] Settings") == "Open  Settings"
    assert plain_text("`&amp;` stays") == "&amp; stays"


def test_an_icon_is_no_link_of_the_note(engine: Engine) -> None:
    (engine.vault / "Inbox" / "lucide-cog.svg").write_text("<svg/>", encoding="utf-8")
    (engine.vault / "Inbox" / "Icons.md").write_text(
        "# Icons\n\nOpen ![[lucide-cog.svg#icon]] Settings, see [[Atlas]] and ![[lucide-cog.svg]] drawn.\n", encoding="utf-8"
    )
    engine.reindex()
    links = [linked.path for linked in engine.outgoing_links("Inbox/Icons.md")]
    # The icon in the sentence is left out; the same file embedded as a picture is linked.
    assert links == ["Projects/Atlas/Atlas.md", "Inbox/lucide-cog.svg"]


def test_an_embedded_block_has_no_title(tmp_path: Path) -> None:
    md = obsidian_markdown()
    note = "Some words ^b1\n"
    from engine.records import NoteSection

    def embed(source: str, target: str, *, heading: str | None = None, block: str | None = None) -> NoteSection:
        return NoteSection("A.md", "A", heading, block, 1, "Some words", False, ())

    tokens = parse_markdown(md, "![[A#^b1]]\n", RenderContext("B.md", LinkTable({("wikilink", "a"): "A.md"}), embed))
    assert not any(t.meta.get("embed_title") for t in tokens if t.meta)
    assert any(t.type == "inline" and t.content == "Some words" for t in tokens)
    del note
