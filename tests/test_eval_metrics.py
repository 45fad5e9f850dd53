"""The evaluation metrics against hand-computed values."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.errors import ConfigError
from engine.tools.eval import (
    EvalReport,
    below_floors,
    contribution,
    load_qrels,
    load_queries,
    mean_metrics,
    ndcg_at,
    percentile,
    precision_at,
    query_metrics,
    recall_at,
    reciprocal_rank,
)

GRADES = {"a": 1, "b": 1, "c": 1}


def test_precision_counts_relevant_in_the_first_k_over_k() -> None:
    assert precision_at(["a", "x", "b", "y", "z", "c"], GRADES, 5) == pytest.approx(2 / 5)
    # Fewer than k results still divide by k.
    assert precision_at(["a"], GRADES, 5) == pytest.approx(1 / 5)


def test_recall_is_the_share_of_relevant_notes_found() -> None:
    assert recall_at(["a", "x", "b", "y", "z", "c"], GRADES, 5) == pytest.approx(2 / 3)
    assert recall_at(["a", "b", "c"], GRADES, 5) == 1.0


def test_reciprocal_rank_of_the_first_relevant_note() -> None:
    assert reciprocal_rank(["x", "y", "b", "a"], GRADES) == pytest.approx(1 / 3)
    assert reciprocal_rank(["a"], GRADES) == 1.0


def test_query_with_no_hit_scores_zero_everywhere() -> None:
    assert query_metrics([], GRADES) == {"P@5": 0.0, "R@5": 0.0, "MRR": 0.0, "nDCG@10": 0.0}
    assert query_metrics(["x", "y"], GRADES) == {"P@5": 0.0, "R@5": 0.0, "MRR": 0.0, "nDCG@10": 0.0}


def test_ndcg_binary_by_hand() -> None:
    # Relevant at ranks 2 and 4 of 2 relevant: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
    grades = {"a": 1, "b": 1}
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at(["x", "a", "y", "b"], grades, 10) == pytest.approx(expected)
    assert ndcg_at(["a", "b"], grades, 10) == pytest.approx(1.0)


def test_ndcg_uses_the_grade_as_linear_gain() -> None:
    grades = {"best": 2, "good": 1}
    # The grade-1 note first, the grade-2 note second: DCG = 1 + 2/log2(3); IDCG = 2 + 1/log2(3).
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg_at(["good", "best"], grades, 10) == pytest.approx(expected)
    assert ndcg_at(["best", "good"], grades, 10) == pytest.approx(1.0)
    # Grade > 1 does not change P, R or MRR: relevance is grade >= 1.
    assert precision_at(["good", "best"], grades, 5) == pytest.approx(2 / 5)
    assert recall_at(["good"], grades, 5) == pytest.approx(1 / 2)


def test_ndcg_ideal_comes_from_the_qrels_not_the_ranking() -> None:
    # 12 relevant notes, only one found at rank 1: IDCG sums the ideal top 10.
    grades = {f"r{i}": 1 for i in range(12)}
    idcg = sum(1 / math.log2(rank + 1) for rank in range(1, 11))
    assert ndcg_at(["r5"], grades, 10) == pytest.approx(1 / idcg)


def test_ndcg_only_counts_the_first_k() -> None:
    assert ndcg_at([f"x{i}" for i in range(10)] + ["a"], {"a": 1}, 10) == 0.0


def test_ties_in_the_qrels_and_repeated_keys() -> None:
    # Two notes of equal grade are interchangeable in the ideal ranking: either order is perfect.
    grades = {"a": 2, "b": 2, "c": 1}
    assert ndcg_at(["a", "b", "c"], grades, 10) == pytest.approx(1.0)
    assert ndcg_at(["b", "a", "c"], grades, 10) == pytest.approx(1.0)
    # A note listed twice counts once, at its first rank (no double gain, no extra precision).
    assert precision_at(["a", "a", "x"], grades, 5) == pytest.approx(1 / 5)
    assert ndcg_at(["a", "a", "b", "c"], grades, 10) == pytest.approx(1.0)


def test_grade_zero_is_judged_not_relevant() -> None:
    grades = {"a": 1, "z": 0}
    assert recall_at(["z", "a"], grades, 5) == 1.0
    assert reciprocal_rank(["z", "a"], grades) == pytest.approx(1 / 2)
    assert ndcg_at(["z", "a"], grades, 10) == pytest.approx(1 / math.log2(3))


def test_mean_metrics_averages_per_query() -> None:
    rows = [query_metrics(["a"], {"a": 1}), query_metrics(["x"], {"a": 1})]
    assert mean_metrics(rows) == pytest.approx({"P@5": 0.1, "R@5": 0.5, "MRR": 0.5, "nDCG@10": 0.5})
    assert mean_metrics([]) == {"P@5": 0.0, "R@5": 0.0, "MRR": 0.0, "nDCG@10": 0.0}


def test_percentile_interpolates_like_numpy() -> None:
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == pytest.approx(25.0)
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
    assert percentile([7.0, 7.0, 7.0], 95) == 7.0
    assert percentile([], 50) == 0.0


def test_contribution_unique_and_displaced_by_hand() -> None:
    grades = {"r1": 1, "r2": 1, "r3": 1}
    lists = {
        "fulltext": ["r1", "x1", "x2"],
        "vectors": ["r2", "r1", "x3"],
        "graph": ["x4", "r3"],
    }
    fused = ["r1", "r2", "x4", "x1", "x2", "r3"]
    without = {
        "fulltext": ["r2", "r1", "r3", "x3", "x4"],  # r3 would be in the top 5 without fulltext
        "vectors": ["r1", "x1", "x4", "x2", "r3"],  # r3 again
        "graph": ["r1", "r2", "x1", "x2", "x3"],
    }
    counts = contribution(fused, lists, without, grades)
    # r1 is in both fulltext's and vectors' lists; r2 only vectors'; r3 is outside the fused top 5.
    assert counts["fulltext"] == (0, 1)
    assert counts["vectors"] == (1, 1)
    assert counts["graph"] == (0, 0)


def test_contribution_looks_at_other_channels_top_ten_only() -> None:
    deep = [f"x{i}" for i in range(10)] + ["r"]
    counts = contribution(["r"], {"fulltext": ["r"], "vectors": deep}, {}, {"r": 1})
    assert counts["fulltext"] == (1, 0)  # vectors had r, but at rank 11
    assert counts["vectors"] == (0, 0)  # fulltext had it at rank 1


def test_loaders_read_the_dataset_format(tmp_path: Path) -> None:
    queries = tmp_path / "q.tsv"
    queries.write_text("qid\tquery\nq1\tWho attended X?\nq2\tfoo bar\n", encoding="utf-8")
    qrels = tmp_path / "r.tsv"
    qrels.write_text("qid\tpath\tgrade\nq1\ta.md\t1\nq1\tb c.md\t2\nq2\td.md\t0\n", encoding="utf-8")
    assert load_queries(queries) == [("q1", "Who attended X?"), ("q2", "foo bar")]
    assert load_qrels(qrels) == {"q1": {"a.md": 1, "b c.md": 2}, "q2": {"d.md": 0}}


def test_loaders_reject_malformed_rows(tmp_path: Path) -> None:
    qrels = tmp_path / "r.tsv"
    qrels.write_text("qid\tpath\tgrade\nq1\ta.md\tyes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not an integer"):
        load_qrels(qrels)
    queries = tmp_path / "q.tsv"
    queries.write_text("q1 without a tab\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="columns"):
        load_queries(queries)


def test_below_floors_names_the_failing_metrics() -> None:
    report = EvalReport(
        hybrid={"P@5": 0.2, "R@5": 0.9, "MRR": 0.7, "nDCG@10": 0.75},
        channels={},
        contribution={},
        queries=1,
        latency_ms={"p50": 1.0, "p95": 2.0},
    )
    assert below_floors(report, {"nDCG@10": 0.7, "R@5": None, "MRR": 0.8}) == ["MRR 0.7000 < 0.8"]
    assert below_floors(report, {"nDCG@10": 0.75}) == []


def test_naive_rrf_is_plain_reciprocal_rank_fusion() -> None:
    from engine.tools.eval import naive_rrf

    fused = naive_rrf({"fulltext": ["a", "b", "c"], "vectors": ["b", "d"], "graph": []})
    # b: 1/62 + 1/61 beats a: 1/61; c (1/63) and d (1/62): d first.
    assert fused == ["b", "a", "d", "c"]
    assert naive_rrf({"fulltext": ["a", "a", "b"]}) == ["a", "b"]  # a repeat counts once
    assert naive_rrf({}) == []


def test_query_families_come_from_the_qid_prefix() -> None:
    from engine.tools.eval import query_family

    assert query_family("rel-04") == "rel"
    assert query_family("rel-investedin-acme-2") == "rel-investedin"
    assert query_family("cat13-emb-0012") == "cat13-emb"
    assert query_family("prefix-02") == "prefix"
    assert query_family("2hop__150763_14904") == "2hop"
    assert query_family("5a7decc75542995f4f40230f") == ""
    assert query_family("q55-0015") == "q55"
