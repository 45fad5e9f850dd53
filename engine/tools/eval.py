"""Retrieval quality on labelled queries: metrics, per-channel breakdown and contribution."""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from engine.errors import ConfigError
from engine.records import CHANNEL_NAMES, ChannelName, Hit, SearchResults
from engine.search import channel_depth
from engine.search.fusion import counted_rankings, refuse

if TYPE_CHECKING:
    from engine.api import Engine


__all__ = [
    "METRIC_NAMES",
    "EvalReport",
    "QueryMetrics",
    "ablation",
    "contribution",
    "cut_mid_word",
    "evaluate",
    "load_qrels",
    "load_queries",
    "mean_metrics",
    "ndcg_at",
    "percentile",
    "precision_at",
    "query_metrics",
    "recall_at",
    "reciprocal_rank",
    "report_to_json",
    "split_half",
]

METRIC_NAMES = ("P@5", "R@5", "MRR", "nDCG@10")

Grades = Mapping[str, int]


# -- metrics (pure) -------------------------------------------------------------------
def _dedupe(ranked: Sequence[str]) -> list[str]:
    """The ranking with repeated keys dropped (a note counts once, at its best rank)."""
    return list(dict.fromkeys(ranked))


def precision_at(ranked: Sequence[str], grades: Grades, k: int) -> float:
    """Relevant notes (grade >= 1) among the first k, divided by k."""
    top = _dedupe(ranked)[:k]
    return sum(1 for path in top if grades.get(path, 0) > 0) / k


def recall_at(ranked: Sequence[str], grades: Grades, k: int) -> float:
    """Share of the relevant notes found in the first k (0 when nothing is relevant)."""
    relevant = sum(1 for grade in grades.values() if grade > 0)
    if relevant == 0:
        return 0.0
    top = _dedupe(ranked)[:k]
    return sum(1 for path in top if grades.get(path, 0) > 0) / relevant


