"""Pilot tests of browsing: tree filter, links, history, side panel, errors, theme, palette."""

from __future__ import annotations

from collections.abc import Callable

from pilot_support import SIZE, link_targets, run, settle
from textual.widgets import Input, Markdown

from ui.app import CairnApp
from ui.screens.main import MainScreen
from ui.widgets.note_view import NoteView
from ui.widgets.side_panel import SidePanel
from ui.widgets.vault_tree import VaultTree
from ui.wikilinks import note_href

ADR = "Decisions/ADR-004 Sync with CRDTs.md"
CRDT = "Glossary/CRDT.md"


def test_follow_links_back_and_forward_with_context(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note(ADR)
            await settle(pilot)
            view = main.query_one(NoteView)
            assert view.path == ADR
            markdown = view.query_one(Markdown)
            assert note_href(CRDT) in link_targets(view), "wikilinks render as followable links"
            markdown.post_message(Markdown.LinkClicked(markdown, note_href(CRDT)))
            await settle(pilot)
            assert view.path == CRDT
            panel = main.query_one(SidePanel)
            assert panel.context is not None and panel.context.path == CRDT
            assert ADR in [path for path, _ in panel.entries("backlinks")]
            # A backlink's line is shown as text: its links by their shown words, no brackets.
            assert any("CRDT" in b.context and "[[" not in b.context for b in panel.context.backlinks)
            assert panel.entries("related"), "related notes come from engine.related"
            assert panel.entries("neighbors"), "entity neighbors come from the graph"
            await pilot.press("alt+left")
            await settle(pilot)
            assert view.path == ADR
            await pilot.press("alt+right")
            await settle(pilot)
            assert view.path == CRDT
            backlink_path, backlink_line = next(e for e in panel.entries("backlinks") if e[0] == ADR)
            panel.post_message(SidePanel.Opened(backlink_path, backlink_line))
            await settle(pilot)
            assert view.path == ADR and view.passage_line == backlink_line

    run(body())


def test_relative_markdown_links_are_followed(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note(ADR)
            await settle(pilot)
            markdown = main.query_one(NoteView).query_one(Markdown)
            markdown.post_message(Markdown.LinkClicked(markdown, "../Glossary/CRDT.md"))
            await settle(pilot)
            assert main.query_one(NoteView).path == CRDT

    run(body())


def test_tree_filters_as_you_type_and_opens(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            tree = app.screen.query_one(VaultTree)
            leaves = [n for n in tree._walk(tree.note_tree.root) if isinstance(n.data, str) and not n.data.endswith("/")]
            assert len(leaves) == 63
            await pilot.press("ctrl+g")
            for key in "kwame":
                await pilot.press(key)
            leaves = [n for n in tree._walk(tree.note_tree.root) if isinstance(n.data, str) and not n.data.endswith("/")]
            assert [leaf.data for leaf in leaves] == ["People/Kwame Mensah.md"]
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen.query_one(NoteView).path == "People/Kwame Mensah.md"
            app.screen.query_one("#tree-filter", Input).value = ""
            await pilot.pause()
            leaves = [n for n in tree._walk(tree.note_tree.root) if isinstance(n.data, str) and not n.data.endswith("/")]
            assert len(leaves) == 63

    run(body())


def test_worker_errors_become_notifications(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note("No/Such note.md")
            await settle(pilot)
            titles = [n.title for n in app._notifications]
            assert "Note not found" in titles
            assert app.is_running

    run(body())


def test_theme_toggle_and_palette_holds_every_action(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.theme == "textual-dark"
            await pilot.press("ctrl+t")
            assert app.theme == "textual-light"
            await pilot.press("ctrl+t")
            assert app.theme == "textual-dark"
            titles = {command.title for command in app.get_system_commands(app.screen)}
            for wanted in ("Search", "Edit", "New", "Rename", "Delete", "Back", "Forward", "Theme", "Reindex", "Toggle side panel"):
                assert wanted in titles

    run(body())


def test_narrow_terminal_hides_the_side_panel(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen) and main.has_class("-narrow")
            panel = main.query_one(SidePanel)
            assert not panel.display or panel.region.width == 0
            await pilot.press("ctrl+o")
            await pilot.pause()
            assert panel.region.width > 0

    run(body())
