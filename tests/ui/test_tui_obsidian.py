"""Pilot tests of reading and browsing the Obsidian fixture vault as Obsidian shows it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pilot_support import link_targets, run, settle
from textual.command import CommandPalette
from textual.geometry import Region
from textual.widgets import Button, Input, Label, Markdown, OptionList, Static
from textual.widgets._markdown import MarkdownBullet, MarkdownTable
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from engine.api import Engine
from ui.app import CairnApp
from ui.dialogs.choice import ChoiceDialog
from ui.screens.editor import EditorScreen
from ui.screens.main import MainScreen
from ui.widgets.note_markdown import NoteParagraph, NoteQuote
from ui.widgets.note_view import NoteView
from ui.widgets.side_panel import SidePanel
from ui.widgets.vault_tree import VaultTree
from ui.wikilinks import note_href

WIDE = (120, 35)
LONG = "Reference/Education and non-profit discounts for teams.md"


async def _open(pilot: object, path: str) -> NoteView:
    await settle(pilot)
    main = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(main, MainScreen)
    main.open_note(path)
    await settle(pilot)
    view = main.query_one(NoteView)
    assert view.path == path
    return view


def test_heading_and_block_links_open_at_their_target(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            view = await _open(pilot, "Linking.md")
            hrefs = link_targets(view)
            heading = note_href("Linking.md", heading="Link to a block")
            block = note_href("Linking.md", block="b15695")
            assert heading in hrefs and block in hrefs
            markdown = view.query_one(Markdown)
            for href, line in ((heading, 9), (block, 3)):
                markdown.post_message(Markdown.LinkClicked(markdown, href))
                await settle(pilot)
                assert view.path == "Linking.md" and view.passage_line == line
                marked = view.query(".-passage").first()
                start, end = marked.source_range  # type: ignore[attr-defined]
                assert start <= line - 1 < end

    run(body())


def test_the_passage_mark_leaves_every_letter_of_its_lines_visible(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note("Linking.md", block="b15695")
            await settle(pilot)
            marked = main.query_one(NoteView).query(".-passage").first()
            strips = marked.render_lines(Region(0, 0, marked.outer_size.width, marked.outer_size.height))
            lines = [strip.text for strip in strips]
            # The mark is a bar beside the text: no line loses its first letter to it ("█oë spent…").
            assert [line[:10] for line in lines] == ["█Learn how", "█headings "], lines

    run(body())


def test_formatting_reads_as_obsidian_shows_it(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            view = await _open(pilot, "Formatting.md")
            shown = [block._content.plain for block in view.query(MarkdownBlock) if hasattr(block, "_content")]
            text = "\n".join(shown)
            assert "Ingrid Holm\nNotes: Marcus\nSingle line breaks" in text, "single line breaks stay breaks"
            assert "a highlighted phrase and a #formatting/inline tag." in text and "==" not in text
            assert "A comment is hidden in the middle of a line." in text
            assert "nobody sees this" not in text and "block comment" not in text and "%%" not in text
            assert "Inline code like [[Three laws of motion]] and #not-a-tag stays code." in text
            fence = view.query_one(MarkdownFence)
            assert "[[Three laws of motion]], ![[Diagram.png]] and #tags" in fence.code
            hrefs = link_targets(view)
            assert hrefs == ["tag:formatting/inline", "#fn-1", "#fn-2"], "no link, tag or embed out of code"
            boxes = [bullet.symbol for bullet in view.query(MarkdownBullet)]
            assert boxes[:3] == ["☐ ", "☑ ", "☑ "]
            done = [row.query_one(NoteParagraph) for row in view.query("NoteBulletList > Horizontal.-done")]
            assert [p._content.plain for p in done] == ["Tag the build", "Half done (a custom status)"]
            assert all(p.styles.text_style.strike for p in done), "a done task is struck through, as in Obsidian"
            assert "Obsidian supports footnotes[1] and inline ones.[2]" in text
            assert "The footnote's text, listed at the end." in text and "Written where they are used." in text
            assert "Inline math e^{i\\pi} + 1 = 0 shows its source, and money like $5 and $10 stays text." in text
            table = view.query_one(MarkdownTable)
            rows = [[cell.plain for cell in row] for row in table._rows]
            assert rows == [
                ["[[Linking|alias]] in code", "stays code"],
                ["an aliased link", "a link to Linking"],
                ["a | b", "a pipe in a cell"],
            ]
            linking = await _open(pilot, "Linking.md")
            read = [block._content.plain for block in linking.query(MarkdownBlock) if hasattr(block, "_content")]
            assert "Learn how to link notes, headings and blocks." in read, "a block id is hidden"
            assert "a list item with its own id" in read and not any("^list-item" in p or "^whole-list" in p for p in read)

    run(body())


def test_callouts_show_type_title_and_fold_on_a_click(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            view = await _open(pilot, "Callouts.md")
            callouts = [q for q in view.query(NoteQuote) if q.callout is not None]
            assert [q.callout.style.name for q in callouts if q.callout][:3] == ["info", "tip", "warning"]
            folded = callouts[1]
            assert folded.has_class("-folded", "-tone-cyan")
            title = folded.query_one(NoteParagraph)
            assert title.callout is not None and title._content.plain == "✦ Folded by default ▸"
            hidden = [p for p in folded.query(NoteParagraph) if p.callout is None]
            assert hidden and not any(p.display for p in hidden)
            await pilot.click(title)
            await pilot.pause()
            assert not folded.has_class("-folded") and all(p.display for p in hidden)
            assert title._content.plain.endswith("▾")
            unknown = next(q for q in callouts if q.callout and q.callout.kind == "custom-type")
            assert unknown.has_class("-tone-blue"), "an unknown type looks like a note"

    run(body())


def test_embeds_show_their_sections_and_say_what_they_cut(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            view = await _open(pilot, "Embeds.md")
            embeds = [q for q in view.query(NoteQuote) if q.has_class("embed")]
            titles = [q.query_one(NoteParagraph)._content.plain for q in embeds]
            # An embedded block has no title line, as in Obsidian: its first paragraph is its text.
            assert titles[:3] == ["↳ Linking", "↳ Linking > Link to a heading", "Learn how to link notes, headings and blocks."]
            assert any("not shown again: it embeds itself" in t for t in titles)
            assert any("Missing note  · no such note" in t for t in titles)
            block = embeds[2]
            assert "Learn how to link notes, headings and blocks." in [p._content.plain for p in block.query(NoteParagraph)]
            shown = [p._content.plain for p in view.query(NoteParagraph)]
            assert "[image: Diagram.png · 100 px]" in shown and "[image: Diagram.png · 100×60 px]" in shown
            assert "[image: Diagram.png · 80 px]" in shown and "[image: Engelbart.jpg · 250 px]" in shown
            assert "[📄 PDF: Handbook.pdf · x opens it]" in shown

    run(body())


def test_conflict_dialog_focuses_keep_editing(make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        path = "Cycle B.md"
        file = Path(obsidian_engine.vault) / path
        async with app.run_test(size=WIDE) as pilot:
            await _open(pilot, path)
            await pilot.press("e")
            await settle(pilot)
            editor = app.screen
            assert isinstance(editor, EditorScreen)
            editor.editor.insert("my edit ")
            elsewhere = file.read_text(encoding="utf-8") + "\nChanged elsewhere.\n"
            file.write_text(elsewhere, encoding="utf-8")
            await pilot.press("ctrl+s")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, ChoiceDialog)
            assert app.focused is dialog.query_one("#choice-cancel", Button)
            assert dialog.query_one("#choice-reload", Button).variant == "error"
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen is editor and "my edit " in editor.editor.text
            assert file.read_text(encoding="utf-8") == elsewhere

    run(body())


def test_the_palette_finds_notes_and_lists_each_command_once(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            await settle(pilot)
            titles = [command.title for command in app.get_system_commands(app.screen)]
            assert titles.count("Theme") == 1 and len(titles) == len(set(titles)), titles
            await pilot.press("ctrl+p")
            await pilot.pause()
            assert isinstance(app.screen, CommandPalette)
            await pilot.press(*"priya")
            for _ in range(50):
                await pilot.pause(0.02)
                options = app.screen.query_one(OptionList)
                if options.option_count and "Priya Kumar" in str(options.get_option_at_index(0).prompt):
                    break
            assert "Priya Kumar" in str(options.get_option_at_index(0).prompt)
            await pilot.press("enter")
            await settle(pilot)
            view = app.screen.query_one(NoteView)
            assert view.path == "People/Priya Kumar.md"
            # The note is read, not the tree: the tree is back to its width.
            await pilot.pause()
            assert view.has_focus and app.screen.query_one(VaultTree).outer_size.width == 28

    run(body())


def test_a_search_result_opens_into_the_note_and_the_tree_gives_its_room_back(
    make_obsidian_app: Callable[..., CairnApp],
) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            await settle(pilot)
            tree = app.screen.query_one(VaultTree)
            assert tree.has_focus_within and tree.outer_size.width > 28
            await pilot.press("slash")
            app.screen.query_one("#search-input", Input).value = "Priya Kumar"
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            await pilot.pause()
            view = app.screen.query_one(NoteView)
            assert view.path == "People/Priya Kumar.md"
            assert view.has_focus and tree.outer_size.width == 28

    run(body())


def test_enter_after_l_opens_the_first_link_by_its_title(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            await _open(pilot, "People/Priya Kumar.md")
            panel = app.screen.query_one(SidePanel)
            assert panel.entries("links")[0][0] == "Projects/Form Builder.md"
            links = panel.query_one("#links-list", OptionList)
            assert str(links.get_option_at_index(0).prompt).startswith("Form Builder")
            await pilot.press("l")
            await pilot.pause()
            assert app.focused is links and links.highlighted == 0
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen.query_one(NoteView).path == "Projects/Form Builder.md"
            backlinks = panel.query_one("#backlinks-list", OptionList)
            assert panel.entries("backlinks")[0][0] == "People/Priya Kumar.md"
            await pilot.press("b")
            await pilot.pause()
            assert app.focused is backlinks and backlinks.highlighted == 0
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen.query_one(NoteView).path == "People/Priya Kumar.md", "b then enter opens the first backlink"

    run(body())


def test_a_note_that_shares_its_title_shows_its_path(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            view = await _open(pilot, "Projects/Form Builder (copy).md")
            meta = str(view.query_one("#note-meta", Static).content)
            assert "Projects/Form Builder (copy).md (same title as Projects/Form Builder.md)" in meta
            await pilot.press("slash")
            app.screen.query_one("#search-input", Input).value = "form builder"
            await settle(pilot)
            results = app.screen.query_one("#results", OptionList)
            prompts = [str(results.get_option_at_index(i).prompt) for i in range(results.option_count)]
            builders = [p for p in prompts if "Form Builder" in p.split("\n", 1)[0]]
            assert len(builders) == 2, prompts
            assert any("Projects/Form Builder (copy).md" in p for p in builders), "results show the path where titles collide"
            assert any("Projects/Form Builder.md" in p for p in builders)

    run(body())


def test_the_tree_lists_every_note_before_the_first_index(obsidian_engine: Engine, tmp_path: Path) -> None:
    from vault_copy import copy_vault

    from app.config import AppConfig
    from app.wiring import build_app
    from engine.embedder import HashEmbedder

    vault = copy_vault(Path(obsidian_engine.vault), tmp_path / "vault")
    engine = Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder())

    async def body() -> None:
        app = build_app(engine, AppConfig(), index_on_start=False, cursor_blink=False)
        async with app.run_test(size=WIDE) as pilot:
            await settle(pilot)
            tree = app.screen.query_one(VaultTree)
            listed = [path for path, _title in tree._notes]
            assert engine.notes() == [] and LONG in listed and "Callouts.md" in listed

    try:
        run(body())
    finally:
        engine.close()


def test_the_tree_widens_to_its_names_while_it_has_the_focus(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            await settle(pilot)
            tree = app.screen.query_one(VaultTree)
            assert tree.has_focus_within
            stem = LONG.rpartition("/")[2].removesuffix(".md")
            assert tree.outer_size.width >= len(stem) + 4
            await pilot.press("ctrl+g", *"discounts", "enter")
            await settle(pilot)
            assert app.screen.query_one(NoteView).path == LONG
            await pilot.pause()
            assert tree.outer_size.width == 28, "an open note has its room back"

    run(body())


def test_the_filter_shows_what_fits_from_its_first_letter(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+g")
            await pilot.press(*"kickoff")
            await pilot.pause()
            box = app.screen.query_one("#tree-filter", Input)
            assert box.value == "kickoff" and box.scroll_offset.x == 0

    run(body())


def test_a_long_dialog_question_wraps(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        question = "3 link(s) in 2 other note(s) point to the old name. Update them to “Glossary/A very long new name.md”?"
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await app.push_screen(ChoiceDialog("Update links?", question, [("update", "Update links"), ("cancel", "Leave them")]))
            await pilot.pause()
            label = app.screen.query_one("#dialog-question", Label)
            assert label.size.height >= 2
            assert label.region.right <= app.screen.query_one("#dialog").region.right
            shown = " ".join(strip.text.strip() for strip in label.render_lines(label.region.reset_offset))
            assert " ".join(shown.split()) == question, "every word of the question is on screen"

    run(body())


def test_numbered_tasks_show_their_box_and_done_ones_are_struck_through(
    make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine
) -> None:
    (obsidian_engine.vault / "Numbered.md").write_text(
        "# Numbered\n\n1. [ ] call the printer\n2. [x] book the room\n3. plain step\n", encoding="utf-8"
    )
    obsidian_engine.reindex(["Numbered.md"])

    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            view = await _open(pilot, "Numbered.md")
            symbols = [bullet.symbol.strip() for bullet in view.query(MarkdownBullet)]
            assert symbols == ["1. ☐", "2. ☑", "3."]
            done = [row.query_one(NoteParagraph) for row in view.query("NoteOrderedList > Horizontal.-done")]
            assert [p._content.plain for p in done] == ["book the room"]
            assert done[0].styles.text_style.strike, "a done task is struck through in a numbered list too"

    run(body())
