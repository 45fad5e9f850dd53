"""Entity-graph channel: igraph over notes, tags and names; proximity to query entities."""

from __future__ import annotations

import bisect
import functools
import gc
import os
import pickle
import re
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from engine.catalog import Catalog
from engine.channels.base import ChannelAnswer
from engine.config import GraphConfig
from engine.entities import (
    STOP_WORDS,
    EntityDictionary,
    EntityMatch,
    displayed_text,
    is_title_word,
    normalize,
)
from engine.kinds import is_person
from engine.query import Query
from engine.records import ChannelHit, ChannelName, Neighbor, NoteInfo

# Relation codes, strongest evidence first; an edge keeps its strongest relation.
LINKS, MENTIONS, TAGGED, COOCCURS = 0, 1, 2, 3
_RELATION_NAMES = {LINKS: "links", MENTIONS: "mentions", TAGGED: "tagged", COOCCURS: "co-occurs"}
_RELATION_WEIGHT = {LINKS: 3.0, MENTIONS: 1.0, TAGGED: 0.5, COOCCURS: 1.0}
_MAX_COOCCURRING = 8
_MEMO_EXPANSIONS = 2048
# A name shared by more entities than this spreads thinly: its seeds walk one hop.
_AMBIGUOUS_NAME = 3


_PERSON_QUESTION = frozenset({"who", "whom", "whose"})
_QUERY_WORD = re.compile(r"\w+")
# "Who is similar to X?" asks about X's kind of note, X included: not a relation to walk.
_RESEMBLANCE = re.compile(r"\b(?:similar|resembl\w*|comparable|alike|akin|like)\b", re.IGNORECASE)


_NOT_PERSON = 0.25


_SENTENCE_END = re.compile(r"(?<=[.!?;|])\s+")
_CONTEXT_PREFIX = 5
# The most characters of one sentence whose words relate a note to those it names.
_CONTEXT_CHARS = 1000
# A sentence of a note's body: (offset of its line, its number in the line or -1 for the
# whole line, offset of the part read when it is longer than _CONTEXT_CHARS).
_SentenceId = tuple[int, int, int]


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
    if _RESEMBLANCE.search(text):
        return False
    # Names are written as names; a lone lowercase word that happens to be a tag is not one.
    names = [m for m in matches if not m.surface.islower() or " " in m.surface.strip()]
    if len(names) != 1:
        return False
    return bool(_residual_words(text, matches))


# A context is the word keys of the sentences two notes are related in, as one string
# " key key key " (sorted): a vault has a hundred thousand such pairs, and a string is a
# fifth of the memory of a set and loads from the saved graph several times faster.
_Context = str


def _context(keys: Iterable[str]) -> _Context:
    return f" {' '.join(sorted(keys))} " if keys else ""


def _context_has(context: _Context, patterns: Sequence[str]) -> bool:
    """Whether a context holds any of the padded keys " key "."""
    return any(pattern in context for pattern in patterns)


def _context_keys(words: Iterable[str]) -> set[str]:
    """Crude stems (5-letter prefixes) so "invested", "investor" and "investment" meet."""
    return {
        word[:_CONTEXT_PREFIX]
        for word in words
        if len(word) >= 4 and word not in STOP_WORDS and not word.isdigit()
    }


