"""What every ranking stage is given, and the one interface it implements.

A stage reads the query's plan, the channels' answers and their lists as the stages
before it left them, and returns a `StageRecord`: factors on channels' votes, weights,
notes that join a channel's list, or (navigation alone) the notes the query names. It
adds evidence to a score; it never moves a note to a place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

from engine.records import ChannelName, ChannelStatus, Relation, StageRecord

if TYPE_CHECKING:
    from engine.channels.base import ChannelAnswer
    from engine.config import EngineConfig, FusionConfig
    from engine.kinds import NoteKinds
    from engine.query import QueryPlan

__all__ = ["Stage", "StageContext", "VaultView"]


class VaultView(Protocol):
    """What stages may ask of the vault beyond the channels' answers."""

    def title_of(self, path: str) -> str:
        """A note's title (its path when unknown)."""
        ...

    def titled(self, key: str) -> Sequence[str]:
        """The notes whose normalised title or file name is `key`."""
        ...

    def aliased(self, key: str) -> Sequence[str]:
        """The notes with the normalised alias `key`."""
        ...

    def starting_with(self, key: str, most: int) -> list[str]:
        """Notes whose title starts with `key` but is longer, shortest first."""
        ...

    def link_targets(self, path: str) -> list[str]:
        """The notes `path` links to, as written (resolved), repeats kept."""
        ...

    def relation(self, a: str, b: str) -> Relation | None:
        """The relation the graph names between two notes, if any."""
        ...

    @property
    def kinds(self) -> NoteKinds:
        """The vault's kinds of note (its top-level folders, its people)."""
        ...

    @property
    def structured(self) -> bool:
        """Whether the vault files people or organisations, or types relations in properties."""
        ...

    @property
    def embedded_share(self) -> float:
        """The share of the vault's chunks the vector channel has (1 when embedding is done)."""
        ...


@dataclass
class StageContext:
    """One search as the stages see it; `lists` change as stages put notes first in them."""

    plan: QueryPlan
    answers: Mapping[ChannelName, ChannelAnswer]
    lists: dict[str, list[str]]
    fusion: FusionConfig
    config: EngineConfig
    vault: VaultView
    statuses: dict[ChannelName, ChannelStatus]
    # Full text's idf per index term (degrades full text when it fails); None without one.
    term_weights: Callable[[Sequence[str]], dict[str, float]] | None = None
    records: list[StageRecord] = field(default_factory=list)

    def put_first(self, record: StageRecord) -> None:
        """Take a record's notes into the front of their channels' lists."""
        for channel, notes in record.first.items():
            if channel in self.lists and notes:
                first = set(notes)
                self.lists[channel] = [*notes, *(path for path in self.lists[channel] if path not in first)]

    def put_first_by_others(self, channel: str) -> frozenset[str]:
        """The notes earlier stages put at the front of a channel's list."""
        return frozenset(path for record in self.records for path in record.first.get(channel, ()))


class Stage(Protocol):
    """A ranking stage: its name (its config section and record), on or off, and its evidence."""

    name: ClassVar[str]

    def enabled(self, context: StageContext) -> bool:
        """Whether the stage runs for this search (its config, the vault's structure)."""
        ...

    def weigh(self, context: StageContext) -> StageRecord:
        """The evidence this stage adds to this search."""
        ...
