"""The command palette finds notes by title (or path) and opens them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from ui.screens.main import MainScreen

_DISCOVER = 20


class NoteCommands(Provider):
    """`priya` finds "Priya Kumar": every note the vault tree lists, matched as you type."""

    def _main(self) -> MainScreen | None:
        from ui.screens.main import MainScreen

        main = getattr(self.app, "main_screen", None)
        return main if isinstance(main, MainScreen) else None

    def _open(self, path: str) -> None:
        main = self._main()
        if main is not None:
            main.open_note(path)
            main.read_note()

    async def search(self, query: str) -> Hits:
        """Notes whose title (or, failing that, path) matches `query`, best first."""
        main = self._main()
        if main is None:
            return
        matcher = self.matcher(query)
        for path, title in main.listed_notes:
            score = matcher.match(title)
            shown = title
            if score <= 0:
                score = matcher.match(path) * 0.8
                shown = path
            if score > 0:
                yield Hit(score, matcher.highlight(shown), partial(self._open, path), text=title, help=f"Open {path}")

    async def discover(self) -> AsyncIterator[DiscoveryHit]:
        """The first notes of the vault, before anything is typed."""
        main = self._main()
        if main is None:
            return
        for path, title in main.listed_notes[:_DISCOVER]:
            yield DiscoveryHit(title, partial(self._open, path), help=f"Open {path}")
