"""Searching the entity graph: walk 1-2 hops from the entities a query names, rank notes by proximity."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from engine.channels.base import ChannelAnswer, ChannelReading
from engine.channels.graph.build import (
    LINKS,
    RELATION_NAMES,
    NamedEdge,
    Vertex,
    context_has,
)
from engine.channels.graph.sums import EdgeLists, link_code, pair_code
from engine.channels.graph.texts import PairTexts
from engine.config import GraphConfig
from engine.entities import EntityDictionary
from engine.query import QueryPlan
from engine.records import CHUNK_SEEDED, ChannelHit, Neighbor, Relation

__all__ = ["NeighborCache", "Snapshot", "after_edit", "find_edge", "live_edges", "neighbors", "search"]

_MEMO_EXPANSIONS = 2048
# Edges an edit added that are looked up beside the igraph before it is built again
# (or a fiftieth of its edges, if more).
_ADDED_EDGES = 10_000
# A name shared by more entities than this spreads thinly: its seeds walk one hop.
_AMBIGUOUS_NAME = 3
# What a who-question's walk keeps of a vote through, or for, a note that is not a person.
_NOT_PERSON = 0.25


@dataclass(frozen=True)
class GraphReading(ChannelReading):
    """What the graph read from a query beside its hits."""

    recognized: tuple[str, ...] = ()  # the entities the query names
    expanded: tuple[str, ...] = ()  # their neighbours one hop away, strongest first
    # The notes of the kind the question asks for (a who-question: people), if known.
    answer_notes: frozenset[str] = frozenset()
    # For a question that names a relation ("who invested in X"): the notes the vault
    # joins to a named note by that relation, and those it joins by another one (founded).
    in_relation: frozenset[str] = frozenset()
    other_relation: frozenset[str] = frozenset()
    # The hits whose walk took its last step from another note (a note whose text names
    # this one, or which it names), not from a bare name ("Breast Cancer"): hit → that note.
    from_notes: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Reach:
    """How a walk best reached a vertex (slotted: thousands are memoised, and a full
    collection walks each object and its attribute dict)."""

    score: float
    hops: int
    path: tuple[int, ...]
    relation: int


class NeighborCache:
    """One graph with its edge attributes, and the top neighbors computed so far.

    The igraph is built at open and after a full build; an edit adds its new edges to
    the lists only, and they are looked up beside the igraph (`added`) until there are
    enough of them to build it again (`after_edit`): at 50,000 notes building the igraph
    took half a second of every save.
    """

    def __init__(self, graph: Any, vertices: list[Vertex], lists: EdgeLists) -> None:
        self.graph = graph
        self.vertices = vertices
        self.lists = lists
        self.in_graph = graph.vcount()  # vertices the igraph has (an edit may add more)
        self.added: dict[int, list[int]] = {}  # vertex → numbers of its edges the igraph lacks
        self.tops: dict[int, list[tuple[int, float, int]]] = {}
        # Expansions already walked, by (seed, relation words): typing repeats them.
        self.reaches: dict[tuple[int, frozenset[str], int], dict[int, _Reach]] = {}


@dataclass(frozen=True)
class Snapshot:
    """Everything a search reads, published at once so a search never sees half an update."""

    cache: NeighborCache
    index: dict[str, int]  # vertex key → vertex, for keys a note or a spelling still holds
    dictionary: EntityDictionary
    link_dirs: set[int]  # link_code(linking vertex, linked vertex)
    contexts: PairTexts  # pair_code → the words of the sentences that relate the pair
    named: dict[int, NamedEdge]  # pair_code of a linked pair → (subject vertex, relation, by a property, others)
    linked: frozenset[int]  # vertices with a written link
    people: frozenset[str]  # paths of the notes the vault files as people

    @property
    def vertices(self) -> list[Vertex]:
        """The graph's vertices by number."""
        return self.cache.vertices


