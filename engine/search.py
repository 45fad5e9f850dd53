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
from engine.channels.graph import answers_relation, entity_coverage
from engine.config import EngineConfig, FusionConfig
from engine.entities import STOP_WORDS, fold_accents, normalize
from engine.evidence import build_snippet, choose_label
from engine.fusion import fuse, term_coverage
from engine.kinds import PERSON_MARKS, NoteKinds, linked_of_kind, with_hops
from engine.query import Query, parse_query
from engine.records import (
    CHANNEL_NAMES,
    NO_KIND,
    AskedKind,
    ChannelEvidence,
    ChannelHit,
    ChannelName,
    ChannelStatus,
    Hit,
    SearchResults,
)

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
    ) -> None:
        self._catalog = catalog
        self._term_weights = term_weights
        self._channels = dict(channels)
        self._config = config
        self._pool = ThreadPoolExecutor(max_workers=len(CHANNEL_NAMES), thread_name_prefix="cairn-channel")
        self._titles = TitleIndex(catalog)
        self._stem = stem
        self._kinds = _note_kinds(catalog, stem)

    def refresh_titles(self) -> None:
        """Reload the title/alias floor table and the note kinds after the catalog changed."""
        self._titles = TitleIndex(self._catalog)
        self._kinds = _note_kinds(self._catalog, self._stem)

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
        query = parse_query(raw, as_you_type=as_you_type)
        wanted = [c for c in CHANNEL_NAMES if (channels is None or c in channels)]
        if query.is_empty:
            return SearchResults(
                query=raw,
                hits=(),
                channels={c: ChannelStatus("ok", 0.0) for c in wanted},
                total_ms=_ms(started),
            )
        fusion = self._config.fusion
        depth = channel_depth(limit, fusion, wanted)
        futures: dict[ChannelName, tuple[Future[tuple[ChannelAnswer, float]], float]] = {}
        for name in wanted:
            channel = self._channels.get(name)
            if channel is None:
                continue
            futures[name] = (self._pool.submit(_timed, channel, query, depth), time.perf_counter())
        answers: dict[ChannelName, ChannelAnswer] = {}
        statuses: dict[ChannelName, ChannelStatus] = {}
        for name in wanted:
            if name not in futures:
                statuses[name] = ChannelStatus("unavailable", 0.0, "channel not loaded")
                continue
            future, _submitted = futures[name]
            try:
                answer, elapsed = future.result()
            except Exception as exc:  # a broken channel degrades the search, never fails it
                statuses[name] = ChannelStatus("unavailable", 0.0, f"{type(exc).__name__}: {exc}")
                continue
            answers[name] = answer
            statuses[name] = ChannelStatus(answer.status, round(elapsed, 2), answer.message)

        rankings: dict[str, list[str]] = {name: [h.path for h in answer.hits] for name, answer in answers.items()}
        exact, alias = self._floors(query)
        graph_answer = answers.get("graph")
        relational = (
            graph_answer is not None
            and bool(graph_answer.hits)
            and answers_relation(query.text, graph_answer.recognized, graph_answer.hits[0].graph_relation)
        )
        # The stemmer and the idf weights are the full-text channel's, run here rather
        # than on its thread: a failure of theirs degrades that channel as well.
        stems = _degrading(statuses, "fulltext", lambda: self._query_stems(query), list(query.terms))
        answer_notes = graph_answer.answer_notes if graph_answer is not None else frozenset()
        # A relation question the graph answers with people already weighs kinds its own way.
        kind = self._kinds.asked_for(query.text) if fusion.kind_factor < 1 and not answer_notes else NO_KIND
        no_hop: tuple[str, tuple[str, ...]] = ("", ())
        hop_source, hops = _degrading(statuses, "graph", lambda: self._kind_hop(answers, kind), no_hop)
        if graph_answer is not None and hops:
            graph_answer = answers["graph"] = self._with_hop_hits(graph_answer, hop_source, hops)
            rankings["graph"] = [h.path for h in graph_answer.hits]
        fused = fuse(
            rankings,
            fusion,
            [*exact, *alias],
            relational=relational,
            factors=fusion_factors(
                query.text,
                stems,
                fusion,
                rankings,
                keyword_hits=(
                    [(h.path, h.matched_terms) for h in answers["fulltext"].hits] if "fulltext" in answers else None
                ),
                vector_hits=[(h.path, h.score) for h in answers["vectors"].hits] if "vectors" in answers else [],
                graph_hits=[(h.path, h.graph_path) for h in graph_answer.hits] if graph_answer else [],
                recognized=graph_answer.recognized if graph_answer else (),
                answer_notes=answer_notes,
                term_weights=self._weigher(statuses),
                kind_notes=kind.notes,
                hop_notes=hops,
            ),
        )
        by_channel = {
            name: {h.path: h for h in answer.hits} for name, answer in answers.items()
        }
        # Evidence speaks of content words: "who" or "while" matching is no reason to show.
        content = [s for s in stems if s not in STOP_WORDS] or stems
        hint_terms = [s for s in content if len(s) >= 3] or [s for s in content if len(s) >= 2]
        matcher = self._matcher(query, content)
        hits: list[Hit] = []
        page = fused[:limit]
        chunks_of = self._catalog.chunks_of_notes([path for path, _ in page])
        for path, score in page:
            evidence: dict[ChannelName, ChannelEvidence] = {}
            for name in CHANNEL_NAMES:
                hit = by_channel.get(name, {}).get(path)
                if hit is not None:
                    evidence[name] = ChannelEvidence(
                        rank=hit.rank,
                        score=hit.score,  # raw: eval re-fuses with it; front ends round
                        matched_terms=_content_first(hit.matched_terms),
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
                content_matched=bool(matched - STOP_WORDS),
                config=fusion,
            )
            vector = evidence.get("vectors")
            snippet = build_snippet(
                chunks_of.get(path, []),
                matches=matcher,
                hint_terms=hint_terms,
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
        return SearchResults(
            query=raw,
            hits=tuple(hits),
            channels=statuses,
            recognized_entities=graph_answer.recognized if graph_answer else (),
            expanded_entities=graph_answer.expanded if graph_answer else (),
            total_ms=_ms(started),
            answer_notes=answer_notes,
            asked_kind=kind,
            kind_hops=hops,
        )

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

    def _floors(self, query: Query) -> tuple[list[str], list[str]]:
        key = normalize(query.text)
        exact = list(self._titles.titles.get(key, ()))
        alias = [p for p in self._titles.aliases.get(key, ()) if p not in exact]
        return exact, alias

    def _query_stems(self, query: Query) -> list[str]:
        return query_stems(query, self._stem)

    def _matcher(self, query: Query, stems: list[str]) -> _WordMatcher:
        return _WordMatcher(frozenset(stems), query.prefix, self._stem)


def _note_kinds(catalog: Catalog, stem: Callable[[str], list[str]] | None) -> NoteKinds:
    return NoteKinds(catalog.note_paths(), catalog.tags_mentioning(PERSON_MARKS), stem)


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


def query_stems(query: Query, stem: Callable[[str], list[str]] | None) -> list[str]:
    """The query's index terms (stemmed when a stemmer is given), deduplicated."""
    stems: list[str] = []
    for term in query.terms:
        stems.extend(stem(term) if stem else [term])
    return list(dict.fromkeys(stems))


def fusion_factors(
    text: str,
    stems: Sequence[str],
    fusion: FusionConfig,
    rankings: Mapping[str, Sequence[str]],
    *,
    keyword_hits: Sequence[tuple[str, Collection[str]]] | None,
    vector_hits: Sequence[tuple[str, float]],
    graph_hits: Sequence[tuple[str, tuple[str, ...]]],
    recognized: Sequence[str],
    answer_notes: Collection[str],
    term_weights: Callable[[Sequence[str]], dict[str, float]] | None,
    kind_notes: Collection[str] = (),
    hop_notes: Collection[str] = (),
) -> dict[str, dict[str, float]]:
    """Every channel's per-hit fusion factors; the search and eval's re-fusion both call this.

    `kind_notes` are the notes of the kind the query asks for (`NoteKinds.asked_for`):
    every channel's vote for any other note counts `kind_factor` as much. `hop_notes`
    are the notes of that kind the best keyword match links to (`kinds.linked_of_kind`):
    the graph's vote for them counts in full.
    """
    weights = term_weights(stems) if term_weights is not None and fusion.idf_coverage else None
    factors = {
        **keyword_factors(keyword_hits, stems, fusion.keyword_coverage_power, weights),
        **vector_factors(vector_hits, fusion),
        **graph_factors(text, recognized, graph_hits, rankings, fusion, answer_notes),
    }
    if hop_notes:
        factors.setdefault("graph", {}).update(dict.fromkeys(hop_notes, 1.0))
    if kind_notes and fusion.kind_factor < 1:
        for name, ranked in rankings.items():
            scale = factors.setdefault(name, {})
            for path in ranked:
                if path not in kind_notes:
                    scale[path] = scale.get(path, 1.0) * fusion.kind_factor
    return factors


def keyword_factors(
    hits: Sequence[tuple[str, Collection[str]]] | None,
    stems: Sequence[str],
    power: float,
    weights: Mapping[str, float] | None = None,
) -> dict[str, dict[str, float]]:
    """Per full-text hit (path, matched terms), the factor for how much of the query it matched (idf-weighted if given)."""
    if hits is None or power <= 0:
        return {}
    return {"fulltext": {path: term_coverage(matched, stems, power, weights) for path, matched in hits}}


def vector_factors(hits: Sequence[tuple[str, float]], fusion: FusionConfig) -> dict[str, dict[str, float]]:
    """The vector channel's fusion factor per hit: (cosine / high_vector_cosine) ** power, at most 1.

    A nearest neighbour is always ranked first, however far it is; a weak match
    should not push out a keyword hit that matched the rare words of the query.
    """
    power = fusion.vector_confidence_power
    if power <= 0 or not hits:
        return {}
    high = fusion.high_vector_cosine
    return {"vectors": {path: min(1.0, max(score, 0.0) / high) ** power for path, score in hits}}


def graph_factors(
    text: str,
    recognized: Sequence[str],
    graph_hits: Sequence[tuple[str, tuple[str, ...]]],
    rankings: Mapping[str, Sequence[str]],
    fusion: FusionConfig,
    answer_notes: Collection[str] = (),
) -> dict[str, dict[str, float]]:
    """The graph's fusion factor: how much of the query its recognised entities cover.

    A long query that happens to contain a name is mostly about something the graph
    cannot see, so its graph votes count less. But where a note the query names (a
    graph hit at hop 0; `graph_hits` are (path, graph path) pairs) is also near the top
    of the full-text or vector list, the names are what the query is about and the
    notes the graph reaches from them are the question's next hop: the graph's votes
    then count `seed_confirm_boost` instead.

    `answer_notes` are the notes of the kind a who-question asks for (people), when the
    graph knows them: its votes for other notes count `answer_kind_factor` as much. The
    meeting a "Who attended X?" reaches, or the company it pitched, is context the graph
    found on the way, not an answer; a note the text channels rank high keeps their votes.
    """
    power = fusion.entity_coverage_power
    if power <= 0 or not graph_hits:
        return {}
    if seed_confirmed(graph_hits, rankings, fusion.seed_confirm_rank):
        factor = fusion.seed_confirm_boost
    else:
        factor = entity_coverage(text, recognized) ** power
    if not answer_notes:
        return {"graph": {path: factor for path, _trail in graph_hits}}
    other = factor * fusion.answer_kind_factor
    return {"graph": {path: factor if path in answer_notes else other for path, _trail in graph_hits}}


def seed_confirmed(
    graph_hits: Sequence[tuple[str, tuple[str, ...]]], rankings: Mapping[str, Sequence[str]], within: int
) -> bool:
    """Whether one of the graph's seed notes (hop 0) is also in another channel's top `within`."""
    if within <= 0:
        return False
    seeds = {path for path, trail in graph_hits if len(trail) == 1}
    return any(path in seeds for name, ranked in rankings.items() if name != "graph" for path in ranked[:within])


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


def _timed(channel: Channel, query: Query, limit: int) -> tuple[ChannelAnswer, float]:
    started = time.perf_counter()
    answer = channel.search(query, limit)
    return answer, _ms(started)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 2)


def _content_first(terms: tuple[str, ...]) -> tuple[str, ...]:
    """Matched terms with content words before stop words (badges show the first few)."""
    return tuple(sorted(terms, key=lambda term: term in STOP_WORDS))
