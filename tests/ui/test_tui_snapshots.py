"""Snapshots of the main screens, built by the entry point's factory over the real engine.

Timings are hidden (`show_timings=False`) so nothing time-dependent is rendered.
Regenerate with `pytest tests/ui/test_tui_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

from pilot_support import SIZE, settle
from textual.pilot import Pilot
from textual.widgets import Input

from ui.app import CairnApp
from ui.screens.main import MainScreen
from ui.screens.search import SearchScreen

ADR = "Decisions/ADR-004 Sync with CRDTs.md"
QUERY = "who decided to use CRDTs"


async def _open_note(pilot: Pilot[None]) -> None:
    await settle(pilot)
    main = pilot.app.screen
    assert isinstance(main, MainScreen)
    main.open_note(ADR)
    await settle(pilot)


async def _search(pilot: Pilot[None]) -> None:
    await _open_note(pilot)
    await pilot.press("slash")
    pilot.app.screen.query_one("#search-input", Input).value = QUERY
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SearchScreen) and screen.results is not None and screen.results.query == QUERY


async def _explain(pilot: Pilot[None]) -> None:
    await _search(pilot)
    await pilot.press("down", "f2")
    await pilot.pause()


async def _editor(pilot: Pilot[None]) -> None:
    await _open_note(pilot)
    await pilot.press("e")
    await settle(pilot)


def test_main_screen(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_app(show_timings=False), terminal_size=SIZE, run_before=_open_note)


def test_search_panel_with_results(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_app(show_timings=False), terminal_size=SIZE, run_before=_search)


def test_explain_view(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_app(show_timings=False), terminal_size=SIZE, run_before=_explain)


def test_editor(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_app(show_timings=False), terminal_size=SIZE, run_before=_editor)


def test_main_screen_narrow_light(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    async def before(pilot: Pilot[None]) -> None:
        await _open_note(pilot)
        await pilot.press("ctrl+t")
        await pilot.pause()

    assert snap_compare(make_app(show_timings=False), terminal_size=(80, 24), run_before=before)
