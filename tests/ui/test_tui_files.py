"""Pilot tests of note files: indexing on start, new note, rename with link updates, delete to trash."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pilot_support import SIZE, run, settle
from textual.message import Message
from textual.widgets import Input
from vault_copy import copy_sample_vault

from app.config import AppConfig
from app.wiring import build_app, open_engine
from engine.api import Engine
from engine.embedder import HashEmbedder
from ui.dialogs.choice import ChoiceDialog
from ui.dialogs.prompt import PromptDialog
from ui.screens.editor import EditorScreen
from ui.screens.main import MainScreen
from ui.widgets.index_status import IndexStatusBar
from ui.widgets.note_view import NoteView


@pytest.fixture(scope="module")
def fresh_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """An engine over an unindexed copy of sample_vault (hash embedder: these tests are about files)."""
    vault = tmp_path_factory.mktemp("ui-files") / "vault"
    copy_sample_vault(vault)
    engine = open_engine(vault, AppConfig(), embedder=HashEmbedder())
    yield engine
    engine.close()


def test_indexes_in_the_background_with_progress(fresh_engine: Engine) -> None:
    messages: list[Message] = []

    async def body() -> None:
        app = build_app(fresh_engine)
        async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
            await settle(pilot)
            progress = [m for m in messages if isinstance(m, MainScreen.IndexProgress)]
            finished = [m for m in messages if isinstance(m, MainScreen.IndexFinished)]
            assert progress, "reindex progress is posted"
            phases = {m.progress.phase for m in progress}
            assert "embed" in phases and len(phases) >= 3, phases
            assert len(finished) == 1 and len(finished[0].report.added) == 63
            bar = app.screen.query_one(IndexStatusBar)
            assert not bar.has_class("-busy")
            assert "63 notes" in str(bar.query_one("#index-label").render())
            assert "Index updated" in [n.title for n in app._notifications]

    run(body())


def test_new_note_rename_with_link_update_and_delete(fresh_engine: Engine) -> None:
    vault = fresh_engine.vault

    async def body() -> None:
        app = build_app(fresh_engine, index_on_start=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note("Glossary/Tombstone.md")
            await settle(pilot)
            await pilot.press("ctrl+n")
            await pilot.pause()
            assert isinstance(app.screen, PromptDialog)
            app.screen.query_one(Input).value = "Vector clock"
            await pilot.press("enter")
            await settle(pilot)
            assert (vault / "Glossary/Vector clock.md").read_text(encoding="utf-8") == "# Vector clock\n\n"
            assert isinstance(app.screen, EditorScreen) and app.screen.path == "Glossary/Vector clock.md"
            app.screen.editor.move_cursor(app.screen.editor.document.end)
            app.screen.editor.insert("Used next to [[Tombstone]] and [[Tombstone#Retention|tombstones]].\n")
            await pilot.press("ctrl+s")
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert "Glossary/Vector clock.md" in dict(fresh_engine.notes())

            main.open_note("Glossary/Tombstone.md")
            await settle(pilot)
            await pilot.press("r")
            await pilot.pause()
            assert isinstance(app.screen, PromptDialog)
            app.screen.query_one(Input).value = "Deletion marker"
            await pilot.press("enter")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, ChoiceDialog) and dialog.id == "update-links-dialog"
            await pilot.click("#choice-update")
            await settle(pilot)
            assert not (vault / "Glossary/Tombstone.md").exists()
            assert (vault / "Glossary/Deletion marker.md").exists()
            text = (vault / "Glossary/Vector clock.md").read_text(encoding="utf-8")
            assert "[[Deletion marker]]" in text and "[[Deletion marker#Retention|tombstones]]" in text
            assert main.query_one(NoteView).path == "Glossary/Deletion marker.md"
            assert "Glossary/Vector clock.md" in [b.path for b in fresh_engine.backlinks("Glossary/Deletion marker.md")]

            await pilot.press("delete")
            await pilot.pause()
            await pilot.click("#choice-delete")
            await settle(pilot)
            assert not (vault / "Glossary/Deletion marker.md").exists()
            assert (vault / ".trash/Glossary/Deletion marker.md").exists()
            assert "Glossary/Deletion marker.md" not in dict(fresh_engine.notes())
            assert main.query_one(NoteView).path is None

    run(body())




def test_the_status_bar_says_how_much_has_vectors_what_embeds_first_and_how_long_it_takes(tmp_path: Path) -> None:
    from engine.records import Progress

    vault = tmp_path / "vault"
    copy_sample_vault(vault)
    engine = open_engine(vault, AppConfig(), embedder=HashEmbedder())
    try:
        engine.reindex(embed=False)  # every chunk waits for its vector

        async def body() -> None:
            app = build_app(engine, index_on_start=False)
            async with app.run_test(size=SIZE) as pilot:
                await settle(pilot)
                bar = app.screen.query_one(IndexStatusBar)
                label = bar.query_one("#index-label")
                bar.show_status(engine.status())
                waiting = str(label.render())
                assert "vectors 0%" in waiting and "chunks to embed" in waiting, waiting
                bar.show_progress(Progress("embed", 40, 400, eta_s=540.0, order="opened"))
                running = str(label.render())
                assert running == "embedding 40/400 · opened notes first · about 9 min left", running
                bar.show_progress(Progress("embed", 80, 400, eta_s=30.0, order="newest"))
                assert str(label.render()) == "embedding 80/400 · newest notes first · under a minute left"

        run(body())
    finally:
        engine.close()


def test_a_name_that_looks_like_markup_is_shown_as_written(tmp_path: Path) -> None:
    """Names come from other tools too (git, other editors): "[due=2024-01-01]" is no markup."""
    vault = copy_sample_vault(tmp_path / "vault")
    (vault / "Inbox" / "Tasks [due=2024-01-01].md").write_text("# Tasks\n\nCall the printer.\n", encoding="utf-8")
    engine = open_engine(vault, AppConfig(), embedder=None)
    engine.reindex()

    async def body() -> None:
        app = build_app(engine, index_on_start=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note("Inbox/Tasks [due=2024-01-01].md")
            await settle(pilot)
            await pilot.press("delete")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, ChoiceDialog)
            question = str(dialog.query_one("#dialog-question").render())
            assert question == "Move Inbox/Tasks [due=2024-01-01].md to .trash/?"
            await pilot.click("#choice-delete")
            await settle(pilot)
            assert (vault / ".trash/Inbox/Tasks [due=2024-01-01].md").exists()
            assert any("Tasks [due=2024-01-01].md" in n.message for n in app._notifications)

    run(body())
    engine.close()
