"""Pilot tests of editing: save and find, conflicts on save, quitting with unsaved changes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pilot_support import SIZE, run, settle
from textual.widgets import Input, TextArea

from engine.api import Engine
from ui.app import CairnApp
from ui.dialogs.choice import ChoiceDialog
from ui.screens.editor import EditorScreen
from ui.screens.main import MainScreen
from ui.screens.search import SearchScreen

NOTE = "Glossary/Tombstone.md"


async def _open_editor(pilot: object, app: CairnApp, path: str) -> EditorScreen:
    await settle(pilot)
    main = app.screen
    assert isinstance(main, MainScreen)
    main.open_note(path)
    await settle(pilot)
    await pilot.press("e")  # type: ignore[attr-defined]
    await settle(pilot)
    editor = app.screen
    assert isinstance(editor, EditorScreen)
    assert editor.saved_text is not None and not editor.editor.disabled
    return editor


def test_edit_save_then_search_finds_the_new_text(make_app: Callable[..., CairnApp], module_vault: Path) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, NOTE)
            editor.editor.move_cursor(editor.editor.document.end)
            editor.editor.insert("\nThe quokkaplasm ledger keeps tombstones forever.\n")
            await pilot.pause()
            assert editor.dirty
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert not editor.dirty
            assert "quokkaplasm ledger" in (module_vault / NOTE).read_text(encoding="utf-8")
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, MainScreen)
            await pilot.press("slash")
            app.screen.query_one("#search-input", Input).value = "quokkaplasm"
            await settle(pilot)
            search = app.screen
            assert isinstance(search, SearchScreen) and search.results is not None
            assert search.results.hits[0].path == NOTE
            assert "fulltext" in search.results.hits[0].channels

    run(body())


def test_conflict_on_save_offers_reload_overwrite_or_copy(
    make_app: Callable[..., CairnApp], module_vault: Path, engine: Engine
) -> None:
    note = "Glossary/Field Kit.md"

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, note)
            (module_vault / note).write_text("# Field Kit\n\nChanged behind the editor's back.\n", encoding="utf-8")
            editor.editor.insert("My edit. ")
            await pilot.press("ctrl+s")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, ChoiceDialog) and dialog.id == "conflict-dialog"
            await pilot.click("#choice-copy")
            await settle(pilot)
            assert isinstance(app.screen, EditorScreen)
            copies = sorted((module_vault / "Glossary").glob("Field Kit (conflict *).md"))
            assert len(copies) == 1
            copy = copies[0]
            assert copy.read_text(encoding="utf-8").startswith("My edit. ")
            assert "behind the editor's back" in (module_vault / note).read_text(encoding="utf-8")
            copy_path = f"Glossary/{copy.name}"
            assert editor.path == copy_path and not editor.dirty
            assert copy_path in dict(engine.notes())

    run(body())


def test_conflict_reload_and_overwrite(make_app: Callable[..., CairnApp], module_vault: Path) -> None:
    note = "Glossary/Tile Pack.md"

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, note)
            (module_vault / note).write_text("# Tile Pack\n\nFirst outside change.\n", encoding="utf-8")
            editor.editor.insert("Mine. ")
            await pilot.press("ctrl+s")
            await settle(pilot)
            await pilot.click("#choice-reload")
            await settle(pilot)
            assert editor.editor.text == "# Tile Pack\n\nFirst outside change.\n" and not editor.dirty
            (module_vault / note).write_text("# Tile Pack\n\nSecond outside change.\n", encoding="utf-8")
            editor.editor.insert("Mine again. ")
            await pilot.press("ctrl+s")
            await settle(pilot)
            await pilot.click("#choice-overwrite")
            await settle(pilot)
            assert (module_vault / note).read_text(encoding="utf-8").startswith("Mine again. # Tile Pack")
            assert not editor.dirty

    run(body())


def test_quit_with_unsaved_changes_asks(make_app: Callable[..., CairnApp], module_vault: Path) -> None:
    note = "Glossary/CRDT.md"
    before = (module_vault / note).read_text(encoding="utf-8")

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, note)
            editor.query_one(TextArea).insert("unsaved words ")
            await pilot.press("ctrl+q")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, ChoiceDialog) and dialog.id == "quit-dialog"
            await pilot.press("escape")
            await pilot.pause()
            assert app.is_running and app.screen is editor and editor.dirty
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ChoiceDialog) and app.screen.id == "unsaved-dialog"
            await pilot.click("#choice-cancel")
            await pilot.press("ctrl+q")
            await pilot.pause()
            await pilot.click("#choice-discard")
            await pilot.pause()
            assert not app.is_running
        assert (module_vault / note).read_text(encoding="utf-8") == before

    run(body())


def test_quit_can_save_first(make_app: Callable[..., CairnApp], module_vault: Path) -> None:
    note = "Glossary/現場.md"

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, note)
            editor.editor.insert("Saved on quit. ")
            await pilot.press("ctrl+q")
            await pilot.pause()
            await pilot.click("#choice-save")
            await settle(pilot)
            assert app.return_code == 0 and not app.is_running
        assert (module_vault / note).read_text(encoding="utf-8").startswith("Saved on quit. ")

    run(body())


def test_editing_keeps_encoding_and_every_untouched_line_ending(
    make_app: Callable[..., CairnApp], module_vault: Path, engine: Engine
) -> None:
    mixed = "Inbox/Mixed endings.md"
    latin = "Inbox/Latin one.md"
    (module_vault / mixed).write_bytes(b"# Mixed endings\r\n\r\none\ntwo\r\nthree\rfour\n")
    (module_vault / latin).write_bytes("# Latin one\n\nCrème brûlée, naïve façade.\n".encode("cp1252"))
    engine.reindex([mixed, latin])

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, mixed)
            editor.editor.move_cursor((3, 0))
            editor.editor.insert("2: ")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert not editor.dirty
            await pilot.press("escape")
            await settle(pilot)
            editor = await _open_editor(pilot, app, latin)
            assert "Crème brûlée" in editor.editor.text and "cp1252" in str(editor.query_one("#editor-title").render())
            editor.editor.move_cursor(editor.editor.document.end)
            editor.editor.insert("Déjà vu.\n")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert not editor.dirty

    run(body())
    assert (module_vault / mixed).read_bytes() == b"# Mixed endings\r\n\r\none\n2: two\r\nthree\rfour\n"
    assert (module_vault / latin).read_bytes() == "# Latin one\n\nCrème brûlée, naïve façade.\nDéjà vu.\n".encode("cp1252")


def test_characters_the_editor_would_read_as_line_breaks_come_back_as_they_were(
    make_app: Callable[..., CairnApp], module_vault: Path, engine: Engine
) -> None:
    """Form feed, vertical tab, NEL, U+2028/U+2029, the separators: the TextArea breaks
    lines on them, the note does not."""
    note = "Inbox/Separators.md"
    inside = "alpha\u2028beta\u2029gamma\x0cdelta\x85eps\x0bzeta\x1ceta\x1dtheta\x1eiota"
    (module_vault / note).write_bytes(f"# Separators\n\n{inside}\n".encode())
    engine.reindex([note])

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, note)
            assert not editor.dirty, "nothing was typed yet"
            assert editor.editor.document.line_count == 4
            editor.editor.move_cursor(editor.editor.document.end)
            editor.editor.insert("X")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert not editor.dirty

    run(body())
    assert (module_vault / note).read_bytes() == f"# Separators\n\n{inside}\nX".encode()


def test_a_save_asked_for_while_one_runs_follows_it(
    make_app: Callable[..., CairnApp], module_vault: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+s twice in quick succession: the second save waits for the first and writes
    against the version it wrote, instead of calling the first save a change on disk."""
    release = threading.Event()
    real_save = engine.save_note
    calls: list[str] = []

    def held_save(path: str, text: str, **kwargs: object) -> object:
        calls.append(text)
        if len(calls) == 1:
            release.wait(timeout=30)  # the first save is still running when the second is asked for
        return real_save(path, text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "save_note", held_save)

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, NOTE)
            editor.editor.move_cursor(editor.editor.document.end)
            editor.editor.insert("first edit ")
            await pilot.press("ctrl+s")
            await pilot.pause()
            editor.editor.insert("second edit ")
            await pilot.press("ctrl+s")
            await pilot.pause()
            release.set()
            await settle(pilot)
            await settle(pilot)
            assert app.screen is editor, "no conflict dialog"
            assert not editor.dirty

    run(body())
    assert len(calls) == 2 and calls[1].endswith("first edit second edit ")
    assert (module_vault / NOTE).read_text(encoding="utf-8").endswith("first edit second edit ")


