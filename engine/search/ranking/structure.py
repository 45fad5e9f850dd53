"""The structure pack: rules for a vault that files people and organisations, or types relations.

A vault with a `People/` folder (or #person tags), an organisations folder, or links typed
in properties (`company: [[Acme]]`) says what its notes are and how they relate. There a
question's shape carries evidence:

- a who-question about one named note's relations ("who advises X?") is answered by the
  notes joined to it by written links: the graph's weight is boosted, its answers of the
  kind asked for (people) count in full and its other answers `answer_kind_factor`;
- where the graph knows notes joined to the named note by the relation the question asks
  for, a note joined to it only by another relation counts `other_relation_factor`;
- a query that names a kind of note (a folder of the vault: "companies", "people") counts
  every other note's votes `kind_factor`, and the kinds' notes the best keyword match links
  to join the front of the graph's list (the kind hop: the company whose CEO the words
  describe).

Elsewhere the same words are ordinary words ("plugins" in a how-do-I question about a
vault with a `Plugins/` folder): the pack is off unless the vault has that structure
(`[fusion.structure] mode = "auto"`), and engine status and explain views say which.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from engine.channels.base import reading_of
from engine.channels.graph.walk import GraphReading
from engine.kinds import linked_of_kind
from engine.records import CHUNK_SEEDED, NO_KIND, AskedKind, StageRecord
from engine.search.ranking.base import StageContext

__all__ = ["LINK_RELATIONS", "StructureRecord", "StructureStage", "answers_relation", "structure_on"]

# A graph answer joined to the named note by a written link (not mere co-occurrence).
LINK_RELATIONS = frozenset({"links to", "linked from"})


@dataclass(frozen=True)
class StructureRecord(StageRecord):
    """The pack's record, with the kind it weighed by and the note its kind hop started from."""

    kind: AskedKind = NO_KIND
    hop_from: str = ""


def structure_on(context: StageContext) -> bool:
    """Whether the pack applies to this vault: forced by its mode, else the vault's structure."""
    mode = context.fusion.structure.mode
    return mode == "on" or (mode == "auto" and context.vault.structured)


def answers_relation(plan_asks_about: bool, top_relation: str | None) -> bool:
    """Whether fusion should let the graph answer: a relation question whose best graph
    answer is joined to the named note by a written link (not mere co-occurrence)."""
    return top_relation in LINK_RELATIONS and plan_asks_about


class StructureStage:
    """Evidence from a structured vault's kinds and relations (see the module docstring)."""

    name: ClassVar[str] = "structure"

    def enabled(self, context: StageContext) -> bool:
        return structure_on(context)

    def weigh(self, context: StageContext) -> StructureRecord:
        config = context.fusion.structure
        plan = context.plan
        graph = context.answers.get("graph")
        read = reading_of(graph, GraphReading)
        answer_notes = read.answer_notes
        said: list[str] = []
        weights: dict[str, float] = {}
        # The walk's best answer from the names the query says (a top chunk's name is no answer).
        walked = [hit for hit in graph.hits if hit.graph_relation != CHUNK_SEEDED] if graph is not None else []
        if walked and answers_relation(plan.asks_about(read.recognized), walked[0].graph_relation):
            weights["graph"] = config.relational_graph_boost
            said.append(f"a question about a named note's relations: the graph's weight × {config.relational_graph_boost:g}")
        # The kind fusion weighs by: the plan's, unless the graph answers a relation question
        # with people already (it weighs kinds its own way).
        kind = plan.asked_kind if config.kind_factor < 1 and not answer_notes else NO_KIND
        hop_from, hops = self._kind_hop(context, kind) if config.kind_hop else ("", ())
        if hops:
            said.append(f"the best keyword match links to {len(hops)} note(s) of the asked kind: they join the graph's list")
        factors: dict[str, dict[str, float]] = {}
        reached = set(hops)
        if graph is not None and answer_notes and config.answer_kind_factor != 1:
            factors["graph"] = {
                hit.path: config.answer_kind_factor
                for hit in graph.hits
                if hit.path not in answer_notes and hit.path not in reached
            }
            said.append(f"a who-question the graph answers with people: its vote for other notes × {config.answer_kind_factor:g}")
        lists: dict[str, list[str]] = {
            name: [*hops, *(p for p in ranked if p not in reached)] if name == "graph" else ranked
            for name, ranked in context.lists.items()
        }
        asked, other = read.in_relation, read.other_relation
        if asked and other and config.other_relation_factor != 1:
            _scale(factors, lists, lambda path: path in other, config.other_relation_factor)
            said.append(f"notes joined to the named note by another relation than the one asked count × {config.other_relation_factor:g}")
        if kind.notes and config.kind_factor < 1:
            _scale(factors, lists, lambda path: path not in kind.notes, config.kind_factor)
            said.append(f"the query asks for {kind.label}: other notes' votes count × {config.kind_factor:g}")
        return StructureRecord(
            self.name,
            factors=factors,
            weights=weights,
            first={"graph": hops} if hops and "graph" in context.lists else {},
            reached=dict.fromkeys(hops, hop_from),
            said=tuple(said),
            kind=kind,
            hop_from=hop_from,
        )

    @staticmethod
    def _kind_hop(context: StageContext, kind: AskedKind) -> tuple[str, tuple[str, ...]]:
        """The best keyword match and the notes of the asked kind it links to, if it is of another kind.

        Only the first full-text hit: following the next ones too reached more wrong notes
        than right ones. The graph carries the hop.
        """
        fulltext, graph = context.answers.get("fulltext"), context.answers.get("graph")
        if not kind.notes or fulltext is None or not fulltext.hits or graph is None:
            return "", ()
        best = fulltext.hits[0].path
        if best in kind.notes:
            return best, ()
        return best, linked_of_kind(context.vault.link_targets(best), kind.notes)


def _scale(
    factors: dict[str, dict[str, float]],
    lists: Mapping[str, Sequence[str]],
    scaled: Callable[[str], bool],
    factor: float,
) -> None:
    """Multiply every channel's factor for the notes `scaled` picks by `factor`."""
    for name, ranked in lists.items():
        scale = factors.setdefault(name, {})
        for path in ranked:
            if scaled(path):
                scale[path] = scale.get(path, 1.0) * factor
