"""Fusion: weighted reciprocal-rank fusion, per-hit factors and floors, and the trace of one fusion.

Pure functions, no I/O. The search fuses its channels' lists into a `FusionTrace`; the
evaluation re-fuses that same trace without one channel, or with one alone, so what eval
measures is exactly what the search did.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.config import FusionConfig
from engine.kinds import with_hops
from engine.query import QueryPlan
from engine.records import ChannelName, FusionTrace

# A graph answer joined to the named note by a written link (not mere co-occurrence).
LINK_RELATIONS = frozenset({"links to", "linked from"})
# The graph's best answer keeps a place when the note it was reached from ranks this high.
_KEPT_FROM_TOP = 3



def weighted_rrf(
    rankings: Mapping[str, Sequence[str]],
    *,
    k: float,
    weights: Mapping[str, float],
    depths: Mapping[str, int] | None = None,
    factors: Mapping[str, Mapping[str, float]] | None = None,
    votes: dict[str, dict[str, float]] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked lists: score(d) = sum over channels c of weight_c * f_c(d) / (k + rank_c(d)).

    Ranks are 1-based; only the first `depths[c]` items of a channel count. `factors`
    (default 1) scale one channel's vote for one key, e.g. by how much of the query a
    keyword hit matched. Ties break by the best rank any channel gave, then by the
    key, so the output is deterministic. `votes`, when given, receives each key's vote
    per channel (what each channel added to its score).

    Returns:
        (key, fused score) pairs, best first.
    """
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    for channel, ranked in sorted(rankings.items()):  # fixed order: float sums are order-sensitive
        weight = weights.get(channel, 1.0)
        if weight <= 0:
            continue
        depth = len(ranked) if depths is None else depths.get(channel, len(ranked))
        scale = factors.get(channel, {}) if factors else {}
        seen: set[str] = set()
        for rank, key in enumerate(ranked[:depth], start=1):
            if key in seen:
                continue  # a channel votes once per document
            seen.add(key)
            vote = weight * scale.get(key, 1.0) / (k + rank)
            scores[key] = scores.get(key, 0.0) + vote
            best_rank[key] = min(best_rank.get(key, rank), rank)
            if votes is not None:
                votes.setdefault(key, {})[channel] = vote
    return sorted(scores.items(), key=lambda kv: (-kv[1], best_rank[kv[0]], kv[0]))


def apply_floors(fused: Sequence[tuple[str, float]], floors: Sequence[str]) -> list[tuple[str, float]]:
    """Move `floors` (in their order) to the top; keys not in `fused` are added with score 0.

    Used for exact title or alias matches: a query that names a note gets it first.
    """
    floor_set = dict.fromkeys(floors)
    score_of = dict(fused)
    head = [(key, score_of.get(key, 0.0)) for key in floor_set]
    tail = [(key, score) for key, score in fused if key not in floor_set]
    return head + tail


def fuse(
    rankings: Mapping[str, Sequence[str]],
    config: FusionConfig,
    floors: Sequence[str] = (),
    *,
    relational: bool = False,
    factors: Mapping[str, Mapping[str, float]] | None = None,
    votes: dict[str, dict[str, float]] | None = None,
    from_notes: Mapping[str, str] | None = None,
    bridge: Bridge | None = None,
) -> list[tuple[str, float]]:
    """The engine's whole fusion step: weighted RRF with the configured k, weights and
    depths, then floors, then the graph's best answer kept in the top five, then a
    question's `bridge` (`keep_bridge`).

    `relational` marks a question about an entity's relations ("Who advises X?"),
    which the graph channel answers: its weight is multiplied by `relational_graph_boost`.
    `from_notes` are the graph's answers reached in a step from another note (answer →
    that note), which `keep_graph_best` may keep. The search and the re-fusion of its trace (`refuse`) both call this.
    """
    weights = dict(config.weights)
    if relational:
        weights["graph"] = weights.get("graph", 1.0) * config.relational_graph_boost
    # Factors weigh channels against each other; a channel searched alone keeps its order.
    live = sum(1 for ranked in rankings.values() if ranked)
    fused = weighted_rrf(
        rankings,
        k=config.k,
        weights=weights,
        depths=config.depths,
        factors=factors if live > 1 else None,
        votes=votes,
    )
    fused = keep_graph_best(apply_floors(fused, floors), rankings.get("graph", ()), config, from_notes or {})
    return keep_bridge(fused, rankings, config, bridge) if bridge is not None else fused


@dataclass(frozen=True)
class Bridge:
    """What a question's bridge is read from (`keep_bridge`): the first note as fused
    (`source`), the notes that name a rare name it names (note → those names), and the
    query terms full text matched in each of them and in the source."""

    source: str
    naming: Mapping[str, tuple[str, ...]]
    matched: Mapping[str, Collection[str]]


