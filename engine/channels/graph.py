"""Entity-graph channel: igraph over notes, tags and names; proximity to query entities."""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.catalog import Catalog
from engine.channels.base import ChannelAnswer
from engine.config import GraphConfig
from engine.entities import STOP_WORDS, EntityDictionary, EntityMatch, displayed_text, normalize
from engine.query import Query
from engine.records import ChannelHit, ChannelName, Neighbor, NoteInfo

# Relation codes, strongest evidence first; an edge keeps its strongest relation.
LINKS, MENTIONS, TAGGED, COOCCURS = 0, 1, 2, 3
_RELATION_NAMES = {LINKS: "links", MENTIONS: "mentions", TAGGED: "tagged", COOCCURS: "co-occurs"}
_RELATION_WEIGHT = {LINKS: 3.0, MENTIONS: 1.0, TAGGED: 0.5, COOCCURS: 1.0}
_MAX_COOCCURRING = 8


_PERSON_QUESTION = frozenset({"who", "whom", "whose"})
_QUERY_WORD = re.compile(r"\w+")


_PERSON_MARKS = frozenset({"people", "person", "persons", "contacts", "contact"})
_NOT_PERSON = 0.25


def _is_person(info: NoteInfo) -> bool:
    """Whether the vault files this note as a person: a People/ folder or a #person tag."""
    folders = info.path.casefold().split("/")[:-1]
    tags = {t.lstrip("#").casefold().rsplit("/", 1)[-1] for t in info.tags}
    return not _PERSON_MARKS.isdisjoint(folders) or not _PERSON_MARKS.isdisjoint(tags)


_SENTENCE_END = re.compile(r"(?<=[.!?;|])\s+")
_CONTEXT_PREFIX = 5


def _residual_words(text: str, matches: Sequence[EntityMatch]) -> list[str]:
    """Content words of a query outside the entities it names (question words dropped)."""
    spans = [(m.start, m.end) for m in matches]
    return [
        w.group().casefold()
        for w in _QUERY_WORD.finditer(text)
        if not any(start <= w.start() < end for start, end in spans)
        and w.group().casefold() not in STOP_WORDS
        and not w.group().isdigit()
    ]


def asks_for_related(text: str, named: Sequence[str]) -> bool:
    """Whether `text` is a who-question about the relation of named entities (e.g. "Who advises X?")."""
    matches = []
    for surface in named:
        at = text.find(surface)
        if at >= 0:
            matches.append(EntityMatch(surface, at, at + len(surface), ()))
    return _asks_for_related(text, matches)


def entity_coverage(text: str, named: Sequence[str]) -> float:
    """Share of the query's content words that lie inside the entities it names (0..1).

    The graph only knows about the named entities; a long claim that happens to contain
    one name ("... in IL-6 signalling ...") is mostly about something the graph cannot see.
    """
    spans = []
    for surface in named:
        at = text.find(surface)
        if at >= 0:
            spans.append((at, at + len(surface)))
    words = [
        w for w in _QUERY_WORD.finditer(text) if w.group().casefold() not in STOP_WORDS
    ]
    if not words:
        return 0.0
    inside = sum(1 for w in words if any(start <= w.start() < end for start, end in spans))
    return inside / len(words)


def answers_relation(text: str, named: Sequence[str], top_relation: str | None) -> bool:
    """Whether fusion should let the graph answer: a relation question whose best graph
    answer is joined to the named note by a written link (not mere co-occurrence)."""
    return top_relation in _LINK_RELATIONS and asks_for_related(text, named)


_LINK_RELATIONS = frozenset({"links to", "linked from"})


def _asks_for_related(text: str, matches: Sequence[EntityMatch]) -> bool:
    """A who-question about one named entity that says more than "who is X" (a relation).

    Two or more names ("Who is older, A or B?") compare the named notes themselves.
    """
    first = _QUERY_WORD.search(text)
    if first is None or first.group().casefold() not in _PERSON_QUESTION:
        return False
    # Names are written as names; a lone lowercase word that happens to be a tag is not one.
    names = [m for m in matches if not m.surface.islower() or " " in m.surface.strip()]
    if len(names) != 1:
        return False
    return bool(_residual_words(text, matches))


def _context_keys(words: Iterable[str]) -> set[str]:
    """Crude stems (5-letter prefixes) so "invested", "investor" and "investment" meet."""
    return {
        word[:_CONTEXT_PREFIX]
        for word in words
        if len(word) >= 4 and word not in STOP_WORDS and not word.isdigit()
    }


def _link_contexts(
    catalog: Catalog, note_vertex: dict[str, int]
) -> dict[tuple[int, int], frozenset[str]]:
    """Per linked pair of notes, the word keys of the sentences the link is written in."""
    by_source: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    for row in catalog.links():
        if row.resolved and row.resolved != row.source and row.resolved in note_vertex:
            by_source[row.source].append((row.resolved, row.link.line, row.link.target))
    contexts: dict[tuple[int, int], set[str]] = defaultdict(set)
    for source, rows in by_source.items():
        stored = catalog.note_body(source)
        if stored is None or source not in note_vertex:
            continue
        body, offset = stored
        lines = body.split("\n")
        a = note_vertex[source]
        for target, line, written in rows:
            index = line - offset - 1
            if not 0 <= index < len(lines):
                continue
            text = lines[index]
            at = max(0, text.find(written))
            sentence = next(
                (piece for piece, start in _pieces(text) if start <= at < start + len(piece) + 1),
                text,
            )
            words = [w.casefold() for w in _QUERY_WORD.findall(displayed_text(sentence))]
            b = note_vertex[target]
            contexts[(a, b) if a < b else (b, a)].update(_context_keys(words))
    return {edge: frozenset(keys) for edge, keys in contexts.items()}


