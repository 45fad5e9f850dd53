"""The one interface every retrieval channel implements, from opening to searching."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from engine.records import ChannelHit, ChannelName, ChannelState

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.catalog import Catalog
    from engine.config import EngineConfig
    from engine.embedder import Embedder
    from engine.lexicon import Lexicon
    from engine.query import QueryPlan


@dataclass(frozen=True)
class ChannelReading:
    """What one channel read from a query beside its hits, in that channel's own record
    (the graph's `GraphReading`, the vectors' `VectorReading`, the full text's
    `FulltextReading`): a new channel brings its own and adds no field to the others.
    Every field has a default, so a channel that did not answer reads as its empty record."""


@dataclass(frozen=True)
class ChannelAnswer:
    """A channel's hits for one query, plus how it fared and what it read (`reading`)."""

    hits: tuple[ChannelHit, ...]
    status: ChannelState = "ok"
    message: str = ""
    reading: ChannelReading | None = None


R = TypeVar("R", bound=ChannelReading)


def reading_of(answer: ChannelAnswer | None, kind: type[R]) -> R:
    """The channel's own record in `answer`, or that record empty when the channel did not answer."""
    if answer is not None and isinstance(answer.reading, kind):
        return answer.reading
    return kind()


@dataclass(frozen=True)
class ChannelContext:
    """What opening a channel needs: where its files are, the settings, the catalog it derives from.

    `discard` says the files on disk are of another index format: the channel starts
    empty and is rebuilt. `writable` says this process holds the index's writer lock and
    may repair what it finds; a reader reports damage instead. `recorded_model` is the
    embedding model the manifest says the vectors were made with.
    """

    index_dir: Path
    config: EngineConfig
    catalog: Catalog
    embedder: Embedder | None
    lexicon: Lexicon
    discard: bool = False
    writable: bool = True
    recorded_model: str = ""


class Channel(Protocol):
    """A retrieval channel's whole life: opened (by its module's `open_channel`), kept in
    step with the catalog, searched, saved and closed."""

    name: ChannelName

    def sync(self, catalog: Catalog, *, lagging: bool, writable: bool) -> str:
        """Bring the channel in step with the catalog when the index is opened.

        `lagging` says the manifest recorded another catalog generation for this channel
        (a kill, another process); only the difference is redone, and only when
        `writable`. Returns what was redone, for the open's repair notes ("" if nothing).
        """
        ...

    def reload(self, catalog: Catalog) -> None:
        """Pick up what another process wrote to this channel's files."""
        ...

    def rebuild(self, catalog: Catalog) -> None:
        """Rebuild everything from the catalog."""
        ...

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Apply changed (added or updated) and removed note paths from the catalog."""
        ...

    def search(self, query: QueryPlan, limit: int) -> ChannelAnswer:
        """Notes for a query's plan, best first, ranks 1-based."""
        ...

    def prepare(self) -> None:
        """Build now what a first search (or a first filtered one) would otherwise build
        after a change; for a front end that stays open, off the keystroke path."""
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


class VectorIndex(Channel, Protocol):
    """The vector channel as the indexer feeds it: embedded chunks go in as they come."""

    def add_vectors(self, rows: Iterable[tuple[int, npt.NDArray[np.float32]]], *, recent: bool = False) -> int:
        """Add (chunk id, vector) rows; `recent` ones (an edit's) are also searched exactly. Returns how many."""
        ...

    def refresh_owners(self, catalog: Catalog, paths: Collection[str] | None = None) -> None:
        """Re-read the chunk id → note path map from the catalog (only `paths`' chunks if given)."""
        ...


# Each channel module's `open_channel`: the channel, and what opening it repaired ("" if nothing).
ChannelOpener = Callable[[ChannelContext], "tuple[Channel, str]"]
