"""Entity-graph channel: igraph over notes, tags and names; proximity to query entities."""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from engine.catalog import Catalog
from engine.channels.base import ChannelAnswer
from engine.config import GraphConfig
from engine.entities import EntityDictionary, normalize
from engine.query import Query
from engine.records import ChannelHit, ChannelName, Neighbor

# Relation codes, strongest evidence first; an edge keeps its strongest relation.
LINKS, MENTIONS, TAGGED, COOCCURS = 0, 1, 2, 3
_RELATION_NAMES = {LINKS: "links", MENTIONS: "mentions", TAGGED: "tagged", COOCCURS: "co-occurs"}
_RELATION_WEIGHT = {LINKS: 3.0, MENTIONS: 1.0, TAGGED: 0.5, COOCCURS: 1.0}
_MAX_COOCCURRING = 8


@dataclass(frozen=True)
class _Vertex:
    key: str
    label: str
    kind: str
    path: str | None


@dataclass
class _Reach:
    score: float
    hops: int
    path: tuple[int, ...]
    relation: int


class GraphChannel:
    """Notes ranked by weighted, hop-decayed proximity to the entities a query names."""

    name: ChannelName = "graph"

    def __init__(self, config: GraphConfig) -> None:
        self._config = config
        self._lock = threading.RLock()
        self._graph: Any = None
        self._vertices: list[_Vertex] = []
        self._index: dict[str, int] = {}
        self._dictionary = EntityDictionary([])
        self._link_dirs: set[tuple[int, int]] = set()
        self._note_count = 0

    # -- building -------------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> None:
        """Build vertices, edges and the entity dictionary from catalog rows in bulk."""
        import igraph

        vertices: list[_Vertex] = []
        index: dict[str, int] = {}

        def vertex(key: str, label: str, kind: str, path: str | None = None) -> int:
            found = index.get(key)
            if found is None:
                found = index[key] = len(vertices)
                vertices.append(_Vertex(key, label, kind, path))
            return found

        entries: list[tuple[str, str]] = []
        name_to_note: dict[str, int] = {}
        infos = catalog.note_infos()
        note_vertex: dict[str, int] = {}
        for info in infos:
            v = vertex(f"note:{info.path}", info.title, "note", info.path)
            note_vertex[info.path] = v
            for surface in (info.title, *info.aliases):
                entries.append((surface, f"note:{info.path}"))
                name_to_note.setdefault(normalize(surface), v)
        weights: Counter[tuple[int, int]] = Counter()
        relation: dict[tuple[int, int], int] = {}
        link_dirs: set[tuple[int, int]] = set()

        def connect(a: int, b: int, rel: int, amount: float = 1.0) -> None:
            if a == b:
                return
            edge = (a, b) if a < b else (b, a)
            weights[edge] += amount * _RELATION_WEIGHT[rel]
            if rel < relation.get(edge, COOCCURS + 1):
                relation[edge] = rel

        for info in infos:
            src = note_vertex[info.path]
            for tag in info.tags:
                clean = tag.lstrip("#")
                key = f"tag:{clean.lower()}"
                entries.append((clean, key))
                connect(src, vertex(key, f"#{clean}", "tag"), TAGGED)

        # Entities per chunk: names mentioned and notes linked, for co-occurrence.
        chunk_entities: dict[tuple[str, int], list[int]] = defaultdict(list)
        for path, ordinal, surface in catalog.mentions():
            key = normalize(surface)
            if len(key) < self._config.min_name_len:
                continue
            target = name_to_note.get(key)
            if target is None:
                target = vertex(f"name:{key}", surface, "name")
                entries.append((surface, f"name:{key}"))
            src = note_vertex.get(path)
            if src is None:
                continue
            connect(src, target, MENTIONS)
            chunk_entities[(path, ordinal)].append(target)

        chunk_ranges: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
        for path, ordinal, start, end in catalog.chunk_lines():
            chunk_ranges[path].append((start, end, ordinal))
        for source, target, line in catalog.link_ordinals():
            a, b = note_vertex.get(source), note_vertex.get(target)
            if a is None or b is None or a == b:
                continue
            connect(a, b, LINKS)
            link_dirs.add((a, b))
            for start, end, ordinal in chunk_ranges.get(source, ()):
                if start <= line <= end:
                    chunk_entities[(source, ordinal)].append(b)
                    break

        for members in chunk_entities.values():
            unique = list(dict.fromkeys(members))[:_MAX_COOCCURRING]
            for i, a in enumerate(unique):
                for b in unique[i + 1 :]:
                    connect(a, b, COOCCURS, 0.5)

        edges = list(weights)
        graph = igraph.Graph(n=len(vertices), edges=edges, directed=False)
        graph.es["weight"] = [weights[e] for e in edges]
        graph.es["relation"] = [relation[e] for e in edges]
        dictionary = EntityDictionary(entries)
        with self._lock:
            self._graph = graph
            self._vertices = vertices
            self._index = index
            self._dictionary = dictionary
            self._link_dirs = link_dirs
            self._note_count = len(infos)

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Rebuild from the catalog (bulk construction is cheaper than edge surgery)."""
        if changed or removed or self._graph is None:
            self.rebuild(catalog)

    # -- searching ------------------------------------------------------------------
    def recognize(self, text: str) -> list[tuple[str, tuple[str, ...]]]:
        """Entities named in `text`: (surface, entity keys)."""
        with self._lock:
            dictionary = self._dictionary
        return [(m.surface, m.entity_ids) for m in dictionary.recognize(text)]

    def search(self, query: Query, limit: int) -> ChannelAnswer:
        """Expand 1-2 hops from recognised entities; rank notes by decayed proximity."""
        with self._lock:
            graph, vertices, index = self._graph, self._vertices, self._index
            dictionary, link_dirs = self._dictionary, self._link_dirs
        if graph is None or query.is_empty:
            return ChannelAnswer(hits=())
        matches = dictionary.recognize(query.text)
        seeds: list[tuple[int, float]] = []
        recognized: list[str] = []
        for match in matches:
            ids = [index[k] for k in match.entity_ids if k in index]
            if not ids:
                continue
            recognized.append(match.surface)
            share = 1.0 / len(ids)  # an ambiguous name spreads its weight
            seeds.extend((v, share) for v in ids)
        if not seeds:
            return ChannelAnswer(hits=())
        totals: dict[int, float] = defaultdict(float)
        best: dict[int, _Reach] = {}
        for seed, seed_weight in seeds:
            for v, reach in self._expand(graph, seed).items():
                totals[v] += seed_weight * reach.score
                if v not in best or reach.score > best[v].score:
                    best[v] = reach
        note_hits = [
            (v, score) for v, score in totals.items() if vertices[v].kind == "note" and score > 0
        ]
        note_hits.sort(key=lambda item: (-item[1], vertices[item[0]].path or ""))
        hits: list[ChannelHit] = []
        for rank, (v, score) in enumerate(note_hits[:limit], start=1):
            reach = best[v]
            labels = tuple(vertices[p].label for p in reach.path)
            relation = None
            if reach.hops:
                a, b = reach.path[-2], reach.path[-1]
                relation = _RELATION_NAMES[reach.relation]
                if reach.relation == LINKS:
                    relation = "links to" if (a, b) in link_dirs else "linked from"
            hits.append(
                ChannelHit(
                    path=str(vertices[v].path),
                    score=round(score, 6),
                    rank=rank,
                    graph_path=labels,
                    graph_relation=relation,
                )
            )
        expanded = tuple(
            dict.fromkeys(
                vertices[v].label
                for v, reach in sorted(best.items(), key=lambda kv: -kv[1].score)
                if reach.hops == 1
            )
        )[:20]
        return ChannelAnswer(hits=tuple(hits), recognized=tuple(recognized), expanded=expanded)

    def _expand(self, graph: Any, seed: int) -> dict[int, _Reach]:
        """Best reach of every vertex within max_hops of `seed`."""
        config = self._config
        reached: dict[int, _Reach] = {seed: _Reach(1.0, 0, (seed,), LINKS)}
        frontier = [seed]
        for hop in range(1, config.max_hops + 1):
            next_frontier: list[int] = []
            for u in frontier:
                base = reached[u]
                for v, rel_weight, relation in self._top_neighbors(graph, u):
                    score = base.score * config.hop_decay * rel_weight
                    known = reached.get(v)
                    if known is None or score > known.score and known.hops >= hop:
                        if known is None:
                            next_frontier.append(v)
                        reached[v] = _Reach(score, hop, (*base.path, v), relation)
            frontier = next_frontier
        return reached

    def _top_neighbors(self, graph: Any, vertex: int) -> list[tuple[int, float, int]]:
        """The strongest neighbors with weights relative to the strongest (hub control)."""
        edges = graph.incident(vertex)
        if not edges:
            return []
        es = graph.es
        weighted = sorted(((es[e]["weight"], e) for e in edges), reverse=True)[: self._config.max_neighbors]
        top = weighted[0][0]
        # A hub's neighbors each count for less: scale by 1/sqrt(degree).
        hub = 1.0 / max(1.0, (len(edges) / self._config.max_neighbors) ** 0.5)
        out = []
        for weight, e in weighted:
            edge = es[e]
            other = edge.target if edge.source == vertex else edge.source
            out.append((other, hub * weight / top, int(edge["relation"])))
        return out

    def neighbors(self, path: str, limit: int = 20) -> list[Neighbor]:
        """A note's strongest neighbors in the graph."""
        with self._lock:
            graph, vertices, index = self._graph, self._vertices, self._index
        v = index.get(f"note:{path}")
        if graph is None or v is None:
            return []
        out = []
        for other, weight, _rel in self._top_neighbors(graph, v)[:limit]:
            vert = vertices[other]
            out.append(Neighbor(name=vert.label, kind=vert.kind, weight=round(weight, 4), path=vert.path))
        return out

    # -- lifecycle ------------------------------------------------------------------
    def entity_count(self) -> int:
        """Vertices in the graph."""
        with self._lock:
            return len(self._vertices)

    def save(self) -> None:
        """The graph is rebuilt from the catalog at open; nothing to persist."""

    def count(self) -> int:
        """Notes in the graph."""
        with self._lock:
            return self._note_count

    def close(self) -> None:
        """Drop the graph."""
        with self._lock:
            self._graph = None
