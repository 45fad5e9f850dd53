"""Building the entity graph: each note's contribution (its part), and their sum in vertices and edges.

A note adds edges to the notes it links to and the names and tags it mentions, plus
co-occurrence edges between what one chunk names; each linked or named note keeps the
word keys of the sentence that relates them. An edit subtracts a note's old part and
adds its new one.
"""

from __future__ import annotations

import bisect
import io
import pickle
import re
import sys
import zlib
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import pairwise
from typing import Any

from engine.catalog import Catalog
from engine.channels.graph.relations import Named, SentenceRelations, property_relation
from engine.channels.graph.sums import EdgeLists, EdgeSums, link_code, pair_code
from engine.channels.graph.texts import PairTexts
from engine.entities import OPENING, WRITTEN, displayed_text, extract_names, is_title_word
from engine.folding import entity_key
from engine.kinds import is_person
from engine.lexicon import Lexicon
from engine.query.words import QUERY_WORD, relation_keys
from engine.records import NoteInfo

# Relation codes, strongest evidence first; an edge keeps its strongest relation.
LINKS, MENTIONS, TAGGED, COOCCURS = 0, 1, 2, 3
RELATION_NAMES = {LINKS: "links", MENTIONS: "mentions", TAGGED: "tagged", COOCCURS: "co-occurs"}
_RELATION_WEIGHT = {LINKS: 3.0, MENTIONS: 1.0, TAGGED: 0.5, COOCCURS: 1.0}
_MAX_COOCCURRING = 8

_SENTENCE_END = re.compile(r"(?<=[.!?;|])\s+")
# The most characters of one sentence whose words relate a note to those it names.
_CONTEXT_CHARS = 1000
# A sentence of a note's body: (offset of its line, its number in the line or -1 for the
# whole line, offset of the part read when it is longer than _CONTEXT_CHARS).
_SentenceId = tuple[int, int, int]

# A pair's named relation: (its subject vertex, relation, named by a property, the other
# relations named between the two as (subject vertex, relation, by a property)). The one said most is
# shown; a question about any of them finds the pair ("advises" on one side, "invested in"
# on the other: both are true).
NamedEdge = tuple[int, str, bool, tuple[tuple[int, str, bool], ...]]

# A context is the word keys of the sentences two notes are related in, as one string
# " key key key " (sorted): a vault has a hundred thousand such pairs, and a string is a
# fifth of the memory of a set and loads from the saved graph several times faster.
Context = str


def _context(keys: Iterable[str]) -> Context:
    return f" {' '.join(sorted(keys))} " if keys else ""


def context_has(context: Context, patterns: Sequence[str]) -> bool:
    """Whether a context holds any of the padded keys " key "."""
    return any(pattern in context for pattern in patterns)


