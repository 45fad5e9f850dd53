"""Pilot tests of the TUI's Obsidian tools on the fixture vault: `[[` completion in the editor,
find in note, the outline, the tags and the tree's filter over notes and attachments."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pilot_support import run, settle
from textual.widgets import Input, Label, OptionList
from textual.widgets.markdown import MarkdownBlock

from engine.api import Engine
from ui.app import CairnApp
from ui.dialogs.pick import PickDialog
from ui.screens.editor import EditorScreen
from ui.screens.main import MainScreen
from ui.screens.search import SearchScreen
from ui.widgets.note_editor import NoteEditor
from ui.widgets.note_view import NoteView

WIDE = (120, 35)


async def _open(pilot: object, path: str) -> MainScreen:
    await settle(pilot)
    main = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(main, MainScreen)
    main.query_one(NoteView).focus()  # as choosing the note in the tree does
    main.open_note(path)
    await settle(pilot)
    assert main.query_one(NoteView).path == path
    return main


async def _edit(pilot: object, path: str) -> EditorScreen:
    await _open(pilot, path)
    await pilot.press("e")  # type: ignore[attr-defined]
    await settle(pilot)
    editor = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(editor, EditorScreen) and not editor.editor.disabled
    return editor


@pytest.mark.parametrize(
    ("path", "added"),
    [
        ("Cycle B.md", b"\nSee [[Form Builder]] next."),
        # The new line takes the note's own ending; every other byte stays as it was.
        ("Windows line endings.md", b"\r\nSee [[Form Builder]] next."),
    ],
)
def test_a_completed_link_is_saved_as_typed(
    make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine, path: str, added: bytes
) -> None:
    file = obsidian_engine.vault / path
    before = file.read_bytes()

    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            screen = await _edit(pilot, path)
            editor = screen.query_one("#editor", NoteEditor)
            editor.move_cursor(editor.document.end)
            await pilot.press("enter", *"See [[Form Bui")
            await settle(pilot)
            suggestions = screen.query_one("#link-suggestions", OptionList)
            assert suggestions.display and editor.completions[0].link == "Form Builder"
            await pilot.press("enter")
            await pilot.press(*" next.")
            assert not suggestions.display
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert not screen.dirty

    run(body())
    assert file.read_bytes() == before + added


def test_the_line_being_typed_stays_in_sight_above_the_suggestions(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            screen = await _edit(pilot, "Linking.md")
            editor = screen.query_one("#editor", NoteEditor)
            editor.move_cursor(editor.document.end)
            # A note longer than the screen, typed at its end faster than the list can answer:
            # the list shows up only after the last letter, and must not cover it.
            editor.insert("\n" * 60 + "[[Form")
            await settle(pilot)
            await pilot.pause()
            suggestions = screen.query_one("#link-suggestions", OptionList)
            assert suggestions.display
            cursor_y = editor.cursor_screen_offset.y
            assert editor.region.y <= cursor_y < editor.region.bottom
            assert not suggestions.region.contains(editor.cursor_screen_offset.x, cursor_y)
            await pilot.press("escape")
            assert not suggestions.display and app.screen is screen, "escape hides the list, the editor stays"

    run(body())


def test_find_in_note_counts_steps_and_closes(make_obsidian_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            main = await _open(pilot, "Linking.md")
            await pilot.press("ctrl+f")
            find = main.query_one("#find-input", Input)
            assert find.has_focus
            await pilot.press(*"link")
            count = main.query_one("#find-count", Label)
            view = main.query_one(NoteView)
            total = len(view.found_lines)
            assert total > 1 and str(count.render()) == f"1 of {total}"
            await pilot.press("enter")
            assert str(count.render()) == f"2 of {total}"
            await pilot.press("shift+enter")
            assert str(count.render()) == f"1 of {total}"
            assert view.query(".-found-current")
            await pilot.press("escape")
            assert not main.query_one("#find-bar").display and not view.query(".-found")
            assert view.has_focus

    run(body())


def test_the_outline_jumps_to_a_heading(make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine) -> None:
    headings = obsidian_engine.outline("Linking.md")
    last = headings[-1]

    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            main = await _open(pilot, "Linking.md")
            await pilot.press("o")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, PickDialog)
            listed = dialog.query_one("#pick-list", OptionList)
            assert listed.option_count == len(headings)
            await pilot.press(*last.text, "enter")
            await settle(pilot)
            assert app.screen is main
            assert main.query_one(NoteView).passage_line == last.line

    run(body())


def test_picking_a_tag_searches_for_it(make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine) -> None:
    tag = obsidian_engine.tags()[0].tag

    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            await _open(pilot, "Linking.md")
            await pilot.press("t")
            await settle(pilot)
            assert isinstance(app.screen, PickDialog)
            await pilot.press(*tag, "enter")
            await settle(pilot)
            search = app.screen
            assert isinstance(search, SearchScreen)
            assert search.query_one("#search-input", Input).value == f"tag:{tag}"

    run(body())


def test_enter_in_the_tree_filter_opens_a_note_before_an_attachment_of_the_same_name(
    make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine
) -> None:
    # Attachments/ sorts before most folders; a file named like the note must not win Enter.
    (obsidian_engine.vault / "Attachments" / "Linking diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")

    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            await pilot.press("ctrl+g", *"linking", "enter")
            await settle(pilot)
            assert main.current_path == "Linking.md"

    run(body())


def test_open_in_obsidian_opens_the_uri_of_the_note(
    make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    (obsidian_engine.vault / ".obsidian").mkdir(exist_ok=True)
    opened: list[str] = []

    async def body() -> None:
        app = make_obsidian_app()
        monkeypatch.setattr(app, "open_url", lambda url, **_kwargs: opened.append(url))
        async with app.run_test(size=WIDE) as pilot:
            await _open(pilot, "Projects/Form Builder.md")
            await pilot.press("O")
            await pilot.pause()

    run(body())
    assert opened == [obsidian_engine.obsidian_uri("Projects/Form Builder.md")]
    assert opened[0].startswith("obsidian://open?vault=") and "Form%20Builder" in opened[0]


def test_an_image_chosen_in_the_tree_shows_its_placeholder_and_x_opens_it(
    make_obsidian_app: Callable[..., CairnApp], obsidian_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedding = obsidian_engine.backlinks("Attachments/Diagram.png")
    assert {b.path for b in embedding} == {"Embeds.md"}  # three embeds there; the one in a code fence elsewhere is text
    opened: list[Path] = []
    # The system's handler is the one thing not run here: it would start a desktop program.
    monkeypatch.setattr("ui.screens.main.open_with_system", lambda target: opened.append(target) or True)

    async def body() -> None:
        app = make_obsidian_app()
        async with app.run_test(size=WIDE) as pilot:
            main = await _open(pilot, "Embeds.md")
            assert main.query_one("#links-list", OptionList).option_count > 1
            await pilot.press("ctrl+g", *"diagram.png", "enter")
            await settle(pilot)
            view = main.query_one(NoteView)
            assert view.shown_file == "Attachments/Diagram.png" and main.current_path is None
            assert "[image: Diagram.png" in "".join(str(block._content) for block in view.query(MarkdownBlock))
            assert str(main.query_one("#links-title", Label).render()) == "Links (0)", "the last note's links are gone"
            # The lines of notes that embed or link the image are its backlinks.
            assert str(main.query_one("#backlinks-title", Label).render()) == f"Backlinks ({len(embedding)})"
            view.focus()
            await pilot.press("x")

    run(body())
    assert [target.name for target in opened] == ["Diagram.png"]
