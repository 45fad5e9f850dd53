"""The concurrent three-channel search: read the query, run the channels, weigh their lists
with the ranking stages (engine/search/ranking/), fuse, explain every hit."""

from __future__ import annotations

import bisect
import logging
import re
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import lru_cache
from typing import Protocol, TypeVar

from engine.catalog import Catalog, StoredChunk
from engine.channels.base import Channel, ChannelAnswer, reading_of
from engine.channels.fulltext import FulltextReading
from engine.channels.graph.walk import GraphReading
from engine.channels.vectors import VectorReading
from engine.config import EngineConfig, FusionConfig
from engine.entities import EntityMatch
from engine.folding import entity_key, fold_accents
from engine.kinds import NoteKinds
from engine.lexicon import Lexicon
from engine.query import GraphRequest, Planner, QueryPlan
from engine.query.parse import query_without
from engine.query.words import QUERY_WORD
from engine.records import (
    CHANNEL_NAMES,
    NO_KIND,
    ChannelEvidence,
    ChannelHit,
    ChannelName,
    ChannelStatus,
    FusionTrace,
    Hit,
    QueryChip,
    QueryReading,
    Relation,
    SearchResults,
)
from engine.search.evidence import (
    NoteChunks,
    best_chunk,
    build_snippet,
    choose_label,
    create_safety,
    normalized_name,
)
from engine.search.fallback import FlatScan
from engine.search.filters import FactsTable, PhraseMatcher, notes_meeting
from engine.search.fusion import refuse, weighted_rrf
from engine.search.grams import PhraseGrams
from engine.search.ranking import StageContext, run_stages
from engine.search.ranking.coverage import NO_PREFIX, TypedPrefix
from engine.search.ranking.navigation import NavigationRecord
from engine.search.ranking.structure import StructureRecord

log = logging.getLogger("cairn.search")

# A vault whose properties type this many links between notes (`company: [[Acme]]`) has
# the structure the structure pack reads, whatever its folders.
TYPED_LINKS_FOR_STRUCTURE = 10

# Phrase lookups kept between keystrokes (`Searcher._with_phrase`).
_KEPT_PHRASES = 64

T = TypeVar("T")

# A word being typed is completed from the names that the query's last few words begin.
_COMPLETION_WORDS = 8
_COMPLETION_READ = 2000
_WORD_START = re.compile(r"\w*")


class TitleIndex:
    """Normalised title and alias → note paths, for the exact-match floor."""

    def __init__(self, catalog: Catalog) -> None:
        self.titles: dict[str, list[str]] = {}
        self.aliases: dict[str, list[str]] = {}
        self.title_of: dict[str, str] = {}
        self.aliases_of: dict[str, tuple[str, ...]] = {}
        for path, title, aliases in catalog.note_names():
            self.title_of[path] = title
            if aliases:
                self.aliases_of[path] = aliases
            key = entity_key(title)
            self.titles.setdefault(key, []).append(path)
            name = path.rsplit("/", 1)[-1].removesuffix(".md")
            stem = key if name == title else entity_key(name)  # most notes are titled by their file name
            if stem != key:
                self.titles.setdefault(stem, []).append(path)
            for alias in aliases:
                self.aliases.setdefault(entity_key(alias), []).append(path)
        self.sorted_titles = sorted(self.titles)
        self._sorted_names = sorted({*self.titles, *self.aliases})

    def completion(self, text: str) -> str:
        """The letters the last word of `text` lacks to be the one word it can become in a
        title or alias ("" when it can become none or several, or is whole already).

        The text's longest ending that begins a name decides: "1:1 Wendy Hernandez + Mia
        Bro" begins the meeting's title, whose word is "Brown"; "Who works at Bea" ends
        with the beginning of *Beacon* alone. Looked up by bisection, reading the names
        that begin so until a second completion shows (at most `_COMPLETION_READ`).
        """
        words = list(QUERY_WORD.finditer(text))
        if not words or words[-1].end() != len(text):
            return ""
        names = self._sorted_names
        for word in words[-_COMPLETION_WORDS:]:
            key = entity_key(text[word.start() :])
            found: set[str] = set()
            at = bisect.bisect_left(names, key)
            for name in names[at : at + _COMPLETION_READ]:
                if not name.startswith(key):
                    break
                found.add(_WORD_START.match(name, len(key)).group())  # type: ignore[union-attr]
                if len(found) > 1:
                    return ""
            if found:
                return found.pop()
        return ""

    def starting_with(self, key: str, most: int) -> list[str]:
        """Notes whose title (or file name) starts with `key` but is longer, shortest title first."""
        at = bisect.bisect_left(self.sorted_titles, key)
        found: list[tuple[int, str, str]] = []
        for title in self.sorted_titles[at:]:
            if not title.startswith(key):
                break
            if title != key:
                found.extend((len(title), title, path) for path in self.titles[title])
        found.sort()
        return list(dict.fromkeys(path for _, _, path in found))[:most]


class TextLookups(Protocol):
    """What the full-text channel lends the search beyond its hits (`FulltextChannel`)."""

    def analyze(self, text: str) -> list[str]: ...

    def term_weights(self, terms: Sequence[str]) -> dict[str, float]: ...

    def notes_with(self, word: str) -> set[str]: ...

    def corrections(
        self, words: Sequence[str], prefix: str | None = ..., known: Callable[[], Mapping[str, int]] = ...
    ) -> dict[str, tuple[str, str]]: ...

    def word_being_typed(self, prefix: str, lexicon: Lexicon) -> str: ...

    def fuzzy_search(self, words: Sequence[str], limit: int) -> list[tuple[str, tuple[str, ...]]]: ...


