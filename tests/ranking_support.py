"""A small in-memory vault for testing ranking stages as the pure functions they are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.channels.base import ChannelAnswer
from engine.config import EngineConfig
from engine.kinds import NoteKinds
from engine.query import QueryPlan
from engine.records import ChannelHit, ChannelName, Relation
from engine.search.ranking import StageContext


@dataclass
class MemoryVault:
    """The `VaultView` of a vault given as plain tables."""

    titles: dict[str, str] = field(default_factory=dict)  # path → title
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    links: dict[str, list[str]] = field(default_factory=dict)
    note_kinds: NoteKinds = field(default_factory=lambda: NoteKinds(()))
    is_structured: bool = False
    share: float = 1.0

    def title_of(self, path: str) -> str:
        return self.titles.get(path, path)

    def titled(self, key: str) -> Sequence[str]:
        return [path for path, title in self.titles.items() if title.casefold() == key]

    def aliased(self, key: str) -> Sequence[str]:
        return [path for path, names in self.aliases.items() if key in (n.casefold() for n in names)]

    def starting_with(self, key: str, most: int) -> list[str]:
        found = sorted((len(t), p) for p, t in self.titles.items() if t.casefold().startswith(key) and t.casefold() != key)
        return [p for _, p in found][:most]

    def link_targets(self, path: str) -> list[str]:
        return list(self.links.get(path, []))

    def relation(self, a: str, b: str) -> Relation | None:
        return None

    @property
    def kinds(self) -> NoteKinds:
        return self.note_kinds

    @property
    def structured(self) -> bool:
        return self.is_structured

    @property
    def embedded_share(self) -> float:
        return self.share


def hits(*paths: str, scores: Sequence[float] = (), terms: Mapping[str, tuple[str, ...]] | None = None) -> tuple[ChannelHit, ...]:
    """Channel hits for `paths` in order, with scores and matched terms if given."""
    return tuple(
        ChannelHit(path=path, score=scores[i] if i < len(scores) else 1.0, rank=i + 1, matched_terms=(terms or {}).get(path, ()))
        for i, path in enumerate(paths)
    )


def stage_context(
    plan: QueryPlan,
    answers: Mapping[ChannelName, ChannelAnswer],
    *,
    config: EngineConfig | None = None,
    vault: MemoryVault | None = None,
    term_weights: Mapping[str, float] | None = None,
) -> StageContext:
    """The context a search would give its stages."""
    config = config or EngineConfig()
    weights = dict(term_weights) if term_weights is not None else None
    return StageContext(
        plan=plan,
        answers=answers,
        lists={name: [hit.path for hit in answer.hits] for name, answer in answers.items()},
        fusion=config.fusion,
        config=config,
        vault=vault or MemoryVault(),
        statuses={},
        term_weights=(lambda terms: {t: weights[t] for t in terms if t in weights}) if weights is not None else None,
    )
