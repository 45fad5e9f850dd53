"""The names stage: the graph's vote counts as far as the names it walked from are what the
query is about.

The graph sees only the names a query says; a long question that happens to contain one
name is mostly about something else, so the graph's votes count (the share of the query's
content words inside the names) ** power. Where a note the query names is also near the
top of another channel's list, the names are what the query is about and the notes the
graph reaches from them are its next hop: the graph's votes then count a boost, itself
scaled by that coverage (a name in a four-hop question is a small part of it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import ClassVar

from engine.channels.base import reading_of
from engine.channels.graph.walk import GraphReading
from engine.records import CHUNK_SEEDED, StageRecord
from engine.search.ranking.base import StageContext

__all__ = ["NamesStage", "seed_confirmed"]


def seed_confirmed(
    graph_hits: Sequence[tuple[str, tuple[str, ...]]],
    rankings: Mapping[str, Sequence[str]],
    within: int,
    seeds: Collection[str] | None = None,
) -> bool:
    """Whether one of the graph's seed notes (`seeds`, default the hits at hop 0) is also in
    another channel's top `within`."""
    if within <= 0:
        return False
    named = set(seeds) if seeds is not None else {path for path, trail in graph_hits if len(trail) == 1}
    return any(path in named for name, ranked in rankings.items() if name != "graph" for path in ranked[:within])


class NamesStage:
    """The graph's vote × how much of the query its names cover (× a boost when another channel confirms a name)."""

    name: ClassVar[str] = "names"

    def enabled(self, context: StageContext) -> bool:
        config = context.fusion.names
        graph = context.answers.get("graph")
        return config.enabled and config.power > 0 and graph is not None and bool(graph.hits)

    def weigh(self, context: StageContext) -> StageRecord:
        config = context.fusion.names
        plan = context.plan
        graph = context.answers["graph"]
        reached = context.put_first_by_others("graph")  # by a link from a note, not from the query's names
        hits = [(hit.path, hit.graph_path) for hit in graph.hits]
        recognized = reading_of(graph, GraphReading).recognized
        coverage = plan.coverage(recognized) ** config.power
        walked = [hit for hit in graph.hits if hit.graph_relation != CHUNK_SEEDED]
        seeds = [hit.path for hit in walked if len(hit.graph_path) == 1] if plan.graph.seeds else None
        said: list[str] = []
        if seed_confirmed(hits, context.lists, config.seed_confirm_rank, seeds):
            factor = config.seed_confirm_boost * (coverage if config.seed_confirm_coverage else 1.0)
            said.append(f"a note the query names is near the top of another channel: the graph's votes count {factor:.2f}")
        else:
            factor = coverage
            if plan.graph.seeds:
                # A walk from the top chunks' entities starts where the text channels found the
                # query's answer, not from names the query happens to contain.
                factor = max(factor, config.chunk_seed_factor)
            said.append(f"the names cover {plan.coverage(recognized):.0%} of the query: the graph's votes count {factor:.2f}")
        return StageRecord(
            self.name,
            factors={"graph": {path: factor for path, _trail in hits if path not in reached}},
            said=tuple(said),
        )
