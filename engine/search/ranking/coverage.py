"""The coverage stage: a full-text hit counts as far as it matched the query's words.

A keyword hit on one word of a six-word question is weak evidence; scaling its vote by the
share of the query's words it matched (each weighed by its idf, so a rare word counts for
more than a common one: the coordination factor of classic retrieval) keeps it from
pushing out what another channel found with confidence.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import ClassVar

from engine.channels.base import reading_of
from engine.channels.fulltext import FulltextReading
from engine.records import StageRecord
from engine.search.ranking.base import StageContext

__all__ = ["NO_PREFIX", "CoverageStage", "TypedPrefix", "term_coverage", "typed_prefix"]


@dataclass(frozen=True)
class TypedPrefix:
    """The word still being typed, as full text searched it: its stems (what a hit's
    coverage of the query counts) and the index terms it was expanded to.

    "tombst" is no word of the vault, but each note holding "tombstone" matched it: a hit
    that matched one of its expansions has matched the word, which weighs as its most
    common expansion (the word it most likely becomes).
    """

    stems: frozenset[str] = frozenset()
    terms: frozenset[str] = frozenset()

    def covered(self, matched: Collection[str]) -> set[str]:
        """The query terms a hit matched: its own, and the typed word's where it matched an expansion."""
        found = set(matched)
        return found | self.stems if self.stems and not self.terms.isdisjoint(found) else found

    def weighed(self, weights: Mapping[str, float]) -> dict[str, float]:
        """`weights` (looked up for the query's stems and these expansions) with the typed
        word's stems weighing as its lightest expansion (the most common one)."""
        held = [weights[term] for term in self.terms if term in weights]
        lightest = min(held, default=None)
        return {**weights, **dict.fromkeys(self.stems, lightest)} if lightest is not None else dict(weights)


NO_PREFIX = TypedPrefix()


def typed_prefix(context: StageContext) -> TypedPrefix:
    """The word still being typed, as full text searched it (none when the query has no such word)."""
    plan = context.plan
    prefix_terms = reading_of(context.answers.get("fulltext"), FulltextReading).prefix_terms
    if not plan.prefix or not prefix_terms:
        return NO_PREFIX
    complete = set(plan.complete_stems)
    return TypedPrefix(
        stems=frozenset(stem for stem in plan.stems if stem not in complete),
        terms=frozenset(prefix_terms),
    )


def term_coverage(
    matched: Collection[str],
    query_terms: Collection[str],
    power: float,
    weights: Mapping[str, float] | None = None,
) -> float:
    """(share of the query's terms a keyword hit matched) ** power; 1 for a query without terms.

    With `weights` (a term's idf), the share counts rare words for more than common ones.
    """
    terms = set(query_terms)
    if not terms:
        return 1.0
    found = set(matched) & terms
    if weights is None:
        share = len(found) / len(terms)
    else:
        total = sum(weights.get(term, 1.0) for term in terms)
        share = sum(weights.get(term, 1.0) for term in found) / total if total > 0 else 0.0
    return float(share**power)


class CoverageStage:
    """Full text's vote for a note × how much of the query's words it matched."""

    name: ClassVar[str] = "coverage"

    def enabled(self, context: StageContext) -> bool:
        config = context.fusion.coverage
        return config.enabled and config.power > 0 and "fulltext" in context.answers

    def weigh(self, context: StageContext) -> StageRecord:
        config = context.fusion.coverage
        plan = context.plan
        typed = typed_prefix(context)
        stems = plan.stems
        weights = None
        if context.term_weights is not None and config.idf:
            looked_up = context.term_weights([*stems, *sorted(typed.terms)] if typed.stems else list(stems))
            weights = typed.weighed(looked_up) if typed.stems else looked_up
        hits = context.answers["fulltext"].hits
        factors = {
            hit.path: term_coverage(typed.covered(hit.matched_terms), stems, config.power, weights) for hit in hits
        }
        partial = sum(1 for factor in factors.values() if factor < 1)
        said = (f"{partial} full-text hit(s) matched only part of the query's words",) if partial else ()
        return StageRecord(self.name, factors={"fulltext": factors}, said=said)
