"""The pure pieces the quality tuning added: query intent, keyword coverage, fusion factors."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.config import FusionConfig
from engine.entities import displayed_text
from engine.query import Planner, QueryPlan
from engine.search.fusion import answers_relation, fuse, graph_factors, term_coverage, weighted_rrf


def _plan(text: str) -> QueryPlan:
    return Planner().plan(text, as_you_type=False)


@pytest.mark.parametrize(
    ("query", "named", "expected"),
    [
        ("Who attended Beta Board Meeting Q2 2025?", ["Beta Board Meeting Q2 2025"], True),
        ("Who invested in Acme?", ["Acme"], True),
        ("who is Adam Lee", ["Adam Lee"], False),  # "who is X" asks for X itself
        ("Who is older, Sid Haig or Vic Darchinyan?", ["Sid Haig", "Vic Darchinyan"], False),
        ("what did Acme build", ["Acme"], False),  # not a who-question
        ("Who invested?", [], False),  # nothing named
        ("who attended the Atlas kickoff", ["Atlas", "kickoff"], True),  # a lowercase tag is no name
        # Resemblance asks for X's kind of note, X included: no relation to walk.
        ("Who has a profile similar to Adam Lopez, fast shipper?", ["Adam Lopez"], False),
        ("Who else is like Adam Lopez?", ["Adam Lopez"], False),
        ("Who likes Adam Lopez?", ["Adam Lopez"], True),  # a verb, not a comparison
    ],
)
def test_who_questions_about_one_named_entity(query: str, named: list[str], expected: bool) -> None:
    assert _plan(query).asks_about(named) is expected


def test_the_graph_answers_only_over_written_links() -> None:
    plan = _plan("Who invested in Acme?")
    assert answers_relation(plan, ["Acme"], "linked from")
    assert answers_relation(plan, ["Acme"], "links to")
    assert not answers_relation(plan, ["Acme"], "co-occurs")
    assert not answers_relation(plan, ["Acme"], None)


def test_term_coverage() -> None:
    assert term_coverage(["a", "b"], ["a", "b", "c", "d"], 1.0) == pytest.approx(0.5)
    assert term_coverage(["a"], ["a", "b"], 2.0) == pytest.approx(0.25)
    assert term_coverage(["z"], ["a", "b"], 1.0) == 0.0
    assert term_coverage([], [], 1.0) == 1.0


def test_term_coverage_weighted_by_idf() -> None:
    idf = {"mainnet": 6.0, "keynot": 4.0, "anyon": 1.0, "network": 1.0}
    # Two rare words of four: 10 of 12 idf units, not half the words.
    assert term_coverage(["mainnet", "keynot"], list(idf), 1.0, idf) == pytest.approx(10 / 12)
    assert term_coverage(["anyon", "network"], list(idf), 1.0, idf) == pytest.approx(2 / 12)
    # A term without a weight counts 1; duplicates count once.
    assert term_coverage(["x"], ["x", "mainnet", "x"], 1.0, idf) == pytest.approx(1 / 7)
    assert term_coverage([], [], 1.0, idf) == 1.0


def test_factors_scale_one_channels_vote() -> None:
    rankings = {"fulltext": ["weak", "x"], "vectors": ["good", "weak"]}
    plain = weighted_rrf(rankings, k=10, weights={})
    assert plain[0][0] == "weak"  # rank 1 + rank 2 beats rank 1 alone
    scaled = weighted_rrf(rankings, k=10, weights={}, factors={"fulltext": {"weak": 0.01}})
    assert scaled[0][0] == "good"
    assert dict(scaled)["weak"] == pytest.approx(0.01 / 11 + 1 / 12)


def test_fuse_ignores_factors_for_a_single_channel() -> None:
    config = FusionConfig(k=10)
    alone = fuse({"fulltext": ["a", "b"]}, config, factors={"fulltext": {"a": 0.01}})
    assert [key for key, _ in alone] == ["a", "b"]


def test_fuse_relational_boosts_the_graph() -> None:
    config = FusionConfig(k=10, relational_graph_boost=5.0)
    rankings = {"fulltext": ["meeting", "person"], "graph": ["person"]}
    assert fuse(rankings, config)[0][0] == "person"
    rankings = {"fulltext": ["meeting", "x", "y", "person"], "vectors": ["meeting"], "graph": ["person"]}
    assert fuse(rankings, config)[0][0] == "meeting"
    assert fuse(rankings, config, relational=True)[0][0] == "person"


def test_fuse_puts_floors_first() -> None:
    config = FusionConfig(k=10)
    assert [k for k, _ in fuse({"fulltext": ["a", "b"]}, config, ["b", "new"])] == ["b", "new", "a"]


def test_displayed_text_reduces_links_to_what_a_reader_sees() -> None:
    text = "met [[people/mia-brown-0|Mia Brown]] and [[Note#Part]] ![[img.png]] [site](http://x.y) [[a/b.md]]"
    assert displayed_text(text) == "met Mia Brown and Note img.png site b"


def test_graph_votes_for_the_asked_for_kind_count_fully() -> None:
    config = FusionConfig(entity_coverage_power=0.5, seed_confirm_rank=0, answer_kind_factor=0.5)
    reached = [("people/mia.md", ("Demo Day W30", "Mia")), ("meetings/w31.md", ("Demo Day W30", "Mia", "W31"))]
    text = _plan("Who attended Demo Day W30?")
    plain = graph_factors(text, ["Demo Day W30"], reached, {}, config)["graph"]
    assert plain["people/mia.md"] == plain["meetings/w31.md"] > 0
    typed = graph_factors(text, ["Demo Day W30"], reached, {}, config, frozenset({"people/mia.md"}))["graph"]
    assert typed["people/mia.md"] == plain["people/mia.md"]
    assert typed["meetings/w31.md"] == pytest.approx(0.5 * plain["meetings/w31.md"])


def test_a_confirmed_seed_boosts_the_graph_as_far_as_its_names_cover_the_query() -> None:
    """A name the text channels also rank first lends the graph `seed_confirm_boost`, scaled
    by how much of the query the name is: all of "Who attended Demo Day W30?" but the
    relation word, a small part of a long question that happens to contain it."""
    config = FusionConfig(entity_coverage_power=0.5, seed_confirm_rank=3, seed_confirm_boost=2.0)
    reached = [("meetings/w30.md", ("Demo Day W30",)), ("people/mia.md", ("Demo Day W30", "Mia"))]
    rankings = {"fulltext": ["meetings/w30.md"], "graph": ["meetings/w30.md", "people/mia.md"]}
    short = _plan("Who attended Demo Day W30?")
    long = _plan("Which investor who later moved to Lisbon pitched a robotics startup at Demo Day W30?")
    votes = {
        plan.text: graph_factors(plan, ["Demo Day W30"], reached, rankings, config)["graph"]["people/mia.md"]
        for plan in (short, long)
    }
    assert votes[short.text] == pytest.approx(2.0 * short.coverage(["Demo Day W30"]) ** 0.5)
    assert votes[long.text] == pytest.approx(2.0 * long.coverage(["Demo Day W30"]) ** 0.5)
    assert votes[long.text] < votes[short.text]
    flat = replace(config, seed_confirm_coverage=False)
    assert graph_factors(long, ["Demo Day W30"], reached, rankings, flat)["graph"]["people/mia.md"] == 2.0
