"""`engine bench` smoke test (shape and sanity of one small real run) and the synthetic vault."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.query.parse import parse_query
from engine.tools.bench import render
from engine.tools.synth import SynthSpec, generate, keyword_queries, syntax_queries

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real benchmark run: 300 synthetic notes, the real model on 20 of them."""
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    done = subprocess.run(
        [
            sys.executable, "-m", "engine", "bench", "--notes", "300", "--embed-notes", "20",
            "--queries", "6", "--no-watch", "--json", "--out", str(out),
        ],
        capture_output=True, text=True, cwd=ROOT, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[bench" in done.stderr, "progress goes to stderr"
    result: dict[str, Any] = json.loads(done.stdout)
    assert json.loads(out.read_text(encoding="utf-8")) == result, "--out writes the same object"
    return result


@pytest.mark.slow
def test_bench_json_has_every_measurement(bench_result: dict[str, Any]) -> None:
    r = bench_result
    assert r["notes"] == 300
    index = r["index"]
    for phase in ("parse", "catalog", "fulltext", "graph", "embed"):
        assert index["phases_s"][phase] >= 0.0, phase
    assert index["phases_s"]["embed"] > 0.0
    assert index["chunks"] > 300 and index["links"] > 300
    assert index["embed_tokens"] > 1000
    assert index["embed_tokens_per_s"] > 0 and index["raw_model_tokens_per_s"] > 0
    assert 0.2 < index["embed_ratio"] < 5, "the engine's embedding phase and the bare model loop are comparable"

    search = r["search_ms"]
    assert search["keystrokes"] > 6
    assert 0 < search["p50"] <= search["p95"] <= search["max"]
    assert set(search["per_channel"]) == {"fulltext", "vectors", "graph"}
    for stats in search["per_channel"].values():
        assert 0 <= stats["p50"] <= stats["p95"]

    assert r["update"]["failed"] == 0 and r["update"]["edits"] > 0
    assert r["update_to_searchable_ms"] > 0
    syntax = r["search_ms_syntax"]
    assert syntax["keystrokes"] > 6 and len(r["syntax_queries"]) == 6
    assert 0 < syntax["p50"] <= syntax["p95"] <= syntax["max"]

    assert r["cold_open_ms"] > 0
    assert r["peak_rss_mb"]["indexing"] > 50 and r["peak_rss_mb"]["serving"] > 50
    assert r["index_bytes"] > 100_000
    if r["rg_ms"] is not None:
        assert 0 < r["rg_ms"]["p50"] <= r["rg_ms"]["p95"]
    assert r["machine"]["cpus"] >= 1


@pytest.mark.slow
def test_bench_human_output_names_the_numbers(bench_result: dict[str, Any]) -> None:
    text = render(bench_result)
    assert "as-you-type" in text and "cold open" in text and "peak RSS" in text
    assert "as-you-type in the query language" in text
    assert re.search(r"embedding: \d+ tokens/s vs raw model \d+ tokens/s", text)


def test_synthetic_vault_is_deterministic_and_realistic(tmp_path: Path) -> None:
    first = generate(tmp_path / "a", SynthSpec(120, seed=3))
    second = generate(tmp_path / "b", SynthSpec(120, seed=3))
    other = generate(tmp_path / "c", SynthSpec(120, seed=4))
    assert first.paths == second.paths and len(first.paths) == 120
    for rel in first.paths:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    assert any((tmp_path / "a" / p).read_bytes() != (tmp_path / "c" / p).read_bytes() for p in first.paths if p in other.paths) or first.paths != other.paths

    texts = {rel: (tmp_path / "a" / rel).read_text(encoding="utf-8") for rel in first.paths}
    folders = {rel.split("/")[0] for rel in first.paths}
    assert {"People", "Projects", "Meetings", "Daily"} <= folders
    person = next(t for r, t in texts.items() if r.startswith("People/"))
    assert person.startswith("---\ntags: [person") and "aliases:" in person
    meeting = next(t for r, t in texts.items() if r.startswith("Meetings/"))
    assert "Attendees: [[" in meeting and "\n## " in meeting
    words = sorted(len(t.split()) for t in texts.values())
    assert words[0] >= 40 and words[-1] > 4 * words[len(words) // 2], "a long tail of note lengths"
    linked = {m for t in texts.values() for m in re.findall(r"\[\[([^\]|#]+)", t)}
    stems = {Path(p).stem for p in first.paths}
    assert len(linked & stems) >= len(first.people) // 2, "links resolve to generated notes"


def test_keyword_queries_are_deterministic(tmp_path: Path) -> None:
    vault = generate(tmp_path / "v", SynthSpec(60, seed=1))
    assert keyword_queries(vault, 10, seed=2) == keyword_queries(vault, 10, seed=2)
    assert len(set(keyword_queries(vault, 10, seed=2))) > 5


def _json_of(*argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", *argv, "--sizes", "1,2", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_parser_bench_times_every_stage_on_every_pattern() -> None:
    from engine.tools.bench_parsers import PATTERNS, STAGES
    from engine.tools.bench_parsers import render as render_parsers

    result = _json_of("engine", "bench", "--parsers")
    assert result["sizes_kb"] == [1, 2] and result["loadavg"]
    assert set(result["ms_per_kb"]) == set(STAGES)
    for rows in result["ms_per_kb"].values():
        assert set(rows) == set(PATTERNS)
        assert all(len(row) == 2 and all(v is not None and v >= 0 for v in row) for row in rows.values())
    assert set(result["worst"]) == set(STAGES)
    table = render_parsers(result)
    assert "growth" in table and all(stage in table for stage in STAGES)


def test_web_render_bench_uses_the_same_patterns() -> None:
    from engine.tools.bench_parsers import PATTERNS

    result = _json_of("ui.web.bench_render")
    assert set(result["ms_per_kb"]) == {"web note page"}
    assert set(result["ms_per_kb"]["web note page"]) == set(PATTERNS)


def test_parser_bench_rejects_bad_sizes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "engine", "bench", "--parsers", "--sizes", "0,x"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )
    assert done.returncode == 2 and "whole KB" in done.stderr


def test_syntax_queries_use_the_query_language(tmp_path: Path) -> None:
    vault = generate(tmp_path / "v", SynthSpec(80, seed=3))
    queries = syntax_queries(vault, 10, seed=4)
    assert queries == syntax_queries(vault, 10, seed=4), "deterministic"
    parsed = [parse_query(q, as_you_type=False) for q in queries]
    assert any(p.filters and p.terms for p in parsed), "a filter plus words"
    assert any(p.phrases for p in parsed), "a phrase"
    assert any(p.excluded_words for p in parsed), "an exclusion"
    vocabulary = {w.lower().strip(".,;:!?()[]#*\"'") for path in vault.paths for w in (vault.root / path).read_text().split()}
    typos = [q for q, p in zip(queries, parsed, strict=True) if not p.has_syntax]
    assert typos and all(q.split()[0] not in vocabulary for q in typos), "a word one slip away from the vault's"


@pytest.mark.slow
def test_answers_bench_times_every_path_beside_ripgrep(tmp_path: Path) -> None:
    import shutil

    from engine.tools.bench_answers import render_answers

    done = subprocess.run(
        [sys.executable, "-m", "engine", "bench", "--answers", "--notes", "60", "--queries", "2", "--no-embed", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    expected = {"python_start", "cold_lexical", "socket_lexical"} | ({"ripgrep"} if shutil.which("rg") else set())
    assert set(result["paths"]) == expected
    for row in result["paths"].values():
        assert row["runs"] >= 3 and 0 < row["min_ms"] <= row["median_ms"] <= row["max_ms"]
    assert result["notes"] == 60 and result["commit"]
    table = render_answers(result)
    assert "answered by engine watch" in table and "--cold (opens the index)" in table