class NameLookups(Protocol):
    """What the graph channel lends the search beyond its hits (`GraphChannel`)."""

    def entity_matches(self, text: str) -> Sequence[EntityMatch]: ...

    def chunk_entities(self, chunks: Sequence[tuple[str, int]]) -> list[tuple[str, ...]]: ...

    def relation(self, a: str, b: str) -> Relation | None: ...


class VectorCount(Protocol):
    """What the vector channel lends the search beyond its hits (`VectorChannel`)."""

    def chunk_count(self) -> int: ...


class Searcher:
    """Runs the channels concurrently on a thread pool and fuses their answers."""

    def __init__(
        self,
        catalog: Catalog,
        channels: Mapping[ChannelName, Channel],
        config: EngineConfig,
        *,
        lexicon: Lexicon,
        text: TextLookups | None = None,
        names: NameLookups | None = None,
        vectors: VectorCount | None = None,
    ) -> None:
        """`text` is what full text lends beyond its hits (stems, idf, the notes holding a
        word, corrections, the word being typed, terms one edit away); `names` what the
        graph lends (the entities a query names, those a chunk names, the relation between
        two notes); `vectors` how many chunks the vector channel holds (the vault's share it
        covers). Each is None when that channel is not there."""
        stem = text.analyze if text is not None else None
        term_weights = text.term_weights if text is not None else None
        notes_with = text.notes_with if text is not None else None
        correct = text.corrections if text is not None and config.fulltext.typo_correction else None
        finish = text.word_being_typed if text is not None else None
        fuzzy = text.fuzzy_search if text is not None else None
        recognize = names.entity_matches if names is not None else None
        chunk_entities = names.chunk_entities if names is not None else None
        relation = names.relation if names is not None else None
        embedded_chunks = vectors.chunk_count if vectors is not None else None
        self._catalog = catalog
        self._relation = relation
        self._chunk_entities = chunk_entities
        self._fuzzy = fuzzy
        self._scan: FlatScan | None = None
        self._term_weights = term_weights
        self._channels = dict(channels)
        self._config = config
        self._pool = ThreadPoolExecutor(max_workers=len(CHANNEL_NAMES), thread_name_prefix="cairn-channel")
        self._titles = TitleIndex(catalog)
        self._stem = stem
        self._lexicon = lexicon
        self._planner = Planner(
            lexicon,
            stem=stem,
            recognize=recognize,
            correct=correct,
            term_weights=term_weights,
            common_name_share=config.graph.common_name_share,
            complete=self._completion,
            finish=finish,
        )
        self._kinds = _note_kinds(catalog, stem, lexicon)
        self._embedded_chunks = embedded_chunks
        self._chunk_total = catalog.chunk_count()
        self._structured = self._kinds.structured or catalog.typed_link_count() >= TYPED_LINKS_FOR_STRUCTURE
        self._notes_with = notes_with
        self._facts: FactsTable | None = None  # read on the first filtered query after a change
        # Guards the two tables above against a `prepare` that read the catalog before a change.
        self._tables_lock = threading.Lock()
        self._tables_generation = 0
        # The notes found holding a phrase, by the phrase and the notes it was looked for
        # among: every keystroke after a phrase is closed asks again, and reading the notes'
        # text is the slow part. Dropped with the tables above when notes change.
        self._phrase_notes: tuple[int, dict[tuple[str, frozenset[str]], frozenset[str]]] = (0, {})
        # Each note's runs of four characters (engine/search/grams.py), built by `prepare`
        # for the generation it read: a phrase then reads only the notes that may say it.
        self._grams: tuple[int, PhraseGrams | None] = (-1, None)
        self._stopping = threading.Event()  # set when the engine closes: `prepare` returns
        self._chunks = NoteChunks(catalog)

    @property
    def structured(self) -> bool:
        """Whether the vault files people or organisations, or types relations in properties
        (the structure pack's "auto" switches on for such a vault)."""
        return self._structured

    def structure_text(self) -> str:
        """Whether the structure pack ranks this vault's searches, and why, in words."""
        mode = self._config.fusion.structure.mode
        if mode != "auto":
            return f"{mode} (set in [fusion.structure])"
        with self._tables_lock:
            kinds, structured = self._kinds, self._structured
        if not structured:
            return "off: the vault files no people or organisations and types no relations"
        why = "files people or organisations" if kinds.structured else "types relations in properties"
        return f"on: the vault {why}"

    def embedded_share(self) -> float:
        """The share of the vault's chunks the vector channel holds (1 for an empty vault)."""
        if self._embedded_chunks is None or self._chunk_total <= 0:
            return 1.0
        try:
            return min(1.0, self._embedded_chunks() / self._chunk_total)
        except Exception:  # the vector channel is broken: its own status says so; weigh it in full
            log.debug("could not count the embedded chunks", exc_info=True)
            return 1.0

    def _completion(self, text: str) -> str:
        """What the word being typed lacks to be a note's name (the titles as they are now)."""
        return self._titles.completion(text)

    def refresh_titles(self) -> None:
        """Reload the title/alias floor table and the note kinds after the catalog changed."""
        titles = TitleIndex(self._catalog)
        kinds = _note_kinds(self._catalog, self._stem, self._lexicon)
        chunk_total = self._catalog.chunk_count()
        structured = kinds.structured or self._catalog.typed_link_count() >= TYPED_LINKS_FOR_STRUCTURE
        with self._tables_lock:
            self._titles, self._kinds = titles, kinds
            self._chunk_total, self._structured = chunk_total, structured
            self._facts = None
            self._scan = None
            self._tables_generation += 1

    def refresh_facts(self) -> None:
        """Forget the facts filters read (tags, properties, tasks, dates) after notes changed."""
        with self._tables_lock:
            self._facts = None
            self._tables_generation += 1

    def prepare(self) -> None:
        """Build the tables a first keystroke would otherwise build: the facts filters read
        and the flat scan's titles (about 0.3 s at 10k notes), then each note's runs of
        four characters, which let a quoted phrase skip the notes that cannot say it (about
        0.45 s at 10k; after a change only the changed notes are read again), and the
        language's words a word being typed is read as. Safe beside searches and catalog
        changes: a table read before a change is dropped."""
        with self._tables_lock:
            generation, titles = self._tables_generation, self._titles
            facts_wanted, scan_wanted = self._facts is None, self._scan is None
            grams_for, grams = self._grams
        stopping = self._stopping.is_set
        facts = FactsTable(self._catalog) if facts_wanted and not stopping() else None
        scan = _flat_scan_of(titles) if scan_wanted and not stopping() else None
        if scan is not None:
            scan.build()
        with self._tables_lock:
            if generation != self._tables_generation:
                return
            if facts is not None and self._facts is None:
                self._facts = facts
            if scan is not None and self._scan is None:
                self._scan = scan
        for channel in self._channels.values():
            if not stopping():
                channel.prepare()
        if not stopping():
            self._planner.prepare()
        if grams_for != generation and not stopping():
            built = PhraseGrams.build(self._catalog, previous=grams, stop=stopping)
            if built is None:
                return
            with self._tables_lock:
                if generation == self._tables_generation:
                    self._grams = (generation, built)
                elif self._grams[1] is grams:  # outdated already, but a start for the next pass
                    self._grams = (-1, built)

    def plan(self, raw: str, *, as_you_type: bool = True) -> QueryPlan:
        """What the engine reads from a query (see engine/query/plan.py)."""
        return self._planner.plan(raw, as_you_type=as_you_type, kinds=self._kinds, today=self._config.today_date)

    def stop_preparing(self) -> None:
        """Make `prepare` return at its next step, now and from now on (before `close`)."""
        self._stopping.set()

    def close(self) -> None:
        """Stop the thread pool."""
        self._stopping.set()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def search(
        self,
        raw: str,
        *,
        limit: int = 20,
        channels: Collection[ChannelName] | None = None,
        as_you_type: bool = True,
        graph_weight: float | None = None,
        max_hops: int | None = None,
        seeding: str | None = None,
        stages_off: Collection[str] = (),
    ) -> SearchResults:
        """Search every (or the chosen) channel, weigh with the ranking stages and fuse; a
        failing channel or stage only degrades.

        `graph_weight`, `max_hops` and `seeding` override the configured graph weight in
        fusion, the walk's depth and where the walk starts (`GraphConfig.seeding`) for this
        search only; `stages_off` names ranking stages to switch off (eval's ablation). A
        search of several channels that finds fewer than `limit` notes ends with a flat scan
        of titles and fuzzy terms (`flat_scan` hits).
        """
        started = time.perf_counter()
        limit = max(limit, 0)  # a negative limit would slice hits off the end
        plan = self.plan(raw, as_you_type=as_you_type)
        wanted = [c for c in CHANNEL_NAMES if (channels is None or c in channels)]
        reading = _reading(plan)
        if plan.is_empty:
            return SearchResults(
                query=raw,
                hits=(),
                channels={c: ChannelStatus("ok", 0.0) for c in wanted},
                total_ms=_ms(started),
                reading=reading,
            )
        candidates = self._candidates(plan)
        # Phrases of stop words alone ("to the") give the channels nothing to look up: the
        # notes that say them are listed as a filter's are.
        if plan.only_filters or (plan.phrases and not plan.stems):
            return self._listing(raw, plan, candidates, wanted, limit, started, reading)
        if candidates is not None:
            plan = replace(plan, candidates=candidates)
        fusion = self.fusion_config(graph_weight)
        seeding = seeding or self._config.graph.seeding
        from_chunks = seeding in ("chunks", "both") and "graph" in wanted
        if max_hops is not None or from_chunks:
            plan = replace(plan, graph=GraphRequest(max_hops=max_hops, query_entities=seeding != "chunks"))
        depth = channel_depth(limit, fusion, wanted)
        # A walk from the top chunks' entities waits for the text channels' answers.
        first = [name for name in wanted if not (from_chunks and name == "graph")]
        answers: dict[ChannelName, ChannelAnswer] = {}
        statuses: dict[ChannelName, ChannelStatus] = {}
        self._run(plan, first, depth, answers, statuses)
        if from_chunks:
            no_seeds: tuple[tuple[str, float], ...] = ()
            seeds = _degrading(statuses, "graph", lambda: self._chunk_seeds(plan, answers, fusion), no_seeds)
            plan = replace(plan, graph=replace(plan.graph, seeds=seeds))
            self._run(plan, ["graph"], depth, answers, statuses)
        for name, problem in plan.problems:  # planning ran a part of these channels: it failed
            _degrade(statuses, name, problem)

        context = StageContext(
            plan=plan,
            answers=answers,
            lists={name: [hit.path for hit in answer.hits] for name, answer in answers.items()},
            fusion=fusion,
            config=self._config,
            vault=self._vault_view(),
            statuses=statuses,
            term_weights=self._weigher(statuses),
        )
        records = run_stages(context, stages_off)
        weights = dict(fusion.weights) if fusion.weights != self._config.fusion.weights else {}
        trace = FusionTrace(
            rankings={name: tuple(h.path for h in a.hits) for name, a in answers.items()},
            stages=records,
            weights=weights,
            scores={name: tuple(h.score for h in a.hits) for name, a in answers.items()},
        )
        graph_answer = answers.get("graph")
        structure = trace.record("structure")
        if graph_answer is not None and structure is not None and structure.reached:
            graph_answer = answers["graph"] = self._with_reached_hits(graph_answer, structure.reached)
        scanned: dict[str, tuple[str, ...]] = {}
        deeper: dict[ChannelName, dict[str, ChannelHit]] = {}
        if len(wanted) > 1:
            deeper = self._deeper(plan, trace, fusion, limit, depth, answers, candidates)
            beyond = [path for found in deeper.values() for path in found]
            trace = replace(trace, fallback=tuple(dict.fromkeys(beyond)))
            scanned = self._fallback(plan, trace, fusion, limit, statuses, candidates)
            trace = replace(trace, fallback=(*trace.fallback, *scanned))
        votes: dict[str, dict[str, float]] = {}
        fused = refuse(trace, fusion, votes=votes)
        if candidates is not None:  # floors, the kind hop and the flat scan answer only inside the filter
            fused = [(path, score) for path, score in fused if path in candidates]
        navigation = trace.record("navigation")
        exact = set(navigation.exact) if isinstance(navigation, NavigationRecord) else set()
        alias = set(navigation.alias) if isinstance(navigation, NavigationRecord) else set()
        hits = self._hits(plan, fused[:limit], answers, exact, alias, votes, scanned, deeper)
        graph_read = reading_of(graph_answer, GraphReading)
        kind = structure.kind if isinstance(structure, StructureRecord) else NO_KIND
        return SearchResults(
            query=raw,
            hits=hits,
            channels=statuses,
            recognized_entities=graph_read.recognized,
            expanded_entities=graph_read.expanded,
            named_because=plan.named_because,
            not_names=plan.not_names,
            total_ms=_ms(started),
            answer_notes=graph_read.answer_notes,
            asked_kind=kind,
            kind_hops=trace.hops,
            trace=trace,
            reading=reading,
            clauses=reading_of(answers.get("vectors"), VectorReading).clauses,
            confident=_confident(hits, {*scanned, *(path for found in deeper.values() for path in found)}),
        )

    # -- filters ---------------------------------------------------------------------
    def _candidates(self, plan: QueryPlan) -> frozenset[str] | None:
        """The notes the plan's filters, required phrases, `a OR b` choices and exclusions leave (None: all).

        A note must hold one word of each OR group; a group holding the word still being
        typed waits until it is complete.
        """
        groups = [g for g in plan.alternatives if not (plan.prefix and plan.prefix in g)]
        choices = [c for c in plan.choices if not (plan.prefix and plan.prefix in c.words)]
        if not (plan.filters or plan.phrases or groups or choices or plan.excluded_words or plan.excluded_phrases):
            return None
        facts = self._facts_table()
        kept = facts.matching(plan.filters) if plan.filters else set(facts.notes)
        for phrase in plan.phrases:
            kept &= self._with_phrase(phrase, kept)
        for group in groups:
            kept = set().union(*(self._with_word(word, kept) for word in group))
        for word in plan.excluded_words:
            kept -= self._with_word(word, kept)
        for phrase in plan.excluded_phrases:
            kept -= self._with_phrase(phrase, kept)
        for choice in choices:
            kept = notes_meeting(choice, kept, facts, self._with_word, self._with_phrase)
        return frozenset(kept)

    def _facts_table(self) -> FactsTable:
        facts = self._facts
        if facts is None:
            facts = self._facts = FactsTable(self._catalog)
        return facts

    def _with_word(self, word: str, within: set[str]) -> set[str]:
        """The notes among `within` holding `word` (full text's index terms; else their text)."""
        if self._notes_with is not None:
            try:
                return self._notes_with(word) & within
            except Exception:  # full text is broken: read the notes themselves
                log.debug("full text could not list the notes with %r", word, exc_info=True)
        return self._with_phrase(word, within, index=False)

    def _with_phrase(self, phrase: str, within: set[str], *, index: bool = True) -> set[str]:
        """The notes among `within` whose text holds `phrase`: full text narrows, the note's text decides."""
        narrowed = set(within)
        words = [w for w in phrase.split() if any(c.isalnum() for c in w)]
        if index and self._notes_with is not None:
            try:
                for word in words:
                    # A stop word has no index term ("in your vault"): the notes' text decides on it.
                    if self._stem is None or self._stem(word):
                        narrowed &= self._notes_with(word)
            except Exception:
                log.debug("full text could not narrow the phrase %r", phrase, exc_info=True)
                narrowed = set(within)
        key = (phrase, frozenset(narrowed))
        with self._tables_lock:
            generation, (kept_for, kept) = self._tables_generation, self._phrase_notes
            titles, (grams_for, grams) = self._titles, self._grams
        if kept_for == generation and key in kept:
            return set(kept[key])
        holds = PhraseMatcher(phrase)
        # The notes whose text may say it: those that have each of its runs of four characters.
        with_runs = grams.may_hold(holds.key, narrowed) if grams_for == generation and grams is not None else narrowed
        found = set(holds.holding(self._catalog.note_texts(with_runs)))
        found.update(holds.holding((path, titles.title_of.get(path, "")) for path in narrowed - found))
        with self._tables_lock:
            if generation == self._tables_generation:
                if self._phrase_notes[0] != generation or len(self._phrase_notes[1]) >= _KEPT_PHRASES:
                    self._phrase_notes = (generation, {})
                self._phrase_notes[1][key] = frozenset(found)
        return found

    def _listing(
        self,
        raw: str,
        plan: QueryPlan,
        candidates: frozenset[str] | None,
        wanted: Sequence[ChannelName],
        limit: int,
        started: float,
        reading: QueryReading,
    ) -> SearchResults:
        """A query of filters only: the matching notes, the most recent first (no channel is asked)."""
        facts = self._facts_table()
        paths = facts.recent_first(candidates if candidates is not None else facts.notes)[:limit]
        chunks_of = self._chunks.of(paths)
        matcher = _WordMatcher(frozenset(), None, self._stem)
        # A phrase of stop words listed here opens its snippet where the note says it.
        hints = list(dict.fromkeys(word.casefold() for phrase in plan.phrases for word in phrase.split()))
        hits = tuple(
            Hit(
                path=path,
                title=self._titles.title_of.get(path, path),
                score=0.0,
                label="filter_match",
                channels={},
                snippet=build_snippet(chunks_of.get(path, []), matches=matcher, hint_terms=hints, phrases=plan.phrases),
            )
            for path in paths
        )
        return SearchResults(
            query=raw,
            hits=hits,
            channels={c: ChannelStatus("ok", 0.0) for c in wanted},
            total_ms=_ms(started),
            reading=reading,
            confident=len(hits),
        )

    def fusion_config(self, graph_weight: float | None = None) -> FusionConfig:
        """The fusion settings of one search: the configured ones, with its own graph weight if told."""
        fusion = self._config.fusion
        if graph_weight is None:
            return fusion
        return replace(fusion, weights={**fusion.weights, "graph": max(0.0, graph_weight)})

    def _run(
        self,
        plan: QueryPlan,
        names: Sequence[ChannelName],
        depth: int,
        answers: dict[ChannelName, ChannelAnswer],
        statuses: dict[ChannelName, ChannelStatus],
    ) -> None:
        """Run some channels concurrently; a broken one is unavailable, never an error."""
        futures: dict[ChannelName, Future[tuple[ChannelAnswer, float]]] = {}
        for name in names:
            channel = self._channels.get(name)
            if channel is not None:
                futures[name] = self._pool.submit(_timed, channel, plan, depth)
        for name in names:
            if name not in futures:
                statuses[name] = ChannelStatus("unavailable", 0.0, "channel not loaded")
                continue
            try:
                answer, elapsed = futures[name].result()
            except Exception as exc:  # a broken channel degrades the search, never fails it
                statuses[name] = ChannelStatus("unavailable", 0.0, f"{type(exc).__name__}: {exc}")
                continue
            answers[name] = answer
            statuses[name] = ChannelStatus(answer.status, round(elapsed, 2), answer.message)

    def top_chunks(
        self, plan: QueryPlan, answers: Mapping[ChannelName, ChannelAnswer], fusion: FusionConfig, notes: int
    ) -> list[StoredChunk]:
        """The best chunk of each of the text channels' first `notes` notes (fused), best first.

        A note's best chunk is the one the vector channel matched, else the one holding
        most of the query's words (as its snippet is chosen).
        """
        lists = {name: [h.path for h in answers[name].hits] for name in ("fulltext", "vectors") if name in answers}
        top = [path for path, _ in weighted_rrf(lists, k=fusion.k, weights=fusion.weights, depths=fusion.depths)][:notes]
        vector_chunk = {h.path: h.chunk_id for h in answers["vectors"].hits} if "vectors" in answers else {}
        chunks_of = self._chunks.of(top)
        out: list[StoredChunk] = []
        for path in top:
            chunks = chunks_of.get(path, [])
            if chunks:
                out.append(best_chunk(chunks, list(plan.hint_terms), vector_chunk.get(path)))
        return out

    def _chunk_seeds(
        self, plan: QueryPlan, answers: Mapping[ChannelName, ChannelAnswer], fusion: FusionConfig
    ) -> tuple[tuple[str, float], ...]:
        """The entities the top chunks name, weighted by those chunks' ranks (the best `chunk_seed_weight`)."""
        if self._chunk_entities is None:
            return ()
        chunks = self.top_chunks(plan, answers, fusion, self._config.graph.chunk_seed_notes)
        weights: dict[str, float] = {}
        for rank, keys in enumerate(self._chunk_entities([(c.path, c.chunk.ordinal) for c in chunks]), start=1):
            for key in keys:
                weights[key] = weights.get(key, 0.0) + 1.0 / rank
        if not weights:
            return ()
        scale = self._config.graph.chunk_seed_weight / max(weights.values())
        return tuple((key, round(weight * scale, 6)) for key, weight in weights.items())

    def _deeper(
        self,
        plan: QueryPlan,
        trace: FusionTrace,
        fusion: FusionConfig,
        limit: int,
        depth: int,
        answers: Mapping[ChannelName, ChannelAnswer],
        candidates: frozenset[str] | None,
    ) -> dict[ChannelName, dict[str, ChannelHit]]:
        """When a longer list is asked for than the channels' fused depths hold, the notes the
        channels rank further down (full text and vectors asked for `limit`), each channel's
        new ones by its own rank, interleaved: they follow the fused notes, with their own
        evidence, under the confident cut. The fused notes are untouched (the channels were
        asked at the depth fusion counts, so a longer list never reorders the top)."""
        if limit <= depth:
            return {}
        found = {path for path, _ in refuse(trace, fusion)}
        if len(found) >= limit:
            return {}
        names: list[ChannelName] = [name for name in ("fulltext", "vectors") if name in answers]
        more: dict[ChannelName, ChannelAnswer] = {}
        statuses: dict[ChannelName, ChannelStatus] = {}
        self._run(plan, names, limit, more, statuses)
        out: dict[ChannelName, dict[str, ChannelHit]] = {}
        taken = set(found)
        lists = {name: [hit for hit in answer.hits if hit.path not in taken] for name, answer in more.items()}
        for at in range(max((len(hits) for hits in lists.values()), default=0)):
            for name, hits in lists.items():
                if at < len(hits) and hits[at].path not in taken and len(taken) < limit:
                    hit = hits[at]
                    if candidates is None or hit.path in candidates:
                        taken.add(hit.path)
                        out.setdefault(name, {})[hit.path] = hit
        return out

    def _fallback(
        self,
        plan: QueryPlan,
        trace: FusionTrace,
        fusion: FusionConfig,
        limit: int,
        statuses: dict[ChannelName, ChannelStatus],
        candidates: frozenset[str] | None = None,
    ) -> dict[str, tuple[str, ...]]:
        """The flat scan's notes and what matched in each, when the channels found fewer than
        `limit` (none of theirs), in order. Under a filter whose notes (`candidates`) the
        channels found all of, nothing the scan could add would be kept: it is not run."""
        found = {path for path, _ in refuse(trace, fusion)}
        if len(found) >= limit or (candidates is not None and candidates <= found):
            return {}
        scan = self._flat_scan()
        fuzzy = self._fuzzy

        def run() -> list[tuple[str, tuple[str, ...]]]:
            return scan.scan(plan.terms, plan.prefix, plan.lexicon, exclude=found, limit=limit - len(found), fuzzy=fuzzy)

        nothing: list[tuple[str, tuple[str, ...]]] = []
        return dict(_degrading(statuses, "fulltext", run, nothing))

    def _flat_scan(self) -> FlatScan:
        scan = self._scan
        if scan is None:
            scan = self._scan = _flat_scan_of(self._titles)
        return scan

    def _hits(
        self,
        plan: QueryPlan,
        page: Sequence[tuple[str, float]],
        answers: Mapping[ChannelName, ChannelAnswer],
        exact: set[str],
        alias: set[str],
        votes: Mapping[str, Mapping[str, float]],
        scanned: Mapping[str, tuple[str, ...]],
        deeper: Mapping[ChannelName, Mapping[str, ChannelHit]] | None = None,
    ) -> tuple[Hit, ...]:
        """The shown hits: per-channel evidence, a label, the best passage, each channel's
        vote, whether the note is the one the query names, and a question's next hop
        (note, (the first result's title, the names both name))."""
        fusion = self._config.fusion
        stop_words = plan.lexicon.stop_words
        by_channel = {name: {h.path: h for h in answer.hits} for name, answer in answers.items()}
        for name, found in (deeper or {}).items():
            by_channel.setdefault(name, {}).update((path, hit) for path, hit in found.items() if path not in by_channel[name])
        graph_answer = answers.get("graph")
        entity_stems = self._stems_of_names(reading_of(graph_answer, GraphReading).recognized)
        # Evidence speaks of content words: "who" or "while" matching is no reason to show.
        content = list(plan.content)
        typed = _typed_prefix(plan, answers)
        matcher = _WordMatcher(frozenset(content), plan.prefix, self._stem)
        hits: list[Hit] = []
        chunks_of = self._chunks.of([path for path, _ in page])
        asked = normalized_name(plan.text)
        for path, score in page:
            evidence: dict[ChannelName, ChannelEvidence] = {}
            for name in CHANNEL_NAMES:
                hit = by_channel.get(name, {}).get(path)
                if hit is not None:
                    evidence[name] = ChannelEvidence(
                        rank=hit.rank,
                        score=hit.score,  # raw: eval re-fuses with it; front ends round
                        matched_terms=_content_first(hit.matched_terms, stop_words),
                        matched_words=_typed_words(hit.matched_terms, plan, typed),
                        chunk_id=hit.chunk_id,
                        graph_path=hit.graph_path,
                        graph_relation=hit.graph_relation,
                        relations=hit.relations,
                        clause=hit.clause,
                    )
            fulltext = evidence.get("fulltext")
            matched = typed.covered(fulltext.matched_terms) if fulltext is not None else set()
            label = choose_label(
                evidence,
                exact_title=path in exact,
                alias=path in alias,
                all_terms_matched=bool(content) and set(content) <= matched,
                entity_matched=bool(matched & entity_stems),
                config=fusion,
            )
            if path in scanned and not evidence and path not in exact and path not in alias:
                label = "flat_scan"
            vector = evidence.get("vectors")
            snippet = build_snippet(
                chunks_of.get(path, []),
                matches=matcher,
                hint_terms=list(plan.hint_terms),
                preferred_chunk_id=vector.chunk_id if vector else None,
                phrases=plan.phrases,
            )
            title = self._titles.title_of.get(path, path)
            hits.append(
                Hit(
                    path=path,
                    title=title,
                    score=round(score, 6),
                    label=label,
                    channels=evidence,
                    snippet=snippet,
                    votes={name: round(votes[path][name], 6) for name in CHANNEL_NAMES if name in votes.get(path, {})},
                    create_safety=create_safety(
                        asked, title, self._titles.aliases_of.get(path, ()), exact=path in exact or path in alias
                    ),
                    flat_scan=scanned.get(path, ()) if label == "flat_scan" else (),
                )
            )
        return tuple(hits)

    def _with_reached_hits(self, graph: ChannelAnswer, reached: Mapping[str, str]) -> ChannelAnswer:
        """The graph's answer with the notes a stage reached by a link put first, each one
        link from the note it was reached from (its evidence: a graph path of one step)."""
        title = self._titles.title_of
        by_path = {hit.path: hit for hit in graph.hits}
        by_path.update(
            (
                path,
                ChannelHit(
                    path=path,
                    score=self._config.graph.hop_decay,  # one hop from a note that is not a seed
                    graph_path=(title.get(source, source), title.get(path, path)),
                    graph_relation="links to",
                    relations=self._relations_of(source, path),
                ),
            )
            for path, source in reached.items()
        )
        ahead = set(reached)
        ranked = [*reached, *(hit.path for hit in graph.hits if hit.path not in ahead)]
        return replace(
            graph, hits=tuple(replace(by_path[path], rank=rank) for rank, path in enumerate(ranked, start=1))
        )

    def _vault_view(self) -> _VaultView:
        """What the ranking stages may ask of the vault, as the tables stand now."""
        with self._tables_lock:
            titles, kinds = self._titles, self._kinds
        return _VaultView(self, titles, kinds)

    def _weigher(self, statuses: dict[ChannelName, ChannelStatus]) -> Callable[[Sequence[str]], dict[str, float]] | None:
        """Full text's idf weights for fusion; should they fail, every word counts the same and full text is degraded."""
        term_weights = self._term_weights
        if term_weights is None:
            return None

        def weigh(terms: Sequence[str]) -> dict[str, float]:
            return _degrading(statuses, "fulltext", lambda: term_weights(terms), {})

        return weigh

    def _stems_of_names(self, names: Sequence[str]) -> set[str]:
        """The index terms of the entities a query names (a note holding them names the entity)."""
        if not names or self._stem is None:
            return set()
        try:
            return {stem for name in names for stem in self._stem(name)} - set(self._lexicon.stop_words)
        except Exception:  # the analyzer failed (full text is degraded already): no entity words
            return set()

    def _relations_of(self, a: str, b: str) -> tuple[Relation, ...]:
        found = self._relation(a, b) if self._relation is not None else None
        return (found,) if found is not None else ()


