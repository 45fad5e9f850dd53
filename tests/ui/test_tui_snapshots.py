"""Snapshots of the main screens, built by the entry point's factory over the real engine.

Timings are hidden (`show_timings=False`) so nothing time-dependent is rendered, and no app
indexes on start (`index_on_start=False`): the engine is current, and an app starting while
the last test's app still indexed the same engine showed "the index is being written" on
a slow run. The
engines here embed with the deterministic `HashEmbedder`: a snapshot is about the
screens, and the int8 model's vectors differ in the second decimal from one processor to
another (its integer kernels do), which a snapshot of the scores it shows would read as
a change. The model's own rankings are tested elsewhere (tests/ui/test_tui_search.py,
tests/test_eval_regression.py).
Regenerate with `pytest tests/ui/test_tui_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from pilot_support import SIZE, settle
from textual.pilot import Pilot
from textual.widgets import Input
from vault_copy import copy_sample_vault, copy_vault

from app.config import AppConfig
from app.wiring import open_engine
from engine.api import Engine
from engine.embedder import HashEmbedder
from ui.app import CairnApp
from ui.screens.main import MainScreen
from ui.screens.search import SearchScreen
from ui.widgets.note_view import NoteView

OBSIDIAN_FIXTURE = Path(__file__).resolve().parent.parent / "data" / "obsidian_vault"


def _stub_engine(vault: Path) -> Engine:
    """An engine over `vault`, indexed and embedded with the deterministic stand-in model."""
    with Engine.open(vault, embedder=HashEmbedder()) as indexing:
        indexing.reindex()
    return open_engine(vault, AppConfig(), embedder=HashEmbedder())


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The sample vault's engine for this module's snapshots (replaces conftest's real-model one)."""
    opened = _stub_engine(copy_sample_vault(tmp_path_factory.mktemp("snap-sample") / "vault"))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def obsidian_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """The Obsidian fixture vault's engine for this module's snapshots."""
    opened = _stub_engine(copy_vault(OBSIDIAN_FIXTURE, tmp_path_factory.mktemp("snap-obsidian") / "vault"))
    yield opened
    opened.close()


ADR = "Decisions/ADR-004 Sync with CRDTs.md"
QUERY = "who decided to use CRDTs"


async def _open_note(pilot: Pilot[None], path: str = ADR, heading: str | None = None) -> None:
    """Open a note as choosing it does: the note takes the focus, the tree its reading width."""
    await settle(pilot)
    main = pilot.app.screen
    assert isinstance(main, MainScreen)
    main.query_one(NoteView).focus()
    main.open_note(path, heading=heading)
    await settle(pilot)
    await pilot.pause()


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
    assert snap_compare(make_app(show_timings=False, index_on_start=False), terminal_size=SIZE, run_before=_open_note)


def test_search_panel_with_results(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_app(show_timings=False, index_on_start=False), terminal_size=SIZE, run_before=_search)


def test_explain_view(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_app(show_timings=False, index_on_start=False), terminal_size=SIZE, run_before=_explain)


def test_editor(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_app(show_timings=False, index_on_start=False), terminal_size=SIZE, run_before=_editor)


def test_main_screen_narrow_light(snap_compare: Callable[..., bool], make_app: Callable[..., CairnApp]) -> None:
    async def before(pilot: Pilot[None]) -> None:
        await _open_note(pilot)
        await pilot.press("ctrl+t")
        await pilot.pause()

    assert snap_compare(make_app(show_timings=False, index_on_start=False), terminal_size=(80, 24), run_before=before)


# -- the Obsidian fixture vault: the same callout, embed and table the web captures show --

OBSIDIAN_SIZES = {"120x35": (120, 35), "80x24": (80, 24)}


def _obsidian(path: str, *, heading: str | None = None) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def before(pilot: Pilot[None]) -> None:
        await _open_note(pilot, path, heading)

    return before


@pytest.mark.parametrize("size", OBSIDIAN_SIZES)
def test_obsidian_callouts(size: str, snap_compare: Callable[..., bool], make_obsidian_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_obsidian_app(index_on_start=False), terminal_size=OBSIDIAN_SIZES[size], run_before=_obsidian("Callouts.md"))


@pytest.mark.parametrize("size", OBSIDIAN_SIZES)
def test_obsidian_embeds(size: str, snap_compare: Callable[..., bool], make_obsidian_app: Callable[..., CairnApp]) -> None:
    assert snap_compare(make_obsidian_app(index_on_start=False), terminal_size=OBSIDIAN_SIZES[size], run_before=_obsidian("Embeds.md"))


@pytest.mark.parametrize("size", OBSIDIAN_SIZES)
def test_obsidian_table(size: str, snap_compare: Callable[..., bool], make_obsidian_app: Callable[..., CairnApp]) -> None:
    before = _obsidian("Formatting.md", heading="Tables")
    assert snap_compare(make_obsidian_app(index_on_start=False), terminal_size=OBSIDIAN_SIZES[size], run_before=before)