def keep_bridge(
    fused: list[tuple[str, float]],
    rankings: Mapping[str, Sequence[str]],
    config: FusionConfig,
    bridge: Bridge,
) -> list[tuple[str, float]]:
    """A question's next hop by a name takes place `bridge_place`, with the score of the
    note it moves down (the list stays in score order).

    "The waterfall in the country where the Bubye River is found": the first note,
    *Bubye River*, names Zimbabwe, which the question does not say; *Victoria Falls* names
    it too and matches "waterfall", which *Bubye River* does not. The text channels rank
    it far down (it shares one word with the question), and the graph does not reach it.
    The candidate is the best-ranked note of the full-text and vector lists (as deep as
    fusion counts them) that names one of the first note's rare names and matches a query
    term the first note does not. It moves up only where the first note is still the one
    the names were read from (a re-fusion without a channel may put another first), it is
    not in the places before, and the note it moves down has no graph vote: the graph's
    answers there are what the kept graph answer and the relation rules put there.
    """
    place = config.bridge_place
    if place <= 0 or len(fused) < place or fused[0][0] != bridge.source:
        return fused
    chosen = bridge_choice(rankings, config, bridge)
    if chosen is None:
        return fused
    head = [key for key, _ in fused[:place]]
    graph = rankings.get("graph", ())[: config.depths.get("graph", 0)]
    if chosen in head or head[place - 1] in graph:
        return fused
    return _moved_up(fused, place, chosen)


def keep_graph_best(
    fused: list[tuple[str, float]], graph: Sequence[str], config: FusionConfig, from_notes: Mapping[str, str]
) -> list[tuple[str, float]]:
    """The best of the graph's first `graph_kept` notes that the places before place
    `graph_kept_place` lack takes that place, with the score of the note it moves down
    (the list stays in score order), if the walk reached it in a step from a note the
    fusion ranks in its first three (`from_notes`: answer → that note). A note named in a
    top note's text is the next hop of a question; a note that merely names a concept
    ("Breast Cancer"), or is reached from a note nothing else ranks, is one of many.
    """
    place = config.graph_kept_place
    if config.graph_kept <= 0 or place <= 0 or len(fused) < place:
        return fused
    head = {key for key, _ in fused[: place - 1]}
    missing = next((key for key in graph[: config.graph_kept] if key not in head), None)
    if missing is None or fused[place - 1][0] == missing:
        return fused
    source = from_notes.get(missing)
    if source is None or source not in {key for key, _ in fused[:_KEPT_FROM_TOP]}:
        return fused
    return _moved_up(fused, place, missing)


def _moved_up(fused: list[tuple[str, float]], place: int, key: str) -> list[tuple[str, float]]:
    """`fused` with `key` (further down) at `place`, with the score of the note it moves
    down, so the list stays in score order; unchanged if `key` is not in it (a note
    outside a filter's notes)."""
    rest = [(other, score) for other, score in fused[place - 1 :] if other != key]
    if len(rest) == len(fused) - place + 1:
        return fused
    return [*fused[: place - 1], (key, fused[place - 1][1]), *rest]


def bridge_choice(rankings: Mapping[str, Sequence[str]], config: FusionConfig, bridge: Bridge) -> str | None:
    """The note `keep_bridge` moves up, wherever it is: the best-ranked of the full-text and
    vector lists (as deep as fusion counts them) that names one of the source's rare names
    and matches a query term the source does not (ties by path)."""
    source_terms = set(bridge.matched.get(bridge.source, ()))
    best: dict[str, int] = {}
    for name in ("fulltext", "vectors"):
        for rank, key in enumerate(rankings.get(name, ())[: config.depths.get(name, 0)]):
            if key in bridge.naming and key != bridge.source and set(bridge.matched.get(key, ())) - source_terms:
                best[key] = min(best.get(key, rank), rank)
    return min(best, key=lambda key: (best[key], key)) if best else None


@dataclass(frozen=True)
class TypedPrefix:
    """The word still being typed, as full text searched it: its stems (what a hit's
    coverage of the query counts) and the index terms it was expanded to.

    "tombst" is no word of the vault, but each note holding "tombstone" matched it: a hit
    that matched one of its expansions has matched the word, which weighs as its most
    common expansion (the word it most likely becomes).
    """

    stems: frozenset[str] = frozenset()
    terms: frozenset[str] = frozenset()

    def covered(self, matched: Collection[str]) -> set[str]:
        """The query terms a hit matched: its own, and the typed word's where it matched an expansion."""
        found = set(matched)
        return found | self.stems if self.stems and not self.terms.isdisjoint(found) else found

    def weighed(self, weights: Mapping[str, float]) -> dict[str, float]:
        """`weights` (looked up for the query's stems and these expansions) with the typed
        word's stems weighing as its lightest expansion (the most common one)."""
        held = [weights[term] for term in self.terms if term in weights]
        lightest = min(held, default=None)
        return {**weights, **dict.fromkeys(self.stems, lightest)} if lightest is not None else dict(weights)