class _VaultView:
    """The vault as the ranking stages see it (`engine.search.ranking.VaultView`)."""

    def __init__(self, searcher: Searcher, titles: TitleIndex, kinds: NoteKinds) -> None:
        self._searcher = searcher
        self._titles = titles
        self._kinds = kinds

    def title_of(self, path: str) -> str:
        return self._titles.title_of.get(path, path)

    def titled(self, key: str) -> Sequence[str]:
        return self._titles.titles.get(key, ())

    def aliased(self, key: str) -> Sequence[str]:
        return self._titles.aliases.get(key, ())

    def starting_with(self, key: str, most: int) -> list[str]:
        return self._titles.starting_with(key, most)

    def link_targets(self, path: str) -> list[str]:
        return [link.target for link in self._searcher._catalog.resolved_links_of([path])]

    def relation(self, a: str, b: str) -> Relation | None:
        found = self._searcher._relation
        return found(a, b) if found is not None else None

    @property
    def kinds(self) -> NoteKinds:
        return self._kinds

    @property
    def structured(self) -> bool:
        return self._searcher.structured

    @property
    def embedded_share(self) -> float:
        return self._searcher.embedded_share()


def _note_kinds(catalog: Catalog, stem: Callable[[str], list[str]] | None, lexicon: Lexicon) -> NoteKinds:
    return NoteKinds(catalog.note_paths(), catalog.tags_mentioning(lexicon.person_marks), stem, lexicon)