class Sentences:
    """The sentences of one note's body that its links and mentions are written in.

    Each line is split into sentences once and each sentence's word keys are read once:
    a note can hold thousands of links on one line, and splitting and reading the line
    again for every one of them would be quadratic in the line's length.
    """

    def __init__(self, body: str, offset: int, lexicon: Lexicon, names: Collection[str] = ()) -> None:
        """`names` are the note's own title and aliases: a sentence whose subject or object
        they are is about the note (see relations.py)."""
        self._body = body
        self._offset = offset
        self._lexicon = lexicon
        self._names = tuple(names)
        self._line_starts: list[int] | None = None
        self._split: dict[int, tuple[str, list[int], list[str]]] = {}
        self._found: dict[tuple[int, str], int] = {}
        self._keys: dict[_SentenceId, frozenset[str]] = {}
        self._relations: dict[_SentenceId, SentenceRelations] = {}

    def of_link(self, line: int, written: str) -> tuple[_SentenceId, frozenset[str], Named | None]:
        """(sentence id, word keys, named relation) of the sentence a link on file line `line` is written in.

        The sentence is the one holding the first occurrence of the written target in
        that line (the line's first sentence if it is not there); no keys if the line
        is outside the body.
        """
        starts = self._starts()
        index = line - self._offset - 1
        if not 0 <= index < len(starts):
            return (-1, -1, 0), frozenset(), None
        line_start = starts[index]
        text = self._line(line_start)[0]
        key = (line_start, written)
        at = self._found.get(key)
        if at is None:
            at = self._found[key] = max(0, text.find(written))
        return self._around(line_start, at)

    def text_of_link(self, line: int, written: str) -> str:
        """The sentence (as written, at most _CONTEXT_CHARS around the link) a link on file line `line` is in."""
        starts = self._starts()
        index = line - self._offset - 1
        if not 0 <= index < len(starts):
            return ""
        text, begins, pieces = self._line(starts[index])
        at = max(0, text.find(written))
        piece = bisect.bisect_right(begins, at) - 1
        sentence, begin = (pieces[piece], begins[piece]) if piece >= 0 else (text, 0)
        if len(sentence) > _CONTEXT_CHARS:
            low = max(0, min(at - begin - _CONTEXT_CHARS // 2, len(sentence) - _CONTEXT_CHARS))
            sentence = _whole_words(sentence, low, low + _CONTEXT_CHARS)
        return sentence.strip()

    def text_of_mention(self, surface: str) -> str:
        """The sentence a plain-text mention is first written in (as `text_of_link`)."""
        at = self._body.find(surface)
        if at < 0:
            return ""
        line_start = self._body.rfind("\n", 0, at) + 1
        return self.text_of_link(self._body.count("\n", 0, line_start) + self._offset + 1, surface)

    def of_mention(self, surface: str) -> tuple[_SentenceId, frozenset[str], Named | None]:
        """(sentence id, word keys, named relation) of the sentence a plain-text mention is first written in."""
        at = self._body.find(surface)
        if at < 0:
            return (-1, -1, 0), frozenset(), None
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

    def _around(self, line_start: int, at: int) -> tuple[_SentenceId, frozenset[str], Named | None]:
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
        window = sentence[low : low + _CONTEXT_CHARS] if len(sentence) > _CONTEXT_CHARS else sentence
        if keys is None:
            words_of = _whole_words(sentence, low, low + _CONTEXT_CHARS) if len(sentence) > _CONTEXT_CHARS else sentence
            words = QUERY_WORD.findall(displayed_text(words_of))
            keys = self._keys[sentence_id] = frozenset(relation_keys([w.casefold() for w in words], self._lexicon))
        relations = self._relations.get(sentence_id)
        if relations is None:
            relations = self._relations[sentence_id] = SentenceRelations(window, self._lexicon, self._names)
        return sentence_id, keys, relations.at(at - begin - low)


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


@dataclass(frozen=True, slots=True)
class Vertex:
    key: str
    label: str
    kind: str
    path: str | None

    def __reduce__(self) -> tuple[type[Vertex], tuple[str, str, str, str | None]]:
        # A slotted dataclass pickles its state by field name, and reads it back through
        # `dataclasses.fields` for every vertex: twice the time of a call with the four values.
        return Vertex, (self.key, self.label, self.kind, self.path)


# Weight of one occurrence per relation code (a co-occurrence counts half).
_UNIT_WEIGHT = (_RELATION_WEIGHT[LINKS], _RELATION_WEIGHT[MENTIONS], _RELATION_WEIGHT[TAGGED], 0.5 * _RELATION_WEIGHT[COOCCURS])
# An update touching more than this share of the notes rebuilds from scratch.
INCREMENTAL_SHARE = 0.05


@dataclass
class Part:
    """One note's contribution to the graph, in vertex keys (so independent of vertex numbering)."""

    title: str
    aliases: tuple[str, ...]
    person: bool
    edges: dict[tuple[str, str, int], int]  # (key, key, relation code) with the keys in order → occurrences
    surfaces: dict[tuple[str, str], int]  # (tag or name vertex key, surface as written) → occurrences
    link_dirs: frozenset[str]  # keys of the notes this note links to
    contexts: dict[str, Context]  # linked or named note key → word keys of the sentences it is in
    # Linked or named note key → {(relation, the other note is its subject, from a property): occurrences}.
    typed: dict[str, dict[tuple[str, bool, bool], int]] = field(default_factory=dict)
    # Chunk ordinal → the entity keys it names or links (in written order): the chunk → entity edges.
    chunk_entities: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # Name key → how this note writes it (_WRITTEN_MARK, _OPENING_MARK): what it adds to the
    # vault's evidence that the name is one (`Build.known`).
    marks: dict[str, int] = field(default_factory=dict)


_PART_FIELDS = tuple(f.name for f in fields(Part))


class _PlainUnpickler(pickle.Unpickler):
    """Loads plain containers only: a packed part names no class, so none may be loaded."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} does not belong in a note's part")


class Parts(Mapping[str, Part]):
    """Every note's part by path, each kept pickled until read.

    A part is read only where a note is edited or a chunk's entities are asked for, and
    ten thousand parts as objects take several times the memory of their pickles (and
    several times as long to load from the saved graph). A part set since the last
    `pack` is held as it is: a build reads every part many times before it packs them.
    """

    def __init__(self) -> None:
        self._parts: dict[str, Part | bytes] = {}

    def __getitem__(self, path: str) -> Part:
        held = self._parts[path]
        if isinstance(held, Part):
            return held
        # A pickle starts with its protocol byte; anything else is a compressed one (a
        # graph saved before parts were compressed holds plain pickles, read as they are).
        data = held if held[:1] == b"\x80" else zlib.decompress(held)
        return Part(*_PlainUnpickler(io.BytesIO(data)).load())

    def __setitem__(self, path: str, part: Part) -> None:
        self._parts[path] = part

    def __iter__(self) -> Iterator[str]:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    def __contains__(self, path: object) -> bool:
        return path in self._parts

    def pack(self) -> None:
        """Pickle the parts held as objects (as a tuple of plain values: no class to load),
        compressed: a third of the memory and of the saved graph's notes' section (100 →
        36 MB at 50k notes), for about 25 µs a part to pack and 10 µs to read."""
        for path, held in self._parts.items():
            if isinstance(held, Part):
                values = tuple(getattr(held, name) for name in _PART_FIELDS)
                self._parts[path] = zlib.compress(pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL), 1)
            elif held[:1] == b"\x80":  # read from an older save: compressed from its next save on
                self._parts[path] = zlib.compress(held, 1)


@dataclass
class NoteRows:
    """The catalog rows of one note the graph is built from."""

    mentions: list[tuple[int, str, int]] = field(default_factory=list)  # chunk ordinal, surface, evidence
    chunks: list[tuple[int, int, int]] = field(default_factory=list)
    links: list[tuple[str, int, str, str | None]] = field(default_factory=list)  # target, line, written, property


_QUALIFIER = re.compile(r"^(?P<name>.*\S)\s+\([^()]+\)$")


def without_qualifier(title: str) -> str:
    """A title's name without a trailing parenthesised qualifier ("" if it has none)."""
    found = _QUALIFIER.match(title.strip())
    return found.group("name") if found else ""


def note_rows(catalog: Catalog, paths: Collection[str] | None) -> dict[str, NoteRows]:
    """Mentions, chunk line ranges and resolved links of all notes (or some), in written order."""
    rows: defaultdict[str, NoteRows] = defaultdict(NoteRows)
    for path, ordinal, surface, evidence in catalog.mentions_of(paths):
        rows[path].mentions.append((ordinal, surface, evidence))
    for path, ordinal, start, end in catalog.chunk_lines_of(paths):
        rows[path].chunks.append((start, end, ordinal))
    for link in catalog.resolved_links_of(paths):
        rows[link.source].links.append((link.target, link.line, link.written, link.property))
    return rows


# How a note writes a name (Part.marks): inside running text, at a sentence's start.
_WRITTEN_MARK, _OPENING_MARK = 1, 2


def name_marks(mentions: Iterable[tuple[int, str, int]], min_name_len: int) -> dict[str, int]:
    """Name key → how a note's mentions write it (_WRITTEN_MARK | _OPENING_MARK); titled ones add nothing."""
    marks: dict[str, int] = {}
    for _ordinal, surface, evidence in mentions:
        mark = _WRITTEN_MARK if evidence == WRITTEN else _OPENING_MARK if evidence == OPENING else 0
        if mark:
            normal = entity_key(surface)
            if len(normal) >= min_name_len:
                marks[normal] = marks.get(normal, 0) | mark
    return marks


def _named(
    mentions: Iterable[tuple[int, str, int]],
    name_to_note: Mapping[str, str],
    known: Callable[[str], bool],
    min_name_len: int,
) -> Iterator[tuple[int, str, str]]:
    """(chunk ordinal, surface, key) of what a note's mentions name: a mention whole where it
    is a note's title or alias, written inside running text, or a name the vault knows (see
    `Build.known`); else the known names inside it ("## Adjust Obsidian Sync settings" names
    Obsidian Sync, "VP of Engineering Marcus Webb" Marcus Webb), longest first."""
    for ordinal, surface, evidence in mentions:
        normal = entity_key(surface)
        if len(normal) < min_name_len:
            continue
        if evidence == WRITTEN or normal in name_to_note or is_title_word(surface) or known(normal):
            yield ordinal, surface, normal
            continue
        words = surface.split()
        free = [True] * len(words)
        for width in range(len(words) - 1, 1, -1):
            for at in range(len(words) - width + 1):
                if not all(free[at : at + width]):
                    continue
                piece = " ".join(words[at : at + width])
                key = entity_key(piece)
                if len(key) >= min_name_len and (key in name_to_note or known(key)):
                    free[at : at + width] = [False] * width
                    yield ordinal, piece, key


def note_part(
    info: NoteInfo,
    rows: NoteRows,
    load_body: Callable[[], tuple[str, int] | None],
    name_to_note: dict[str, str],
    notes: Collection[str],
    min_name_len: int,
    title_words: bool,
    lexicon: Lexicon,
    known: Callable[[str], bool] = lambda _key: True,
    marks: dict[str, int] | None = None,
) -> Part:
    """What one note adds: tag, mention, link and co-occurrence edges, names, link contexts.

    `load_body` reads the note's text (and its line offset); it is called at most once,
    and only for a note that links to or names another note: the sentences say how.
    `known` says whether the vault takes a name key for a name (`Build.known`); `marks`
    are the note's own `name_marks` (read from its rows when not given).
    """
    me = sys.intern(f"note:{info.path}")  # one object per key: less memory, a smaller saved graph
    edges: dict[tuple[str, str, int], int] = {}
    surfaces: dict[tuple[str, str], int] = {}
    loaded: list[Sentences | None] = []

    def sentences() -> Sentences | None:
        if not loaded:
            body = load_body()
            loaded.append(None if body is None else Sentences(body[0], body[1], lexicon, (info.title, *info.aliases)))
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
    typed: defaultdict[str, dict[tuple[str, bool, bool], int]] = defaultdict(dict)
    contexted: set[str] = set()
    contexted_sentences: set[tuple[str, _SentenceId]] = set()

    def add_typed(key: str, named: Named, explicit: bool) -> None:
        counts = typed[key]
        entry = (named[0], named[1], explicit)
        counts[entry] = counts.get(entry, 0) + 1

    def add_context(key: str, sentence_id: _SentenceId, keys: frozenset[str], named: Named | None) -> None:
        # Many links to one note in one sentence add that sentence's keys (and relation) once.
        if (key, sentence_id) in contexted_sentences or sentence_id[0] < 0:
            return
        contexted_sentences.add((key, sentence_id))
        if keys:
            contexts[key].update(keys)
        if named is not None:
            add_typed(key, named, False)

    for ordinal, surface, normal in _named(rows.mentions, name_to_note, known, min_name_len):
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
    for target, line, written, prop in rows.links:
        if target == info.path or target not in notes:
            continue
        other = sys.intern(f"note:{target}")
        connect(me, other, LINKS)
        link_dirs.add(other)
        linked_from = chunk_of(line)
        if linked_from is not None:
            chunk_entities[linked_from].append(other)
        if prop:
            # `company: "[[Acme]]"`, `works_at:: [[Acme]]`: the note says how, in so many words.
            add_typed(other, property_relation(prop, lexicon), True)
        if found is not None:
            add_context(other, *found.of_link(line, written))
    for members in chunk_entities.values():
        unique = list(dict.fromkeys(members))[:_MAX_COOCCURRING]
        for i, a in enumerate(unique):
            for b in unique[i + 1 :]:
                connect(a, b, COOCCURS)
    return Part(
        title=info.title,
        aliases=info.aliases,
        person=is_person(info.path, info.tags, lexicon),
        edges=edges,
        surfaces=surfaces,
        link_dirs=frozenset(link_dirs),
        contexts={k: _context(v) for k, v in contexts.items()},
        typed=dict(typed),
        chunk_entities={ordinal: tuple(dict.fromkeys(members)) for ordinal, members in chunk_entities.items()},
        marks=name_marks(rows.mentions, min_name_len) if marks is None else marks,
    )


def _label(key: str, surfaces: Collection[str]) -> str:
    """A tag's or name's label: its first spelling in sort order (any order-free choice would do)."""
    first = min(surfaces)
    return f"#{first}" if key.startswith("tag:") else first


def key_entries(key: str, spelled: Collection[str]) -> list[tuple[str, str]]:
    """The dictionary entries of a tag or name key with these spellings (as `Build.entries`)."""
    if not spelled:
        return []
    if key.startswith("tag:"):
        return [(surface, key) for surface in sorted(spelled)]
    return [(_label(key, spelled), key)]


def _read_in_text(title: str, lexicon: Lexicon) -> str:
    """The name key text gives a title when the name finder drops its leading stop words
    ("The Hukilau Song" → "hukilau song"); "" when it reads the title whole or otherwise."""
    names = extract_names(title, lexicon)
    if len(names) != 1:
        return ""
    whole, name = entity_key(title), entity_key(names[0])
    head = whole.removesuffix(name)
    if not name or head == whole or not head.strip():
        return ""
    return name if all(word in lexicon.stop_words for word in head.split()) else ""


class Build:
    """Every note's part and their sum, numbered into vertices: the writer's side of the channel."""

    def __init__(self, infos: Sequence[NoteInfo], lexicon: Lexicon | None = None) -> None:
        self.parts = Parts()
        self.keys: list[str] = []
        self.ids: dict[str, int] = {}
        self.titles: dict[str, str] = {}
        self.name_to_note: dict[str, str] = {}
        self.note_entries: list[tuple[str, str]] = []
        short: list[tuple[str, str]] = []
        read_as: list[tuple[str, str]] = []
        for info in infos:
            key = sys.intern(f"note:{info.path}")
            self.vertex(key)
            self.titles[key] = info.title
            for surface in (info.title, *info.aliases):
                self.note_entries.append((surface, key))
                self.name_to_note.setdefault(entity_key(surface), key)
                bare = without_qualifier(surface)
                if bare:
                    short.append((bare, key))
                if lexicon is not None:
                    read_as.append((surface, key))
        # Text names a note as the name finder reads its title there: "The Hukilau Song" in a
        # sentence is the name "Hukilau Song" (a leading stop word is no part of a name).
        # A title that is a note's own exact title elsewhere keeps meaning that note.
        for surface, key in read_as:
            read = _read_in_text(surface, lexicon) if lexicon is not None else ""
            if read:
                self.name_to_note.setdefault(read, key)
        # "Mercury (planet)" is asked about as "Mercury": a query naming the bare name names
        # the note too (beside whatever else is called that). Text that writes "Mercury" is
        # not taken to mean the planet: a vault's other "Mercury" mentions keep their own vertex.
        for bare, key in short:
            self.note_entries.append((bare, key))
        # Each summed edge's occurrences per relation code and its place in the lists below.
        self.sums = EdgeSums()
        self.surfaces: dict[str, dict[str, int]] = {}
        # Pairs of vertices are kept as one int each (`pair_code`, `link_code`): a tuple of
        # two ints is three objects, and there are a million pairs at 50,000 notes.
        self.link_dirs: set[int] = set()  # link_code(linking vertex, linked vertex)
        self.contexts = PairTexts()  # pair_code → context
        # Linked pair → (its subject vertex, relation, named by a property), where the vault names one.
        self.named: dict[int, NamedEdge] = {}
        # Name key → in how many notes it is written inside running text, and at a sentence's start.
        self.written: dict[str, int] = {}
        self.opening: dict[str, int] = {}
        self.people: set[str] = set()
        # The summed edges in igraph's edge numbering.
        self.lists = EdgeLists()

    def known(self, key: str) -> bool:
        """Whether the vault takes a capitalised phrase for a name: some note writes it inside
        running text, where a capital is chosen, or two notes open a sentence with it. Written
        only in headings, titles, quotations or labels, it names nothing of its own."""
        return self.written.get(key, 0) > 0 or self.opening.get(key, 0) > 1

    def count_names(self, changes: Iterable[tuple[Mapping[str, int], Mapping[str, int]]]) -> set[str]:
        """Replace notes' marks (old, new) in the counts behind `known`; the keys it changed for."""
        pairs = list(changes)
        keys = {key for old, new in pairs for key in (*old, *new)}
        before = {key: self.known(key) for key in keys}
        for old, new in pairs:
            for marks, sign in ((old, -1), (new, 1)):
                for key, mark in marks.items():
                    for bit, counts in ((_WRITTEN_MARK, self.written), (_OPENING_MARK, self.opening)):
                        if mark & bit:
                            left = counts.get(key, 0) + sign
                            if left > 0:
                                counts[key] = left
                            else:
                                counts.pop(key, None)
        return {key for key in keys if self.known(key) != before[key]}

    def vertex(self, key: str) -> int:
        """The number of a vertex key, allocating one for a new key (numbers are never reused)."""
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.keys)
            self.keys.append(key)
        return found

    def apply(self, path: str, part: Part, sign: int, edges: set[tuple[int, int]], names: set[str]) -> None:
        """Add (sign 1) or subtract (sign -1) a note's part; collect the edges and names it touches."""
        ids, vertex, sum_of = self.ids, self.vertex, self.sums.sum_of
        for (a, b, rel), count in part.edges.items():
            ia = ids.get(a)
            if ia is None:
                ia = vertex(a)
            ib = ids.get(b)
            if ib is None:
                ib = vertex(b)
            edge = (ia, ib) if ia < ib else (ib, ia)
            sum_of(edge)[rel] += sign * count
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
                self.link_dirs.add(link_code(me, self.vertex(other)))
            else:
                self.link_dirs.discard(link_code(me, self.vertex(other)))
        if part.person and sign > 0:
            self.people.add(path)
        elif sign < 0:
            self.people.discard(path)

    @staticmethod
    def _context(a: str, part_a: Part | None, b: str, part_b: Part | None) -> Context:
        """Word keys of the sentences that link notes `a` and `b` (keys, with their parts), either way."""
        keys = part_a.contexts.get(b, "") if part_a else ""
        other = part_b.contexts.get(a, "") if part_b else ""
        # One side's string is shared, not copied: most pairs are written about from one side.
        return _context(set(keys.split()) | set(other.split())) if keys and other else (keys or other)

    @staticmethod
    def _named_relation(
        a: str, part_a: Part | None, b: str, part_b: Part | None
    ) -> tuple[str, str, bool, tuple[tuple[str, str, bool], ...]] | None:
        """The relation named between notes `a` and `b` (keys, with their parts) by either's
        sentences or properties: (its subject's key, relation, named by a property, the other
        relations named). A property outweighs any number of sentences; then the most often
        named wins, then the first in sort order."""
        votes: dict[tuple[str, str], tuple[int, int]] = {}
        for me, part, other in ((a, part_a, b), (b, part_b, a)):
            counts = part.typed.get(other) if part else None
            for (relation, other_is_subject, explicit), count in (counts or {}).items():
                subject = other if other_is_subject else me
                explicit_before, count_before = votes.get((subject, relation), (0, 0))
                votes[(subject, relation)] = (explicit_before + int(explicit), count_before + count)
        if not votes:
            return None
        subject, relation = min(votes, key=lambda vote: (-votes[vote][0], -votes[vote][1], vote))
        others = tuple(sorted((*vote, votes[vote][0] > 0) for vote in votes if vote[1] != relation))
        return subject, relation, votes[(subject, relation)][0] > 0, others

    def set_context(self, a: str, b: str) -> None:
        """Recompute the context and the named relation of one linked pair from both notes' parts."""
        edge = pair_code(self.ids[a], self.ids[b])
        part_a, part_b = self.parts.get(a[5:]), self.parts.get(b[5:])  # each read once
        keys = self._context(a, part_a, b, part_b)
        if keys:
            self.contexts[edge] = keys
        else:
            self.contexts.discard(edge)
        named = self._named_relation(a, part_a, b, part_b)
        if named is not None:
            others = tuple((self.ids[subject], relation, explicit) for subject, relation, explicit in named[3])
            self.named[edge] = (self.ids[named[0]], named[1], named[2], others)
        else:
            self.named.pop(edge, None)

    def entries(self) -> list[tuple[str, str]]:
        """Dictionary entries in a fixed order: note names (by path), then tags, then names (by key)."""
        out = list(self.note_entries)
        for kind in ("tag:", "name:"):
            for key in sorted(k for k in self.surfaces if k.startswith(kind)):
                out.extend(key_entries(key, self.surfaces[key]))
        return out

    def vertex_record(self, key: str) -> Vertex:
        """The search-side vertex of a key (labels of tags and names follow their spellings)."""
        kind, _, rest = key.partition(":")
        if kind == "note":
            return Vertex(key, self.titles[key], "note", rest)
        spelled = self.surfaces.get(key)
        return Vertex(key, _label(key, spelled) if spelled else rest, kind, None)

    def settle_all(self) -> None:
        """Lay out every summed edge in the lists anew (a full build)."""
        edges, sums = self.sums.lay_out()
        w0, w1, w2, w3 = _UNIT_WEIGHT
        self.lists = EdgeLists(
            edges,
            [u[0] * w0 + u[1] * w1 + u[2] * w2 + u[3] * w3 for u in sums],
            [0 if u[0] else 1 if u[1] else 2 if u[2] else 3 for u in sums],
        )

    def settle(self, edges: Iterable[tuple[int, int]]) -> None:
        """Bring the edge lists in line with the sums of some edges (an emptied one keeps its
        number at weight 0: see EdgeLists)."""
        lists, sum_of = self.lists, self.sums.sum_of
        for edge in edges:
            units = sum_of(edge)
            at = units[4]
            if not any(units[:4]):
                if at >= 0:  # emptied: keeps its number (see EdgeLists), passed over at weight 0
                    lists.weights[at] = 0.0
                continue
            weight = (
                units[0] * _UNIT_WEIGHT[0]
                + units[1] * _UNIT_WEIGHT[1]
                + units[2] * _UNIT_WEIGHT[2]
                + units[3] * _UNIT_WEIGHT[3]
            )
            relation = next(rel for rel, count in enumerate(units[:4]) if count)
            if at < 0:
                units[4] = len(lists)
                lists.append(edge, weight, relation)
            else:
                lists.weights[at], lists.relations[at] = weight, relation

    def graph(self) -> Any:
        """An igraph of the summed edges (their attributes stay in the lists)."""
        import igraph

        return igraph.Graph(n=len(self.keys), edges=self.lists.pairs(), directed=False)
