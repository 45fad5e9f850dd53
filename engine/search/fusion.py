"""Fusion: weighted reciprocal-rank fusion of the channels' lists, with each ranking stage's
evidence, and the re-fusion of a search's trace.

Pure functions, no I/O. A search records every input of its fusion in a `FusionTrace`
(the channels' lists and each stage's record); `refuse` fuses it again: whole (the
search's own order), without a channel, with one channel alone, or without some stages,
so what eval and "why isn't this note here?" report is exactly what the search did.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from engine.config import FusionConfig
from engine.records import ChannelName, FusionTrace, StageRecord

__all__ = ["apply_floors", "counted_rankings", "fused_rankings", "refuse", "weighted_rrf", "with_first"]


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

    Used for the notes a query names by title or alias: a query that names a note gets it first.
    """
    floor_set = dict.fromkeys(floors)
    score_of = dict(fused)
    head = [(key, score_of.get(key, 0.0)) for key in floor_set]
    tail = [(key, score) for key, score in fused if key not in floor_set]
    return head + tail


def with_first(ranking: Sequence[str], first: Sequence[str]) -> list[str]:
    """A channel's list with the notes a stage reached put at its front (in their order)."""
    if not first:
        return list(ranking)
    ahead = set(first)
    return [*first, *(path for path in ranking if path not in ahead)]


def _active(trace: FusionTrace, off: Collection[str]) -> list[StageRecord]:
    return [record for record in trace.stages if record.stage not in off]


def fused_rankings(trace: FusionTrace, off: Collection[str] = ()) -> dict[str, list[str]]:
    """The lists a trace's fusion weighs: each channel's own, with the notes stages put first."""
    out: dict[str, list[str]] = {name: list(ranked) for name, ranked in trace.rankings.items()}
    for record in _active(trace, off):
        for channel, first in record.first.items():
            if channel in out:
                out[channel] = with_first(out[channel], first)
    return out


def counted_rankings(trace: FusionTrace, config: FusionConfig) -> dict[str, list[str]]:
    """Each channel's list as far as fusion counts it (its depth), with the notes stages put first."""
    counted = replace(
        trace,
        rankings={name: ranked[: config.depths.get(name, len(ranked))] for name, ranked in trace.rankings.items()},
    )
    return fused_rankings(counted)


def refuse(
    trace: FusionTrace,
    config: FusionConfig,
    *,
    without: ChannelName | None = None,
    only: ChannelName | None = None,
    off: Collection[str] = (),
    votes: dict[str, dict[str, float]] | None = None,
) -> list[tuple[str, float]]:
    """Fuse a search's trace: as it was, without one channel, one channel alone, or without
    the stages named in `off`.

    One channel alone is that channel's own list, whole (no stage's factors or notes and no
    depth cut: a channel searched by itself has nothing to weigh it against) with the notes
    the query names on top, as a search of that channel alone ranks it. A fusion of several channels ends with
    the trace's flat-scan hits (score 0), as the search's own results do.
    """
    records = _active(trace, off)
    needs = {path: channel for record in records for path, channel in record.floor_channels.items()}
    floors = tuple(
        dict.fromkeys(
            path
            for record in records
            for path in record.floors
            if needs.get(path) is None or (needs[path] != without and only in (None, needs[path]))
        )
    )
    weights = {**config.weights, **trace.weights}
    if only is not None:
        ranked = trace.rankings.get(only)
        lists: dict[str, list[str]] = {only: list(ranked)} if ranked is not None else {}
        fused = weighted_rrf(lists, k=config.k, weights=weights, votes=votes)
        return apply_floors(fused, floors)
    rankings = {name: ranked for name, ranked in fused_rankings(trace, off).items() if name != without}
    for record in records:
        for channel, multiplier in record.weights.items():
            weights[channel] = weights.get(channel, 1.0) * multiplier
    # Factors weigh channels against each other; a channel fused alone keeps its order.
    live = sum(1 for ranked in rankings.values() if ranked)
    factors: dict[str, dict[str, float]] = {}
    if live > 1:
        for record in records:
            for channel, by_note in record.factors.items():
                scale = factors.setdefault(channel, {})
                for path, factor in by_note.items():
                    scale[path] = scale.get(path, 1.0) * factor
    # A channel searched alone is its own ranking, as deep as it was asked for.
    depths = config.depths if len(rankings) > 1 else None
    fused = weighted_rrf(rankings, k=config.k, weights=weights, depths=depths, factors=factors, votes=votes)
    fused = apply_floors(fused, floors)
    if trace.fallback:
        found = {key for key, _ in fused}
        fused.extend((key, 0.0) for key in trace.fallback if key not in found)
    return fused