class _WordMatcher:
    """Does a word of a passage match the query (same stem, or starts with the prefix)?"""

    def __init__(
        self, stems: frozenset[str], prefix: str | None, stem: Callable[[str], list[str]] | None
    ) -> None:
        self._stems = stems
        self._prefix = fold_accents(prefix) if prefix and len(prefix) >= 2 else None
        self._stem = stem
        # The Porter stemmer only ever rewrites an English word's ending: a plain ASCII word
        # whose first letter begins none of the query's stems cannot match one, and is not
        # stemmed (most words of a passage; stemming them was a fifth of building snippets).
        self._initials = frozenset(s[0] for s in stems if s)
        # What a plain ASCII alphabetic word must begin with to match (build_snippet asks
        # only about those words, and about every other word).
        self.letters = self._initials | ({self._prefix[0]} if self._prefix else set())
        self._seen: dict[str, bool] = {}  # one query's answers: passages repeat their words

    def __call__(self, word: str) -> bool:
        found = self._seen.get(word)
        if found is None:
            lowered = word.lower()
            if self._prefix and fold_accents(lowered).startswith(self._prefix):
                found = True
            elif lowered.isascii() and lowered.isalpha() and lowered[0] not in self._initials:
                found = False
            else:
                found = bool(self._stems & _stems_of(lowered, self._stem))
            self._seen[word] = found
        return found


