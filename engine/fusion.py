"""Weighted reciprocal-rank fusion and floors: pure functions, no I/O."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from engine.config import FusionConfig


def weighted_rrf(
    rankings: Mapping[str, Sequence[str]],
    *,
    k: float,
    weights: Mapping[str, float],
    depths: Mapping[str, int] | None = None,
    factors: Mapping[str, Mapping[str, float]] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked lists: score(d) = sum over channels c of weight_c * f_c(d) / (k + rank_c(d)).

    Ranks are 1-based; only the first `depths[c]` items of a channel count. `factors`
    (default 1) scale one channel's vote for one key, e.g. by how much of the query a
    keyword hit matched. Ties break by the best rank any channel gave, then by the
    key, so the output is deterministic.

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
            scores[key] = scores.get(key, 0.0) + weight * scale.get(key, 1.0) / (k + rank)
            best_rank[key] = min(best_rank.get(key, rank), rank)
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
) -> list[tuple[str, float]]:
    """The engine's whole fusion step: weighted RRF with the configured k, weights and depths, then floors.

    `relational` marks a question about an entity's relations ("Who advises X?"),
    which the graph channel answers: its weight is multiplied by `relational_graph_boost`.
    The search and the evaluation's leave-one-channel-out re-fusion both call this,
    so what eval measures is what search does.
    """
    weights = dict(config.weights)
    if relational:
        weights["graph"] = weights.get("graph", 1.0) * config.relational_graph_boost
    # Factors weigh channels against each other; a channel searched alone keeps its order.
    live = sum(1 for ranked in rankings.values() if ranked)
    fused = weighted_rrf(
        rankings, k=config.k, weights=weights, depths=config.depths, factors=factors if live > 1 else None
    )
    return apply_floors(fused, floors)


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