class _Sentences:
    """The sentences of one note's body that its links and mentions are written in.

    Each line is split into sentences once and each sentence's word keys are read once:
    a note can hold thousands of links on one line, and splitting and reading the line
    again for every one of them would be quadratic in the line's length.
    """

    def __init__(self, body: str, offset: int) -> None:
        self._body = body
        self._offset = offset
        self._line_starts: list[int] | None = None
        self._split: dict[int, tuple[str, list[int], list[str]]] = {}
        self._found: dict[tuple[int, str], int] = {}
        self._keys: dict[_SentenceId, frozenset[str]] = {}

    def of_link(self, line: int, written: str) -> tuple[_SentenceId, frozenset[str]]:
        """(sentence id, word keys) of the sentence a link on file line `line` is written in.

        The sentence is the one holding the first occurrence of the written target in
        that line (the line's first sentence if it is not there); no keys if the line
        is outside the body.
        """
        starts = self._starts()
        index = line - self._offset - 1
        if not 0 <= index < len(starts):
            return (-1, -1, 0), frozenset()
        line_start = starts[index]
        text = self._line(line_start)[0]
        key = (line_start, written)
        at = self._found.get(key)
        if at is None:
            at = self._found[key] = max(0, text.find(written))
        return self._around(line_start, at)

    def of_mention(self, surface: str) -> tuple[_SentenceId, frozenset[str]]:
        """(sentence id, word keys) of the sentence a plain-text mention is first written in."""
        at = self._body.find(surface)
        if at < 0:
            return (-1, -1, 0), frozenset()
        line_start = self._body.rfind("\n", 0, at) + 1
        return self._around(line_start, at - line_start)

    def _starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            find = self._body.find
            newline = find("\n")
            while newline >= 0:
                starts.append(newline + 1)
                newline = find("\n", newline + 1)
            self._line_starts = starts
        return self._line_starts

    def _line(self, line_start: int) -> tuple[str, list[int], list[str]]:
        """The line starting at `line_start`, its sentences' starts, and its sentences."""
        split = self._split.get(line_start)
        if split is None:
            end = self._body.find("\n", line_start)
            text = self._body[line_start : len(self._body) if end < 0 else end]
            starts, pieces = [], []
            begin = 0
            for match in _SENTENCE_END.finditer(text):
                starts.append(begin)
                pieces.append(text[begin : match.start()])
                begin = match.end()
            starts.append(begin)
            pieces.append(text[begin:])
            split = self._split[line_start] = (text, starts, pieces)
        return split

    def _around(self, line_start: int, at: int) -> tuple[_SentenceId, frozenset[str]]:
        text, starts, pieces = self._line(line_start)
        # The last sentence starting at or before `at`, if `at` is inside it (or just past
        # its end); else the whole line, as a sentence that no split found.
        piece = bisect.bisect_right(starts, at) - 1
        if not (piece >= 0 and at < starts[piece] + len(pieces[piece]) + 1):
            piece = -1
        sentence, begin = (pieces[piece], starts[piece]) if piece >= 0 else (text, 0)
        low = 0
        if len(sentence) > _CONTEXT_CHARS:
            # A "sentence" this long is a list (a line of links without full stops): only
            # the words near the place count, or each of the thousands of notes such a
            # line links would keep all of its words (their number times its length).
            low = max(0, min(at - begin - _CONTEXT_CHARS // 2, len(sentence) - _CONTEXT_CHARS))
        sentence_id = (line_start, piece, low)
        keys = self._keys.get(sentence_id)
        if keys is None:
            if len(sentence) > _CONTEXT_CHARS:
                sentence = _whole_words(sentence, low, low + _CONTEXT_CHARS)
            words = _QUERY_WORD.findall(displayed_text(sentence))
            keys = self._keys[sentence_id] = frozenset(_context_keys([w.casefold() for w in words]))
        return sentence_id, keys


def _whole_words(text: str, start: int, end: int) -> str:
    """text[start:end] without the words the cut splits at either end (words end at spaces)."""
    if start > 0 and text[start - 1] != " ":
        space = text.find(" ", start, end)
        start = end if space < 0 else space
    if end < len(text) and text[end] != " ":
        end = max(start, text.rfind(" ", start, end))
    return text[start:end]


def _chunk_finder(chunks: Sequence[tuple[int, int, int]]) -> Callable[[int], int | None]:
    """A lookup of the first chunk (by position in `chunks`) whose line range holds a line."""
    ends = [end for _, end, _ in chunks]
    if all(a[0] <= b[0] and a[1] <= b[1] for a, b in pairwise(chunks)):
        # Chunks cut in order start and end in order: the first one ending at or after
        # the line is the only candidate (a scan per link would be links x chunks).
        def find(line: int) -> int | None:
            at = bisect.bisect_left(ends, line)
            if at < len(chunks) and chunks[at][0] <= line:
                return chunks[at][2]
            return None

        return find

    def scan(line: int) -> int | None:
        return next((ordinal for start, end, ordinal in chunks if start <= line <= end), None)

    return scan


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
    """One graph with its edge attributes as plain lists, and the top neighbors computed so far."""

    def __init__(
        self,
        graph: Any,
        vertices: list[_Vertex],
        ends: list[tuple[int, int]],
        weights: list[float],
        relations: list[int],
    ) -> None:
        self.graph = graph
        self.vertices = vertices
        self.ends = ends
        self.weights = weights
        self.relations = relations
        self.tops: dict[int, list[tuple[int, float, int]]] = {}
        # Expansions already walked, by (seed, relation words): typing repeats them.
        self.reaches: dict[tuple[int, frozenset[str], int], dict[int, _Reach]] = {}


# Weight of one occurrence per relation code (a co-occurrence counts half).
_UNIT_WEIGHT = (_RELATION_WEIGHT[LINKS], _RELATION_WEIGHT[MENTIONS], _RELATION_WEIGHT[TAGGED], 0.5 * _RELATION_WEIGHT[COOCCURS])
# An update touching more than this share of the notes rebuilds from scratch.
_INCREMENTAL_SHARE = 0.05


@dataclass
class _Part:
    """One note's contribution to the graph, in vertex keys (so independent of vertex numbering)."""

    title: str
    aliases: tuple[str, ...]
    person: bool
    edges: dict[tuple[str, str, int], int]  # (key, key, relation code) with the keys in order → occurrences
    surfaces: dict[tuple[str, str], int]  # (tag or name vertex key, surface as written) → occurrences
    link_dirs: frozenset[str]  # keys of the notes this note links to
    contexts: dict[str, _Context]  # linked or named note key → word keys of the sentences it is in


@dataclass
class _NoteRows:
    """The catalog rows of one note the graph is built from."""

    mentions: list[tuple[int, str]] = field(default_factory=list)
    chunks: list[tuple[int, int, int]] = field(default_factory=list)
    links: list[tuple[str, int, str]] = field(default_factory=list)


_QUALIFIER = re.compile(r"^(?P<name>.*\S)\s+\([^()]+\)$")


def _without_qualifier(title: str) -> str:
    """A title's name without a trailing parenthesised qualifier ("" if it has none)."""
    found = _QUALIFIER.match(title.strip())
    return found.group("name") if found else ""


def _note_rows(catalog: Catalog, paths: Collection[str] | None) -> dict[str, _NoteRows]:
    """Mentions, chunk line ranges and resolved links of all notes (or some), in written order."""
    rows: defaultdict[str, _NoteRows] = defaultdict(_NoteRows)
    for path, ordinal, surface in catalog.mentions_of(paths):
        rows[path].mentions.append((ordinal, surface))
    for path, ordinal, start, end in catalog.chunk_lines_of(paths):
        rows[path].chunks.append((start, end, ordinal))
    for source, target, line, written in catalog.resolved_links_of(paths):
        rows[source].links.append((target, line, written))
    return rows


def _note_part(
    info: NoteInfo,
    rows: _NoteRows,
    load_body: Callable[[], tuple[str, int] | None],
    name_to_note: dict[str, str],
    notes: Collection[str],
    min_name_len: int,
    title_words: bool = True,
) -> _Part:
    """What one note adds: tag, mention, link and co-occurrence edges, names, link contexts.

    `load_body` reads the note's text (and its line offset); it is called at most once,
    and only for a note that links to or names another note: the sentences say how.
    """
    me = sys.intern(f"note:{info.path}")  # one object per key: less memory, a smaller saved graph
    edges: dict[tuple[str, str, int], int] = {}
    surfaces: dict[tuple[str, str], int] = {}
    loaded: list[_Sentences | None] = []

    def sentences() -> _Sentences | None:
        if not loaded:
            body = load_body()
            loaded.append(None if body is None else _Sentences(*body))
        return loaded[0]

    def connect(a: str, b: str, rel: int) -> None:
        if a != b:
            edge = (a, b, rel) if a < b else (b, a, rel)
            edges[edge] = edges.get(edge, 0) + 1

    for tag in info.tags:
        clean = tag.lstrip("#")
        key = sys.intern(f"tag:{clean.lower()}")
        surfaces[(key, clean)] = surfaces.get((key, clean), 0) + 1
        connect(me, key, TAGGED)
    # Entities per chunk: names mentioned and notes linked, for co-occurrence.
    chunk_entities: defaultdict[int, list[str]] = defaultdict(list)
    contexts: defaultdict[str, set[str]] = defaultdict(set)
    contexted: set[str] = set()
    contexted_sentences: set[tuple[str, _SentenceId]] = set()

    def add_context(key: str, sentence_id: _SentenceId, keys: frozenset[str]) -> None:
        # Many links to one note in one sentence add that sentence's keys once.
        if keys and (key, sentence_id) not in contexted_sentences:
            contexted_sentences.add((key, sentence_id))
            contexts[key].update(keys)

    for ordinal, surface in rows.mentions:
        normal = normalize(surface)
        if len(normal) < min_name_len:
            continue
        named = name_to_note.get(normal)
        if named is None:
            if is_title_word(surface):
                continue  # a lone capitalised word counts only as a note's title
            named = sys.intern(f"name:{normal}")
            surfaces[(named, surface)] = surfaces.get((named, surface), 0) + 1
        elif not title_words and is_title_word(surface):
            continue
        connect(me, named, MENTIONS)
        chunk_entities[ordinal].append(named)
        if named.startswith("note:") and surface not in contexted:
            # "Victor Jackson rounded out the attendee list": a note named in plain text
            # is related to this one as the sentence says, as a link would be.
            contexted.add(surface)
            found = sentences()
            if found is not None:
                add_context(named, *found.of_mention(surface))
    found = sentences() if rows.links else None
    chunk_of = _chunk_finder(rows.chunks)
    link_dirs: set[str] = set()
    for target, line, written in rows.links:
        if target == info.path or target not in notes:
            continue
        other = sys.intern(f"note:{target}")
        connect(me, other, LINKS)
        link_dirs.add(other)
        linked_from = chunk_of(line)
        if linked_from is not None:
            chunk_entities[linked_from].append(other)
        if found is not None:
            add_context(other, *found.of_link(line, written))
    for members in chunk_entities.values():
        unique = list(dict.fromkeys(members))[:_MAX_COOCCURRING]
        for i, a in enumerate(unique):
            for b in unique[i + 1 :]:
                connect(a, b, COOCCURS)
    return _Part(
        title=info.title,
        aliases=info.aliases,
        person=is_person(info.path, info.tags),
        edges=edges,
        surfaces=surfaces,
        link_dirs=frozenset(link_dirs),
        contexts={k: _context(v) for k, v in contexts.items()},
    )


def _label(key: str, surfaces: Collection[str]) -> str:
    """A tag's or name's label: its first spelling in sort order (any order-free choice would do)."""
    first = min(surfaces)
    return f"#{first}" if key.startswith("tag:") else first


def _key_entries(key: str, spelled: Collection[str]) -> list[tuple[str, str]]:
    """The dictionary entries of a tag or name key with these spellings (as `_Build.entries`)."""
    if not spelled:
        return []
    if key.startswith("tag:"):
        return [(surface, key) for surface in sorted(spelled)]
    return [(_label(key, spelled), key)]


class _Build:
    """Every note's part and their sum, numbered into vertices: the writer's side of the channel."""

    def __init__(self, infos: Sequence[NoteInfo]) -> None:
        self.parts: dict[str, _Part] = {}
        self.keys: list[str] = []
        self.ids: dict[str, int] = {}
        self.titles: dict[str, str] = {}
        self.name_to_note: dict[str, str] = {}
        self.note_entries: list[tuple[str, str]] = []
        short: list[tuple[str, str]] = []
        for info in infos:
            key = sys.intern(f"note:{info.path}")
            self.vertex(key)
            self.titles[key] = info.title
            for surface in (info.title, *info.aliases):
                self.note_entries.append((surface, key))
                self.name_to_note.setdefault(normalize(surface), key)
                bare = _without_qualifier(surface)
                if bare:
                    short.append((bare, key))
        # "Mercury (planet)" is asked about as "Mercury": a query naming the bare name names
        # the note too (beside whatever else is called that). Text that writes "Mercury" is
        # not taken to mean the planet: a vault's other "Mercury" mentions keep their own vertex.
        for bare, key in short:
            self.note_entries.append((bare, key))
        self.units: dict[tuple[int, int], list[int]] = {}
        self.surfaces: dict[str, dict[str, int]] = {}
        self.link_dirs: set[tuple[int, int]] = set()
        self.contexts: dict[tuple[int, int], _Context] = {}
        self.people: set[str] = set()
        # The summed edges as parallel lists (igraph's edge numbering) and each edge's place.
        self.ends: list[tuple[int, int]] = []
        self.weights: list[float] = []
        self.relations: list[int] = []
        self.position: dict[tuple[int, int], int] = {}

    def vertex(self, key: str) -> int:
        """The number of a vertex key, allocating one for a new key (numbers are never reused)."""
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.keys)
            self.keys.append(key)
        return found

    def apply(self, path: str, part: _Part, sign: int, edges: set[tuple[int, int]], names: set[str]) -> None:
        """Add (sign 1) or subtract (sign -1) a note's part; collect the edges and names it touches."""
        ids, vertex, sums = self.ids, self.vertex, self.units
        for (a, b, rel), count in part.edges.items():
            ia = ids.get(a)
            if ia is None:
                ia = vertex(a)
            ib = ids.get(b)
            if ib is None:
                ib = vertex(b)
            edge = (ia, ib) if ia < ib else (ib, ia)
            units = sums.get(edge)
            if units is None:
                units = sums[edge] = [0, 0, 0, 0]
            units[rel] += sign * count
            edges.add(edge)
        for (key, surface), count in part.surfaces.items():
            spelled = self.surfaces.get(key)
            if spelled is None:
                spelled = self.surfaces[key] = {}
            left = spelled.get(surface, 0) + sign * count
            if left > 0:
                spelled[surface] = left
            else:
                spelled.pop(surface, None)
            names.add(key)
        me = self.vertex(f"note:{path}")
        for other in part.link_dirs:
            if sign > 0:
                self.link_dirs.add((me, self.vertex(other)))
            else:
                self.link_dirs.discard((me, self.vertex(other)))
        if part.person and sign > 0:
            self.people.add(path)
        elif sign < 0:
            self.people.discard(path)

    def context(self, a: str, b: str) -> _Context:
        """Word keys of the sentences that link notes `a` and `b` (keys), either way."""
        part_a, part_b = self.parts.get(a[5:]), self.parts.get(b[5:])
        keys = part_a.contexts.get(b, "") if part_a else ""
        other = part_b.contexts.get(a, "") if part_b else ""
        # One side's string is shared, not copied: most pairs are written about from one side.
        return _context(set(keys.split()) | set(other.split())) if keys and other else (keys or other)

    def set_context(self, a: str, b: str) -> None:
        """Recompute the context of one linked pair from both notes' parts."""
        ia, ib = self.ids[a], self.ids[b]
        edge = (ia, ib) if ia < ib else (ib, ia)
        keys = self.context(a, b)
        if keys:
            self.contexts[edge] = keys
        else:
            self.contexts.pop(edge, None)

    def entries(self) -> list[tuple[str, str]]:
        """Dictionary entries in a fixed order: note names (by path), then tags, then names (by key)."""
        out = list(self.note_entries)
        for kind in ("tag:", "name:"):
            for key in sorted(k for k in self.surfaces if k.startswith(kind)):
                out.extend(_key_entries(key, self.surfaces[key]))
        return out

    def vertex_record(self, key: str) -> _Vertex:
        """The search-side vertex of a key (labels of tags and names follow their spellings)."""
        kind, _, rest = key.partition(":")
        if kind == "note":
            return _Vertex(key, self.titles[key], "note", rest)
        spelled = self.surfaces.get(key)
        return _Vertex(key, _label(key, spelled) if spelled else rest, kind, None)

    def settle_all(self) -> None:
        """Lay out every summed edge in the lists anew (a full build)."""
        self.units = {edge: units for edge, units in self.units.items() if any(units)}
        self.ends = list(self.units)
        self.position = {edge: at for at, edge in enumerate(self.ends)}
        w0, w1, w2, w3 = _UNIT_WEIGHT
        sums = self.units.values()
        self.weights = [u[0] * w0 + u[1] * w1 + u[2] * w2 + u[3] * w3 for u in sums]
        self.relations = [0 if u[0] else 1 if u[1] else 2 if u[2] else 3 for u in sums]

    def settle(self, edges: Iterable[tuple[int, int]]) -> None:
        """Bring the edge lists in line with the sums of some edges (empty ones are dropped)."""
        ends, weights, relations, position = self.ends, self.weights, self.relations, self.position
        for edge in edges:
            units = self.units.get(edge)
            at = position.get(edge)
            if units is None or not any(units):
                self.units.pop(edge, None)
                if at is not None:
                    del position[edge]
                    last = len(ends) - 1
                    if at != last:  # the last edge fills the gap
                        ends[at], weights[at], relations[at] = ends[last], weights[last], relations[last]
                        position[ends[at]] = at
                    ends.pop()
                    weights.pop()
                    relations.pop()
                continue
            weight = (
                units[0] * _UNIT_WEIGHT[0]
                + units[1] * _UNIT_WEIGHT[1]
                + units[2] * _UNIT_WEIGHT[2]
                + units[3] * _UNIT_WEIGHT[3]
            )
            relation = next(rel for rel, count in enumerate(units) if count)
            if at is None:
                position[edge] = len(ends)
                ends.append(edge)
                weights.append(weight)
                relations.append(relation)
            else:
                weights[at], relations[at] = weight, relation

    def graph(self) -> Any:
        """An igraph of the summed edges (their attributes stay in the lists)."""
        import igraph

        return igraph.Graph(n=len(self.keys), edges=self.ends, directed=False)


# A saved graph is pickled data: these are the only classes it may name.
_SAVED_FORMAT = 9
_SAVED_CLASSES = frozenset(
    {
        ("engine.channels.graph", "_Build"),
        ("engine.channels.graph", "_Part"),
        ("engine.channels.graph", "_Vertex"),
        ("engine.entities", "EntityDictionary"),
    }
)


class _SavedGraphUnpickler(pickle.Unpickler):
    """Loads the graph's own classes and plain containers, never anything that runs code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAVED_CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} does not belong in a saved graph")


class GraphChannel:
    """Notes ranked by weighted, hop-decayed proximity to the entities a query names."""

    name: ChannelName = "graph"

    def __init__(self, config: GraphConfig, path: Path | None = None) -> None:
        self._config = config
        self._path = path
        self._generation = -1  # the catalog generation the graph reflects
        self._saved_generation = -1  # the generation written to `path`
        self._rebuilt = False  # whether the last change was a rebuild (worth saving at once)
        self.origin = "empty"  # "saved" (loaded from `path`) or "built" (from the catalog)
        self._lock = threading.RLock()
        self._build_lock = threading.Lock()
        self._build: _Build | None = None
        self._graph: Any = None
        self._vertices: list[_Vertex] = []
        self._index: dict[str, int] = {}
        self._dictionary = EntityDictionary([])
        self._link_dirs: set[tuple[int, int]] = set()
        self._contexts: dict[tuple[int, int], _Context] = {}
        self._people: frozenset[str] = frozenset()
        self._linked: frozenset[int] = frozenset()
        self._note_count = 0
        self._neighbor_cache: _NeighborCache | None = None

    # -- building -------------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> None:
        """Build every note's part from catalog rows in bulk and sum them into the graph."""
        with self._build_lock:
            self._rebuild(catalog)

    def _rebuild(self, catalog: Catalog) -> None:
        """Build from scratch (the caller holds the build lock)."""
        infos = catalog.note_infos()
        build = _Build(infos)
        notes = {info.path for info in infos}
        rows = _note_rows(catalog, None)
        for info in infos:
            note_rows = rows.get(info.path) or _NoteRows()
            part = _note_part(
                info,
                note_rows,
                functools.partial(catalog.note_body, info.path),
                build.name_to_note, notes, self._config.min_name_len, self._config.title_words
            )
            build.parts[info.path] = part
            build.apply(info.path, part, 1, set(), set())
        for path, part in build.parts.items():
            for other in part.contexts:
                build.set_context(f"note:{path}", other)
        build.settle_all()
        vertices = [build.vertex_record(key) for key in build.keys]
        index = {key: i for i, key in enumerate(build.keys) if key.startswith("note:") or build.surfaces.get(key)}
        self._build = build
        self._publish(build.graph(), vertices, index, EntityDictionary(build.entries()))
        self._generation = catalog.generation
        self._rebuilt = True
        self.origin = "built"

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Subtract the changed notes' old parts and add their new ones; rebuild when names move.

        A note added, removed or renamed (title or aliases) changes which note every
        mention in the vault names, and many changed notes are cheaper in bulk.
        """
        with self._build_lock:
            build = self._build
            if build is not None and not changed and not removed:
                self._generation = catalog.generation
                return
            if build is None or removed or len(changed) > max(1.0, _INCREMENTAL_SHARE * len(build.parts)):
                self._rebuild(catalog)
                return
            infos = [catalog.note_info(path) for path in dict.fromkeys(changed)]
            known = [info for info in infos if info is not None and info.path in build.parts]
            if len(known) < len(infos) or any(
                (build.parts[info.path].title, build.parts[info.path].aliases) != (info.title, info.aliases)
                for info in known
            ):
                self._rebuild(catalog)
                return
            self._patch(catalog, build, known)
            self._generation = catalog.generation
            self._rebuilt = False

    def _patch(self, catalog: Catalog, build: _Build, infos: list[NoteInfo]) -> None:
        """Replace some notes' parts in the sums and publish the patched graph."""
        rows = _note_rows(catalog, [info.path for info in infos])
        edges: set[tuple[int, int]] = set()
        names: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        spellings_before: dict[str, frozenset[str]] = {}
        links_changed = people_changed = False
        for info in infos:
            note_rows = rows.get(info.path) or _NoteRows()
            part = _note_part(
                info,
                note_rows,
                functools.partial(catalog.note_body, info.path),
                build.name_to_note,
                build.parts,
                self._config.min_name_len,
                self._config.title_words,
            )
            old = build.parts[info.path]
            for key, _surface in (*old.surfaces, *part.surfaces):
                spellings_before.setdefault(key, frozenset(build.surfaces.get(key, ())))
            build.apply(info.path, old, -1, edges, names)
            build.parts[info.path] = part
            build.apply(info.path, part, 1, edges, names)
            me = f"note:{info.path}"
            pairs.update((me, other) for other in (*old.contexts, *part.contexts))
            links_changed = links_changed or old.link_dirs != part.link_dirs
            people_changed = people_changed or old.person != part.person
        # Searches hold the published lists and contexts: change copies.
        build.ends, build.weights, build.relations = list(build.ends), list(build.weights), list(build.relations)
        build.settle(edges)
        if pairs:
            build.contexts = dict(build.contexts)
            for a, b in pairs:
                build.set_context(a, b)
        with self._lock:
            vertices, index, dictionary = self._vertices, self._index, self._dictionary
            cache = self._neighbor_cache
        vertices = list(vertices)
        vertices.extend(build.vertex_record(key) for key in build.keys[len(vertices) :])
        index = dict(index)
        for key in names:
            vertices[build.ids[key]] = build.vertex_record(key)
            if build.surfaces.get(key):
                index[key] = build.ids[key]
            else:
                index.pop(key, None)
                build.surfaces.pop(key, None)
        removed: list[tuple[str, str]] = []
        added: list[tuple[str, str]] = []
        for key, before in sorted(spellings_before.items()):
            after = frozenset(build.surfaces.get(key, ()))
            if after != before:
                removed.extend(_key_entries(key, before))
                added.extend(_key_entries(key, after))
        if removed or added:
            dictionary = dictionary.updated(added, removed)  # a new name: no full rebuild
        touched = {v for edge in edges for v in edge}
        kept = {} if cache is None else {v: top for v, top in tuple(cache.tops.items()) if v not in touched}
        self._publish(
            build.graph(), vertices, index, dictionary, links=links_changed, people=people_changed, tops=kept
        )

    def _publish(
        self,
        graph: Any,
        vertices: list[_Vertex],
        index: dict[str, int],
        dictionary: EntityDictionary,
        *,
        links: bool = True,
        people: bool = True,
        tops: dict[int, list[tuple[int, float, int]]] | None = None,
    ) -> None:
        """Swap in a built graph; the link and people sums are copied only if they changed."""
        build = self._build
        assert build is not None
        cache = _NeighborCache(graph, vertices, build.ends, build.weights, build.relations)
        cache.tops = tops or {}
        link_dirs = set(build.link_dirs) if links else self._link_dirs
        linked = frozenset(v for edge in link_dirs for v in edge) if links else self._linked
        with self._lock:
            self._graph = graph
            self._neighbor_cache = cache
            self._vertices = vertices
            self._index = index
            self._dictionary = dictionary
            self._link_dirs = link_dirs
            self._contexts = build.contexts
            self._linked = linked
            if people:
                self._people = frozenset(build.people)
            self._note_count = len(build.parts)

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
            cache = self._neighbor_cache
        if graph is None or cache is None or query.is_empty:
            return ChannelAnswer(hits=())
        matches = dictionary.recognize(query.text)
        seeds: list[tuple[int, float, int]] = []
        recognized: list[str] = []
        for match in matches:
            ids = [index[k] for k in match.entity_ids if k in index]
            if not ids:
                continue
            recognized.append(match.surface)
            share = 1.0 / len(ids)  # an ambiguous name spreads its weight
            # ... and walks one hop: its second hop is many vertices each worth little.
            hops = self._config.max_hops if len(ids) <= _AMBIGUOUS_NAME else 1
            seeds.extend((v, share, hops) for v in ids)
        if not seeds:
            return ChannelAnswer(hits=())
        # "Who attended X?" asks for X's people, not for X: the named notes are not answers.
        # Only where the named note's relations are written as links; co-occurrence is too
        # loose to say the note itself is not what was asked for.
        answers_are_neighbors = _asks_for_related(query.text, matches) and any(
            v in linked for v, _, _ in seeds
        )
        # The query's other words name the relation ("invested", "advises"); links written
        # in a sentence that says so are the ones asked about. A word still being typed
        # names nothing yet.
        residual = _residual_words(query.text, matches)
        if query.prefix and residual and residual[-1] == query.prefix:
            residual.pop()
        relation_keys = frozenset(_context_keys(residual))
        totals: dict[int, float] = defaultdict(float)
        best: dict[int, _Reach] = {}
        # A who-question's answers are people; a walk that passes through anything else (the
        # company a meeting links to) reaches that thing's people, and steps back with it.
        by_people = answers_are_neighbors and bool(people)
        for seed, seed_weight, hops in seeds:
            for v, reach in self._expand(cache, seed, contexts, relation_keys, hops).items():
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
        note_hits = [
            (v, score) for v, score in totals.items() if vertices[v].kind == "note" and score > 0
        ]
        if by_people:
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
        return ChannelAnswer(
            hits=tuple(hits),
            recognized=tuple(recognized),
            expanded=expanded,
            answer_notes=people if answers_are_neighbors else frozenset(),
        )

    def _expand(
        self,
        cache: _NeighborCache,
        seed: int,
        contexts: dict[tuple[int, int], _Context] | None = None,
        relation_keys: frozenset[str] = frozenset(),
        max_hops: int | None = None,
    ) -> dict[int, _Reach]:
        """Best reach of every vertex within max_hops of `seed`; edges whose link context names the relation count more."""
        config = self._config
        hops = config.max_hops if max_hops is None else max_hops
        memo = (seed, relation_keys, hops)
        known_reach = cache.reaches.get(memo)
        if known_reach is not None:
            return known_reach
        patterns = tuple(f" {key} " for key in sorted(relation_keys))
        reached: dict[int, _Reach] = {seed: _Reach(1.0, 0, (seed,), LINKS)}
        frontier = [seed]
        for hop in range(1, hops + 1):
            next_frontier: list[int] = []
            for u in frontier:
                base = reached[u]
                for v, rel_weight, relation in self._top_neighbors(cache, u):
                    score = base.score * config.hop_decay * rel_weight
                    if relation_keys and contexts:
                        context = contexts.get((u, v) if u < v else (v, u))
                        if context and _context_has(context, patterns):
                            score *= 1.0 + config.relation_boost
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

    def _top_neighbors(self, cache: _NeighborCache, vertex: int) -> list[tuple[int, float, int]]:
        """The strongest neighbors with weights relative to the strongest (hub control).

        Memoised per graph: typing re-expands the same hubs on every keystroke.
        """
        found = cache.tops.get(vertex)
        if found is not None:
            return found
        edges = cache.graph.incident(vertex)
        if not edges:
            cache.tops[vertex] = []
            return []
        weights, relations, ends, vertices = cache.weights, cache.relations, cache.ends, cache.vertices
        # Equal weights are ordered by the neighbor's key, so the order does not depend on
        # how the graph was numbered (a patched graph numbers differently from a fresh one).
        weighted = sorted(
            (-weights[e], vertices[ends[e][1] if ends[e][0] == vertex else ends[e][0]].key, e) for e in edges
        )[: self._config.max_neighbors]
        top = -weighted[0][0]
        # A hub's neighbors each count for less: scale by 1/sqrt(degree).
        hub = 1.0 / max(1.0, (len(edges) / self._config.max_neighbors) ** 0.5)
        out = []
        for weight, _key, e in weighted:
            source, target = ends[e]
            other = target if source == vertex else source
            out.append((other, hub * -weight / top, int(relations[e])))
        cache.tops[vertex] = out
        return out

    def neighbors(self, path: str, limit: int = 20) -> list[Neighbor]:
        """A note's strongest neighbors in the graph."""
        with self._lock:
            cache, index = self._neighbor_cache, self._index
        v = index.get(f"note:{path}")
        if cache is None or v is None:
            return []
        out = []
        for other, weight, _rel in self._top_neighbors(cache, v)[:limit]:
            vert = cache.vertices[other]
            out.append(Neighbor(name=vert.label, kind=vert.kind, weight=round(weight, 4), path=vert.path))
        return out

    # -- lifecycle ------------------------------------------------------------------
    def entity_count(self) -> int:
        """Vertices in the graph (a name no note mentions any more is not counted)."""
        with self._lock:
            return len(self._index)

    def open(self, catalog: Catalog) -> str:
        """Load the saved graph if it reflects the catalog as it is now, else build it.

        Returns:
            Why a saved graph could not be used, when it was damaged ("" otherwise:
            a missing or out-of-date file is simply rebuilt).
        """
        with self._build_lock:
            problem = ""
            try:
                if self._load(catalog.generation):
                    return ""
            except Exception as exc:  # a damaged pickle raises assorted errors
                problem = f"saved graph unreadable ({type(exc).__name__}: {exc}); rebuilt from the catalog"
            self._rebuild(catalog)
            return problem

    def _load(self, generation: int) -> bool:
        """Publish the saved graph if its stamp matches; False when absent or stale."""
        if self._path is None or not self._path.is_file():
            return False
        with self._path.open("rb") as f:
            if _SavedGraphUnpickler(f).load() != self._stamp(generation):
                return False
            collecting = gc.isenabled()
            gc.disable()  # millions of small containers: the collector would triple the load time
            try:
                saved = _SavedGraphUnpickler(f).load()
            finally:
                if collecting:
                    gc.enable()
        build, vertices, index, dictionary = saved
        if not (isinstance(build, _Build) and isinstance(dictionary, EntityDictionary)):
            raise pickle.UnpicklingError("saved graph has an unexpected shape")
        self._build = build
        self._publish(build.graph(), vertices, index, dictionary)
        self._generation = self._saved_generation = generation
        self._rebuilt = False
        self.origin = "saved"
        return True

    def _stamp(self, generation: int) -> dict[str, object]:
        return {"format": _SAVED_FORMAT, "generation": generation, "config": repr(self._config)}

    def save(self, *, only_rebuilt: bool = False) -> None:
        """Write the graph next to the index (atomically) if it changed since it was written.

        Args:
            only_rebuilt: write only if the last change was a full rebuild; an
                incremental update is cheap to redo and is saved at close.
        """
        with self._build_lock:
            build = self._build
            if self._path is None or build is None or self._generation == self._saved_generation:
                return
            if only_rebuilt and not self._rebuilt:
                return
            with self._lock:
                payload = (build, self._vertices, self._index, self._dictionary)
            temporary = self._path.with_name(f"{self._path.name}.{os.getpid()}.tmp")
            try:
                with temporary.open("wb") as f:
                    pickle.dump(self._stamp(self._generation), f, protocol=pickle.HIGHEST_PROTOCOL)
                    pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(temporary, self._path)
            finally:
                temporary.unlink(missing_ok=True)
            self._saved_generation = self._generation

    def count(self) -> int:
        """Notes in the graph."""
        with self._lock:
            return self._note_count

    def close(self) -> None:
        """Drop the graph."""
        with self._lock:
            self._graph = None
            self._neighbor_cache = None
            self._build = None