def reciprocal_rank(ranked: Sequence[str], grades: Grades) -> float:
    """1 / rank of the first relevant note, 0 when none is ranked."""
    for rank, path in enumerate(_dedupe(ranked), start=1):
        if grades.get(path, 0) > 0:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], grades: Grades, k: int) -> float:
    """nDCG@k with linear gain (gain = grade) and the ideal ordering taken from the qrels."""
    dcg = sum(
        max(0, grades.get(path, 0)) / math.log2(rank + 1)
        for rank, path in enumerate(_dedupe(ranked)[:k], start=1)
    )
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(grade / math.log2(rank + 1) for rank, grade in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def query_metrics(ranked: Sequence[str], grades: Grades) -> dict[str, float]:
    """P@5, R@5, MRR and nDCG@10 of one ranking."""
    return {
        "P@5": precision_at(ranked, grades, 5),
        "R@5": recall_at(ranked, grades, 5),
        "MRR": reciprocal_rank(ranked, grades),
        "nDCG@10": ndcg_at(ranked, grades, 10),
    }


def mean_metrics(per_query: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Average each metric over queries (all zeros for no queries)."""
    rows = list(per_query)
    if not rows:
        return dict.fromkeys(METRIC_NAMES, 0.0)
    return {name: sum(row[name] for row in rows) / len(rows) for name in METRIC_NAMES}


def percentile(values: Sequence[float], pct: float) -> float:
    """The pct-th percentile with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * pct / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def contribution(
    fused_top: Sequence[str],
    channel_lists: Mapping[str, Sequence[str]],
    without: Mapping[str, Sequence[str]],
    grades: Grades,
    *,
    top: int = 5,
    own_top: int = 10,
) -> dict[str, tuple[int, int]]:
    """Per channel: (unique relevant, displaced relevant) for one query.

    Unique: relevant notes in the fused top `top` that this channel ranked and no
    other channel had in its own top `own_top`. Displaced: relevant notes in the top
    `top` of the fusion without this channel (`without[channel]`) that are not in the
    fused top `top`.
    """
    fused = set(_dedupe(fused_top)[:top])
    heads = {name: set(ranked[:own_top]) for name, ranked in channel_lists.items()}
    out: dict[str, tuple[int, int]] = {}
    for name, ranked in channel_lists.items():
        mine = set(ranked)
        others = set().union(*(head for other, head in heads.items() if other != name))
        unique = sum(
            1 for path in fused if grades.get(path, 0) > 0 and path in mine and path not in others
        )
        displaced = sum(
            1
            for path in _dedupe(without.get(name, ()))[:top]
            if grades.get(path, 0) > 0 and path not in fused
        )
        out[name] = (unique, displaced)
    return out


# -- data ------------------------------------------------------------------------------
HALVES = ("tune", "check")


def split_half(qid: str) -> str:
    """The half a query belongs to, fixed by its id alone: "tune" when the first byte of
    sha256(qid) is even, else "check" (the split written in tests/data/splits/)."""
    return HALVES[hashlib.sha256(qid.encode("utf-8")).digest()[0] % 2]


NAIVE_RRF_K = 60


def naive_rrf(rankings: Mapping[str, Sequence[str]], k: int = NAIVE_RRF_K) -> list[str]:
    """Plain reciprocal-rank fusion of the channels' own lists: no weights, floors or hops.

    The guard fusion must beat: `engine eval` reports it beside the hybrid (`naive_rrf`).
    """
    scores: dict[str, float] = {}
    for ranked in rankings.values():
        for rank, path in enumerate(_dedupe(ranked), start=1):
            scores[path] = scores.get(path, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda path: (-scores[path], path))


_QID_PARTS = re.compile(r"-|__")


def query_family(qid: str) -> str:
    """The family a query id names by its first one or two parts, up to the first that holds no letter.

    "rel-04" → rel, "rel-investedin-acme-2" → rel-investedin, "q55-0015" → q55,
    "2hop__150763_14904" → 2hop; an id of one part has no family ("").
    """
    parts = _QID_PARTS.split(qid)
    if len(parts) < 2:
        return ""
    family = [parts[0]]
    if len(parts) > 2 and any(c.isalpha() for c in parts[1]):
        family.append(parts[1])
    return "-".join(family)


def _rows(path: Path, columns: int) -> Iterable[tuple[int, list[str]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < columns:
            raise ConfigError(f"{path}:{number}: expected {columns} tab-separated columns")
        if number == 1 and parts[0].strip().lower() == "qid":
            continue  # header
        yield number, [p.strip() for p in parts]


def load_queries(path: Path) -> list[tuple[str, str]]:
    """(qid, query) pairs from a `qid<TAB>query` file with an optional header."""
    return [(parts[0], parts[1]) for _, parts in _rows(path, 2)]


# A word character, as `\w` reads one.
_WORD_CHAR = re.compile(r"\w")
# Only a word this long is cut: a shorter one is typed in a keystroke or two.
CUT_MIN_LETTERS = 5


def cut_mid_word(text: str) -> str | None:
    """The query as typed halfway through its last word ("… the vault that holds plu"):
    that word cut to half its letters (at least 3), what follows it dropped; None where
    the last word is shorter than `CUT_MIN_LETTERS`.

    Read backwards one character at a time: a pattern anchored at the end would try every
    start in a long run of letters that does not end the text.
    """
    end = len(text)
    while end and not _WORD_CHAR.match(text[end - 1]):
        end -= 1
    start = end
    while start and _WORD_CHAR.match(text[start - 1]):
        start -= 1
    word = text[start:end]
    if len(word) < CUT_MIN_LETTERS:
        return None
    return text[:start] + word[: max(3, (len(word) + 1) // 2)]


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """qid → {path: grade} from a `qid<TAB>path<TAB>grade` file with an optional header.

    Grade 2 is the best answer, 1 relevant, 0 judged not relevant, and -1 a note that must
    not be found at all (one an exclusion or a filter rules out): counted as `forbidden_found`.
    """
    qrels: dict[str, dict[str, int]] = {}
    for number, parts in _rows(path, 3):
        try:
            grade = int(parts[2])
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: grade {parts[2]!r} is not an integer") from exc
        qrels.setdefault(parts[0], {})[parts[1]] = grade
    return qrels


# -- running -----------------------------------------------------------------------------
@dataclass
class QueryMetrics:
    """One query's evaluation: metrics per ranking and what each channel found."""

    qid: str
    query: str
    grades: dict[str, int]
    hybrid: dict[str, float]
    channels: dict[str, dict[str, float]]
    contribution: dict[str, tuple[int, int]]
    ms: float
    detail: dict[str, Any] = field(default_factory=dict)
    naive_rrf: dict[str, float] = field(default_factory=dict)
    # Where the fused list's confident evidence ends, and what that cut costs and keeps out.
    confident: int = 0
    relevant_below_cut: int = 0
    first_relevant_below_cut: bool = False
    forbidden_found: int = 0


@dataclass
class EvalReport:
    """Averaged metrics over a query set."""

    hybrid: dict[str, float]
    channels: dict[str, dict[str, float]]
    contribution: dict[str, dict[str, int]]
    queries: int
    latency_ms: dict[str, float]
    skipped: list[str] = field(default_factory=list)
    cut: dict[str, float] = field(default_factory=dict)
    forbidden_found: int = 0
    naive_rrf: dict[str, float] = field(default_factory=dict)
    families: dict[str, dict[str, Any]] = field(default_factory=dict)
    halves: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_query: list[QueryMetrics] = field(default_factory=list, repr=False)



def _hit_row(rank: int, hit: Hit, grades: Grades) -> dict[str, Any]:
    return {
        "rank": rank,
        "path": hit.path,
        "grade": grades.get(hit.path, 0),
        "score": hit.score,
        "label": hit.label,
        "channels": {
            name: {
                "rank": ev.rank,
                "score": ev.score,
                **({"terms": list(ev.matched_terms)} if ev.matched_terms else {}),
                **({"graph_path": list(ev.graph_path)} if ev.graph_path else {}),
            }
            for name, ev in hit.channels.items()
        },
    }


def evaluate(
    engine: Engine,
    queries: Sequence[tuple[str, str]],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    channels: Sequence[ChannelName] = CHANNEL_NAMES,
    limit: int = 100,
    on_query: Callable[[QueryMetrics], None] | None = None,
    typing: bool = False,
    stages_off: Sequence[str] = (),
) -> EvalReport:
    """Run every judged query (hybrid and each channel alone) and average the metrics.

    Args:
        engine: an open, indexed engine.
        queries: (qid, query) pairs; queries without judgments are skipped.
        qrels: qid → {path: grade}.
        channels: the channels the hybrid fuses and that are measured alone.
        limit: hits requested per search.
        on_query: called with each query's result (per-query output).
        typing: search as the search box does while typing (the last word a prefix).
        stages_off: ranking stages switched off in every search (an ablation).
    """
    fusion = engine.config.fusion
    # A channel alone is judged on the list it gave the hybrid search, as deep as that search
    # asked each channel for (the vector channel's approximate search depends on it).
    channel_limit = channel_depth(limit, fusion, channels)
    per_query: list[QueryMetrics] = []
    latencies: list[float] = []
    skipped: list[str] = []
    for qid, text in queries:
        grades = dict(qrels.get(qid, {}))
        if not any(grade > 0 for grade in grades.values()):
            skipped.append(qid)
            continue
        started = time.perf_counter()
        hybrid = engine.search(text, limit=limit, channels=channels, as_you_type=typing, stages_off=stages_off)
        latencies.append((time.perf_counter() - started) * 1000.0)
        fused = [hit.path for hit in hybrid.hits]
        trace = hybrid.trace
        weighed = counted_rankings(trace, fusion)
        lists: dict[str, list[str]] = {name: weighed.get(name, []) for name in channels}
        alone = {name: [path for path, _ in refuse(trace, fusion, only=name)][:channel_limit] for name in channels}
        without: dict[str, list[str]] = {name: [path for path, _ in refuse(trace, fusion, without=name)] for name in channels}
        result = QueryMetrics(
            qid=qid,
            query=text,
            grades=grades,
            hybrid=query_metrics(fused, grades),
            channels={name: query_metrics(alone[name], grades) for name in channels},
            contribution=contribution(fused, lists, without, grades),
            ms=round(latencies[-1], 2),
            detail=_detail(hybrid, lists, grades),
            naive_rrf=query_metrics(
                naive_rrf({name: trace.rankings.get(name, ())[:channel_limit] for name in channels}), grades
            ),
            confident=hybrid.confident,
            relevant_below_cut=sum(1 for path in fused[hybrid.confident : 10] if grades.get(path, 0) > 0),
            first_relevant_below_cut=hybrid.confident <= _first_relevant(fused, grades) < 10,
            forbidden_found=sum(1 for path in fused if grades.get(path, 0) < 0),
        )
        per_query.append(result)
        if on_query is not None:
            on_query(result)
    totals: dict[str, dict[str, int]] = {
        name: {"unique_relevant": 0, "displaced_relevant": 0} for name in channels
    }
    for result in per_query:
        for channel, (unique, displaced) in result.contribution.items():
            totals[channel]["unique_relevant"] += unique
            totals[channel]["displaced_relevant"] += displaced
    return EvalReport(
        hybrid=mean_metrics(r.hybrid for r in per_query),
        channels={name: mean_metrics(r.channels[name] for r in per_query) for name in channels},
        contribution=totals,
        queries=len(per_query),
        latency_ms={
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
        },
        skipped=skipped,
        cut=_cut_summary(per_query),
        forbidden_found=sum(r.forbidden_found for r in per_query),
        naive_rrf=mean_metrics(r.naive_rrf for r in per_query),
        families=_families(per_query, channels),
        halves=_halves(per_query),
        per_query=per_query,
    )


_ABLATION_METRICS = ("R@5", "MRR", "nDCG@10")


def _halves(per_query: Sequence[QueryMetrics]) -> dict[str, dict[str, Any]]:
    """The hybrid, plain RRF and each channel alone on the tune and the check half."""
    out: dict[str, dict[str, Any]] = {}
    for half in HALVES:
        rows = [r for r in per_query if split_half(r.qid) == half]
        if rows:
            out[half] = {
                "queries": len(rows),
                "hybrid": _rounded(mean_metrics(r.hybrid for r in rows)),
                "naive_rrf": _rounded(mean_metrics(r.naive_rrf for r in rows)),
                "channels": {name: _rounded(mean_metrics(r.channels[name] for r in rows)) for name in rows[0].channels},
            }
    return out


def ablation(default: EvalReport, without: Mapping[str, EvalReport]) -> dict[str, Any]:
    """Per half, and per family of 8 queries or more within it: the default, plain RRF k=60
    of the same lists, the best channel alone, and the default with each stage off."""

    def rows(results: Sequence[QueryMetrics], qids: set[str], others: Mapping[str, Sequence[QueryMetrics]]) -> dict[str, Any]:
        mine = [r for r in results if r.qid in qids]
        channel_names = list(mine[0].channels) if mine else []
        best = max(
            ((name, mean_metrics(r.channels[name] for r in mine)) for name in channel_names),
            key=lambda kv: kv[1]["MRR"],
            default=("", dict.fromkeys(METRIC_NAMES, 0.0)),
        )
        table: dict[str, Any] = {
            "queries": len(mine),
            "default": _rounded(mean_metrics(r.hybrid for r in mine)),
            "naive_rrf": _rounded(mean_metrics(r.naive_rrf for r in mine)),
            f"best channel ({best[0]})": _rounded(best[1]),
        }
        for stage, theirs in others.items():
            table[f"without {stage}"] = _rounded(mean_metrics(r.hybrid for r in theirs if r.qid in qids))
        return table

    out: dict[str, Any] = {}
    others = {stage: report.per_query for stage, report in without.items()}
    for half in HALVES:
        qids = {r.qid for r in default.per_query if split_half(r.qid) == half}
        if not qids:
            continue
        families: dict[str, set[str]] = {}
        for r in default.per_query:
            if r.qid in qids:
                families.setdefault(query_family(r.qid), set()).add(r.qid)
        out[half] = {
            "all": rows(default.per_query, qids, others),
            "families": {
                family or "(none)": rows(default.per_query, members, others)
                for family, members in sorted(families.items())
                if len(members) >= 8 and len(families) > 1
            },
        }
    return out


def write_ablation(table: Mapping[str, Any], out: TextIO) -> None:
    """The ablation as plain text: one block per half (and family), one row per ranking."""
    for half, blocks in table.items():
        for name, rows in [("all", blocks["all"]), *blocks["families"].items()]:
            out.write(f"\n{half} half, {name} ({rows['queries']} queries)   " + "  ".join(f"{m:>7}" for m in _ABLATION_METRICS) + "\n")
            default = rows["default"]
            for label, metrics in rows.items():
                if label == "queries":
                    continue
                cells = "  ".join(f"{metrics[m]:>7.3f}" for m in _ABLATION_METRICS)
                delta = ""
                if label != "default":
                    delta = "   " + " ".join(f"{metrics[m] - default[m]:+.3f}" for m in _ABLATION_METRICS)
                out.write(f"  {label:<28} {cells}{delta}\n")


def _families(per_query: Sequence[QueryMetrics], channels: Sequence[ChannelName]) -> dict[str, dict[str, Any]]:
    """Per query family (the qid prefix), when the set has more than one: the same rows as the whole."""
    grouped: dict[str, list[QueryMetrics]] = {}
    for result in per_query:
        grouped.setdefault(query_family(result.qid), []).append(result)
    if len(grouped) < 2:
        return {}
    return {
        family: {
            "queries": len(results),
            "hybrid": _rounded(mean_metrics(r.hybrid for r in results)),
            "naive_rrf": _rounded(mean_metrics(r.naive_rrf for r in results)),
            "channels": {name: _rounded(mean_metrics(r.channels[name] for r in results)) for name in channels},
        }
        for family, results in sorted(grouped.items())
    }


def _cut_summary(per_query: Sequence[QueryMetrics]) -> dict[str, float]:
    """The honest-list cut over the set: confident hits per query, and relevant notes it demotes."""
    if not per_query:
        return {"confident_mean": 0.0, "relevant_below_cut": 0, "queries_cut_before_relevant": 0}
    return {
        "confident_mean": round(sum(min(r.confident, 10) for r in per_query) / len(per_query), 2),
        # Relevant notes in the top 10 that sit under the "no confident match" divider.
        "relevant_below_cut": sum(r.relevant_below_cut for r in per_query),
        # Queries whose first relevant note sits under the divider.
        "queries_cut_before_relevant": sum(1 for r in per_query if r.first_relevant_below_cut),
    }


def _first_relevant(fused: Sequence[str], grades: Grades) -> int:
    """The index of the first relevant note in the top 10, or 10 when there is none."""
    return next((i for i, path in enumerate(fused[:10]) if grades.get(path, 0) > 0), 10)



def _detail(hybrid: SearchResults, lists: Mapping[str, Sequence[str]], grades: Grades) -> dict[str, Any]:
    """What a miss needs for diagnosis: the top 10 with channel evidence, where relevant notes sat."""
    positions = {name: {path: rank for rank, path in enumerate(ranked, 1)} for name, ranked in lists.items()}
    fused_rank = {hit.path: rank for rank, hit in enumerate(hybrid.hits, start=1)}
    return {
        "top": [_hit_row(rank, hit, grades) for rank, hit in enumerate(hybrid.hits[:10], start=1)],
        "relevant": [
            {
                "path": path,
                "grade": grade,
                "fused_rank": fused_rank.get(path),
                "channel_ranks": {name: pos.get(path) for name, pos in positions.items()},
            }
            for path, grade in sorted(grades.items(), key=lambda kv: (-kv[1], kv[0]))
            if grade > 0
        ],
        "entities": {
            "recognized": list(hybrid.recognized_entities),
            "expanded": list(hybrid.expanded_entities),
        },
        "channel_status": {
            name: st.status + (f": {st.message}" if st.message else "")
            for name, st in hybrid.channels.items()
        },
    }


def query_to_json(result: QueryMetrics) -> dict[str, Any]:
    """One line of the per-query JSONL output."""
    return {
        "qid": result.qid,
        "query": result.query,
        "relevant": result.grades,
        "hybrid": _rounded(result.hybrid),
        "naive_rrf": _rounded(result.naive_rrf),
        "channels": {name: _rounded(m) for name, m in result.channels.items()},
        "contribution": {
            name: {"unique_relevant": u, "displaced_relevant": d}
            for name, (u, d) in result.contribution.items()
        },
        "ms": result.ms,
        "confident": result.confident,
        **({"forbidden_found": result.forbidden_found} if result.forbidden_found else {}),
        **result.detail,
    }


def _rounded(metrics: Mapping[str, float]) -> dict[str, float]:
    return {name: round(value, 4) for name, value in metrics.items()}


def report_to_json(report: EvalReport) -> dict[str, Any]:
    """The documented `engine eval --json` object."""
    return {
        "hybrid": _rounded(report.hybrid),
        "channels": {name: _rounded(m) for name, m in report.channels.items()},
        "contribution": report.contribution,
        "queries": report.queries,
        "latency_ms": report.latency_ms,
        "naive_rrf": _rounded(report.naive_rrf),
        "families": report.families,
        "halves": report.halves,
        "cut": report.cut,
        "forbidden_found": report.forbidden_found,
    }


def write_table(report: EvalReport, out: TextIO) -> None:
    """A plain-text table of the report."""
    out.write(f"{'ranking':<10}" + "".join(f"{name:>9}" for name in METRIC_NAMES) + "\n")
    rows = [("hybrid", report.hybrid), ("naive_rrf", report.naive_rrf), *report.channels.items()]
    for label, metrics in rows:
        out.write(f"{label:<10}" + "".join(f"{metrics[name]:>9.3f}" for name in METRIC_NAMES) + "\n")
    if report.families:
        out.write("\nper family (R@5 / MRR / nDCG@10): hybrid | naive_rrf | best channel alone\n")
        for family, row in report.families.items():
            channel_rows: dict[str, dict[str, float]] = row["channels"]
            best: tuple[str, dict[str, float]] = max(
                channel_rows.items(), key=lambda kv: kv[1]["nDCG@10"], default=("-", {})
            )
            cells = [
                " ".join(f"{m.get(name, 0.0):.3f}" for name in ("R@5", "MRR", "nDCG@10"))
                for m in (row["hybrid"], row["naive_rrf"], best[1])
            ]
            out.write(f"  {family or '(none)':<12} {row['queries']:>4}  {cells[0]} | {cells[1]} | {cells[2]} ({best[0]})\n")
    out.write("\ncontribution (relevant notes in the fused top 5)\n")
    for name, counts in report.contribution.items():
        out.write(
            f"  {name:<9} unique {counts['unique_relevant']:>4}   displaced {counts['displaced_relevant']:>4}\n"
        )
    cut = report.cut
    out.write(
        f"\nhonest-list cut: {cut.get('confident_mean', 0):.2f} confident hits per query; "
        f"{cut.get('relevant_below_cut', 0)} relevant notes of the top 10 below it "
        f"({cut.get('queries_cut_before_relevant', 0)} queries' first)\n"
    )
    if report.forbidden_found:
        out.write(f"forbidden notes found (grade -1): {report.forbidden_found}\n")
    out.write(
        f"\n{report.queries} queries; hybrid latency p50 {report.latency_ms['p50']:.1f} ms, "
        f"p95 {report.latency_ms['p95']:.1f} ms\n"
    )


def below_floors(report: EvalReport, floors: Mapping[str, float | None]) -> list[str]:
    """The hybrid metrics under their floor, as `name value < floor` strings."""
    failed = []
    for name, floor in floors.items():
        if floor is not None and report.hybrid[name] < floor:
            failed.append(f"{name} {report.hybrid[name]:.4f} < {floor}")
    return failed


def run_command(args: Any, engine: Engine, progress: Callable[[Any], None], err: TextIO, out: TextIO) -> int:
    """The body of `engine eval`: reindex, evaluate, print; returns an exit code."""
    queries = load_queries(args.queries)
    qrels = load_qrels(args.qrels)
    if args.qid_prefix:
        queries = [(qid, text) for qid, text in queries if qid.startswith(tuple(args.qid_prefix))]
    if getattr(args, "half", None):
        queries = [(qid, text) for qid, text in queries if split_half(qid) == args.half]
    if args.cut_mid_word:
        cut = ((qid, cut_mid_word(text)) for qid, text in queries)
        queries = [(qid, text) for qid, text in cut if text is not None]
    channels = _parse_channels(args.channels)
    engine.reindex(progress=progress)
    status = engine.status()
    if "vectors" in channels and status.embedded_chunks < status.chunks:
        err.write(f"note: only {status.embedded_chunks}/{status.chunks} chunks are embedded\n")
    per_query_file = open(args.per_query, "w", encoding="utf-8") if args.per_query else None  # noqa: SIM115
    done = 0

    def on_query(result: QueryMetrics) -> None:
        nonlocal done
        done += 1
        if per_query_file is not None:
            per_query_file.write(json.dumps(query_to_json(result), ensure_ascii=False) + "\n")
        if done % 25 == 0:
            err.write(f"eval: {done}/{len(queries)}\n")

    try:
        report = evaluate(
            engine,
            queries,
            qrels,
            channels=channels,
            limit=args.limit,
            on_query=on_query,
            typing=args.typing or args.cut_mid_word,
        )
    finally:
        if per_query_file is not None:
            per_query_file.close()
    if report.skipped:
        err.write(f"note: {len(report.skipped)} queries have no relevant note in the qrels and were skipped\n")
    ablated: dict[str, Any] | None = None
    if getattr(args, "ablate", False):
        from engine.search.ranking import STAGE_NAMES

        without = {}
        for stage in STAGE_NAMES:
            err.write(f"eval: without {stage}\n")
            without[stage] = evaluate(
                engine, queries, qrels, channels=channels, limit=args.limit,
                typing=args.typing or args.cut_mid_word, stages_off=(stage,),
            )
        ablated = ablation(report, without)
    if args.json:
        out.write(json.dumps({**report_to_json(report), **({"ablation": ablated} if ablated else {})}, indent=2) + "\n")
    else:
        write_table(report, out)
        if ablated:
            out.write("\nablation: R@5 / MRR / nDCG@10, and each row's difference from the default\n")
            write_ablation(ablated, out)
    failed = below_floors(
        report, {"nDCG@10": args.min_ndcg, "R@5": args.min_recall5, "MRR": args.min_mrr}
    )
    if args.max_forbidden is not None and report.forbidden_found > args.max_forbidden:
        failed.append(f"forbidden_found {report.forbidden_found} > {args.max_forbidden}")
    for line in failed:
        err.write(f"below floor: {line}\n")
    return 6 if failed else 0


def _parse_channels(spec: str) -> tuple[ChannelName, ...]:
    names = [c.strip() for c in spec.split(",") if c.strip()]
    unknown = [c for c in names if c not in CHANNEL_NAMES]
    if unknown or not names:
        raise ConfigError(f"unknown or no channel(s): {', '.join(unknown) or spec!r}")
    return tuple(c for c in CHANNEL_NAMES if c in names)