def _conflict_copies(vault: Path, note: str) -> set[Path]:
    """The conflict copies beside `note` ("Glossary/Tombstone (conflict …).md")."""
    path = vault / note
    return set(path.parent.glob(f"{path.stem} (conflict *).md"))


def _new_copy_text(vault: Path, note: str, before: set[Path]) -> str:
    """The text of the one conflict copy of `note` made since `before`."""
    made = _conflict_copies(vault, note) - before
    assert len(made) == 1, made
    return made.pop().read_text(encoding="utf-8")


def test_a_closed_terminal_keeps_unsaved_edits_in_a_copy_and_ends_the_app(
    engine: Engine, module_vault: Path
) -> None:
    """SIGHUP (the terminal window closed): nothing can be asked, so the unsaved text goes
    to a new copy beside the note, the note stays as it was, and the app ends (it would
    otherwise spin against the dead terminal)."""
    import os
    import signal

    from app.config import AppConfig
    from app.wiring import build_app
    from ui.app import HANGUP_EXIT

    note = "Glossary/Tombstone.md"
    before = (module_vault / note).read_bytes()
    copies_before = _conflict_copies(module_vault, note)

    async def body() -> None:
        app = build_app(engine, AppConfig(), cursor_blink=False, hangup=True)
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, note)
            editor.editor.insert("Words typed just before the window closed. ")
            assert signal.getsignal(signal.SIGHUP) not in (signal.SIG_DFL, signal.SIG_IGN, None)
            os.kill(os.getpid(), signal.SIGHUP)
            await settle(pilot)
            assert not app.is_running
        assert app.return_code == HANGUP_EXIT

    run(body())
    assert (module_vault / note).read_bytes() == before
    kept = _new_copy_text(module_vault, note, copies_before)
    assert kept.startswith("Words typed just before the window closed. ")
    assert kept.endswith(before.decode("utf-8"))


