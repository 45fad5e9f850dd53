"""The engine's reading of Obsidian Markdown for display (engine/vault/markup.py), construct by construct.

Every construct the fixture vault (tests/data/obsidian_vault) holds, read the way both
front ends render it. The help vault that ships with Obsidian documents each of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it.token import Token

from engine.present import (
    Callout,
    Embed,
    LinkRef,
    LinkTable,
    RenderContext,
    cut_reason,
    obsidian_markdown,
    parse_markdown,
)
from engine.records import Link, NoteSection
from engine.vault.callouts import style_for
from engine.vault.sections import block_lines, heading_lines, note_section, without_comments

VAULT = Path(__file__).resolve().parent / "data" / "obsidian_vault"
MD = obsidian_markdown()


def _read(name: str) -> str:
    return (VAULT / name).read_bytes().decode("utf-8").replace("\r\n", "\n")


def _tokens(text: str, context: RenderContext | None = None) -> list[Token]:
    return parse_markdown(MD, text, context)


def _children(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield from token.children or ()


def _text(tokens: list[Token]) -> str:
    """Everything the reader sees as words, token by token (links by their label)."""
    return " ".join(child.content for child in _children(tokens) if child.type in ("text", "code_inline", "tag"))


# -- callouts ---------------------------------------------------------------------------


def test_callouts_have_type_title_fold_and_body() -> None:
    tokens = _tokens(_read("Callouts.md"))
    callouts = [t.meta["callout"] for t in tokens if t.type == "blockquote_open" and "callout" in t.meta]
    assert [(c.kind, c.style.name, c.title, c.fold) for c in callouts] == [
        ("info", "info", "Here's a callout title", ""),
        ("tip", "tip", "Folded by default", "-"),
        ("warning", "warning", "Open, but foldable", "+"),
        ("faq", "question", "An alias of question", ""),
        ("danger", "danger", "Danger", ""),
        ("custom-type", "note", "A type Obsidian does not know", ""),
        ("question", "question", "Can callouts be nested?", ""),
        ("todo", "todo", "Yes, they can.", ""),
        ("example", "example", "Even three levels deep.", ""),
    ]
    folded = callouts[1]
    assert folded.folded and folded.foldable and not callouts[2].folded and callouts[2].foldable
    # The marker never reaches the text, and the title is its own paragraph before the body.
    assert "[!" not in _text(tokens)
    first = next(i for i, t in enumerate(tokens) if t.type == "blockquote_open")
    assert isinstance(tokens[first + 1].meta.get("callout_title"), Callout)
    assert tokens[first + 2].content == "Here's a callout title"
    assert tokens[first + 5].content.startswith("Here's a callout block.")
    # Closing tokens carry the callout too, so a renderer closes what it opened.
    closing = [t for t in tokens if t.type == "blockquote_close" and "callout" in t.meta]
    assert len(closing) == len(callouts)
    plain = [t for t in tokens if t.type == "blockquote_open" and not t.meta]
    assert len(plain) == 1, "a quote without a marker stays a quote"


def test_callout_types_are_case_blind_and_unknown_ones_look_like_notes() -> None:
    assert style_for("WARNING").name == "warning"
    assert style_for("cite").name == "quote"
    assert style_for("whatever").name == "note"
    tokens = _tokens("> [!TIP] **Bold** title with [[Linking]]\n> body\n")
    title = tokens[2]
    assert [c.type for c in title.children or []][:2] == ["text", "strong_open"]
    assert any(isinstance(c.meta.get("link"), LinkRef) for c in title.children or [])


def test_a_callout_marker_in_code_is_code() -> None:
    tokens = _tokens("```\n> [!tip] not a callout\n```\n\n`> [!note]`\n")
    assert not any("callout" in t.meta for t in tokens)


# -- links, embeds, code -----------------------------------------------------------------


LINKS = LinkTable.from_links(
    [
        (Link("Linking", None, None, None, False, 1), "Linking.md"),
        (Link("Diagram.png", None, None, None, True, 1), "Attachments/Diagram.png"),
        (Link("Handbook.pdf", None, None, None, True, 1), "Attachments/Handbook.pdf"),
        (Link("Embeds", None, None, None, True, 1), "Embeds.md"),
    ]
)


def _refs(tokens: list[Token]) -> list[LinkRef]:
    return [c.meta["link"] for c in _children(tokens) if isinstance(c.meta.get("link"), LinkRef)]


def test_nothing_inside_code_is_a_link_a_tag_or_an_embed() -> None:
    text = _read("Formatting.md")
    tokens = _tokens(text, RenderContext("Formatting.md", LINKS))
    code = [c.content for c in _children(tokens) if c.type == "code_inline"]
    assert "[[Three laws of motion]]" in code and "#not-a-tag" in code
    fence = next(t for t in tokens if t.type == "fence" and "Three laws" in t.content)
    assert "![[Diagram.png]]" in fence.content
    assert not any(ref.target == "Three laws of motion" for ref in _refs(tokens))
    tags = [c.content for c in _children(tokens) if c.type == "tag"]
    assert tags == ["formatting/inline"]


def test_embeds_of_images_files_and_dangling_notes() -> None:
    tokens = _tokens(_read("Embeds.md"), RenderContext("Embeds.md", LINKS))
    images = [c for c in _children(tokens) if c.type == "image"]
    assert [(i.meta["link"].path, i.meta["width"], i.meta["height"], i.content) for i in images[:2]] == [
        ("Attachments/Diagram.png", 100, None, "Diagram.png"),
        ("Attachments/Diagram.png", 100, 60, "Diagram.png"),
    ]
    # A Markdown image's size is no words either: `![Diagram|80](…)` is "Diagram", `![250](…/Engelbart.jpg)` its file.
    markdown, outside = images[2:]
    assert (markdown.meta["width"], markdown.content, [c.content for c in markdown.children or ()]) == (80, "Diagram", ["Diagram"])
    assert (outside.meta["width"], outside.content, [c.content for c in outside.children or ()]) == (250, "Engelbart.jpg", ["Engelbart.jpg"])
    assert "link" not in outside.meta, "an outside image is no vault file"
    pdf = next(ref for ref in _refs(tokens) if ref.target == "Handbook.pdf")
    assert pdf.embed and pdf.path == "Attachments/Handbook.pdf" and not pdf.is_note
    # Without a way to fetch sections, note embeds stay links (`Note > Heading`).
    labels = [ref.label for ref in _refs(tokens) if ref.embed and ref.kind == "wikilink"]
    assert "Linking > Link to a heading" in labels and "Linking > ^b15695" in labels


def _sections(sections: dict[tuple[str, str | None, str | None], str]) -> RenderContext:
    def embed(source: str, target: str, *, heading: str | None = None, block: str | None = None) -> NoteSection | None:
        text = sections.get((target, heading, block))
        if text is None:
            return None
        path = f"{target}.md"
        return NoteSection(path, target, heading, block, 1, text, links=tuple(
            (Link(t, None, None, None, True, 1), f"{t}.md") for t in ("A", "B", "C", "D", "E")
        ))

    table = LinkTable.from_links([(Link(t, None, None, None, True, 1), f"{t}.md") for t in ("A", "B", "C", "D", "E")])
    return RenderContext("Start.md", table, embed)


def _embeds(tokens: list[Token]) -> list[Embed]:
    return [t.meta["embed"] for t in tokens if t.type == "blockquote_open" and "embed" in t.meta]


def test_an_embedded_section_is_shown_inside_its_note_without_its_source_lines() -> None:
    context = _sections({("A", "Part", None): "## Part\n\nThe part's **text**."})
    tokens = _tokens("Before\n\n![[A#Part]]\n\nAfter\n", context)
    [embed] = _embeds(tokens)
    assert embed.cut == "" and embed.section is not None and embed.link.label == "A > Part"
    opening = next(t for t in tokens if t.type == "blockquote_open")
    assert opening.map == [2, 3], "the embed sits on the line that embeds it"
    inside = tokens[tokens.index(opening) + 4 :]
    assert any(t.type == "heading_open" and t.map is None for t in inside)
    assert "The part's" in _text(tokens) and "After" in _text(tokens)


def test_embeds_cut_cycles_and_depth_and_say_why() -> None:
    cycle = _sections({("A", None, None): "A embeds B:\n\n![[B]]", ("B", None, None): "B embeds A:\n\n![[A]]"})
    embeds = _embeds(_tokens("![[A]]\n", cycle))
    assert [e.cut for e in embeds] == ["", "", "cycle"]
    assert cut_reason(embeds[-1]) == "not shown again: it embeds itself"
    chain = _sections({(t, None, None): f"{t} embeds {n}:\n\n![[{n}]]" for t, n in zip("ABCD", "BCDE", strict=True)})
    embeds = _embeds(_tokens("![[A]]\n", chain))
    assert [e.cut for e in embeds] == ["", "", "", "depth"]
    missing = _embeds(_tokens("![[A#Nowhere]]\n\n![[Nobody]]\n", _sections({})))
    assert [cut_reason(e) for e in missing] == ["no “Nowhere” in it", "no such note"]


def test_a_paragraph_mixing_text_and_an_embed_keeps_the_embed_as_a_link() -> None:
    context = _sections({("A", None, None): "A's text"})
    tokens = _tokens("See ![[A]] here.\n", context)
    assert not _embeds(tokens)
    assert [ref.label for ref in _refs(tokens)] == ["A"]


def test_embeds_stop_at_their_budget() -> None:
    # 200k characters in all: an embed starts while any are left (a section is at most 20k).
    context = _sections({("A", None, None): "x" * 150_000})
    embeds = _embeds(_tokens("![[A]]\n\n![[A]]\n\n![[A]]\n", context))
    assert [e.cut for e in embeds] == ["", "", "limit"]
    assert cut_reason(embeds[-1]) == "too many embeds in this note to show them all"


# -- block ids, comments, highlights, tasks, footnotes, math, tables, breaks ----------------


def test_block_ids_are_hidden_and_kept_as_anchors() -> None:
    tokens = _tokens(_read("Linking.md"))
    inlines = [t.content for t in tokens if t.type == "inline"]
    assert "Learn how to link notes, headings and blocks." in inlines
    assert not any(text.rstrip().endswith(("^b15695", "^list-item", "^whole-list")) for text in inlines)
    ids = {t.meta["block_id"]: t.type for t in tokens if "block_id" in t.meta}
    assert ids == {"b15695": "paragraph_open", "list-item": "list_item_open", "whole-list": "bullet_list_open"}


def test_comments_are_taken_out_line_for_line() -> None:
    text = _read("Formatting.md")
    stripped = without_comments(text)
    assert stripped.count("\n") == text.count("\n")
    assert "nobody sees this" not in stripped and "block comment" not in stripped
    assert "A comment  is hidden in the middle of a line." in stripped
    assert without_comments("`%% code %%` stays\n") == "`%% code %%` stays\n"
    assert without_comments("open %% to the end\nstill hidden\n") == "open \n\n"


def test_highlights_tasks_footnotes_math_tables_and_breaks() -> None:
    tokens = _tokens(_read("Formatting.md"))
    kinds = [c.type for c in _children(tokens)]
    assert kinds.count("mark_open") == 1 and kinds.count("mark_close") == 1
    assert "softbreak" not in kinds and "hardbreak" in kinds, "single line breaks are kept"
    tasks = [t.meta["task"] for t in tokens if "task" in t.meta]
    assert tasks == [" ", "x", "/"]
    assert [c.meta.get("id") for c in _children(tokens) if c.type == "footnote_ref"] == [0, 1]
    footnotes = next(t for t in tokens if t.meta.get("footnotes"))
    assert footnotes.type == "ordered_list_open" and tokens[tokens.index(footnotes) - 1].type == "hr"
    math = [c.content for c in _children(tokens) if c.type == "code_inline" and c.meta.get("math")]
    assert math == ["e^{i\\pi} + 1 = 0"]
    assert "money like $5 and $10 stays text." in _text(tokens)
    block = next(t for t in tokens if t.type == "fence" and t.meta.get("math"))
    assert block.info == "math" and block.content.startswith("\\int_0^1")
    cells = [t.content for t in tokens if t.type == "inline" and t.level >= 4]
    # The table reads `\|` as a pipe inside a cell: the wikilink keeps its display text.
    assert "[[Linking|an aliased link]]" in cells and "a | b" in cells
    link = next(ref for ref in _refs(tokens) if ref.display == "an aliased link")
    assert link.target == "Linking"
    assert "a | b" in _text(tokens)
    assert all(t.type not in ("footnote_block_open", "math_block", "footnote_anchor") for t in tokens)


def test_crlf_notes_read_like_lf_notes() -> None:
    raw = (VAULT / "Windows line endings.md").read_bytes()
    assert b"\r\n" in raw
    tokens = _tokens(raw.decode("utf-8").replace("\r\n", "\n"))
    assert any("callout" in t.meta for t in tokens)
    assert "\r" not in _text(tokens)


# -- sections ---------------------------------------------------------------------------------


def test_heading_and_block_sections() -> None:
    text = _read("Linking.md")
    lines = text.split("\n")
    section = note_section("Linking.md", "Linking", text, heading="Link to a heading")
    assert section is not None and section.line == 5
    assert section.text.startswith("## Link to a heading") and "## Link to a block" not in section.text
    nested = note_section("Linking.md", "Linking", text, heading="Linking#Link to a block")
    assert nested is not None and nested.text.startswith("## Link to a block")
    block = note_section("Linking.md", "Linking", text, block="b15695")
    assert block is not None and block.line == 3 and block.text.endswith("^b15695")
    assert block_lines(text, "list-item") == (13, 14)
    whole = block_lines(text, "whole-list")
    assert whole is not None and lines[whole[0]].startswith("- a list item") and whole[1] == 15
    assert note_section("Linking.md", "Linking", text, heading="Nowhere") is None
    assert note_section("Linking.md", "Linking", text, block="nowhere") is None
    body = note_section("Linking.md", "Linking", text)
    assert body is not None and body.line == 1 and body.text.startswith("# Linking")


def test_headings_match_as_obsidian_writes_their_links() -> None:
    text = "# Top\n\n## Step 1: set up\n\nDo it.\n\n## Next\n"
    from engine.vault import parse_note

    lines = text.split("\n")
    headings = parse_note("a.md", text).headings
    assert heading_lines(lines, headings, "Step 1 set up") == (2, 5)
    assert heading_lines(lines, headings, "step 1: SET UP") == (2, 5)


def test_a_long_section_is_cut_at_a_line() -> None:
    text = "# Big\n\n" + "\n".join(f"line {n} " + "x" * 90 for n in range(1000))
    section = note_section("Big.md", "Big", text)
    assert section is not None and section.truncated
    assert len(section.text) <= 20_000 and section.text.endswith("x")


@pytest.mark.parametrize("name", sorted(p.name for p in VAULT.rglob("*.md")))
def test_every_fixture_note_parses(name: str) -> None:
    path = next(VAULT.rglob(name))
    assert _tokens(path.read_bytes().decode("utf-8").replace("\r\n", "\n"))


def test_a_block_id_may_follow_an_embed_directly_and_a_missing_file_says_so() -> None:
    text = "Intro\n\n![[version-history.png]]^version-history-image\n"
    assert block_lines(text, "version-history-image") == (2, 3)
    tokens = _tokens(text)
    assert any(t.meta.get("block_id") == "version-history-image" for t in tokens)
    assert "^version-history-image" not in " ".join(t.content for t in tokens if t.type == "inline")
    embeds = _embeds(_tokens("![[obsidian-cli.mp4#interface]]\n", _sections({})))
    assert cut_reason(embeds[0]) == "no such file"
