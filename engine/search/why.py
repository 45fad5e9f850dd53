"""Why is this note not here? A note's place in one search: each channel's rank, score and
vote, the factors fusion applied, and which rule or cut pushed it down.

Everything is read from the search's own fusion trace and re-fused as the search fused it
(`fusion.refuse`), so the explanation is exactly what the search did.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.config import FusionConfig
from engine.records import CHANNEL_NAMES, ChannelWhy, SearchResults, WhyReport
from engine.search.fusion import refuse

__all__ = ["explain_rank"]

# Channels as people name them in the reasons below (engine/vocabulary.py names them so too).
_NAMES = {"fulltext": "full text", "vectors": "meaning", "graph": "links"}


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def explain_rank(
    results: SearchResults,
    path: str,
    title: str,
    fusion: FusionConfig,
    shown: int,
    titles: Mapping[str, str],
    asked: int,
) -> WhyReport:
    """The place of note `path` in `results` (a search asked for `shown` hits) and why.

    `fusion` is the fusion configuration the search used (its own graph weight included);
    `titles` names notes by path; `asked` is how many hits the search asked each channel for.
    """
    trace = results.trace
    votes: dict[str, dict[str, float]] = {}
    fused = refuse(trace, fusion, votes=votes)
    place = {key: rank for rank, (key, _) in enumerate(fused, start=1)}
    score_of = dict(fused)
    rank = place.get(path)
    cutoff = fused[shown - 1][1] if 0 < shown <= len(fused) else 0.0
    mine = votes.get(path, {})
    channels: list[ChannelWhy] = []
    reasons: list[str] = []
    weights = {**fusion.weights, **trace.weights}
    for name in CHANNEL_NAMES:
        status = results.channels.get(name)
        if status is None:
            continue
        ranked = trace.rankings.get(name, ())
        scores = trace.scores.get(name, ())
        at = ranked.index(path) + 1 if path in ranked else None
        counted = min(len(ranked), fusion.depths.get(name, len(ranked)))
        factor = trace.factor(name, path)
        channels.append(
            ChannelWhy(
                channel=name,
                rank=at,
                score=scores[at - 1] if at is not None and at <= len(scores) else None,
                listed=len(ranked),
                counted=counted,
                factor=round(factor, 4),
                vote=round(mine.get(name, 0.0), 6),
                status=status.status,
            )
        )
        reasons.extend(
            _channel_reasons(name, at, len(ranked), counted, asked, factor, status.status, weights.get(name, 1.0), results)
        )
    reasons.extend(_kind_reasons(path, results, fusion))
    structure = trace.record("structure")
    boost = structure.weights.get("graph", 1.0) if structure is not None else 1.0
    if boost > 1 and "graph" in trace.rankings and path not in trace.rankings["graph"]:
        reasons.insert(0, f"the links answered a question about a relation (they count × {boost:g}) and did not reach this note")
    floored = [key for key in trace.floors if key != path]
    if floored and path not in trace.floors:
        names = ", ".join(titles.get(key, key) for key in floored[:3])
        reasons.append(f"{len(floored)} note(s) the query names by title or alias come first: {names}")
    if path in trace.floors:
        reasons.insert(0, "the query names this note by its title or an alias: it comes first")
    if path in trace.fallback:
        reasons.insert(0, "no search found it; only a look at titles and similar spellings did")
    if rank is None:
        reasons.insert(0, "no search counted it, so it is not in the results at all")
    elif rank > shown:
        reasons.insert(
            0,
            f"it ranks {_ordinal(rank)} and the search shows {shown}: the notes above it have more evidence",
        )
    else:
        reasons.insert(0, f"it is shown, {_ordinal(rank)} of {shown}")
    return WhyReport(
        query=results.query,
        path=path,
        title=title,
        rank=rank,
        score=round(score_of.get(path, 0.0), 6),
        shown=shown,
        cutoff=round(cutoff, 6),
        channels=tuple(channels),
        floors=tuple(trace.floors),
        reasons=tuple(dict.fromkeys(reasons)),
    )


def _channel_reasons(
    name: str,
    at: int | None,
    listed: int,
    counted: int,
    asked: int,
    factor: float,
    status: str,
    weight: float,
    results: SearchResults,
) -> list[str]:
    """What one channel did to the note, in words (nothing when it simply voted in full)."""
    label = _NAMES.get(name, name)
    if status == "unavailable":
        return [f"search by {label} did not run ({results.channels[name].message or 'unavailable'})"]  # type: ignore[index]
    if weight <= 0:
        return [f"search by {label} counts for nothing in this search (weight 0)"]
    if at is None:
        if name == "graph":
            if not results.recognized_entities and not results.trace.rankings.get("graph"):
                return ["links: the query names nothing the vault knows, so there was nowhere to start from"]
            return ["links: not reached from " + (", ".join(results.recognized_entities) or "the entities it started from")]
        if name == "fulltext":
            return ["full text: no word of the query is in it" if listed < asked else f"full text: not among its first {listed}"]
        return [f"meaning: none of its passages is among the {listed} closest to the query"]
    if at > counted:
        return [f"search by {label} ranked it {_ordinal(at)}; only its first {counted} count"]
    if factor < 1:
        return [f"{label}: counts for less (× {factor:.2f}): {_factor_rule(name)}"]
    if factor > 1:
        return [f"{label}: counts for more (× {factor:.2f}): the note the query names is also a top match by words"]
    return []


def _factor_rule(name: str) -> str:
    """The rules that scale a channel's vote (docs/QUALITY.md), in a few words."""
    return {
        "fulltext": "it holds only some of the query's words (the rarer ones count more)",
        "vectors": "its closest passage is not very close in meaning",
        "graph": "the names the links started from cover little of the query, or it is not the kind a who-question asks for",
    }.get(name, "a ranking rule")


def _kind_reasons(path: str, results: SearchResults, fusion: FusionConfig) -> list[str]:
    """What the structure pack did to the note, where it ran."""
    if results.trace.record("structure") is None:
        return []
    structure = fusion.structure
    kind = results.asked_kind
    out = []
    if kind.label and kind.notes and path not in kind.notes and structure.kind_factor < 1:
        out.append(f"the query asks for {kind.label}; this note is not one, so it counts for less (× {structure.kind_factor:g})")
    if results.answer_notes and path not in results.answer_notes:
        out.append(f"a who-question is answered with people: links to other notes count for less (× {structure.answer_kind_factor:g})")
    return out