def search(
    snapshot: Snapshot,
    plan: QueryPlan,
    limit: int,
    config: GraphConfig,
    relation_names: dict[str, frozenset[str]] | None = None,
    implied: dict[str, frozenset[str]] | None = None,
    allowed: Collection[str] | None = None,
) -> ChannelAnswer:
    """Expand 1-2 hops from the plan's entities (and its request's seeds); rank notes by decayed proximity.

    `allowed` (a filter's candidate paths) keeps only those notes as answers; the walk
    still goes through the others, and the cut to `limit` comes after the filter.

    `relation_names` are the lexicon's named relations with their word keys: an edge
    named with the relation the query asks about counts `typed_relation_boost` more.
    `implied` are, per relation, the others it includes (founded → works at): the answer
    says which notes the vault joins to a named note by the asked relation (or one that
    includes it) and which by another relation only.
    """
    vertices, index, people = snapshot.vertices, snapshot.index, snapshot.people
    request = plan.graph
    max_hops = config.max_hops if request.max_hops is None else max(0, request.max_hops)
    seeds: list[tuple[int, float, int]] = []
    recognized: list[str] = []
    for match in plan.entities if request.query_entities else ():
        ids = [index[k] for k in match.entity_ids if k in index]
        if not ids:
            continue
        recognized.append(match.surface)
        share = 1.0 / len(ids)  # an ambiguous name spreads its weight
        # ... and walks one hop: its second hop is many vertices each worth little.
        hops = max_hops if len(ids) <= _AMBIGUOUS_NAME else min(1, max_hops)
        seeds.extend((v, share, hops) for v in ids)
    # "Who attended X?" asks for X's people, not for X: the named notes are not answers.
    # Only where the named note's relations are written as links; co-occurrence is too
    # loose to say the note itself is not what was asked for.
    answers_are_neighbors = plan.relation.about_one and any(v in snapshot.linked for v, _, _ in seeds)
    named_seeds = len(seeds)  # the seeds after these are the entities the top chunks name
    seeds.extend((index[key], weight, max_hops) for key, weight in request.seeds if key in index)
    if not seeds:
        return ChannelAnswer(hits=())
    # The query's other words name the relation ("invested", "advises"); links written
    # in a sentence that says so are the ones asked about.
    relation_keys = plan.relation.keys
    asked = frozenset(name for name, keys in (relation_names or {}).items() if keys & relation_keys)
    wanted = asked if config.typed_relation_boost > 0 else frozenset()
    # The relations that answer the asked one: itself, and those that include it.
    answering = frozenset(
        name for name in (relation_names or {}) if name in asked or (implied or {}).get(name, frozenset()) & asked
    )
    totals: dict[int, float] = defaultdict(float)
    best: dict[int, _Reach] = {}
    # A who-question's answers are people; a walk that passes through anything else (the
    # company a meeting links to) reaches that thing's people, and steps back with it.
    by_people = answers_are_neighbors and bool(people)
    from_chunk: set[int] = set()  # vertices whose best reach started at a top chunk's entity
    for number, (seed, seed_weight, hops) in enumerate(seeds):
        reached = expand(snapshot.cache, config, seed, snapshot.contexts, relation_keys, hops, snapshot.named, wanted)
        for v, reach in reached.items():
            if answers_are_neighbors and reach.hops == 0:
                continue
            score = reach.score
            if by_people:
                for via in reach.path[1:-1]:
                    if vertices[via].path not in people:
                        score *= _NOT_PERSON
            totals[v] += seed_weight * score
            if v not in best or reach.score > best[v].score:
                best[v] = reach
                if number >= named_seeds:
                    from_chunk.add(v)
                else:
                    from_chunk.discard(v)
    note_hits = [(v, score) for v, score in totals.items() if vertices[v].kind == "note" and score > 0]
    if allowed is not None:
        note_hits = [(v, score) for v, score in note_hits if vertices[v].path in allowed]
    if by_people:
        # A who-question is answered by people: where the vault says which notes are
        # people (a People/ folder, a #person tag), other notes step back.
        note_hits = [
            (v, score if vertices[v].path in people else score * _NOT_PERSON) for v, score in note_hits
        ]
    note_hits = _best_first(note_hits, limit, vertices)
    hits: list[ChannelHit] = []
    from_notes: dict[str, str] = {}
    for rank, (v, score) in enumerate(note_hits, start=1):
        reach = best[v]
        if reach.hops and vertices[reach.path[-2]].kind == "note":
            from_notes[str(vertices[v].path)] = str(vertices[reach.path[-2]].path)
        labels = tuple(vertices[p].label for p in reach.path)
        relation = CHUNK_SEEDED if v in from_chunk and not reach.hops else None
        if reach.hops:
            a, b = reach.path[-2], reach.path[-1]
            relation = RELATION_NAMES[reach.relation]
            if reach.relation == LINKS:
                relation = "links to" if link_code(a, b) in snapshot.link_dirs else "linked from"
        hits.append(
            ChannelHit(
                path=str(vertices[v].path),
                score=round(score, 6),
                rank=rank,
                graph_path=labels,
                graph_relation=relation,
                relations=path_relations(snapshot, reach.path, asked),
            )
        )
    expanded = tuple(
        dict.fromkeys(
            vertices[v].label
            for v, reach in sorted(((v, r) for v, r in best.items() if r.hops == 1), key=lambda kv: -kv[1].score)
        )
    )[:20]
    in_relation, other_relation = _by_relation(snapshot, config, [v for v, _, _ in seeds[:named_seeds]], answering)
    return ChannelAnswer(
        hits=tuple(hits),
        reading=GraphReading(
            recognized=tuple(recognized),
            expanded=expanded,
            answer_notes=people if answers_are_neighbors else frozenset(),
            in_relation=in_relation,
            other_relation=other_relation,
            from_notes=from_notes,
        ),
    )


