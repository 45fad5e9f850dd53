"""The concurrent three-channel search: run channels, fuse, floor, explain."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import lru_cache
from typing import TypeVar

from engine.catalog import Catalog
from engine.channels.base import Channel, ChannelAnswer
from engine.config import EngineConfig, FusionConfig
from engine.entities import EntityMatch, fold_accents, normalize
from engine.kinds import NoteKinds, linked_of_kind, with_hops
from engine.lexicon import Lexicon
from engine.query import Planner, QueryPlan
from engine.records import (
    CHANNEL_NAMES,
    NO_KIND,
    AskedKind,
    ChannelEvidence,
    ChannelHit,
    ChannelName,
    ChannelStatus,
    FusionTrace,
    Hit,
    SearchResults,
)
from engine.search.evidence import NoteChunks, build_snippet, choose_label
from engine.search.fusion import answers_relation, fusion_factors, refuse

log = logging.getLogger("cairn.search")

T = TypeVar("T")


class TitleIndex:
    """Normalised title and alias → note paths, for the exact-match floor."""

    def __init__(self, catalog: Catalog) -> None:
        self.titles: dict[str, list[str]] = {}
        self.aliases: dict[str, list[str]] = {}
        self.title_of: dict[str, str] = {}
        for path, title, aliases in catalog.note_names():
            self.title_of[path] = title
            key = normalize(title)
            self.titles.setdefault(key, []).append(path)
            stem = normalize(path.rsplit("/", 1)[-1].removesuffix(".md"))
            if stem != key:
                self.titles.setdefault(stem, []).append(path)
            for alias in aliases:
                self.aliases.setdefault(normalize(alias), []).append(path)


class Searcher:
    """Runs the channels concurrently on a thread pool and fuses their answers."""

    def __init__(
        self,
        catalog: Catalog,
        channels: Mapping[ChannelName, Channel],
        config: EngineConfig,
        *,
        stem: Callable[[str], list[str]] | None = None,
        term_weights: Callable[[Sequence[str]], dict[str, float]] | None = None,
        recognize: Callable[[str], Sequence[EntityMatch]] | None = None,
        lexicon: Lexicon,
    ) -> None:
        self._catalog = catalog
        self._term_weights = term_weights
        self._channels = dict(channels)
        self._config = config
        self._pool = ThreadPoolExecutor(max_workers=len(CHANNEL_NAMES), thread_name_prefix="cairn-channel")
        self._titles = TitleIndex(catalog)
        self._stem = stem
        self._lexicon = lexicon
        self._planner = Planner(lexicon, stem=stem, recognize=recognize)
        self._kinds = _note_kinds(catalog, stem, lexicon)
        self._chunks = NoteChunks(catalog)

    def refresh_titles(self) -> None:
        """Reload the title/alias floor table and the note kinds after the catalog changed."""
        self._titles = TitleIndex(self._catalog)
        self._kinds = _note_kinds(self._catalog, self._stem, self._lexicon)

    def plan(self, raw: str, *, as_you_type: bool = True) -> QueryPlan:
        """What the engine reads from a query (see engine/query/plan.py)."""
        return self._planner.plan(raw, as_you_type=as_you_type, kinds=self._kinds)

    def close(self) -> None:
        """Stop the thread pool."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def search(
        self,
        raw: str,
        *,
        limit: int = 20,
        channels: Collection[ChannelName] | None = None,
        as_you_type: bool = True,
    ) -> SearchResults:
        """Search every (or the chosen) channel and fuse; a failing channel only degrades."""
        started = time.perf_counter()
        limit = max(limit, 0)  # a negative limit would slice hits off the end
        plan = self.plan(raw, as_you_type=as_you_type)
        wanted = [c for c in CHANNEL_NAMES if (channels is None or c in channels)]
        if plan.is_empty:
            return SearchResults(
                query=raw,
                hits=(),
                channels={c: ChannelStatus("ok", 0.0) for c in wanted},
                total_ms=_ms(started),
            )
        fusion = self._config.fusion
        depth = channel_depth(limit, fusion, wanted)
        futures: dict[ChannelName, Future[tuple[ChannelAnswer, float]]] = {}
        for name in wanted:
            channel = self._channels.get(name)
            if channel is not None:
                futures[name] = self._pool.submit(_timed, channel, plan, depth)
        answers: dict[ChannelName, ChannelAnswer] = {}
        statuses: dict[ChannelName, ChannelStatus] = {}
        for name in wanted:
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
        for name, problem in plan.problems:  # planning ran a part of these channels: it failed
            _degrade(statuses, name, problem)

        exact, alias = self._floors(plan)
        trace, hop_source = self._trace(plan, answers, statuses, (*exact, *alias))
        graph_answer = answers.get("graph")
        if graph_answer is not None and trace.hops:
            graph_answer = answers["graph"] = self._with_hop_hits(graph_answer, hop_source, trace.hops)
        fused = refuse(trace, fusion)
        hits = self._hits(plan, fused[:limit], answers, set(exact), set(alias))
        answer_notes = graph_answer.answer_notes if graph_answer is not None else frozenset()
        return SearchResults(
            query=raw,
            hits=hits,
            channels=statuses,
            recognized_entities=graph_answer.recognized if graph_answer else (),
            expanded_entities=graph_answer.expanded if graph_answer else (),
            total_ms=_ms(started),
            answer_notes=answer_notes,
            asked_kind=self._asked_kind(plan, answer_notes),
            kind_hops=trace.hops,
            trace=trace,
        )

    def _asked_kind(self, plan: QueryPlan, answer_notes: frozenset[str]) -> AskedKind:
        """The kind fusion weighs by: the plan's, unless fusion ignores kinds or the graph
        already answers a relation question with people (it weighs kinds its own way)."""
        return plan.asked_kind if self._config.fusion.kind_factor < 1 and not answer_notes else NO_KIND

    def _trace(
        self,
        plan: QueryPlan,
        answers: Mapping[ChannelName, ChannelAnswer],
        statuses: dict[ChannelName, ChannelStatus],
        floors: tuple[str, ...],
    ) -> tuple[FusionTrace, str]:
        """Every input of this search's fusion (the channels' lists, the kind hop, factors,
        floors), and the note the kind hop starts from."""
        fusion = self._config.fusion
        rankings: dict[ChannelName, tuple[str, ...]] = {name: tuple(h.path for h in a.hits) for name, a in answers.items()}
        graph_answer = answers.get("graph")
        relational = (
            graph_answer is not None
            and bool(graph_answer.hits)
            and answers_relation(plan, graph_answer.recognized, graph_answer.hits[0].graph_relation)
        )
        answer_notes = graph_answer.answer_notes if graph_answer is not None else frozenset()
        kind = self._asked_kind(plan, answer_notes)
        no_hop: tuple[str, tuple[str, ...]] = ("", ())
        hop_source, hops = _degrading(statuses, "graph", lambda: self._kind_hop(answers, kind), no_hop)
        lists: dict[str, list[str]] = {name: list(ranked) for name, ranked in rankings.items()}
        if "graph" in lists and hops:
            lists["graph"] = with_hops(lists["graph"], hops)
        graph_hits = [(h.path, h.graph_path) for h in graph_answer.hits] if graph_answer else []
        if graph_answer is not None and hops:
            graph_hits = [(h.path, h.graph_path) for h in self._with_hop_hits(graph_answer, hop_source, hops).hits]
        factors = fusion_factors(
            plan,
            plan.stems,
            fusion,
            lists,
            keyword_hits=[(h.path, h.matched_terms) for h in answers["fulltext"].hits] if "fulltext" in answers else None,
            vector_hits=[(h.path, h.score) for h in answers["vectors"].hits] if "vectors" in answers else [],
            graph_hits=graph_hits,
            recognized=graph_answer.recognized if graph_answer else (),
            answer_notes=answer_notes,
            term_weights=self._weigher(statuses),
            kind_notes=kind.notes,
            hop_notes=hops,
        )
        trace = FusionTrace(rankings=rankings, hops=hops, factors=factors, floors=floors, relational=relational)
        return trace, hop_source

    def _hits(
        self,
        plan: QueryPlan,
        page: Sequence[tuple[str, float]],
        answers: Mapping[ChannelName, ChannelAnswer],
        exact: set[str],
        alias: set[str],
    ) -> tuple[Hit, ...]:
        """The shown hits: per-channel evidence, a label and the best passage of each."""
        fusion = self._config.fusion
        stop_words = plan.lexicon.stop_words
        by_channel = {name: {h.path: h for h in answer.hits} for name, answer in answers.items()}
        # Evidence speaks of content words: "who" or "while" matching is no reason to show.
        content = list(plan.content)
        matcher = _WordMatcher(frozenset(content), plan.prefix, self._stem)
        hits: list[Hit] = []
        chunks_of = self._chunks.of([path for path, _ in page])
        for path, score in page:
            evidence: dict[ChannelName, ChannelEvidence] = {}
            for name in CHANNEL_NAMES:
                hit = by_channel.get(name, {}).get(path)
                if hit is not None:
                    evidence[name] = ChannelEvidence(
                        rank=hit.rank,
                        score=hit.score,  # raw: eval re-fuses with it; front ends round
                        matched_terms=_content_first(hit.matched_terms, stop_words),
                        chunk_id=hit.chunk_id,
                        graph_path=hit.graph_path,
                        graph_relation=hit.graph_relation,
                    )
            fulltext = evidence.get("fulltext")
            matched = set(fulltext.matched_terms) if fulltext is not None else set()
            label = choose_label(
                evidence,
                exact_title=path in exact,
                alias=path in alias,
                all_terms_matched=bool(content) and set(content) <= matched,
                content_matched=bool(matched - stop_words),
                config=fusion,
            )
            vector = evidence.get("vectors")
            snippet = build_snippet(
                chunks_of.get(path, []),
                matches=matcher,
                hint_terms=list(plan.hint_terms),
                preferred_chunk_id=vector.chunk_id if vector else None,
            )
            hits.append(
                Hit(
                    path=path,
                    title=self._titles.title_of.get(path, path),
                    score=round(score, 6),
                    label=label,
                    channels=evidence,
                    snippet=snippet,
                )
            )
        return tuple(hits)

    def _weigher(self, statuses: dict[ChannelName, ChannelStatus]) -> Callable[[Sequence[str]], dict[str, float]] | None:
        """Full text's idf weights for fusion; should they fail, every word counts the same and full text is degraded."""
        term_weights = self._term_weights
        if term_weights is None:
            return None

        def weigh(terms: Sequence[str]) -> dict[str, float]:
            return _degrading(statuses, "fulltext", lambda: term_weights(terms), {})

        return weigh

    def _kind_hop(
        self, answers: Mapping[ChannelName, ChannelAnswer], kind: AskedKind
    ) -> tuple[str, tuple[str, ...]]:
        """The best keyword match and the notes of the asked kind it links to, if it is of another kind.

        Only the first full-text hit: following the next ones too (the top 3) reached more
        wrong notes than right ones (docs/QUALITY.md, change 26). The graph carries the hop.
        """
        fulltext, graph = answers.get("fulltext"), answers.get("graph")
        if not kind.notes or fulltext is None or not fulltext.hits or graph is None:
            return "", ()
        best = fulltext.hits[0].path
        if best in kind.notes:
            return best, ()
        links = (target for _, target, _, _ in self._catalog.resolved_links_of([best]))
        return best, linked_of_kind(links, kind.notes)

    def _with_hop_hits(self, graph: ChannelAnswer, source: str, hops: Sequence[str]) -> ChannelAnswer:
        """The graph's answer with the kind hop's notes ranked first, each one link from `source`."""
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
                ),
            )
            for path in hops
        )
        ranked = with_hops([hit.path for hit in graph.hits], hops)
        return replace(
            graph, hits=tuple(replace(by_path[path], rank=rank) for rank, path in enumerate(ranked, start=1))
        )

    def _floors(self, plan: QueryPlan) -> tuple[list[str], list[str]]:
        key = normalize(plan.text)
        exact = list(self._titles.titles.get(key, ()))
        alias = [p for p in self._titles.aliases.get(key, ()) if p not in exact]
        return exact, alias


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
        self._seen: dict[str, bool] = {}  # one query's answers: passages repeat their words

    def __call__(self, word: str) -> bool:
        found = self._seen.get(word)
        if found is None:
            lowered = word.lower()
            found = bool(self._prefix and fold_accents(lowered).startswith(self._prefix)) or bool(
                self._stems & _stems_of(lowered, self._stem)
            )
            self._seen[word] = found
        return found


@lru_cache(maxsize=65536)
def _stems_of(word: str, stem: Callable[[str], list[str]] | None) -> frozenset[str]:
    if stem is None:
        return frozenset((word,))
    return frozenset(stem(word))


def channel_depth(limit: int, fusion: FusionConfig, channels: Collection[ChannelName]) -> int:
    """How many hits each channel is asked for: enough for fusion's depths and for `limit`.

    The vector channel's approximate search widens with this number, so eval's
    single-channel searches ask for the same depth to see the same lists.
    """
    return max([limit, *(fusion.depths.get(c, limit) for c in channels)])


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


def _content_first(terms: tuple[str, ...], stop_words: frozenset[str]) -> tuple[str, ...]:
    """Matched terms with content words before stop words (badges show the first few)."""
    return tuple(sorted(terms, key=lambda term: term in stop_words))
