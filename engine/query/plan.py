"""The query plan: everything the engine reads from a query, computed once per query.

Channels and fusion read the plan and never look at the query's words themselves:
its index terms (stems), the word still being typed, the entities the vault knows
that it names, whether it asks a who-question about one entity's relations and which
words name the relation, and the kind of note it asks for. Every word list comes
from the lexicon of the configured language (engine/lexicon/).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.entities import EntityMatch, identifier_like
from engine.kinds import NoteKinds
from engine.lexicon import Lexicon
from engine.lexicon.en import ENGLISH
from engine.query.parse import SETTLED_LETTERS, Query, parse_query, settled_text
from engine.query.words import QUERY_WORD, relation_keys
from engine.records import NO_KIND, AskedKind, ChannelName

__all__ = ["NO_GRAPH_REQUEST", "NO_RELATION", "GraphRequest", "Planner", "QueryPlan", "RelationQuestion", "query_stems", "relative_clauses"]

log = logging.getLogger("cairn.query")

Stemmer = Callable[[str], list[str]]
Recognizer = Callable[[str], Sequence[EntityMatch]]
# Words the index has never seen → (the index term, the word) they are read as.
# (complete words, the word being typed) → {typed: (index term, the word it was read as)}
# (complete words, the word being typed, the language's whole words: preferred spellings) → …
# (words, the word being typed, the language's whole words read on first need) → corrections.
Corrector = Callable[[Sequence[str], "str | None", "Callable[[], Mapping[str, int]]"], dict[str, tuple[str, str]]]
# Index terms → their idf in the vault (full text's, log(N / (df + 1)) + 1).
TermWeights = Callable[[Sequence[str]], dict[str, float]]


@dataclass(frozen=True)
class RelationQuestion:
    """A who-question about one named entity that says which relation it asks for.

    "Who advises Orbit Labs?" asks for the notes related to Orbit Labs, not for Orbit
    Labs; `keys` are the relation words' keys ("advis"), which weigh the links written
    in a sentence that says so.
    """

    about_one: bool = False
    keys: frozenset[str] = frozenset()


NO_RELATION = RelationQuestion()


@dataclass(frozen=True)
class GraphRequest:
    """How one search walks the graph, when it is told: how far, and from which entities.

    `seeds` are entity keys with weights found outside the query (the entities its top
    chunks name); `query_entities` says whether the entities the query names seed too.
    """

    max_hops: int | None = None
    seeds: tuple[tuple[str, float], ...] = ()
    query_entities: bool = True


NO_GRAPH_REQUEST = GraphRequest()


@dataclass(frozen=True)
class QueryPlan(Query):
    """A parsed query and what the engine understood of it (see the module docstring)."""

    stems: tuple[str, ...] = ()
    # The stems of the words typed in full (all of them but a word still being typed).
    complete_stems: tuple[str, ...] = ()
    # Index term → the word as the user typed it (badges show what was typed, not "migrat").
    spelled: dict[str, str] = field(default_factory=dict, compare=False)
    # Stems that are not stop words (all stems if every one is): what evidence speaks of.
    content: tuple[str, ...] = ()
    # The content stems a snippet is chosen by (three letters or more where there are such).
    hint_terms: tuple[str, ...] = ()
    # Every name the vault's entity dictionary knows in the query, in query order.
    entities: tuple[EntityMatch, ...] = ()
    # Why each of `entities` was taken as a name, and the matches set aside as common
    # words: (the text as written, the reason), in query order.
    named_because: tuple[tuple[str, str], ...] = ()
    not_names: tuple[tuple[str, str], ...] = ()
    relation: RelationQuestion = NO_RELATION
    asked_kind: AskedKind = NO_KIND
    # A question (it ends with a question mark or opens with one of the language's question
    # words): it asks for something a note names, not for notes about its words.
    asks: bool = False
    # Planning steps that failed, by the channel whose part they are (that channel is degraded).
    problems: tuple[tuple[ChannelName, str], ...] = ()
    # The notes the query's filters, phrases and exclusions leave (None: no restriction);
    # set by the searcher before the channels run, so every channel searches the same notes.
    candidates: frozenset[str] | None = field(default=None, repr=False, compare=False)
    # Words read as typos of the vault's words: (as typed, the vault's word it was read as).
    corrections: tuple[tuple[str, str], ...] = ()
    graph: GraphRequest = NO_GRAPH_REQUEST
    # The question's relative clauses ("where Karel Purkyně died"), of the words typed so
    # far as the vector channel embeds them (`embedded_text`); none for a query with
    # operators. The vector channel searches each too (`relative_clauses`).
    clauses: tuple[str, ...] = ()
    # The whole word the word being typed is read as ("tombst" → "tombstone"; "" when none,
    # and for a query typed in full): the vector channel embeds it (`embedded_text`).
    typed_as: str = ""
    lexicon: Lexicon = field(default=ENGLISH, repr=False, compare=False)

    def coverage(self, named: Sequence[str]) -> float:
        """Share of the query's content words inside the entities `named` (0..1).

        The graph only knows about the named entities; a long claim that happens to
        contain one name ("... in IL-6 signalling ...") is mostly about something the
        graph cannot see.
        """
        spans = self._spans_of(named)
        words = [w for w in QUERY_WORD.finditer(self.text) if w.group().casefold() not in self.lexicon.stop_words]
        if not words:
            return 0.0
        inside = sum(1 for w in words if any(start <= w.start() < end for start, end in spans))
        return inside / len(words)

    def asks_about(self, named: Sequence[str]) -> bool:
        """Whether the query is a who-question about the relations of one of `named` ("Who advises X?")."""
        matches = [EntityMatch(self.text[s:e], s, e, ()) for s, e in self._spans_of(named)]
        return _asks_for_related(self.text, matches, self.lexicon)

    def _spans_of(self, named: Sequence[str]) -> list[tuple[int, int]]:
        """Where each of `named` is first written in the text, or, for a name being typed
        (recognised complete, "Beacon" for "Bea"), the span the plan recognised it at."""
        typed = {m.surface: (m.start, m.end) for m in self.entities if m.surface not in self.text}
        return [
            _span_in(self.text, surface) if surface in self.text else typed[surface]
            for surface in named
            if surface in self.text or surface in typed
        ]


def is_question(raw: str, lexicon: Lexicon, *, words: str | None = None) -> bool:
    """Whether a query is a question: it ends with a question mark (any script's), or the
    first of its `words` (default: the query as typed) is one of the language's question
    words ("which", "is")."""
    if raw.rstrip().endswith(("?", "\uff1f", "\u061f", "\u037e")):  # ?, fullwidth, Arabic, Greek
        return True
    first = QUERY_WORD.search(raw if words is None else words)
    return first is not None and first.group().casefold() in lexicon.question_words


# Punctuation that ends a clause inside a question.
_CLAUSE_END = re.compile(r"[,;:()\[\]?!]+")
# Punctuation a word may carry at either end ("'Karel", "located.").
_WORD_EDGES = "\"'“”‘’.«»"
# A query's clauses searched apart, at most: each is one more query embedding.
MAX_CLAUSES = 3


def relative_clauses(text: str, lexicon: Lexicon) -> tuple[str, ...]:
    """The relative clauses of a question, each from its relative word to the next one or
    to the punctuation that ends it: "When was the clock built in the city where Karel
    Purkyně died?" → ("where Karel Purkyně died",).

    A multi-hop question asks one thing inside another: the clause names the first hop
    (the city), the rest asks about it. A clause is kept when it says two words or more
    that are not stop words, asks nothing itself ("who worked with the mayor of what
    city" holds the question's gap), and is not the whole question; the query's first
    word opens a question, not a clause. One pass over the text.
    """
    relative, stop, gaps = lexicon.relative_words, lexicon.stop_words, lexicon.gap_words
    if not relative:
        return ()
    clauses: list[list[tuple[str, str]]] = []  # each clause's words, as written and as compared
    other = False  # words outside every clause: the question is more than its clauses
    first = True
    for piece in _CLAUSE_END.split(text):
        current: list[tuple[str, str]] | None = None
        for word in piece.split():
            key = word.strip(_WORD_EDGES).casefold()
            if not first and key in relative:
                current = [(word, key)]
                clauses.append(current)
            elif current is not None:
                current.append((word, key))
            elif key not in stop:
                other = True
            first = False
    if not other:
        return ()
    kept = (
        " ".join(word for word, _ in words)
        for words in clauses
        if sum(1 for _, key in words if key not in stop) >= 2 and not any(key in gaps for _, key in words)
    )
    return tuple(dict.fromkeys(kept))[:MAX_CLAUSES]


def _span_in(text: str, surface: str) -> tuple[int, int]:
    """Where `surface` (which `text` holds) is first written in it."""
    at = text.find(surface)
    return at, at + len(surface)


def residual_words(text: str, matches: Sequence[EntityMatch], lexicon: Lexicon) -> list[str]:
    """Content words of a query outside the entities it names (question words dropped)."""
    spans = [(m.start, m.end) for m in matches]
    return [
        w.group().casefold()
        for w in QUERY_WORD.finditer(text)
        if not any(start <= w.start() < end for start, end in spans)
        and w.group().casefold() not in lexicon.stop_words
        and not w.group().isdigit()
    ]


def _asks_for_related(text: str, matches: Sequence[EntityMatch], lexicon: Lexicon) -> bool:
    """A who-question about one named entity that says more than "who is X" (a relation).

    Two or more names ("Who is older, A or B?") compare the named notes themselves.
    """
    first = QUERY_WORD.search(text)
    if first is None or first.group().casefold() not in lexicon.who_words:
        return False
    if lexicon.resemblance_pattern.search(text):
        return False
    # Names are written as names; a lone lowercase word that happens to be a tag is not one.
    names = [m for m in matches if not m.surface.islower() or " " in m.surface.strip()]
    if len(names) != 1:
        return False
    return bool(residual_words(text, matches, lexicon))


def query_stems(
    query: Query,
    stem: Stemmer | None,
    corrections: dict[str, str] | None = None,
    spelled: dict[str, str] | None = None,
) -> list[str]:
    """The query's index terms (stemmed when a stemmer is given; a corrected word by its
    correction), deduplicated; `spelled` collects each term's word as typed."""
    stems: list[str] = []
    for term in query.terms:
        corrected = corrections.get(term) if corrections else None
        found = [corrected] if corrected else (stem(term) if stem else [term])
        stems.extend(found)
        if spelled is not None:
            for found_stem in found:
                spelled.setdefault(found_stem, term)
    return list(dict.fromkeys(stems))


# A word being typed is completed to a name from this many letters on ("Bea", not "Be").
_COMPLETED_MIN_CHARS = 3


def _as_typed(
    text: str, matches: Sequence[EntityMatch], because: Sequence[tuple[str, str]]
) -> tuple[list[EntityMatch], list[tuple[str, str]]]:
    """Names recognised in `text` with its last word completed, back on `text`: a match
    that runs past its end ends there, keeps the completed name as its surface, and says
    it is being typed."""
    end = len(text)
    typed = {m.surface: text[m.start :] for m in matches if m.end > end}
    kept = [dataclasses.replace(m, end=end) if m.end > end else m for m in matches]
    said = [
        (surface, f"{reason}, being typed as “{typed[surface]}”" if surface in typed else reason)
        for surface, reason in because
    ]
    return kept, said


def replace_terms(query: Query, terms: Sequence[str]) -> Query:
    """`query` with other terms (to stem a part of it)."""
    return dataclasses.replace(query, terms=tuple(terms))


class Planner:
    """Turns what the user typed into a QueryPlan, with the vault's stemmer, entities and kinds."""

    def __init__(
        self,
        lexicon: Lexicon = ENGLISH,
        *,
        stem: Stemmer | None = None,
        recognize: Recognizer | None = None,
        correct: Corrector | None = None,
        term_weights: TermWeights | None = None,
        common_name_share: float = 0.0,
        complete: Callable[[str], str] | None = None,
        finish: Callable[[str, Lexicon], str] | None = None,
    ) -> None:
        """`stem` is the full-text channel's analyzer; `recognize` finds the vault's entities in text
        (the graph's dictionary); `correct` reads words the vault has never seen as typos of its own.
        `complete` gives the letters the last word of a text lacks to be the one word of a
        note's name it can become ("" if none or several): names are recognised in a query
        with its word being typed completed so ("Who works at Bea" names *Beacon*).
        `finish` gives the whole word of the language a word being typed most likely
        becomes in the vault (full text's `word_being_typed`): the vector channel embeds
        the query with it (`QueryPlan.typed_as`).

        With `term_weights` and a `common_name_share` above 0, a name typed all in lower
        case ("settings") is a name only if one of its words is in at most that share of
        the vault's notes, or it is the whole query (`names_of`)."""
        self.lexicon = lexicon
        self._stem = stem
        self._recognize = recognize
        self._correct = correct
        self._term_weights = term_weights
        self._common_share = common_name_share
        self._complete = complete
        self._finish = finish

    def plan(
        self, raw: str, *, as_you_type: bool = True, kinds: NoteKinds | None = None, today: dt.date | None = None
    ) -> QueryPlan:
        """The plan of one query; a failing step (the stemmer, the dictionary) degrades its channel, never the plan."""
        query = parse_query(raw, as_you_type=as_you_type, today=today, lexicon=self.lexicon)
        parsed = {f.name: getattr(query, f.name) for f in dataclasses.fields(Query)}
        if not query.terms:
            return QueryPlan(**parsed, lexicon=self.lexicon)
        lexicon = self.lexicon
        problems: list[tuple[ChannelName, str]] = []
        complete_words = query.terms[:-1] if query.prefix else query.terms
        corrected: dict[str, tuple[str, str]] = {}
        if self._correct is not None:
            # The language's whole words are read only for a word the index lacks (its
            # vocabulary takes longer to load than a search takes).
            typed = [w for w in dict.fromkeys(complete_words) if w not in lexicon.stop_words]
            typing = query.prefix or None
            try:
                corrected = self._correct(typed, typing, lexicon.known_words) if typed or typing else {}
            except Exception as exc:  # the vocabulary could not be read: no corrections, full text degraded
                log.debug("typo correction failed", exc_info=True)
                problems.append(("fulltext", f"{type(exc).__name__}: {exc}"))
        corrections = {typed: term for typed, (term, _word) in corrected.items()}
        if query.prefix and query.prefix in corrections:  # the word being typed was a typo: read whole
            complete_words = query.terms
        spelled: dict[str, str] = {}
        try:
            stems = query_stems(query, self._stem, corrections, spelled)
            complete = query_stems(replace_terms(query, complete_words), self._stem, corrections)
        except Exception as exc:  # the full-text analyzer failed: words unstemmed, full text degraded
            log.debug("stemming failed", exc_info=True)
            problems.append(("fulltext", f"{type(exc).__name__}: {exc}"))
            stems = list(query.terms)
            complete = list(complete_words)
        for _typed, (term, word) in corrected.items():
            spelled[term] = word  # a badge shows the vault's word, the chip the correction
        content = [s for s in stems if s not in lexicon.stop_words] or stems
        hint_terms = [s for s in content if len(s) >= 3] or [s for s in content if len(s) >= 2]
        entities: Sequence[EntityMatch] = ()
        named_text = query.text
        completion = ""
        try:
            completion = self._completion(query)
        except Exception as exc:  # the title table failed: the word being typed stays as typed
            log.debug("completing a name failed", exc_info=True)
            problems.append(("graph", f"{type(exc).__name__}: {exc}"))
        if query.prefix and query.prefix in corrected:
            # A typo in the word being typed ("kikcof"): the vectors read the word full text
            # reads; one that is no word of the language, as the word it begins ("genreat" →
            # generat → generated).
            meant = corrected[query.prefix][1]
            typed_as = meant if meant in lexicon.known_words() else self._finished(meant, problems) or meant
        else:
            typed_as = self._typed_as(query, completion, problems)
        if self._recognize is not None:
            try:
                named_text = query.text + completion
                entities = self._recognize(named_text)
            except Exception as exc:  # the graph's dictionary failed: no entities, graph degraded
                log.debug("entity recognition failed", exc_info=True)
                problems.append(("graph", f"{type(exc).__name__}: {exc}"))
        named_because: list[tuple[str, str]] = []
        not_names: list[tuple[str, str]] = []
        if entities:
            try:
                entities, named_because, not_names = self.names_of(named_text, entities)
            except Exception as exc:  # the vault's term statistics failed: every match is a name
                log.debug("name rarity failed", exc_info=True)
                problems.append(("fulltext", f"{type(exc).__name__}: {exc}"))
        if named_text != query.text:
            entities, named_because = _as_typed(query.text, entities, named_because)
        return QueryPlan(
            **parsed,
            stems=tuple(stems),
            complete_stems=tuple(complete),
            spelled=spelled,
            corrections=tuple((typed, word) for typed, (_term, word) in corrected.items()),
            content=tuple(content),
            hint_terms=tuple(hint_terms),
            entities=tuple(entities),
            named_because=tuple(named_because),
            not_names=tuple(not_names),
            relation=self._relation(query, entities),
            asked_kind=kinds.asked_for(query.text) if kinds is not None else NO_KIND,
            asks=is_question(query.raw, lexicon, words=query.text),
            problems=tuple(problems),
            clauses=() if query.has_syntax else relative_clauses(embedded_text(query, typed_as), lexicon),
            typed_as=typed_as,
            lexicon=lexicon,
        )

    def prepare(self) -> None:
        """Read the language's whole words, which the first word being typed would otherwise
        wait for (about 40 ms for English's)."""
        if self._finish is not None:
            self.lexicon.known_words()

    def _typed_as(self, query: Query, completion: str, problems: list[tuple[ChannelName, str]]) -> str:
        """The whole word the word being typed is read as: the note name it completes, else
        the vault's commonest word it begins (`finish`); "" when none."""
        if not query.prefix:
            return ""
        if len(query.prefix) < SETTLED_LETTERS and not settled_text(query):
            # Alone, a fragment that short is a guess the whole vector search would rest on
            # ("gen": general? genba?): it is searched by meaning once it is longer.
            return ""
        if not query.text.casefold().endswith(query.prefix.casefold()):
            return ""
        written = query.text[len(query.text) - len(query.prefix) :]
        if completion:
            return written + completion
        word = self._finished(query.prefix, problems)
        # The language's words are in lower case: the letters typed stay as typed ("Tombst" → "Tombstone").
        return written + word[len(written) :] if word[: len(written)] == written.casefold() else word

    def _finished(self, prefix: str, problems: list[tuple[ChannelName, str]]) -> str:
        """The vault's commonest word of the language that `prefix` begins (`finish`); "" when none."""
        if self._finish is None:
            return ""
        try:
            return self._finish(prefix, self.lexicon)
        except Exception as exc:  # the vocabulary or the index could not be read: the word stays as typed
            log.debug("reading the word being typed failed", exc_info=True)
            problems.append(("vectors", f"{type(exc).__name__}: {exc}"))
            return ""

    def _completion(self, query: Query) -> str:
        """The letters the word being typed lacks to be the one word of a note's name it can
        become ("" when no word is being typed, or it is short, or could become several)."""
        prefix = query.prefix
        if self._complete is None or not prefix or query.has_syntax or len(prefix) < _COMPLETED_MIN_CHARS:
            return ""
        if not query.text.casefold().endswith(prefix.casefold()):
            return ""
        return self._complete(query.text)

    def names_of(
        self, text: str, matches: Sequence[EntityMatch]
    ) -> tuple[list[EntityMatch], list[tuple[str, str]], list[tuple[str, str]]]:
        """The matches that name a note, why each does, and the ones set aside as common words.

        A match written with a capital letter, or in a script without case, is typed as a
        name, and a tag's name is written in lower case. A title or alias typed all in
        lower case in a cased script is a name only when it is the whole query, or when
        one of its words is rare in the vault (in at most
        `common_name_share` of the notes): "settings" in "folder where settings and
        plugins are stored" is a word most notes of a help vault use, not the note
        *Settings*; "kubernetes" in a vault of recipes names the one note about it.
        """
        whole = text.strip().casefold()
        kept: list[EntityMatch] = []
        because: list[tuple[str, str]] = []
        dropped: list[tuple[str, str]] = []
        for match in matches:
            surface = match.surface
            if not surface.islower():
                kept.append(match)
                because.append((surface, "written as a name"))
                continue
            if surface.strip().casefold() == whole:
                kept.append(match)
                because.append((surface, "the whole query"))
                continue
            if identifier_like(surface):  # a file name, path, URL or address is one by its shape
                kept.append(match)
                because.append((surface, "written as an identifier"))
                continue
            if any(key.startswith("tag:") for key in match.entity_ids):
                kept.append(match)  # a tag is written in lower case: typed as written
                because.append((surface, "a tag"))
                continue
            share = self._rarest_share(surface)
            if share is None or share <= self._common_share:
                kept.append(match)
                because.append((surface, "a rare word in the vault" if share is not None else "named"))
            else:
                dropped.append((surface, f"a common word (in {share:.0%} of notes)"))
        # A word the query repeats is one reason, said once.
        return kept, list(dict.fromkeys(because)), list(dict.fromkeys(dropped))

    def is_rare(self, surface: str) -> bool:
        """Whether one of the content words of `surface` is in at most `common_name_share` of
        the notes (False where the vault's term statistics are not at hand)."""
        share = self._rarest_share(surface)
        return share is not None and share <= self._common_share

    def _rarest_share(self, surface: str) -> float | None:
        """The share of notes holding the rarest content word of `surface` (None: not measured)."""
        if self._term_weights is None or self._common_share <= 0 or self._stem is None:
            return None
        stems = [s for w in QUERY_WORD.findall(surface.casefold()) if w not in self.lexicon.stop_words for s in self._stem(w)]
        if not stems:
            return None
        weights = self._term_weights(stems)
        # idf = log(N / (df + 1)) + 1, so (df + 1) / N = exp(1 - idf).
        return min(min(1.0, math.exp(1.0 - weights.get(stem, 1.0))) for stem in stems)

    def _relation(self, query: Query, entities: Sequence[EntityMatch]) -> RelationQuestion:
        """The who-question the query asks, and the words that name its relation.

        A word still being typed names nothing yet.
        """
        residual = residual_words(query.text, entities, self.lexicon)
        if query.prefix and residual and residual[-1] == query.prefix:
            residual.pop()
        return RelationQuestion(
            about_one=_asks_for_related(query.text, entities, self.lexicon),
            keys=frozenset(relation_keys(residual, self.lexicon)),
        )


def embedded_text(query: Query, typed_as: str | None = None) -> str:
    """The text the vector channel embeds: the query with its word being typed read as the
    whole word it most likely becomes (`QueryPlan.typed_as`), or without it while it is
    short and becomes no known word (`settled_text`)."""
    if typed_as is None:
        typed_as = getattr(query, "typed_as", "")
    if not typed_as or not query.prefix or not query.text.casefold().endswith(query.prefix.casefold()):
        return settled_text(query)
    return query.text[: len(query.text) - len(query.prefix)] + typed_as
