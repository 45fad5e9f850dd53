"""The façade over the Obsidian fixture vault: embeds, sections, links by title, note files, rendered snippets.

Nothing inside code is a link, a tag or an embed: not in the link graph, not in backlinks,
not in a rename's link updates.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from vault_copy import copy_vault

from engine.api import Engine
from engine.embedder import HashEmbedder

FIXTURE = Path(__file__).resolve().parent / "data" / "obsidian_vault"
LAWS = "Three laws of motion.md"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixture vault, plus the note that the code in Formatting.md names."""
    copied = copy_vault(FIXTURE, tmp_path_factory.mktemp("obsidian") / "vault")
    (copied / LAWS).write_text("# Three laws of motion\n\nNewton's.\n", encoding="utf-8")
    return copied


@pytest.fixture(scope="module")
def engine(vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    opened = Engine.open(vault, index_dir=tmp_path_factory.mktemp("obsidian-index"), embedder=HashEmbedder())
    opened.reindex()
    yield opened
    opened.close()


def test_embed_section_resolves_its_target_like_a_link(engine: Engine) -> None:
    heading = engine.embed_section("Embeds.md", "Linking", heading="Link to a heading")
    assert heading is not None and heading.path == "Linking.md" and heading.title == "Linking"
    assert heading.line == 5 and heading.text.startswith("## Link to a heading")
    assert "## Link to a block" not in heading.text
    block = engine.embed_section("Embeds.md", "Linking", block="b15695")
    assert block is not None and block.line == 3 and "Learn how to link notes" in block.text
    whole = engine.embed_section("Embeds.md", "linking")
    assert whole is not None and whole.text.startswith("# Linking")
    assert any(resolved == "Embeds.md" for _link, resolved in whole.links), "the section's own links come along"
    assert engine.embed_section("Embeds.md", "Linking", heading="No such heading") is None
    assert engine.embed_section("Embeds.md", "Missing note") is None
    assert engine.embed_section("Embeds.md", "Diagram.png") is None, "an image is no note section"
    # A target the index never saw in that note still resolves, as the indexer would.
    assert engine.embed_section("Embeds.md", "Cycle B") is not None


def test_sections_give_the_line_a_heading_or_block_link_opens_at(engine: Engine) -> None:
    section = engine.section("Linking.md", heading="Link to a block")
    assert section is not None and section.line == 9
    listed = engine.section("Linking.md", block="whole-list")
    assert listed is not None and listed.text.startswith("- a list item")
    assert engine.section("Nowhere.md") is None


def test_links_are_listed_by_their_target_notes_title(engine: Engine) -> None:
    links = engine.outgoing_links("People/Priya Kumar.md")
    assert [(n.path, n.title) for n in links] == [
        ("Projects/Form Builder.md", "Form Builder"),
        ("Callouts.md", "Callouts"),
        ("Formatting.md", "Formatting"),
    ]
    assert links[0].context == "Priya leads the Form Builder project. She reads Callouts and Formatting > Tables."
    files = {n.path: n.title for n in engine.outgoing_links("Embeds.md")}
    assert files["Attachments/Diagram.png"] == "Diagram.png" and files["Linking.md"] == "Linking"
    assert "Embeds.md" not in files, "a note's links to itself are not listed"


def test_notes_that_share_a_title_know_it(engine: Engine) -> None:
    note = engine.note("Projects/Form Builder (copy).md")
    assert note.info.title == "Form Builder"
    assert note.same_title == ("Projects/Form Builder.md",)
    assert engine.note("Linking.md").same_title == ()


def test_backlink_contexts_are_rendered_text(engine: Engine) -> None:
    contexts = {b.path: b.context for b in engine.backlinks("Callouts.md")}
    assert contexts["People/Priya Kumar.md"] == (
        "Priya leads the Form Builder project. She reads Callouts and Formatting > Tables."
    )


def test_snippets_are_rendered_text_with_their_highlights_on_the_words(engine: Engine) -> None:
    hits = {hit.path: hit for hit in engine.search("settings changes noon", as_you_type=False).hits}
    snippet = hits["People/Priya Kumar.md"].snippet
    assert "**" not in snippet.text and "[!tip]" not in snippet.text and "[[" not in snippet.text
    marked = [snippet.text[start:end] for start, end in snippet.highlights]
    assert {"Settings", "changes", "noon"} <= set(marked)


def test_note_files_lists_every_note_before_the_first_index(vault: Path, tmp_path: Path) -> None:
    with Engine.open(vault, index_dir=tmp_path / "fresh", embedder=HashEmbedder()) as fresh:
        assert fresh.notes() == []
        files = dict(fresh.note_files())
        assert files["Reference/Education and non-profit discounts for teams.md"] == (
            "Education and non-profit discounts for teams"
        )
        assert len(files) == len(list(vault.rglob("*.md")))


def test_recent_notes_come_newest_first(vault: Path, tmp_path: Path) -> None:
    with Engine.open(vault, index_dir=tmp_path / "recent", embedder=HashEmbedder()) as fresh:
        newest = vault / "Cycle B.md"
        os.utime(newest, (newest.stat().st_atime, 4_000_000_000))
        fresh.reindex(embed=False)
        assert fresh.recent_notes(2)[0] == ("Cycle B.md", "Cycle B")


def test_code_is_no_link_in_the_graph_backlinks_tags_or_renames(engine: Engine, tmp_path: Path) -> None:
    targets = {row.link.target for row in engine._catalog.links_from("Formatting.md")}
    assert "Three laws of motion" not in targets and "Diagram.png" not in targets
    assert "Linking" in targets
    assert all(b.path != "Formatting.md" for b in engine.backlinks(LAWS))
    assert engine.note("Formatting.md").info.tags == ("formatting/inline",)
    # A rename rewrites real links and leaves the ones in code as they are written.
    vault = copy_vault(engine.vault, tmp_path / "rename")
    shutil.rmtree(vault / ".cairn", ignore_errors=True)
    (vault / "Links to laws.md").write_text("Real: [[Three laws of motion]]. Code: `[[Three laws of motion]]`.\n")
    with Engine.open(vault, index_dir=tmp_path / "rename-index", embedder=HashEmbedder()) as other:
        other.reindex()
        renamed = other.rename_note(LAWS, "Laws of motion")
        assert [n.path for n in renamed.linking] == ["Links to laws.md"]
        update = other.update_links(renamed)
        assert update.links == 1
    assert (vault / "Links to laws.md").read_text() == "Real: [[Laws of motion]]. Code: `[[Three laws of motion]]`.\n"
    assert "[[Three laws of motion]]" in (vault / "Formatting.md").read_text()