@lru_cache(maxsize=65536)
def _stems_of(word: str, stem: Callable[[str], list[str]] | None) -> frozenset[str]:
    if stem is None:
        return frozenset((word,))
    return frozenset(stem(word))


def channel_depth(limit: int, fusion: FusionConfig, channels: Collection[ChannelName]) -> int:
    """How many hits each channel is asked for: fusion's depths, whatever `limit` is, so a
    user's top results never change with how many were asked for (a longer list than the
    channels' fused notes is filled by the flat scan). A channel searched alone is its own
    ranking and is asked for `limit` too.

    The vector channel's approximate search widens with this number, so eval's
    single-channel searches ask for the same depth to see the same lists.
    """
    depths = [fusion.depths.get(c, limit) for c in channels]
    if len(channels) == 1:
        return max([limit, *depths])
    return max(depths, default=limit)


def _reading(plan: QueryPlan) -> QueryReading:
    """The chips and notes a front end shows for how the query was read."""
    chips: list[QueryChip] = []
    for query_filter in plan.filters:
        text = query_filter.written
        if query_filter.kind == "date":
            span = " – ".join(str(day) if day else "…" for day in (query_filter.start, query_filter.end))
            text = f"{text} ({span})"
        chips.append(QueryChip(query_filter.kind, text, query_filter.written, query_filter.negated))
    chips.extend(QueryChip("phrase", f'"{phrase}"', f'"{phrase}"') for phrase in plan.phrases)
    chips.extend(QueryChip("exclude", f"-{word}", f"-{word}", True) for word in plan.excluded_words)
    chips.extend(QueryChip("exclude", f'-"{phrase}"', f'-"{phrase}"', True) for phrase in plan.excluded_phrases)
    chips.extend(QueryChip("or", " OR ".join(group), "") for group in plan.alternatives)
    chips.extend(QueryChip("or" if len(c.options) > 1 else "exclude", c.written, c.written, len(c.options) == 1) for c in plan.choices)
    chips.extend(QueryChip("typo", f"{typed} → {read}", "") for typed, read in plan.corrections)
    chips = [replace(chip, without=query_without(plan.raw, chip.written)) if chip.written else chip for chip in chips]
    return QueryReading(
        words=plan.terms,
        chips=tuple(chips),
        notes=plan.readings,
        only_filters=plan.only_filters,
        stems=plan.stems,
        prefix=plan.prefix,
        corrections=plan.corrections,
        typed_as=plan.typed_as,
    )