def _pieces(text: str) -> list[tuple[str, int]]:
    """Sentences of a line with their start offsets."""
    out = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        out.append((text[start : match.start()], start))
        start = match.end()
    out.append((text[start:], start))
    return out


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


class _NeighborCache:
    """One graph's edge attributes as plain lists, and the top neighbors computed so far."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.weights: list[float] = graph.es["weight"]
        self.relations: list[int] = graph.es["relation"]
        self.ends: list[tuple[int, int]] = graph.get_edgelist()
        self.tops: dict[int, list[tuple[int, float, int]]] = {}


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
        self._contexts: dict[tuple[int, int], frozenset[str]] = {}
        self._people: frozenset[str] = frozenset()
        self._linked: frozenset[int] = frozenset()
        self._note_count = 0
        self._neighbor_cache: _NeighborCache | None = None

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
        weights: defaultdict[tuple[int, int], float] = defaultdict(float)
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
            named = name_to_note.get(key)
            if named is None:
                named = vertex(f"name:{key}", surface, "name")
                entries.append((surface, f"name:{key}"))
            mentioner = note_vertex.get(path)
            if mentioner is None:
                continue
            connect(mentioner, named, MENTIONS)
            chunk_entities[(path, ordinal)].append(named)

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

        contexts = _link_contexts(catalog, note_vertex)
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
            self._contexts = contexts
            self._linked = frozenset(v for edge in link_dirs for v in edge)
            self._people = frozenset(info.path for info in infos if _is_person(info))
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
            contexts, linked, people = self._contexts, self._linked, self._people
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
        # "Who attended X?" asks for X's people, not for X: the named notes are not answers.
        # Only where the named note's relations are written as links; co-occurrence is too
        # loose to say the note itself is not what was asked for.
        answers_are_neighbors = _asks_for_related(query.text, matches) and any(
            v in linked for v, _ in seeds
        )
        # The query's other words name the relation ("invested", "advises"); links written
        # in a sentence that says so are the ones asked about.
        relation_keys = frozenset(_context_keys(_residual_words(query.text, matches)))
        totals: dict[int, float] = defaultdict(float)
        best: dict[int, _Reach] = {}
        for seed, seed_weight in seeds:
            for v, reach in self._expand(graph, seed, contexts, relation_keys).items():
                if answers_are_neighbors and reach.hops == 0:
                    continue
                totals[v] += seed_weight * reach.score
                if v not in best or reach.score > best[v].score:
                    best[v] = reach
        note_hits = [
            (v, score) for v, score in totals.items() if vertices[v].kind == "note" and score > 0
        ]
        if answers_are_neighbors and people:
            # A who-question is answered by people: where the vault says which notes are
            # people (a People/ folder, a #person tag), other notes step back.
            note_hits = [
                (v, score if vertices[v].path in people else score * _NOT_PERSON)
                for v, score in note_hits
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

    def _expand(
        self,
        graph: Any,
        seed: int,
        contexts: dict[tuple[int, int], frozenset[str]] | None = None,
        relation_keys: frozenset[str] = frozenset(),
    ) -> dict[int, _Reach]:
        """Best reach of every vertex within max_hops of `seed`; edges whose link context names the relation count more."""
        config = self._config
        reached: dict[int, _Reach] = {seed: _Reach(1.0, 0, (seed,), LINKS)}
        frontier = [seed]
        for hop in range(1, config.max_hops + 1):
            next_frontier: list[int] = []
            for u in frontier:
                base = reached[u]
                for v, rel_weight, relation in self._top_neighbors(graph, u):
                    score = base.score * config.hop_decay * rel_weight
                    if relation_keys and contexts:
                        context = contexts.get((u, v) if u < v else (v, u))
                        if context and not context.isdisjoint(relation_keys):
                            score *= 1.0 + config.relation_boost
                    known = reached.get(v)
                    if known is None or (score > known.score and known.hops >= hop):
                        if known is None:
                            next_frontier.append(v)
                        reached[v] = _Reach(score, hop, (*base.path, v), relation)
            frontier = next_frontier
        return reached

    def _top_neighbors(self, graph: Any, vertex: int) -> list[tuple[int, float, int]]:
        """The strongest neighbors with weights relative to the strongest (hub control).

        Memoised per graph: typing re-expands the same hubs on every keystroke, and
        igraph's per-edge attribute access is slow in Python.
        """
        cache = self._neighbor_cache
        if cache is None or cache.graph is not graph:
            cache = self._neighbor_cache = _NeighborCache(graph)
        found = cache.tops.get(vertex)
        if found is not None:
            return found
        edges = graph.incident(vertex)
        if not edges:
            cache.tops[vertex] = []
            return []
        weights, relations, ends = cache.weights, cache.relations, cache.ends
        weighted = sorted(((weights[e], e) for e in edges), reverse=True)[: self._config.max_neighbors]
        top = weighted[0][0]
        # A hub's neighbors each count for less: scale by 1/sqrt(degree).
        hub = 1.0 / max(1.0, (len(edges) / self._config.max_neighbors) ** 0.5)
        out = []
        for weight, e in weighted:
            source, target = ends[e]
            other = target if source == vertex else source
            out.append((other, hub * weight / top, int(relations[e])))
        cache.tops[vertex] = out
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
