"""The ranking stages as pure functions: query intent, coverage, confidence, names, the
structure pack, navigation and folder priors."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ranking_support import MemoryVault, hits, stage_context

from engine.channels.base import ChannelAnswer
from engine.channels.graph.walk import GraphReading
from engine.config import EngineConfig, FusionConfig, NamesConfig, SearchConfig, StructureConfig
from engine.entities import displayed_text
from engine.kinds import NoteKinds
from engine.query import Planner, QueryPlan
from engine.records import FusionTrace, StageRecord
from engine.search.fusion import refuse, weighted_rrf
from engine.search.ranking import run_stages
from engine.search.ranking.confidence import ConfidenceStage
from engine.search.ranking.coverage import term_coverage
from engine.search.ranking.folders import FoldersStage, folder_factor, keyed_boosts
from engine.search.ranking.names import NamesStage
from engine.search.ranking.navigation import NavigationStage
from engine.search.ranking.structure import StructureStage, answers_relation


def _plan(text: str) -> QueryPlan:
    return Planner().plan(text, as_you_type=False)


@pytest.mark.parametrize(
    ("query", "named", "expected"),
    [
        ("Who attended Gamma Steering Review H1 2024?", ["Gamma Steering Review H1 2024"], True),
        ("Who invested in Acme Robotics?", ["Acme"], True),
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
    asks = _plan("Who invested in Acme Robotics?").asks_about(["Acme"])
    assert answers_relation(asks, "linked from")
    assert answers_relation(asks, "links to")
    assert not answers_relation(asks, "co-occurs")
    assert not answers_relation(asks, None)
    assert not answers_relation(_plan("what did Acme build").asks_about(["Acme"]), "links to")


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


def test_a_channel_fused_alone_ignores_factors() -> None:
    trace = FusionTrace(rankings={"fulltext": ("a", "b")}, stages=(StageRecord("coverage", factors={"fulltext": {"a": 0.01}}),))
    assert [key for key, _ in refuse(trace, FusionConfig(k=10))] == ["a", "b"]


def _structured(answers: dict[str, ChannelAnswer], query: str, **config: object) -> StageRecord:
    plan = _plan(query)
    engine = EngineConfig(fusion=FusionConfig(structure=StructureConfig(mode="on", **config)))  # type: ignore[arg-type]
    return StructureStage().weigh(stage_context(plan, answers, config=engine))  # type: ignore[arg-type]


def test_a_relation_question_answered_over_a_written_link_boosts_the_graph() -> None:
    graph = ChannelAnswer(hits=tuple(replace(h, graph_path=("Acme", "Kate"), graph_relation="linked from") for h in hits("kate")), reading=GraphReading(recognized=("Acme",)))
    record = _structured({"graph": graph, "fulltext": ChannelAnswer(hits=hits("meeting", "kate"))}, "Who invested in Acme Robotics?")
    assert record.weights == {"graph": 5.0}
    trace = FusionTrace(rankings={"fulltext": ("meeting", "x", "y", "kate"), "vectors": ("meeting",), "graph": ("kate",)}, stages=(record,))
    assert refuse(trace, FusionConfig(k=10))[0][0] == "kate"
    assert refuse(trace, FusionConfig(k=10), off=("structure",))[0][0] == "meeting"
    co = ChannelAnswer(hits=tuple(replace(h, graph_path=("Acme", "Kate"), graph_relation="co-occurs") for h in hits("kate")), reading=GraphReading(recognized=("Acme",)))
    assert _structured({"graph": co}, "Who invested in Acme Robotics?").weights == {}


def test_the_structure_pack_is_on_only_for_a_vault_with_that_structure() -> None:
    plan = _plan("Who invested in Acme Robotics?")
    for mode, structured, on in [("auto", True, True), ("auto", False, False), ("on", False, True), ("off", True, False)]:
        engine = EngineConfig(fusion=FusionConfig(structure=StructureConfig(mode=mode)))
        context = stage_context(plan, {}, config=engine, vault=MemoryVault(is_structured=structured))
        assert StructureStage().enabled(context) is on, (mode, structured)


def test_a_vault_that_files_people_or_organisations_is_structured() -> None:
    assert NoteKinds(["People/Ana.md", "Projects/X.md", "Projects/Y.md"]).structured
    assert NoteKinds(["Companies/Acme.md", "Notes/a.md", "Notes/b.md"]).structured
    assert not NoteKinds(["Plugins/Canvas.md", "Editing/Tables.md", "Sync/Conflicts.md"]).structured


def test_floors_come_first() -> None:
    vault = MemoryVault(titles={"b.md": "Roadmap", "a.md": "Other"}, aliases={"c.md": ("roadmap",)})
    context = stage_context(_plan("roadmap"), {"fulltext": ChannelAnswer(hits=hits("a.md", "b.md"))}, vault=vault)
    record = NavigationStage().weigh(context)
    assert record.floors == ("b.md", "c.md")
    trace = FusionTrace(rankings={"fulltext": ("a.md", "b.md")}, stages=(record,))
    assert [k for k, _ in refuse(trace, FusionConfig(k=10))] == ["b.md", "c.md", "a.md"]


def test_a_half_embedded_vault_weighs_the_vectors_by_what_they_cover() -> None:
    answers = {"vectors": ChannelAnswer(hits=hits("a", scores=[0.9]))}
    half = ConfidenceStage().weigh(stage_context(_plan("sync conflicts"), answers, vault=MemoryVault(share=0.22)))  # type: ignore[arg-type]
    assert half.weights == {"vectors": pytest.approx(0.22)}
    whole = ConfidenceStage().weigh(stage_context(_plan("sync conflicts"), answers, vault=MemoryVault(share=1.0)))  # type: ignore[arg-type]
    assert whole.weights == {}


def test_folder_priors_weigh_every_channel_s_vote_the_deepest_folder_deciding() -> None:
    keyed = keyed_boosts({"Archive/": 0.5, "Archive/Keep": 1.5})
    assert folder_factor("Archive/old.md", keyed) == 0.5
    assert folder_factor("archive/Keep/x.md", keyed) == 1.5
    assert folder_factor("Notes/Archive.md", keyed) == 1.0
    engine = EngineConfig(search=SearchConfig(folder_boosts={"Archive/": 0.5}))
    answers = {"fulltext": ChannelAnswer(hits=hits("Archive/Plan.md", "Plan.md")), "vectors": ChannelAnswer(hits=hits("Archive/Plan.md"))}
    record = FoldersStage().weigh(stage_context(_plan("plan"), answers, config=engine))  # type: ignore[arg-type]
    assert record.factors == {"fulltext": {"Archive/Plan.md": 0.5}, "vectors": {"Archive/Plan.md": 0.5}}


def test_a_failing_stage_adds_nothing_and_says_why() -> None:
    class Broken(MemoryVault):
        @property
        def embedded_share(self) -> float:
            raise OSError("gone")

    answers = {"vectors": ChannelAnswer(hits=hits("a", scores=[0.9]))}
    records = run_stages(stage_context(_plan("x"), answers, vault=Broken()))  # type: ignore[arg-type]
    failed = next(r for r in records if r.stage == "confidence")
    assert failed.factors == {} and "OSError" in failed.said[0]


def test_displayed_text_reduces_links_to_what_a_reader_sees() -> None:
    text = "met [[people/mia-brown-0|Mia Brown]] and [[Note#Part]] ![[img.png]] [site](http://x.y) [[a/b.md]]"
    assert displayed_text(text) == "met Mia Brown and Note img.png site b"


def test_graph_votes_for_the_asked_for_kind_count_fully() -> None:
    graph = ChannelAnswer(
        hits=(
            replace(hits("people/mia.md")[0], graph_path=("Launch Night L7", "Mia")),
            replace(hits("meetings/w31.md")[0], rank=2, graph_path=("Launch Night L7", "Mia", "W31")),
        ),
        reading=GraphReading(recognized=("Launch Night L7",), answer_notes=frozenset({"people/mia.md"})),
    )
    record = _structured({"graph": graph}, "Who attended Launch Night L7?", answer_kind_factor=0.5)
    assert record.factors["graph"] == {"meetings/w31.md": 0.5}


def _names(plan: QueryPlan, rankings: dict[str, list[str]], config: NamesConfig) -> dict[str, float]:
    reached = {"meetings/w30.md": ("Launch Night L7",), "people/mia.md": ("Launch Night L7", "Mia")}
    graph = ChannelAnswer(
        hits=tuple(replace(h, graph_path=reached[h.path]) for h in hits(*rankings["graph"])),
        reading=GraphReading(recognized=("Launch Night L7",)),
    )
    answers = {"graph": graph, **{name: ChannelAnswer(hits=hits(*paths)) for name, paths in rankings.items() if name != "graph"}}
    engine = EngineConfig(fusion=FusionConfig(names=config))
    return NamesStage().weigh(stage_context(plan, answers, config=engine)).factors["graph"]  # type: ignore[arg-type]


def test_a_confirmed_seed_boosts_the_graph_as_far_as_its_names_cover_the_query() -> None:
    """A name the text channels also rank first lends the graph `seed_confirm_boost`, scaled
    by how much of the query the name is: all of "Who attended Launch Night L7?" but the
    relation word, a small part of a long question that happens to contain it."""
    config = NamesConfig(power=0.5, seed_confirm_rank=3, seed_confirm_boost=2.0)
    rankings = {"fulltext": ["meetings/w30.md"], "graph": ["meetings/w30.md", "people/mia.md"]}
    short = _plan("Who attended Launch Night L7?")
    long = _plan("Which investor who later moved to Lisbon pitched a robotics startup at Launch Night L7?")
    votes = {plan.text: _names(plan, rankings, config)["people/mia.md"] for plan in (short, long)}
    assert votes[short.text] == pytest.approx(2.0 * short.coverage(["Launch Night L7"]) ** 0.5)
    assert votes[long.text] == pytest.approx(2.0 * long.coverage(["Launch Night L7"]) ** 0.5)
    assert votes[long.text] < votes[short.text]
    flat = replace(config, seed_confirm_coverage=False)
    assert _names(long, rankings, flat)["people/mia.md"] == 2.0
    unconfirmed = _names(long, {"fulltext": ["elsewhere.md"], "graph": rankings["graph"]}, config)
    assert unconfirmed["people/mia.md"] == pytest.approx(long.coverage(["Launch Night L7"]) ** 0.5)


def test_a_title_typed_with_a_slip_is_the_note_the_query_names() -> None:
    """A query read through a typo ("grph view" as "graph view") names the note so titled."""
    vault = MemoryVault(titles={"g.md": "Graph view", "x.md": "Glossary"})
    plan = replace(_plan("grph view"), corrections=(("grph", "graph"),))
    record = NavigationStage().weigh(stage_context(plan, {}, vault=vault))
    assert record.floors == ("g.md",)
    assert NavigationStage().weigh(stage_context(_plan("grph view"), {}, vault=vault)).floors == ()


def test_read_through_replaces_whole_words_only() -> None:
    from engine.search.ranking.navigation import read_through

    assert read_through("grph view of grphs", (("grph", "graph"),)) == "graph view of grphs"
    assert read_through("Calouts", (("calouts", "callouts"),)) == "callouts"