NO_PREFIX = TypedPrefix()


def term_coverage(
    matched: Collection[str],
    query_terms: Collection[str],
    power: float,
    weights: Mapping[str, float] | None = None,
) -> float:
    """(share of the query's terms a keyword hit matched) ** power; 1 for a query without terms.

    A keyword hit on one word of a six-word paraphrase is weak evidence; scaling its
    vote keeps it from pushing out what another channel found with confidence. With
    `weights` (a term's idf), the share counts rare words for more than common ones:
    "mainnet keynote" matched is most of "anyone who has given a Mainnet keynote".
    """
    terms = set(query_terms)
    if not terms:
        return 1.0
    found = set(matched) & terms
    if weights is None:
        share = len(found) / len(terms)
    else:
        total = sum(weights.get(term, 1.0) for term in terms)
        share = sum(weights.get(term, 1.0) for term in found) / total if total > 0 else 0.0
    return float(share**power)


def fusion_factors(
    plan: QueryPlan,
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
    seeds: Collection[str] | None = None,
    relation_notes: tuple[Collection[str], Collection[str]] = ((), ()),
    typed: TypedPrefix = NO_PREFIX,
) -> dict[str, dict[str, float]]:
    """Every channel's per-hit fusion factors.

    `typed` is the word still being typed: a keyword hit that matched one of its
    expansions counts as matching it.

    `relation_notes` are the notes the graph joins to a named note by the relation the
    query asks for, and those joined by another relation only: where there are the
    former, every channel's vote for the latter counts `other_relation_factor` as much.

    `seeds` are the notes the query names that the graph walked from (default: the graph
    hits at hop 0; a walk from the top chunks also starts at notes the query does not name).

    `kind_notes` are the notes of the kind the query asks for (`NoteKinds.asked_for`):
    every channel's vote for any other note counts `kind_factor` as much. `hop_notes`
    are the notes of that kind the best keyword match links to (`kinds.linked_of_kind`):
    the graph's vote for them counts in full.
    """
    weights = None
    if term_weights is not None and fusion.idf_coverage:
        weights = typed.weighed(term_weights([*stems, *sorted(typed.terms)]) if typed.stems else term_weights(stems))
    if keyword_hits is not None and typed.stems:
        keyword_hits = [(path, typed.covered(matched)) for path, matched in keyword_hits]
    factors = {
        **keyword_factors(keyword_hits, stems, fusion.keyword_coverage_power, weights),
        **vector_factors(vector_hits, fusion),
        **graph_factors(plan, recognized, graph_hits, rankings, fusion, answer_notes, seeds),
    }
    if hop_notes:
        factors.setdefault("graph", {}).update(dict.fromkeys(hop_notes, 1.0))
    asked, other = relation_notes
    if asked and other and fusion.other_relation_factor != 1:
        _scale_votes(factors, rankings, lambda path: path in other, fusion.other_relation_factor)
    if kind_notes and fusion.kind_factor < 1:
        _scale_votes(factors, rankings, lambda path: path not in kind_notes, fusion.kind_factor)
    return factors