def _best_first(note_hits: list[tuple[int, float]], limit: int, vertices: list[Vertex]) -> list[tuple[int, float]]:
    """The `limit` best (vertex, score) pairs, best first, ties by path: as sorting them all
    would give. A walk reaches hundreds of notes; only those scoring at least the
    `limit`-th best score are sorted."""
    if len(note_hits) > 2 * limit > 0:
        scores = np.fromiter((score for _v, score in note_hits), dtype=np.float64, count=len(note_hits))
        at = len(scores) - limit
        floor = float(np.partition(scores, at)[at])
        note_hits = [item for item in note_hits if item[1] >= floor]
    note_hits.sort(key=lambda item: (-item[1], vertices[item[0]].path or ""))
    return note_hits[:limit] if limit > 0 else []


def _by_relation(
    snapshot: Snapshot, config: GraphConfig, named: list[int], asked: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """The notes the vault joins to a `named` seed by an `asked` relation, and those it joins
    by another named relation only (the founder, where the investors were asked for)."""
    if not asked or not named:
        return frozenset(), frozenset()
    vertices = snapshot.vertices
    inside: set[str] = set()
    other: set[str] = set()
    for seed in named:
        for v, _weight, _relation in top_neighbors(snapshot.cache, config, seed):
            edge = snapshot.named.get(pair_code(seed, v))
            path = vertices[v].path
            if edge is None or path is None:
                continue
            (inside if names_any(edge, asked) else other).add(path)
    return frozenset(inside), frozenset(other - inside)


def names_any(edge: NamedEdge, relations: frozenset[str]) -> bool:
    """Whether the pair is named by one of `relations`, first or besides."""
    return edge[1] in relations or any(name in relations for _subject, name, _explicit in edge[3])


def path_relations(
    snapshot: Snapshot, path: tuple[int, ...], asked: frozenset[str] = frozenset()
) -> tuple[Relation, ...]:
    """The named relations along a walk's path (subject first), where the vault names one:
    the one the question `asked` for where the pair is named by it too, else the one said most."""
    out: list[Relation] = []
    vertices = snapshot.vertices
    for a, b in pairwise(path):
        named = snapshot.named.get(pair_code(a, b))
        if named is not None:
            subject, relation, explicit, others = named
            if relation not in asked:
                besides = next((other for other in others if other[1] in asked), None)
                if besides is not None:
                    subject, relation, explicit = besides
            other = b if subject == a else a
            out.append(Relation(vertices[subject].label, relation, vertices[other].label, explicit))
    return tuple(out)


def expand(
    cache: NeighborCache,
    config: GraphConfig,
    seed: int,
    contexts: PairTexts | None = None,
    relation_keys: frozenset[str] = frozenset(),
    max_hops: int | None = None,
    named: dict[int, NamedEdge] | None = None,
    wanted: frozenset[str] = frozenset(),
) -> dict[int, _Reach]:
    """Best reach of every vertex within max_hops of `seed`; edges whose link context names the
    relation count more, and edges named with a `wanted` relation more again."""
    hops = config.max_hops if max_hops is None else max_hops
    memo = (seed, relation_keys, hops)
    known_reach = cache.reaches.get(memo)
    if known_reach is not None:
        return known_reach
    patterns = tuple(f" {key} " for key in sorted(relation_keys))
    by_context = contexts if relation_keys and contexts else None
    reached: dict[int, _Reach] = {seed: _Reach(1.0, 0, (seed,), LINKS)}
    frontier = [seed]
    for hop in range(1, hops + 1):
        if not frontier:  # everything reachable is reached: more hops find nothing (max_hops=10**9)
            break
        next_frontier: list[int] = []
        for u in frontier:
            base = reached[u]
            for v, rel_weight, relation in top_neighbors(cache, config, u):
                score = base.score * config.hop_decay * rel_weight
                if by_context is not None:
                    context = by_context.get(pair_code(u, v))
                    if context and context_has(context, patterns):
                        score *= 1.0 + config.relation_boost
                if wanted and named:
                    edge = named.get(pair_code(u, v))
                    if edge is not None and names_any(edge, wanted):
                        score *= 1.0 + config.typed_relation_boost
                known = reached.get(v)
                if known is None or (score > known.score and known.hops >= hop):
                    if known is None:
                        next_frontier.append(v)
                    reached[v] = _Reach(score, hop, (*base.path, v), relation)
        frontier = next_frontier
    if len(cache.reaches) >= _MEMO_EXPANSIONS:
        cache.reaches.clear()
    cache.reaches[memo] = reached
    return reached


def top_neighbors(cache: NeighborCache, config: GraphConfig, vertex: int) -> list[tuple[int, float, int]]:
    """The strongest neighbors with weights relative to the strongest (hub control).

    Memoised per graph: typing re-expands the same hubs on every keystroke.
    """
    found = cache.tops.get(vertex)
    if found is not None:
        return found
    lists, vertices = cache.lists, cache.vertices
    weights, relations, lows, highs = lists.weights, lists.relations, lists.lows, lists.highs
    edges = live_edges(cache, vertex)
    if not edges:
        cache.tops[vertex] = []
        return []
    # Equal weights are ordered by the neighbor's key, so the order does not depend on
    # how the graph was numbered (a patched graph numbers differently from a fresh one).
    # A hub's thousands of edges are first cut to those at least as heavy as its
    # max_neighbors-th (in C): only they can be among the strongest.
    candidates = edges
    if len(edges) > 4 * config.max_neighbors > 0:
        numbers = np.asarray(edges, dtype=np.int64)
        heavy = np.frombuffer(weights, dtype=np.float64)[numbers]
        at = len(heavy) - config.max_neighbors
        candidates = numbers[heavy >= np.partition(heavy, at)[at]].tolist()
    weighted = sorted(
        (-weights[e], vertices[highs[e] if lows[e] == vertex else lows[e]].key, e) for e in candidates
    )[: config.max_neighbors]
    top = -weighted[0][0]
    # A hub's neighbors each count for less: scale by 1/sqrt(degree).
    hub = 1.0 / max(1.0, (len(edges) / config.max_neighbors) ** 0.5)
    out = []
    for weight, _key, e in weighted:
        other = highs[e] if lows[e] == vertex else lows[e]
        out.append((other, hub * -weight / top, int(relations[e])))
    cache.tops[vertex] = out
    return out


def after_edit(before: NeighborCache, vertices: list[Vertex], lists: EdgeLists, build_graph: Callable[[], Any]) -> NeighborCache:
    """The cache for the lists an edit changed: the igraph before it with the edit's new
    edges beside it, or built again (`build_graph`) once those are many."""
    known = before.graph.ecount()
    if not 0 <= len(lists) - known <= max(_ADDED_EDGES, known // 50):
        return NeighborCache(build_graph(), vertices, lists)
    cache = NeighborCache(before.graph, vertices, lists)
    lows, highs = lists.lows, lists.highs
    for at in range(known, len(lists)):
        cache.added.setdefault(lows[at], []).append(at)
        cache.added.setdefault(highs[at], []).append(at)
    return cache


def live_edges(cache: NeighborCache, vertex: int) -> list[int]:
    """The numbers of a vertex's edges, without those an edit emptied (weight 0, see EdgeLists)."""
    weights = cache.lists.weights
    edges = cache.graph.incident(vertex) if vertex < cache.in_graph else []
    added = cache.added.get(vertex)
    return [e for e in (edges + added if added else edges) if weights[e] > 0]


def find_edge(cache: NeighborCache, a: int, b: int) -> int | None:
    """The number of the live edge between vertices `a` and `b`, if there is one."""
    found = cache.graph.get_eid(a, b, error=False) if a < cache.in_graph and b < cache.in_graph else -1
    if found < 0:
        pair = (a, b) if a < b else (b, a)
        found = next((e for e in cache.added.get(a, ()) if cache.lists.end(e) == pair), -1)
    return found if found >= 0 and cache.lists.weights[found] > 0 else None


def neighbors(snapshot: Snapshot, path: str, limit: int, config: GraphConfig) -> list[Neighbor]:
    """A note's strongest neighbors in the graph."""
    v = snapshot.index.get(f"note:{path}")
    if v is None:
        return []
    out = []
    for other, weight, _rel in top_neighbors(snapshot.cache, config, v)[:limit]:
        vert = snapshot.vertices[other]
        named = path_relations(snapshot, (v, other))
        out.append(
            Neighbor(
                name=vert.label,
                kind=vert.kind,
                weight=round(weight, 4),
                path=vert.path,
                relation=named[0] if named else None,
            )
        )
    return out
