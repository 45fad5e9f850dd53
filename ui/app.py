"""The Cairn Textual app: a thin shell of screens, global bindings and one error handler."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual._path import CSSPathType
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input, TextArea

from engine.present import printable_path
from ui.commands import NoteCommands
from ui.dialogs.choice import ChoiceDialog
from ui.screens.editor import EditorScreen
from ui.screens.main import MainScreen
from ui.screens.search import SearchScreen

if TYPE_CHECKING:
    from app.config import UIConfig
    from engine.api import Engine

log = logging.getLogger("cairn.ui")

# The terminal the app reads keys from (Textual's driver reads standard input).
_TERMINAL = 0
# The exit status of a process ended by its terminal's hangup (128 + SIGHUP).
HANGUP_EXIT = 129


def _terminal_alive(fd: int) -> bool:
    """Whether `fd` is a terminal that has not hung up (after a hangup it answers EIO)."""
    try:
        import termios
    except ImportError:  # no POSIX terminals here: nothing to watch
        return False
    try:
        termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):
        return False
    return True


class CairnApp(App[None]):
    """Browse, search and edit a vault; all engine work happens in the screens' workers."""

    TITLE = "Cairn"
    CSS_PATH: ClassVar[CSSPathType] = [
        "styles/app.tcss",
        "styles/main.tcss",
        "styles/note.tcss",
        "styles/search.tcss",
        "styles/editor.tcss",
        "styles/dialogs.tcss",
    ]
    # The footer keeps Quit in sight at 80 columns: ctrl+k repeats the screens' own Search key
    # and the theme is one palette entry away, so neither takes the footer's width.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+k", "search", "Search", priority=True, show=False),
        Binding("ctrl+t", "toggle_theme", "Light/dark", show=False),
    ]
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {*App.COMMANDS, NoteCommands}

    def __init__(self, engine: Engine, config: UIConfig, *, hangup: bool = False) -> None:
        """`hangup`: end on SIGHUP (the terminal closed), keeping unsaved edits; the entry point's
        app does, an app run by a test does not touch its process's signals."""
        super().__init__()
        self.engine = engine
        self.config = config
        self.main_screen = MainScreen(engine, config, id="main")
        self._hangup = hangup and hasattr(signal, "SIGHUP")
        self._hung_up = False

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast whose text is never read as markup: it names notes ("Tasks [due=2024-01-01].md"),
        and every widget's `notify` asks for markup by default."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def on_mount(self) -> None:
        self.theme = self.config.dark_theme if self.config.start_dark else self.config.light_theme
        self.sub_title = printable_path(str(self.engine.vault))  # a folder name may not be UTF-8
        self.push_screen(self.main_screen)
        if self._hangup:
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.hang_up)
            # A terminal can close without a SIGHUP reaching the app (run by `make`, which
            # takes the signal and waits): its input then reads as ended at once, forever,
            # and Textual's input loop spins. A look at the terminal each second finds it gone.
            if _terminal_alive(_TERMINAL):
                self.set_interval(1.0, self._check_terminal, name="terminal-check")

    def _check_terminal(self) -> None:
        if not _terminal_alive(_TERMINAL):
            self.hang_up()

    def hang_up(self) -> None:
        """The terminal is gone: keep each unsaved edit in a copy beside its note, then end.

        Nothing can be asked any more, and an app left running would spin against the
        closed terminal at full CPU. A copy is a new note (`Note (conflict …).md`), so the
        note itself stays as it was on disk.
        """
        if self._hung_up:  # the signal and the terminal check may both see it
            return
        self._hung_up = True
        for screen in self.screen_stack:
            if isinstance(screen, EditorScreen) and screen.dirty:
                kept = screen.keep_copy()
                log.warning("terminal closed: unsaved edits of %s kept in %s", screen.path, kept)
        self.exit(return_code=HANGUP_EXIT)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Keep a focused text cursor steady when the configuration turns blinking off."""
        # A cursor only blinks while focused, so this is where every Input and TextArea
        # (search box, tree filter, dialogs, editor) can be told.
        if not self.config.cursor_blink and isinstance(event.widget, (Input, TextArea)):
            event.widget.cursor_blink = False

    def action_search(self) -> None:
        """Open the search panel from anywhere."""
        if isinstance(self.screen, SearchScreen):
            self.screen.query_one("#search-input").focus()
            return
        self.main_screen.action_search()

    def action_toggle_theme(self) -> None:
        """Switch between the light and the dark theme."""
        dark, light = self.config.dark_theme, self.config.light_theme
        self.theme = light if self.theme == dark else dark

    async def action_quit(self) -> None:
        """Quit, first asking what to do with unsaved edits."""
        dirty = [screen for screen in self.screen_stack if isinstance(screen, EditorScreen) and screen.dirty]
        if not dirty:
            self.exit()
            return
        editor = dirty[-1]

        def answered(choice: str | None) -> None:
            if choice == "save":
                editor.action_save(then=self.exit)
            elif choice == "discard":
                self.exit()

        await self.push_screen(
            ChoiceDialog(
                "Unsaved changes",
                f"{editor.path} has unsaved changes. Quit anyway?",
                [("save", "Save and quit"), ("discard", "Quit without saving"), ("cancel", "Cancel")],
                safe="save",
                destructive=("discard",),
                id="quit-dialog",
            ),
            answered,
        )

    def _command_help(self, node: object, binding: Binding) -> str:
        """A palette entry's second line: what the action does and its key, never its title again."""
        name = binding.action.partition("(")[0].rpartition(".")[2]
        action = getattr(node, f"action_{name}", None)
        doc = (getattr(action, "__doc__", None) or "").strip().splitlines()
        key = binding.key_display or self.get_key_display(binding)
        return f"{doc[0]} ({key})" if doc else f"key: {key}"

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The palette holds every action bound on the active screen, plus the built-in ones, each title once."""
        titles: set[str] = set()
        for command in super().get_system_commands(screen):
            titles.add(command.title.casefold())
            yield command
        seen: set[str] = set()
        for node, binding, enabled, _tooltip in screen.active_bindings.values():
            if not enabled or not binding.description or binding.action in seen:
                continue
            seen.add(binding.action)
            if binding.description.casefold() in titles:
                continue  # Textual's own "Quit" is this app's quit (it asks about unsaved edits)
            titles.add(binding.description.casefold())
            yield SystemCommand(binding.description, self._command_help(node, binding), partial(self.run_action, binding.action, node))
        if isinstance(screen, MainScreen):
            for action, title in (
                ("toggle_side", "Toggle side panel"),
                ("toggle_tree", "Toggle vault tree"),
                ("reindex", "Reindex the vault"),
                ("filter_tree", "Filter the vault tree"),
            ):
                if action not in seen:
                    yield SystemCommand(title, title, partial(self.run_action, action, screen))
