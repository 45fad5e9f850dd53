"""The confidence stage: a vector hit counts as far as its cosine says the note is close.

A nearest neighbour is always ranked first, however far it is: scaling its vote by
(cosine / a high cosine), at most 1, keeps a weak match from pushing out a keyword hit
that matched the query's rare words (score-aware fusion). While the vault is still being
embedded, the channel's nearest notes are only the nearest of those embedded so far: its
weight is the share of the vault it covers, so a half-embedded channel never outvotes
what full text finds strongly.
"""

from __future__ import annotations

from typing import ClassVar

from engine.records import StageRecord
from engine.search.ranking.base import StageContext

__all__ = ["ConfidenceStage"]


class ConfidenceStage:
    """The vector channel's vote × its cosine's confidence, its weight × how much it covers."""

    name: ClassVar[str] = "confidence"

    def enabled(self, context: StageContext) -> bool:
        return context.fusion.confidence.enabled and "vectors" in context.answers

    def weigh(self, context: StageContext) -> StageRecord:
        config = context.fusion.confidence
        hits = context.answers["vectors"].hits
        factors: dict[str, float] = {}
        if config.power > 0:
            high = config.high_cosine
            factors = {hit.path: min(1.0, max(hit.score, 0.0) / high) ** config.power for hit in hits}
        said: list[str] = []
        weights: dict[str, float] = {}
        share = context.vault.embedded_share
        if share < config.complete_share:
            weights["vectors"] = max(0.0, share)
            said.append(f"the vectors cover {share:.0%} of the vault so far: their weight is {share:.2f}")
        weak = sum(1 for factor in factors.values() if factor < 1)
        if weak:
            said.append(f"{weak} vector hit(s) under cosine {config.high_cosine:g} count less")
        return StageRecord(self.name, factors={"vectors": factors} if factors else {}, weights=weights, said=tuple(said))
