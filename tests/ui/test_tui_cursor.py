"""The tests' app keeps every text cursor steady, so a snapshot never depends on the blink's phase."""

from __future__ import annotations

from collections.abc import Callable

from pilot_support import SIZE, run, settle
from textual.widgets import Input, TextArea

from ui.app import CairnApp
from ui.screens.main import MainScreen

ADR = "Decisions/ADR-004 Sync with CRDTs.md"


def test_the_search_box_and_the_editor_do_not_blink_in_tests(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app(show_timings=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note(ADR)
            await settle(pilot)
            await pilot.press("e")
            await settle(pilot)
            editor = app.screen.query_one("#editor", TextArea)
            assert editor.has_focus and editor.cursor_blink is False
            await pilot.press("escape")
            await settle(pilot)
            await pilot.press("slash")
            await settle(pilot)
            search = app.screen.query_one("#search-input", Input)
            assert search.has_focus and search.cursor_blink is False

    run(body())


def test_users_get_a_blinking_cursor_by_default(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app(cursor_blink=True)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await settle(pilot)
            search = app.screen.query_one("#search-input", Input)
            assert search.has_focus and search.cursor_blink is True

    run(body())