def _scale_votes(
    factors: dict[str, dict[str, float]],
    rankings: Mapping[str, Sequence[str]],
    scaled: Callable[[str], bool],
    factor: float,
) -> None:
    """Multiply every channel's factor for the notes `scaled` picks by `factor`."""
    for name, ranked in rankings.items():
        scale = factors.setdefault(name, {})
        for path in ranked:
            if scaled(path):
                scale[path] = scale.get(path, 1.0) * factor


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
    plan: QueryPlan,
    recognized: Sequence[str],
    graph_hits: Sequence[tuple[str, tuple[str, ...]]],
    rankings: Mapping[str, Sequence[str]],
    fusion: FusionConfig,
    answer_notes: Collection[str] = (),
    seeds: Collection[str] | None = None,
) -> dict[str, dict[str, float]]:
    """The graph's fusion factor: how much of the query its recognised entities cover.

    A long query that happens to contain a name is mostly about something the graph
    cannot see, so its graph votes count less. But where a note the query names (a
    graph hit at hop 0; `graph_hits` are (path, graph path) pairs) is also near the top
    of the full-text or vector list, the names are what the query is about and the
    notes the graph reaches from them are the question's next hop: the graph's votes
    then count `seed_confirm_boost`, times that same coverage (`seed_confirm_coverage`):
    "Who attended Demo Day W30?" is nearly all name and lets the graph decide; in a
    four-hop question one name is a small part, and the hubs its walk reaches (a
    country, a war) must not push out what the text channels found for the rest.

    `answer_notes` are the notes of the kind a who-question asks for (people), when the
    graph knows them: its votes for other notes count `answer_kind_factor` as much. The
    meeting a "Who attended X?" reaches, or the company it pitched, is context the graph
    found on the way, not an answer; a note the text channels rank high keeps their votes.
    """
    power = fusion.entity_coverage_power
    if power <= 0 or not graph_hits:
        return {}
    coverage = plan.coverage(recognized) ** power
    if seed_confirmed(graph_hits, rankings, fusion.seed_confirm_rank, seeds):
        factor = fusion.seed_confirm_boost * (coverage if fusion.seed_confirm_coverage else 1.0)
    else:
        factor = coverage
        if plan.graph.seeds:
            # A walk from the top chunks' entities starts where the text channels found the
            # query's answer, not from names the query happens to contain.
            factor = max(factor, fusion.chunk_seed_factor)
    if not answer_notes:
        return {"graph": {path: factor for path, _trail in graph_hits}}
    other = factor * fusion.answer_kind_factor
    return {"graph": {path: factor if path in answer_notes else other for path, _trail in graph_hits}}


def seed_confirmed(
    graph_hits: Sequence[tuple[str, tuple[str, ...]]],
    rankings: Mapping[str, Sequence[str]],
    within: int,
    seeds: Collection[str] | None = None,
) -> bool:
    """Whether one of the graph's seed notes (`seeds`, default the hits at hop 0) is also in
    another channel's top `within`."""
    if within <= 0:
        return False
    named = set(seeds) if seeds is not None else {path for path, trail in graph_hits if len(trail) == 1}
    return any(path in named for name, ranked in rankings.items() if name != "graph" for path in ranked[:within])


def answers_relation(plan: QueryPlan, recognized: Sequence[str], top_relation: str | None) -> bool:
    """Whether fusion should let the graph answer: a relation question whose best graph
    answer is joined to the named note by a written link (not mere co-occurrence)."""
    return top_relation in LINK_RELATIONS and plan.asks_about(recognized)


def fused_rankings(trace: FusionTrace) -> dict[str, list[str]]:
    """The lists a trace's fusion weighs: the channels' own, the graph's with the kind hop first."""
    out: dict[str, list[str]] = {name: list(ranked) for name, ranked in trace.rankings.items()}
    if "graph" in out and trace.hops:
        out["graph"] = with_hops(out["graph"], trace.hops)
    return out


def counted_rankings(trace: FusionTrace, config: FusionConfig) -> dict[str, list[str]]:
    """Each channel's list as far as fusion counts it (its depth), the graph's with the kind hop first."""
    counted = FusionTrace(
        rankings={name: ranked[: config.depths.get(name, len(ranked))] for name, ranked in trace.rankings.items()},
        hops=trace.hops,
    )
    return fused_rankings(counted)


def refuse(
    trace: FusionTrace,
    config: FusionConfig,
    *,
    without: ChannelName | None = None,
    only: ChannelName | None = None,
    votes: dict[str, dict[str, float]] | None = None,
) -> list[tuple[str, float]]:
    """Fuse a search's trace again: as it was, without one channel, or one channel alone.

    One channel alone is that channel's own list (no kind hop: a channel searched by
    itself has no keyword match to hop from) with the floors on top, as a search of that
    channel alone ranks it. A fusion of several channels ends with the trace's flat-scan
    hits (score 0), as the search's own results do.
    """
    if trace.weights:
        config = replace(config, weights={**config.weights, **trace.weights})
    if only is not None:
        ranked = trace.rankings.get(only)
        return fuse({only: list(ranked)} if ranked is not None else {}, config, trace.floors, votes=votes)
    rankings = {name: ranked for name, ranked in fused_rankings(trace).items() if name != without}
    fused = fuse(
        rankings,
        config,
        trace.floors,
        relational=trace.relational,
        factors=trace.factors,
        votes=votes,
        from_notes=trace.graph_from_notes,
        bridge=Bridge(trace.bridged_from, trace.bridged, trace.matched) if trace.bridged_from else None,
    )
    if trace.fallback:
        found = {key for key, _ in fused}
        fused.extend((key, 0.0) for key in trace.fallback if key not in found)
    return fused