# Labels that are no confident evidence: a nearest vector alone, or the flat scan's title
# and fuzzy-term matches (which fill the list up to its limit when the channels found fewer).
_NOT_CONFIDENT = frozenset({"weak_semantic", "flat_scan"})


def _confident(hits: Sequence[Hit], scanned: Collection[str] = ()) -> int:
    """Where confident evidence ends: after the last hit whose label is confident evidence,
    never among the notes the flat scan added (they follow what fusion ranked, whatever
    evidence a channel's deeper list holds for them)."""
    last = 0
    for index, hit in enumerate(hits, start=1):
        if hit.path in scanned:
            break
        if hit.label not in _NOT_CONFIDENT:
            last = index
    return last


def _degrade(statuses: dict[ChannelName, ChannelStatus], name: ChannelName, problem: str) -> None:
    """Mark channel `name` degraded (unless it is unavailable anyway) with what failed."""
    before = statuses.get(name)
    if before is not None and before.status != "unavailable":
        statuses[name] = ChannelStatus("degraded", before.ms, problem)


def _degrading(statuses: dict[ChannelName, ChannelStatus], name: ChannelName, work: Callable[[], T], fallback: T) -> T:
    """`work()` (a part of channel `name` run outside its thread), or `fallback` with the channel marked degraded."""
    try:
        return work()
    except Exception as exc:  # a broken channel degrades the search, never fails it
        log.debug("the %s channel failed", name, exc_info=True)  # the status carries the message
        before = statuses.get(name)
        if before is not None and before.status != "unavailable":
            statuses[name] = ChannelStatus("degraded", before.ms, f"{type(exc).__name__}: {exc}")
        return fallback


