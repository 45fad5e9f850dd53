"""A read-only view of one published graph for context assembly: entities, their chunks, walks and edges."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from engine.channels.graph.build import RELATION_NAMES, Part
from engine.channels.graph.walk import (
    Snapshot,
    expand,
    find_edge,
    live_edges,
    path_relations,
    top_neighbors,
)
from engine.config import GraphConfig
from engine.records import Relation

__all__ = ["EdgeInfo", "EntityInfo", "GraphView", "Reached"]


@dataclass(frozen=True)
class EntityInfo:
    """A vertex of the graph: a note, a tag or a free-text name."""

    key: str
    label: str
    kind: str  # "note", "tag" or "name"
    path: str | None
    person: bool
    degree: int


@dataclass(frozen=True)
class EdgeInfo:
    """An edge between two entities: its summed weight, strongest evidence and named relation."""

    weight: float
    evidence: str  # "links", "mentions", "tagged" or "co-occurs"
    relation: Relation | None


@dataclass(frozen=True)
class Reached:
    """An entity a walk reached: its score (seed weight × decayed proximity), hop and path of keys."""

    score: float
    hop: int
    path: tuple[str, ...]


class GraphView:
    """One snapshot of the graph and the notes' parts, read without locks (both are never changed in place)."""

    def __init__(self, snapshot: Snapshot, parts: Mapping[str, Part], config: GraphConfig) -> None:
        self._snapshot = snapshot
        self._parts = parts
        self._config = config

    def entity(self, key: str) -> EntityInfo | None:
        """The entity of a vertex key (`note:PATH`, `tag:x`, `name:x`), if the graph has it."""
        vertex = self._snapshot.index.get(key)
        if vertex is None:
            return None
        record = self._snapshot.vertices[vertex]
        return EntityInfo(
            key=key,
            label=record.label,
            kind=record.kind,
            path=record.path,
            person=record.path is not None and record.path in self._snapshot.people,
            degree=len(live_edges(self._snapshot.cache, vertex)),
        )

    def chunk_entities(self, path: str, ordinal: int) -> tuple[str, ...]:
        """The entity keys a chunk of a note names or links, in written order."""
        part = self._parts.get(path)
        return part.chunk_entities.get(ordinal, ()) if part is not None else ()

    def note_tags(self, path: str) -> tuple[str, ...]:
        """The tag keys of a note."""
        part = self._parts.get(path)
        if part is None:
            return ()
        me = f"note:{path}"
        return tuple(sorted({b if a == me else a for a, b, _rel in part.edges if (a == me or b == me) and (a.startswith("tag:") or b.startswith("tag:"))}))

    def walk(self, seeds: Mapping[str, float], depth: int, relation_keys: frozenset[str] = frozenset()) -> dict[str, Reached]:
        """Every entity within `depth` hops of the seeds (keys with weights), breadth first.

        Each seed reaches its neighbours by decayed, hub-controlled edge weight (as search
        walks); an entity reached from several seeds adds their scores and keeps its best path.
        """
        snapshot = self._snapshot
        keys = [vertex.key for vertex in snapshot.vertices]
        totals: dict[int, float] = {}
        best: dict[int, tuple[float, int, tuple[int, ...]]] = {}
        for key, weight in seeds.items():
            seed = snapshot.index.get(key)
            if seed is None:
                continue
            reached = expand(snapshot.cache, self._config, seed, snapshot.contexts, relation_keys, max(0, depth))
            for vertex, reach in reached.items():
                totals[vertex] = totals.get(vertex, 0.0) + weight * reach.score
                known = best.get(vertex)
                if known is None or weight * reach.score > known[0]:
                    best[vertex] = (weight * reach.score, reach.hops, reach.path)
        return {
            keys[vertex]: Reached(round(totals[vertex], 6), best[vertex][1], tuple(keys[v] for v in best[vertex][2]))
            for vertex in totals
        }

    def edge(self, a: str, b: str) -> EdgeInfo | None:
        """The edge between two entity keys, if any."""
        snapshot = self._snapshot
        va, vb = snapshot.index.get(a), snapshot.index.get(b)
        if va is None or vb is None:
            return None
        cache = snapshot.cache
        edge_id = find_edge(cache, va, vb)
        if edge_id is None:
            return None
        named = path_relations(snapshot, (va, vb))
        return EdgeInfo(
            weight=round(cache.lists.weights[edge_id], 4),
            evidence=RELATION_NAMES[cache.lists.relations[edge_id]],
            relation=named[0] if named else None,
        )

    def edges_among(self, keys: Collection[str]) -> list[tuple[str, str]]:
        """Pairs of the given entities joined by one of their strongest edges (each pair once)."""
        snapshot = self._snapshot
        wanted = {snapshot.index[k]: k for k in keys if k in snapshot.index}
        pairs: set[tuple[str, str]] = set()
        for vertex, key in wanted.items():
            for other, _weight, _rel in top_neighbors(snapshot.cache, self._config, vertex):
                if other in wanted and other != vertex:
                    pair = (key, wanted[other])
                    pairs.add(pair if pair[0] < pair[1] else (pair[1], pair[0]))
        return sorted(pairs)

    def labels(self, keys: Sequence[str]) -> list[str]:
        """The labels of some entity keys (the key itself for one the graph lost)."""
        index, vertices = self._snapshot.index, self._snapshot.vertices
        return [vertices[index[k]].label if k in index else k for k in keys]
