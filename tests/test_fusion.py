"""Properties of weighted RRF and floors (pure functions)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ranking_support import hits, stage_context

from engine.channels.base import ChannelAnswer
from engine.channels.fulltext import FulltextReading
from engine.config import FusionConfig
from engine.query import QueryPlan
from engine.records import FusionTrace, StageRecord
from engine.search.fusion import apply_floors, fused_rankings, refuse, weighted_rrf
from engine.search.ranking.coverage import CoverageStage, TypedPrefix

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


def _trace(ranked: dict[str, list[str]], *records: StageRecord) -> FusionTrace:
    return FusionTrace(rankings={name: tuple(lst) for name, lst in ranked.items()}, stages=records)  # type: ignore[misc]


@given(rankings, st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]), st.floats(min_value=0.01, max_value=1.0)))
def test_a_trace_re_fuses_as_its_stages_weighed_it(ranked: dict[str, list[str]], scale: dict[str, float]) -> None:
    """Re-fusing a trace applies every stage's factors, multiplied; a stage switched off applies none."""
    config = FusionConfig()
    one = StageRecord("coverage", factors={"fulltext": scale})
    two = StageRecord("names", factors={"fulltext": dict.fromkeys(scale, 0.5)})
    trace = _trace(ranked, one, two)
    live = sum(1 for lst in ranked.values() if lst)
    combined = {key: factor * 0.5 for key, factor in scale.items()}
    expected = weighted_rrf(ranked, k=config.k, weights=config.weights, depths=config.depths, factors={"fulltext": combined} if live > 1 else None)
    assert refuse(trace, config) == expected
    without_names = weighted_rrf(ranked, k=config.k, weights=config.weights, depths=config.depths, factors={"fulltext": scale} if live > 1 else None)
    assert refuse(trace, config, off=("names",)) == without_names


def test_a_stage_never_moves_a_note_to_a_place_only_its_score() -> None:
    """A factor lowers a note's vote; the list stays in score order, whatever the factor."""
    ranked = {"fulltext": ["a", "b", "c"], "vectors": ["c", "b", "a"]}
    trace = _trace(ranked, StageRecord("coverage", factors={"fulltext": {"a": 0.1}}))
    fused = refuse(trace, FusionConfig())
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)
    assert [key for key, _ in fused][-1] == "a"


def test_notes_a_stage_reached_join_the_front_of_a_channel_s_list() -> None:
    trace = _trace({"graph": ["x", "y"], "fulltext": ["y"]}, StageRecord("structure", first={"graph": ("hop",)}))
    assert fused_rankings(trace)["graph"] == ["hop", "x", "y"]
    assert fused_rankings(trace, off=("structure",))["graph"] == ["x", "y"]


def test_floors_come_from_the_navigation_record_and_a_channel_alone_keeps_its_order() -> None:
    trace = _trace(
        {"fulltext": ["a", "b"], "vectors": ["b"]},
        StageRecord("coverage", factors={"fulltext": {"a": 0.01}}),
        StageRecord("navigation", floors=("new",)),
    )
    assert [key for key, _ in refuse(trace, FusionConfig())] == ["new", "b", "a"]
    assert [key for key, _ in refuse(trace, FusionConfig(), only="fulltext")] == ["new", "a", "b"]


def test_a_word_being_typed_is_matched_by_its_expansions_and_weighs_as_the_commonest() -> None:
    typed = TypedPrefix(stems=frozenset({"tombst"}), terms=frozenset({"tombst", "tombston", "tombstoneless"}))
    assert typed.covered(("sync", "tombston")) == {"sync", "tombston", "tombst"}
    assert typed.covered(("sync",)) == {"sync"}
    weights = {"sync": 2.0, "tombst": 9.0, "tombston": 3.0, "tombstoneless": 8.0}
    assert typed.weighed(weights)["tombst"] == 3.0
    assert TypedPrefix().covered(("tombston",)) == {"tombston"}


def test_a_hit_on_the_word_being_typed_votes_in_full() -> None:
    plan = QueryPlan(raw="sync tombst", text="sync tombst", terms=("sync", "tombst"), stems=("sync", "tombst"), complete_stems=("sync",), prefix="tombst")
    weights = {"sync": 2.0, "tombst": 9.0, "tombston": 3.0}
    found = hits("a.md", "b.md", terms={"a.md": ("sync", "tombston"), "b.md": ("sync",)})

    def keyword_factors(prefix_terms: tuple[str, ...]) -> dict[str, float]:
        answers = {"fulltext": ChannelAnswer(hits=found, reading=FulltextReading(prefix_terms=prefix_terms))}
        context = stage_context(plan, answers, term_weights=weights)  # type: ignore[arg-type]
        return CoverageStage().weigh(context).factors["fulltext"]

    typed = keyword_factors(("tombst", "tombston"))
    untyped = keyword_factors(())
    assert typed["a.md"] == 1.0
    assert untyped["a.md"] == untyped["b.md"] < typed["b.md"] < 1.0
