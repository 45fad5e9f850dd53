"""Properties of weighted RRF and floors (pure functions)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.config import FusionConfig
from engine.query import QueryPlan
from engine.search.fusion import (
    NO_PREFIX,
    TypedPrefix,
    apply_floors,
    fusion_factors,
    keep_graph_best,
    weighted_rrf,
)

docs = st.lists(st.sampled_from([f"d{i}" for i in range(12)]), unique=True, max_size=12)
rankings = st.dictionaries(st.sampled_from(["fulltext", "vectors", "graph"]), docs, min_size=1)
weights = st.fixed_dictionaries(
    {name: st.floats(min_value=0.1, max_value=5.0) for name in ("fulltext", "vectors", "graph")}
)


def test_hand_computed_scores() -> None:
    fused = weighted_rrf({"a": ["x", "y"], "b": ["y"]}, k=10, weights={"a": 1.0, "b": 2.0})
    assert fused[0][0] == "y"
    assert abs(fused[0][1] - (1 / 12 + 2 / 11)) < 1e-12
    assert abs(fused[1][1] - 1 / 11) < 1e-12


def test_depth_cuts_a_channel_list() -> None:
    fused = weighted_rrf({"a": ["x", "y", "z"]}, k=60, weights={}, depths={"a": 2})
    assert [key for key, _ in fused] == ["x", "y"]


@given(rankings, weights, st.floats(min_value=1, max_value=100))
def test_deterministic_and_complete(ranked: dict[str, list[str]], w: dict[str, float], k: float) -> None:
    first = weighted_rrf(ranked, k=k, weights=w)
    again = weighted_rrf(dict(reversed(list(ranked.items()))), k=k, weights=w)
    assert first == again
    assert {key for key, _ in first} == {d for lst in ranked.values() for d in lst}
    scores = [s for _, s in first]
    assert scores == sorted(scores, reverse=True)


@given(rankings, weights, st.floats(min_value=1, max_value=100))
def test_first_everywhere_comes_first(ranked: dict[str, list[str]], w: dict[str, float], k: float) -> None:
    ranked = {name: ["top", *lst] for name, lst in ranked.items()}
    assert weighted_rrf(ranked, k=k, weights=w)[0][0] == "top"


@given(rankings, weights, st.sampled_from(["fulltext", "vectors", "graph"]), st.floats(min_value=1, max_value=100))
def test_weight_is_monotone(ranked: dict[str, list[str]], w: dict[str, float], channel: str, k: float) -> None:
    """Raising a channel's weight never lowers the fused position of what that channel found."""
    found = ranked.get(channel, [])
    if not found:
        return
    target = found[0]
    before = [key for key, _ in weighted_rrf(ranked, k=k, weights=w)].index(target)
    heavier = dict(w)
    heavier[channel] = w[channel] * 3
    after = [key for key, _ in weighted_rrf(ranked, k=k, weights=heavier)].index(target)
    assert after <= before


@given(rankings, weights, st.lists(st.sampled_from(["d1", "d2", "new"]), unique=True))
def test_floors_come_first_in_order(ranked: dict[str, list[str]], w: dict[str, float], floors: list[str]) -> None:
    fused = weighted_rrf(ranked, k=60, weights=w)
    floored = apply_floors(fused, floors)
    assert [key for key, _ in floored[: len(floors)]] == floors
    assert len(floored) == len({key for key, _ in fused} | set(floors))


def test_the_graph_s_best_missing_note_takes_the_fifth_place_and_its_score() -> None:
    fused = [(f"d{i}", 1.0 - i / 10) for i in range(8)]  # d0 … d7, best first
    kept = keep_graph_best(fused, ["d1", "d6", "d7"], FusionConfig(), {"d6": "d2"})
    assert [key for key, _ in kept] == ["d0", "d1", "d2", "d3", "d6", "d4", "d5", "d7"]
    assert kept[4] == ("d6", fused[4][1]) and kept[5] == fused[4]  # the score of the place it took


def test_the_graph_s_first_two_in_the_first_four_change_nothing() -> None:
    fused = [(f"d{i}", 1.0 - i / 10) for i in range(8)]
    reached = {"d6": "d0", "d7": "d0", "elsewhere": "d0"}
    assert keep_graph_best(fused, ["d3", "d0", "d7"], FusionConfig(), reached) == fused
    assert keep_graph_best(fused, ["d6"], FusionConfig(graph_kept=0), reached) == fused  # off
    assert keep_graph_best(fused[:4], ["d6"], FusionConfig(), reached) == fused[:4]  # a list shorter than the place
    assert keep_graph_best(fused, ["elsewhere"], FusionConfig(), reached) == fused  # a graph answer not fused (filtered)
    # Reached from a bare name, not from a note: one of the many notes that name a concept.
    assert keep_graph_best(fused, ["d6", "d7"], FusionConfig(), {"d7": "d0"}) == fused
    # Reached from a note the fusion does not rank in its first three.
    assert keep_graph_best(fused, ["d6"], FusionConfig(), {"d6": "d3"}) == fused


@given(rankings, weights)
def test_kept_graph_notes_keep_the_list_whole_and_in_score_order(ranked: dict[str, list[str]], w: dict[str, float]) -> None:
    config = FusionConfig()
    fused = weighted_rrf(ranked, k=10, weights=w)
    graph = ranked.get("graph", [])
    kept = keep_graph_best(fused, graph, config, dict.fromkeys(graph, fused[0][0] if fused else ""))
    assert sorted(key for key, _ in kept) == sorted(key for key, _ in fused)
    scores = [score for _, score in kept]
    assert scores == sorted(scores, reverse=True)
    if graph and len(kept) >= config.graph_kept_place:
        assert {key for key, _ in kept[: config.graph_kept_place]} & set(graph[: config.graph_kept])


def test_a_word_being_typed_is_matched_by_its_expansions_and_weighs_as_the_commonest() -> None:
    typed = TypedPrefix(stems=frozenset({"tombst"}), terms=frozenset({"tombst", "tombston", "tombstoneless"}))
    assert typed.covered(("sync", "tombston")) == {"sync", "tombston", "tombst"}
    assert typed.covered(("sync",)) == {"sync"}
    weights = {"sync": 2.0, "tombst": 9.0, "tombston": 3.0, "tombstoneless": 8.0}
    assert typed.weighed(weights)["tombst"] == 3.0
    assert TypedPrefix().covered(("tombston",)) == {"tombston"}


def test_a_hit_on_the_word_being_typed_votes_in_full() -> None:
    plan = QueryPlan(raw="sync tombst", text="sync tombst", terms=("sync", "tombst"), prefix="tombst")
    weights = {"sync": 2.0, "tombst": 9.0, "tombston": 3.0}
    hits = [("a.md", ("sync", "tombston")), ("b.md", ("sync",))]

    def keyword_factors(typed: TypedPrefix) -> dict[str, float]:
        return fusion_factors(
            plan,
            ("sync", "tombst"),
            FusionConfig(),
            {"fulltext": ["a.md", "b.md"]},
            keyword_hits=hits,
            vector_hits=[],
            graph_hits=[],
            recognized=(),
            answer_notes=(),
            term_weights=lambda terms: {term: weights[term] for term in terms},
            typed=typed,
        )["fulltext"]

    typed = keyword_factors(TypedPrefix(stems=frozenset({"tombst"}), terms=frozenset({"tombst", "tombston"})))
    untyped = keyword_factors(NO_PREFIX)
    assert typed["a.md"] == 1.0
    assert untyped["a.md"] == untyped["b.md"] < typed["b.md"] < 1.0
