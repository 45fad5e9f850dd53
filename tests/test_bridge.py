"""A question's next hop by a name (fusion.keep_bridge), its reading of questions, and `--why`."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine
from engine.config import EngineConfig, FusionConfig
from engine.lexicon.en import ENGLISH
from engine.present import badges, hit_to_json
from engine.query.plan import is_question
from engine.search.fusion import Bridge, keep_bridge
from ui.hits import explain_content
from ui.web.pages import results_fragment

QUESTION = "What is the name of the waterfall in the country where the Bubye River is found?"


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        (QUESTION, True),
        ("which notes mention the sync conflict", True),
        ("Is the garden shaded in the afternoon", True),
        ("waterfall Zimbabwe", False),
        ("the waterfall in the country where the Bubye River is found", False),
        ("Thin-film solar cells degrade faster in humid climates.", False),
        ("ジンバブエの滝は？", True),
        ("", False),
    ],
)
def test_a_question_is_read_from_its_first_word_or_its_mark(query: str, asks: bool) -> None:
    assert is_question(query, ENGLISH) is asks


def test_a_filter_before_the_words_does_not_hide_the_question_word() -> None:
    assert is_question("tag:travel which waterfall", ENGLISH, words="which waterfall")


def _fused(n: int = 8) -> list[tuple[str, float]]:
    return [(f"d{i}", 1.0 - i / 20) for i in range(n)]


RANKINGS = {"fulltext": ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "hop"], "vectors": ["d1", "hop", "d0"], "graph": ["d0"]}


def test_the_next_hop_takes_the_fifth_place_and_its_score() -> None:
    fused = [*_fused(), ("hop", 0.2)]
    bridge = Bridge("d0", {"hop": ("Zimbabwe",)}, {"d0": ("bubye", "river"), "hop": ("waterfal",)})
    kept = keep_bridge(fused, RANKINGS, FusionConfig(), bridge)
    assert [key for key, _ in kept] == ["d0", "d1", "d2", "d3", "hop", "d4", "d5", "d6", "d7"]
    assert kept[4] == ("hop", fused[4][1]) and kept[5] == fused[4]


def test_no_next_hop_where_a_rule_says_no() -> None:
    fused = [*_fused(), ("hop", 0.2)]
    config = FusionConfig()
    hop = {"hop": ("Zimbabwe",)}
    # It matches no query word the first note does not: it adds nothing the first note lacks.
    assert keep_bridge(fused, RANKINGS, config, Bridge("d0", hop, {"d0": ("river",), "hop": ("river",)})) == fused
    # Read from another first note (a re-fusion without a channel put d1 first).
    assert keep_bridge(fused, RANKINGS, config, Bridge("d1", hop, {"hop": ("waterfal",)})) == fused
    # Off, or a list shorter than the place.
    assert keep_bridge(fused, RANKINGS, FusionConfig(bridge_place=0), Bridge("d0", hop, {"hop": ("waterfal",)})) == fused
    assert keep_bridge(fused[:4], RANKINGS, config, Bridge("d0", hop, {"hop": ("waterfal",)})) == fused[:4]
    # The note at the fifth place has a graph vote.
    graph_fifth = {**RANKINGS, "graph": ["d0", "d4"]}
    assert keep_bridge(fused, graph_fifth, config, Bridge("d0", hop, {"hop": ("waterfal",)})) == fused
    # Already in the first five.
    assert keep_bridge(fused, RANKINGS, config, Bridge("d0", {"d2": ("Zimbabwe",)}, {"d2": ("waterfal",)})) == fused
    # In neither text channel's list as fusion counts it.
    shallow = FusionConfig(depths={"fulltext": 5, "vectors": 1, "graph": 30})
    assert keep_bridge(fused, RANKINGS, shallow, Bridge("d0", hop, {"hop": ("waterfal",)})) == fused


def test_the_best_ranked_of_several_next_hops_is_the_one() -> None:
    fused = [*_fused(), ("hop", 0.2), ("other", 0.1)]
    rankings = {"fulltext": ["d0", "d1", "other", "hop"], "vectors": ["d1", "d2", "d3", "hop"]}
    naming = {"hop": ("Zimbabwe",), "other": ("Zambezi",)}
    kept = keep_bridge(fused, rankings, FusionConfig(), Bridge("d0", naming, {"hop": ("a",), "other": ("b",)}))
    assert kept[4][0] == "other"


def _vault(root: Path, pages: int = 7) -> Path:
    """The answer names the country the first hop names and matches "waterfall"; seven notes
    (`pages`) share more of the question's words, and seventy others make the country a rare name."""
    root.mkdir()
    (root / "Bubye River.md").write_text(
        "# Bubye River\n\nThe Bubye River is a river found in the south of Zimbabwe, where it joins the Limpopo.\n",
        encoding="utf-8",
    )
    (root / "Victoria Falls.md").write_text(
        "# Victoria Falls\n\nA waterfall on the Zambezi, on the border of Zimbabwe and Zambia.\n", encoding="utf-8"
    )
    for i in range(1, pages + 1):
        (root / f"Atlas page {i}.md").write_text(
            f"# Atlas page {i}\n\nThe name of each river, the country where it is found, and the name of the country's "
            "capital.\n",
            encoding="utf-8",
        )
    for i in range(1, 71):
        (root / f"Recipe {i}.md").write_text(f"# Recipe {i}\n\nBake the bread for {i} minutes.\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("place", [0, 5])
def test_a_question_s_next_hop_by_a_name_takes_the_fifth_place(tmp_path: Path, place: int) -> None:
    config = EngineConfig(fusion=FusionConfig(bridge_place=place))
    with Engine.open(_vault(tmp_path / "vault"), config, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        results = engine.search(QUESTION, limit=10, as_you_type=False)
        paths = [hit.path for hit in results.hits]
        assert paths[0] == "Bubye River.md", paths
        if not place:
            assert "Victoria Falls.md" not in paths[:5], paths
            return
        assert paths[4] == "Victoria Falls.md", paths
        assert results.trace.bridged == {"Victoria Falls.md": ("Zimbabwe",)}
        hop = results.hits[4]
        assert hop.next_hop == ("Bubye River", ("Zimbabwe",))
        assert "HOP ← Bubye River · Zimbabwe" in [str(b) for b in badges(hop)]
        assert hit_to_json(hop)["next_hop"] == {"from": "Bubye River", "names": ["Zimbabwe"]}
        assert all(hit.next_hop is None for hit in results.hits if hit is not hop)
        # The TUI's explain panel and the web view's explain table say it too.
        assert "next hop names Zimbabwe, as Bubye River (the first result) does" in explain_content(hop, results, False).plain
        assert "HOP ← Bubye River · Zimbabwe" in results_fragment(results)
        assert "names Zimbabwe, as Bubye River (the first result) does" in results_fragment(results)
        moved = engine.why(QUESTION, "Victoria Falls.md", limit=10)
        down = engine.why(QUESTION, paths[5], limit=10)
        statement = engine.search(QUESTION.removeprefix("What is ").removesuffix("?"), limit=10, as_you_type=False)
    assert moved.rank == 5
    assert any(r.startswith("the question's next hop: it names Zimbabwe, as the first result, Bubye River") for r in moved.reasons), moved.reasons
    assert any(r.startswith("place 5 is kept for the question's next hop from Bubye River") for r in down.reasons), down.reasons
    # Not a question: the same words ask for notes about them, and no next hop is read.
    assert not statement.trace.bridged_from


def test_a_next_hop_the_fusion_ranks_high_anyway_is_not_badged(tmp_path: Path) -> None:
    """With two notes sharing the question's words, the answer is fourth on its own merits:
    nothing moves, and no hit says it was reached as a next hop."""
    with Engine.open(_vault(tmp_path / "vault", pages=2), index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        results = engine.search(QUESTION, limit=10, as_you_type=False)
    paths = [hit.path for hit in results.hits]
    assert "Victoria Falls.md" in paths[:4], paths
    assert results.trace.bridged_from == "Bubye River.md"
    assert all(hit.next_hop is None for hit in results.hits)
