"""The one interface every retrieval channel implements."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from engine.records import ChannelHit, ChannelName, ChannelState

if TYPE_CHECKING:
    from engine.catalog import Catalog
    from engine.query import QueryPlan


@dataclass(frozen=True)
class ChannelAnswer:
    """A channel's hits for one query, plus how it fared."""

    hits: tuple[ChannelHit, ...]
    status: ChannelState = "ok"
    message: str = ""
    recognized: tuple[str, ...] = ()
    expanded: tuple[str, ...] = ()
    # The notes of the kind the question asks for (a who-question: people), if known.
    answer_notes: frozenset[str] = frozenset()


class Channel(Protocol):
    """Build from catalog rows, update incrementally, search, persist."""

    name: ChannelName

    def rebuild(self, catalog: Catalog) -> None:
        """Rebuild everything from the catalog."""
        ...

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Apply changed (added or updated) and removed note paths from the catalog."""
        ...

    def search(self, query: QueryPlan, limit: int) -> ChannelAnswer:
        """Notes for a query's plan, best first, ranks 1-based."""
        ...

    def save(self) -> None:
        """Persist to disk atomically (no-op for in-memory channels)."""
        ...

    def count(self) -> int:
        """How many notes the channel can currently return."""
        ...

    def close(self) -> None:
        """Release files and memory."""
        ...