def _timed(channel: Channel, query: QueryPlan, limit: int) -> tuple[ChannelAnswer, float]:
    started = time.perf_counter()
    answer = channel.search(query, limit)
    return answer, _ms(started)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 2)


def _typed_words(terms: Sequence[str], plan: QueryPlan, typed: TypedPrefix = NO_PREFIX) -> tuple[str, ...]:
    """Matched index terms as the user typed them, stop words left out ("migrat" → migration;
    an expansion of the word being typed, "tombston", → that word as typed so far, "tombst")."""
    stop_words = plan.lexicon.stop_words
    prefix = plan.prefix if typed.stems else None
    words = (
        plan.spelled.get(term) or (prefix if prefix and term in typed.terms else term)
        for term in terms
        if term not in stop_words
    )
    return tuple(dict.fromkeys(word for word in words if word not in stop_words))


def _typed_prefix(plan: QueryPlan, answers: Mapping[ChannelName, ChannelAnswer]) -> TypedPrefix:
    """The word still being typed, as full text searched it (none when the query has no such word)."""
    prefix_terms = reading_of(answers.get("fulltext"), FulltextReading).prefix_terms
    if not plan.prefix or not prefix_terms:
        return NO_PREFIX
    complete = set(plan.complete_stems)
    return TypedPrefix(
        stems=frozenset(stem for stem in plan.stems if stem not in complete),
        terms=frozenset(prefix_terms),
    )


def _content_first(terms: tuple[str, ...], stop_words: frozenset[str]) -> tuple[str, ...]:
    """Matched terms with content words before stop words (badges show the first few)."""
    return tuple(sorted(terms, key=lambda term: term in stop_words))


def _flat_scan_of(titles: TitleIndex) -> FlatScan:
    """The flat scan over every note's title and aliases."""
    names: dict[str, list[str]] = {}
    for key, paths in (*titles.titles.items(), *titles.aliases.items()):
        for path in paths:
            names.setdefault(path, []).append(key)
    return FlatScan(names)