def test_a_terminal_gone_without_a_signal_is_noticed(
    engine: Engine, module_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run by `make`, the app gets no SIGHUP when its terminal closes (make takes it and waits):
    the terminal's own state says it is gone, and the app ends as on SIGHUP."""
    import os
    import pty

    import ui.app
    from app.config import AppConfig
    from app.wiring import build_app
    from ui.app import HANGUP_EXIT, _terminal_alive

    main_fd, terminal_fd = pty.openpty()
    monkeypatch.setattr(ui.app, "_TERMINAL", terminal_fd)
    note = "Glossary/Field Kit.md"
    before = (module_vault / note).read_bytes()
    copies_before = _conflict_copies(module_vault, note)

    async def body() -> None:
        app = build_app(engine, AppConfig(), cursor_blink=False, hangup=True)
        async with app.run_test(size=SIZE) as pilot:
            editor = await _open_editor(pilot, app, note)
            editor.editor.insert("Typed in a terminal that then closed. ")
            app._check_terminal()
            assert app.is_running  # the terminal is there: nothing happens
            os.close(main_fd)  # the terminal window closes
            assert not _terminal_alive(terminal_fd)
            app._check_terminal()
            app.hang_up()  # a SIGHUP arriving too keeps no second copy
            await settle(pilot)
            assert not app.is_running
        assert app.return_code == HANGUP_EXIT

    try:
        run(body())
    finally:
        os.close(terminal_fd)
    assert (module_vault / note).read_bytes() == before
    assert _new_copy_text(module_vault, note, copies_before).startswith("Typed in a terminal that then closed. ")
