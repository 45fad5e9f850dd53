"""Per-query knobs and guarantees: graph weight and depth, graph seeding, votes, the flat scan, create_safety."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from engine.api import Engine
from engine.config import MAX_GRAPH_WEIGHT, EngineConfig
from engine.errors import ConfigError
from engine.records import CHUNK_SEEDED
from engine.search import channel_depth
from engine.search.evidence import create_safety, normalized_name
from engine.search.fusion import refuse
from engine.tools.cli import main

QUERY = "who attended the Atlas kickoff"
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """sample_vault without the model (exact and quick); tests must not modify it."""
    from vault_copy import copy_sample_vault

    base = tmp_path_factory.mktemp("knobs")
    engine = Engine.open(copy_sample_vault(base / "vault"), index_dir=base / "index", embedder=None)
    engine.reindex()
    yield engine
    engine.close()


def test_votes_add_up_to_the_fused_score(lexical: Engine) -> None:
    results = lexical.search(QUERY, limit=10, as_you_type=False)
    for hit in results.hits:
        assert sum(hit.votes.values()) == pytest.approx(hit.score, abs=1e-5)
        assert set(hit.votes) <= set(hit.channels)


def test_a_graph_weight_of_zero_leaves_the_graph_out_of_fusion(lexical: Engine) -> None:
    plain = lexical.search(QUERY, limit=10, as_you_type=False)
    assert any("graph" in hit.votes for hit in plain.hits)
    without = lexical.search(QUERY, limit=10, as_you_type=False, graph_weight=0.0)
    assert all("graph" not in hit.votes for hit in without.hits)
    assert [h.path for h in without.hits] != [h.path for h in plain.hits]
    # The trace keeps the weight: re-fusing it gives the search's own order.
    fusion = lexical.config.fusion
    assert [path for path, _ in refuse(without.trace, fusion)][: len(without.hits)] == [h.path for h in without.hits]
    heavier = lexical.search(QUERY, limit=10, as_you_type=False, graph_weight=3.0)
    top = heavier.hits[0]
    assert top.votes["graph"] > plain.hits[0].votes["graph"]


def test_max_hops_bounds_the_walk(lexical: Engine) -> None:
    named_only = lexical.search("Atlas 2026 Kickoff", limit=20, channels=["graph"], as_you_type=False, max_hops=0)
    assert named_only.hits and all(len(h.channels["graph"].graph_path) == 1 for h in named_only.hits)
    one = lexical.search("Atlas 2026 Kickoff", limit=20, channels=["graph"], as_you_type=False, max_hops=1)
    two = lexical.search("Atlas 2026 Kickoff", limit=40, channels=["graph"], as_you_type=False, max_hops=2)
    assert all(len(h.channels["graph"].graph_path) <= 2 for h in one.hits)
    assert len(two.hits) > len(one.hits) > len(named_only.hits)


def test_the_graph_can_start_from_the_top_chunks(lexical: Engine) -> None:
    results = lexical.search("sunlight-readable colour palette for map pins", limit=10, as_you_type=False, graph_seeding="chunks")
    graph = [hit.channels["graph"] for hit in results.hits if "graph" in hit.channels]
    assert graph and any(ev.graph_relation == CHUNK_SEEDED for ev in graph)
    assert not results.recognized_entities or results.trace.rankings["graph"]
    with pytest.raises(ConfigError):
        lexical.search(QUERY, graph_seeding="everywhere")  # type: ignore[arg-type]


def test_the_search_knobs_on_the_command_line(lexical: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    common = [str(lexical.vault), "--index-dir", str(lexical.index_dir), "--no-model", "--json", QUERY]
    assert main(["search", *common, "--graph-weight", "0", "--max-hops", "1", "--graph-seeding", "both"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert all(hit["graph_boost"] == 0 for hit in payload["hits"])
    for bad in (
        ["--graph-weight", "-1"],
        ["--graph-weight", "nan"],
        ["--graph-weight", "1e308"],  # every fused score would be infinite, and the JSON invalid
        ["--max-hops", "-2"],
        ["--graph-seeding", "x"],
    ):
        with pytest.raises(SystemExit) as usage:
            main(["search", *common, *bad])
        assert usage.value.code == 2


@pytest.mark.parametrize(
    ("graph_weight", "max_hops"), [(-1.0, None), (math.nan, None), (math.inf, None), (1e308, None), (None, -1)]
)
def test_the_api_refuses_what_the_command_line_refuses(lexical: Engine, graph_weight: float | None, max_hops: int | None) -> None:
    # Every caller gets the same answer (an MCP client passes numbers straight through):
    # a negative or NaN weight used to drop the graph silently, a huge one made every score infinite.
    with pytest.raises(ConfigError):
        lexical.search(QUERY, limit=5, graph_weight=graph_weight, max_hops=max_hops)
    with pytest.raises(ConfigError):
        lexical.why(QUERY, "Leo Fischer", limit=5, graph_weight=graph_weight, max_hops=max_hops)
    assert lexical.search(QUERY, limit=5, graph_weight=MAX_GRAPH_WEIGHT).hits[0].score < math.inf


def test_any_number_of_hops_ends_where_the_graph_does(lexical: Engine) -> None:
    # The walk stops when a hop reaches nothing new, however many hops were asked for
    # (a billion used to loop a billion times per seed).
    far = lexical.search(QUERY, limit=20, channels=["graph"], as_you_type=False, max_hops=10**9)
    deep = lexical.search(QUERY, limit=20, channels=["graph"], as_you_type=False, max_hops=60)
    assert [(h.path, h.score) for h in far.hits] == [(h.path, h.score) for h in deep.hits]
    wide = lexical.context(QUERY, max_tokens=1500, depth=10**9)
    assert [e.name for e in wide.entities] == [e.name for e in lexical.context(QUERY, max_tokens=1500, depth=60).entities]


def test_a_typo_of_every_word_is_read_as_the_vaults_words(lexical: Engine) -> None:
    results = lexical.search("atlsa kickof", limit=5, as_you_type=False)
    assert results.reading.corrections == (("atlsa", "atlas"), ("kickof", "kickoff"))
    assert results.hits[0].path == "Meetings/2026/2026-01-12 Atlas Kickoff.md"
    assert all(hit.label != "flat_scan" and hit.channels for hit in results.hits)


def test_a_query_no_word_of_which_is_indexed_falls_back_to_a_flat_scan(tmp_path: Path) -> None:
    # Without typo correction the channels find nothing for two misspelt words: the flat
    # scan compares them with every title and with the index's terms one edit away.
    from vault_copy import copy_sample_vault

    config = EngineConfig()
    config = replace(config, fulltext=replace(config.fulltext, typo_correction=False))
    engine = Engine.open(copy_sample_vault(tmp_path / "vault"), config, index_dir=tmp_path / "index", embedder=None)
    try:
        engine.reindex()
        results = engine.search("atlsa kickof", limit=5, as_you_type=False)
        assert len(results.hits) == 5
        assert all(hit.label == "flat_scan" and hit.flat_scan and not hit.channels for hit in results.hits)
        assert "Meetings/2026/2026-01-12 Atlas Kickoff.md" in {hit.path for hit in results.hits}
        assert results.hits[0].flat_scan  # e.g. "kickof ~ kickoff"
        assert results.confident == 0  # no channel's evidence: all of them sit under the divider
        # Eval re-fuses the same list; a channel searched alone has no flat scan.
        assert [path for path, _ in refuse(results.trace, engine.config.fusion)] == [h.path for h in results.hits]
    finally:
        engine.close()


def test_the_flat_scan_fills_up_to_the_limit_after_what_the_channels_found(lexical: Engine) -> None:
    results = lexical.search("sqlcipher", limit=10, as_you_type=False)
    labels = [hit.label for hit in results.hits]
    found = [label for label in labels if label != "flat_scan"]
    assert found and labels[: len(found)] == found  # the channels' notes first
    assert results.confident <= len(found)  # any filling is past the cut
    nothing = lexical.search("zzqxv wqpzz", limit=10, as_you_type=False)
    assert nothing.hits == ()


def test_create_safety_says_whether_the_note_exists(lexical: Engine) -> None:
    exact = lexical.search("Atlas 2026 Kickoff", limit=3, as_you_type=False)
    assert exact.hits[0].create_safety == "exists"
    alias = lexical.search("PK", limit=3, as_you_type=False)
    assert alias.hits[0].path == "People/Priya Kumar.md" and alias.hits[0].create_safety == "exists"
    near = lexical.search("Atlas Kickoff", limit=5, as_you_type=False)
    kickoff = next(h for h in near.hits if h.path == "Meetings/2026/2026-01-12 Atlas Kickoff.md")
    assert kickoff.create_safety == "probable"
    assert all(h.create_safety == "unknown" for h in near.hits if h.path != kickoff.path)


@pytest.mark.parametrize(
    ("query", "title", "aliases", "expected"),
    [
        ("Atlas Kickoff", "Atlas 2026 Kickoff", (), "probable"),
        ("atlas kick-off", "Atlas Kickoff", (), "probable"),
        ("Sync", "Sync Engine", (), "unknown"),  # a word of a longer title is no sign of the same note
        ("Offline sync conflicts notes", "Offline Sync Conflicts", (), "probable"),
        ("Beacon", "Export Pipeline", ("Beacon exports",), "unknown"),
        ("Beacon dash", "Beacon", ("Beacon dashboard",), "probable"),
        ("", "Anything", (), "unknown"),
    ],
)
def test_create_safety_rules(query: str, title: str, aliases: tuple[str, ...], expected: str) -> None:
    assert create_safety(normalized_name(query), title, aliases, exact=False) == expected


def test_a_long_query_is_compared_quickly_and_safely() -> None:
    assert create_safety(normalized_name("x" * 100_000), "x" * 5000, (), exact=False) == "probable"


def test_sample_vault_search_is_unchanged_by_default(lexical: Engine, tmp_path: Path) -> None:
    # The knobs at their defaults are the configured search: same hits, same order.
    plain = lexical.search(QUERY, limit=10, as_you_type=False)
    told = lexical.search(QUERY, limit=10, as_you_type=False, graph_weight=1.0, max_hops=2, graph_seeding="query")
    assert [h.path for h in told.hits] == [h.path for h in plain.hits]
    assert [h.score for h in told.hits] == [h.score for h in plain.hits]


def test_the_top_results_do_not_depend_on_how_many_were_asked_for(lexical: Engine) -> None:
    # Channels are asked for fusion's depths, not for the limit: a user's top ten is the
    # same whether a front end asks for 10 results, 20 or eval's 100.
    queries = [line.split("\t")[1] for line in (DATA / "sample_queries.tsv").read_text("utf-8").splitlines()[1:] if "\t" in line]
    queries += [QUERY, "who invested in Atlas", "Priya Kumar projects", "offline sync conflicts"]
    for text in queries:
        top = [hit.path for hit in lexical.search(text, limit=10, as_you_type=False).hits]
        for limit in (20, 100):
            assert [hit.path for hit in lexical.search(text, limit=limit, as_you_type=False).hits][:10] == top, (text, limit)


def test_channels_are_asked_for_fusions_depths_whatever_the_limit() -> None:
    # The vector channel's approximate search widens with what it is asked for (efSearch):
    # asking for the limit made brainbench's top ten differ between limit 20 and 100.
    fusion = EngineConfig().fusion
    channels = ("fulltext", "vectors", "graph")
    assert {channel_depth(limit, fusion, channels) for limit in (1, 10, 20, 100, 500)} == {max(fusion.depths.values())}
    assert channel_depth(100, fusion, ("vectors",)) == 100  # a channel alone is its own ranking
    assert channel_depth(10, fusion, ("vectors",)) == fusion.depths["vectors"]
