"""A query that names a kind of note (a top-level folder, or people) gets notes of that kind first."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path

import pytest
from ranking_support import hits, stage_context

from engine.api import Engine
from engine.channels.base import ChannelAnswer
from engine.channels.fulltext import analyze_text
from engine.config import EngineConfig, FusionConfig, StructureConfig
from engine.embedder import HashEmbedder
from engine.kinds import NoteKinds, is_person, linked_of_kind, with_hops
from engine.lexicon.en import ENGLISH
from engine.query import Planner
from engine.records import AskedKind
from engine.search.ranking.structure import StructureStage

NOTES = [
    ("Companies/Delta.md", ()),
    ("Companies/Forge.md", ()),
    ("People/Ada Park.md", ()),
    ("Contacts/Bo Li.md", ()),
    ("Meetings/2026/Kickoff.md", ()),
    ("Projects/Atlas/Design.md", ()),
    ("Inbox/Lin Wu.md", ("#person",)),
    ("Inbox/Idea.md", ()),
    ("Inbox/Todo.md", ()),
    ("Inbox/Later.md", ()),
    ("Inbox/Maybe.md", ()),
    ("Inbox/Someday.md", ()),
    ("Inbox/Draft.md", ()),
    ("Inbox/Old.md", ()),
    ("Inbox/New.md", ()),
    ("Readme.md", ()),
    ("Notes/Sync.md", ()),
]


@pytest.fixture
def kinds() -> NoteKinds:
    return NoteKinds([path for path, _ in NOTES], [(path, tags) for path, tags in NOTES if tags], analyze_text)


@pytest.mark.parametrize(
    ("query", "label", "notes"),
    [
        # Singular or plural, any case: the folder's name stemmed as the index stems words.
        ("Any portfolio companies focused on soil sensors?", "companies", {"Companies/Delta.md", "Companies/Forge.md"}),
        ("the company whose CEO insists on minimal board seats", "companies", {"Companies/Delta.md", "Companies/Forge.md"}),
        ("meeting notes about the launch", "meetings", {"Meetings/2026/Kickoff.md"}),
        # People: a People/ or Contacts/ folder or a #person tag, asked for by who/someone/people.
        ("Someone who speaks at small conferences", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        ("the engineer who cut pipeline runtime", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        # "who" opening a question asks for whoever acted: a person or an organisation.
        ("Who built that peer-to-peer payments protocol?", "people or organisations", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md", "Companies/Delta.md", "Companies/Forge.md"}),
        ("And who else advises Forge?", "people or organisations", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md", "Companies/Delta.md", "Companies/Forge.md"}),
        # The first word that names a kind decides: the meeting is what they attended.
        ("meetings who", "meetings", {"Meetings/2026/Kickoff.md"}),
        # After a possessive, the next word that names a kind still asks for it.
        ("Delta's companies in the portfolio", "companies", {"Companies/Delta.md", "Companies/Forge.md"}),
        # English compounds end in their head: a kind right before another kind modifies it.
        ("project meetings last week", "meetings", {"Meetings/2026/Kickoff.md"}),
        ("company people in Berlin", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        ("meeting people at conferences", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        # A comma parts a list, not a compound; "notes" is any note, so the meeting stays.
        ("companies, people and money", "companies", {"Companies/Delta.md", "Companies/Forge.md"}),
        ("meeting notes from the kickoff", "meetings", {"Meetings/2026/Kickoff.md"}),
        # A noun for a person heading its phrase asks for people, whatever kind follows it.
        ("The careful pragmatic engineer (likes Rust, hates slide decks)", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        ("Delta fintech engineers", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        ("Earlier roles of Delta staff engineers before joining", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        ("designers, meetings and companies", "people", {"People/Ada Park.md", "Contacts/Bo Li.md", "Inbox/Lin Wu.md"}),
        # Right before another word it modifies that word: the meetings are asked for.
        ("engineer meetings in March", "meetings", {"Meetings/2026/Kickoff.md"}),
    ],
)
def test_a_query_naming_a_kind_asks_for_its_notes(kinds: NoteKinds, query: str, label: str, notes: set[str]) -> None:
    asked = kinds.asked_for(query)
    assert (asked.label, set(asked.notes)) == (label, notes)


@pytest.mark.parametrize(
    "query",
    [
        "sync engine design",  # no kind named
        "atlas design review",  # a subfolder groups by topic; it is not a kind
        "inbox zero",  # Inbox/ holds more than half the vault: naming it narrows nothing
        "2026 plans",
        "notes about sync",  # a Notes/ folder is named for any note
        # A possessive says whose the next thing is: the apps, the founder are asked for.
        "finance APIs powering other companies' apps",
        "the company’s founder",
        # A kind before a relation's noun modifies it: the attendees, investors, founders are asked for.
        "meeting attendees for the kickoff",
        "Delta company investors",
        "Forge company founders",
        # A noun for a person that modifies the next word names no kind ...
        "customer research as a discipline",
        "the thing designers chase before scale",
        # A tool's name is not a person's: "manager" and "editor" are left out of the list.
        "a good password manager",
        # ... nor does a relation's role noun: the relation rules answer "founders".
        "the founders of Forge",
    ],
)
def test_queries_naming_no_kind(kinds: NoteKinds, query: str) -> None:
    asked = kinds.asked_for(query)
    assert asked.label == "" and not asked.notes


def test_a_language_whose_compounds_do_not_end_in_their_head_reads_the_first_kind() -> None:
    # French writes "réunions de projet": its lexicon would not set head_last, and the
    # first kind named is the one asked for, as it was for every language before.
    first_kind = NoteKinds(
        [path for path, _ in NOTES], (), analyze_text, lexicon=dataclasses.replace(ENGLISH, head_last=False)
    )
    assert first_kind.asked_for("project meetings").label == "projects"
    assert first_kind.asked_for("meeting attendees").label == "meetings"


def test_a_noun_for_a_person_heads_its_phrase_in_a_language_whose_compounds_do_not_end_in_it() -> None:
    # Without head_last a noun for a person is never read as a modifier: it asks for people.
    head_first = NoteKinds(
        [path for path, _ in NOTES], (), analyze_text, lexicon=dataclasses.replace(ENGLISH, head_last=False)
    )
    assert head_first.asked_for("developer advocacy").label == "people"
    assert head_first.asked_for("meetings with engineers").label == "meetings"


def test_without_people_a_noun_for_a_person_asks_for_nothing() -> None:
    kinds = NoteKinds(["Companies/Delta.md", "Meetings/a.md", "Notes/a.md", "Notes/b.md"], (), analyze_text)
    assert kinds.asked_for("engineers who hate meetings").label == "meetings"


def test_who_asks_for_people_when_the_vault_files_no_organisations() -> None:
    kinds = NoteKinds(["People/Ada.md", "Projects/Atlas.md", "Notes/a.md", "Notes/b.md"], (), analyze_text)
    assert kinds.asked_for("Who built the sync engine?").label == "people"


def test_without_people_person_words_ask_for_nothing() -> None:
    kinds = NoteKinds(["Companies/Delta.md", "Notes/a.md", "Notes/b.md"], (), analyze_text)
    assert not kinds.asked_for("who founded Delta").notes
    assert kinds.asked_for("who founded Delta").label == ""


def test_is_person() -> None:
    assert is_person("People/Ada.md", ())
    assert is_person("Team/people/Ada.md", ())
    assert is_person("Inbox/Ada.md", ("#person",))
    assert is_person("Inbox/Ada.md", ("#crm/contact",))
    assert not is_person("Companies/Delta.md", ("#biotech",))


def test_the_catalog_finds_notes_tagged_as_people(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, tags in [("Ada", "[person]"), ("Bo", "[crm/Contact]"), ("Cy", "[personal]"), ("Di", "[]")]:
        (vault / f"{name}.md").write_text(f"---\ntags: {tags}\n---\n# {name}\n", "utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
        catalog = engine._catalog
        tagged = catalog.tags_mentioning(ENGLISH.person_marks)
        people = NoteKinds(catalog.note_paths(), tagged, analyze_text).asked_for("someone").notes
        assert people == {"Ada.md", "Bo.md"}  # "personal" is no person
        assert {path for path, _ in tagged} == {"Ada.md", "Bo.md", "Cy.md"}  # the cheap cut keeps Cy
        assert catalog.tags_mentioning(()) == []
        assert sorted(catalog.note_paths()) == ["Ada.md", "Bo.md", "Cy.md", "Di.md"]


def test_kind_factor_scales_every_channel_vote_outside_the_kind() -> None:
    fusion = FusionConfig(structure=StructureConfig(mode="on", kind_factor=0.5))
    answers = {"fulltext": ChannelAnswer(hits=hits("m.md", "c.md")), "vectors": ChannelAnswer(hits=hits("c.md", "m.md"))}

    def factors(kind_notes: frozenset[str]) -> dict[str, dict[str, float]]:
        plan = replace(Planner().plan("companies in biotech", as_you_type=False), asked_kind=AskedKind("companies", kind_notes))
        context = stage_context(plan, answers, config=EngineConfig(fusion=fusion))  # type: ignore[arg-type]
        return StructureStage().weigh(context).factors

    assert factors(frozenset()) == {}
    assert factors(frozenset({"c.md"})) == {"fulltext": {"m.md": 0.5}, "vectors": {"m.md": 0.5}}


def _vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "Companies").mkdir(parents=True)
    (vault / "Meetings").mkdir()
    (vault / "People").mkdir()
    (vault / "Companies" / "Delta.md").write_text("# Delta\n\nDelta builds biotech tools.\n", "utf-8")
    (vault / "Meetings" / "Biotech day.md").write_text(
        "# Biotech day\n\nBiotech pitches all day: biotech, biotech and more biotech.\n", "utf-8"
    )
    (vault / "People" / "Ada Park.md").write_text("# Ada Park\n\nAda reviews biotech deals.\n", "utf-8")
    (vault / "Notes.md").write_text("# Notes\n\nNothing about it.\n", "utf-8")
    return vault


@pytest.mark.parametrize(("factor", "first"), [(0.5, "Companies/Delta.md"), (1.0, "Meetings/Biotech day.md")])
def test_search_ranks_the_asked_for_kind_first(tmp_path: Path, factor: float, first: str) -> None:
    config = EngineConfig(fusion=FusionConfig(structure=StructureConfig(kind_factor=factor)))
    # Kinds weigh channels' votes against each other: two channels must be live (the stub
    # embedder stands in for the model; this test is about fusion, not about vectors).
    with Engine.open(_vault(tmp_path), config, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        engine.reindex()
        results = engine.search("biotech companies", as_you_type=False)
        assert results.hits[0].path == first
        assert results.asked_kind.label == ("companies" if factor < 1 else "")
        # The other notes are still found: the kind orders results, it filters nothing.
        assert {h.path for h in results.hits} >= {"Companies/Delta.md", "Meetings/Biotech day.md", "People/Ada Park.md"}


def test_the_explanation_says_which_kind_was_asked_for(tmp_path: Path) -> None:
    from engine.present import results_to_json

    with Engine.open(_vault(tmp_path), index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
        assert results_to_json(engine.search("someone who reviews deals", as_you_type=False))["asked_kind"] == "people"
        assert results_to_json(engine.search("biotech deals", as_you_type=False))["asked_kind"] is None


def test_linked_of_kind_keeps_the_asked_kind_most_linked_first() -> None:
    companies = {"Companies/Forge.md", "Companies/Delta.md", "Companies/Orbit.md"}
    targets = ["People/Bo.md", "Companies/Delta.md", "Companies/Forge.md", "Companies/Forge.md", "Companies/Orbit.md"]
    assert linked_of_kind(targets, companies) == ("Companies/Forge.md", "Companies/Delta.md", "Companies/Orbit.md")
    assert linked_of_kind(["People/Bo.md"], companies) == ()
    assert with_hops(["a", "b", "c"], ["c", "x"]) == ["c", "x", "a", "b"]
    assert with_hops(["a", "b"], []) == ["a", "b"]


def _ceo_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    for folder in ("Companies", "People", "Meetings"):
        (vault / folder).mkdir(parents=True)
    (vault / "People" / "Adam Lee.md").write_text(
        "# Adam Lee\n\nAdam Lee is the CEO of [[Forge]]. He insists on founder-friendly terms "
        "with minimal board seats in every round. He also advised [[Orbit]] once.\n\n"
        "[[Forge]] builds messaging protocols.\n",
        "utf-8",
    )
    (vault / "Companies" / "Forge.md").write_text("# Forge\n\nForge builds peer-to-peer payments.\n", "utf-8")
    (vault / "Companies" / "Orbit.md").write_text("# Orbit\n\nOrbit makes satellites.\n", "utf-8")
    (vault / "Companies" / "Lumen.md").write_text("# Lumen\n\nLumen sells lamps to hotels.\n", "utf-8")
    (vault / "Meetings" / "Board day.md").write_text("# Board day\n\nBoard seats were discussed.\n", "utf-8")
    for name in ("Bo Li", "Cy Ng"):
        (vault / "People" / f"{name}.md").write_text(f"# {name}\n\nAn engineer.\n", "utf-8")
    return vault


def test_a_kind_is_reached_through_the_best_keyword_match_of_another_kind(tmp_path: Path) -> None:
    """"The company whose CEO …": the words describe the CEO; the company is one link away."""
    from engine.present import asked_kind_text, results_to_json

    with Engine.open(_ceo_vault(tmp_path), index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
        query = "the company whose CEO insists on founder-friendly terms"
        assert engine.search(query, channels=["fulltext"], as_you_type=False).hits[0].path == "People/Adam Lee.md"
        results = engine.search(query, as_you_type=False)
        assert results.asked_kind.label == "companies"
        # Forge first: linked twice from Adam Lee's note, Orbit once; Lumen is not linked.
        assert results.kind_hops == ("Companies/Forge.md", "Companies/Orbit.md")
        first = results.hits[0]
        assert first.path == "Companies/Forge.md"
        graph = first.channels["graph"]
        assert (graph.rank, graph.graph_path, graph.graph_relation) == (1, ("Adam Lee", "Forge"), "links to")
        payload = results_to_json(results)
        assert payload["kind_hops"] == ["Companies/Forge.md", "Companies/Orbit.md"]
        assert asked_kind_text(results) == "companies (others rank lower; 2 linked from the best keyword match)"
        # A best keyword match of the asked kind needs no hop.
        assert engine.search("companies making satellites", as_you_type=False).kind_hops == ()
        # Without the graph there is nothing to carry the hop.
        assert engine.search(query, channels=["fulltext"], as_you_type=False).kind_hops == ()


def test_eval_refuses_a_kind_hop_as_the_search_fused_it(tmp_path: Path) -> None:
    from engine.search.fusion import refuse
    from engine.tools.eval import evaluate

    with Engine.open(_ceo_vault(tmp_path), index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
        query = "the company whose CEO insists on founder-friendly terms"
        results = engine.search(query, channels=("fulltext", "graph"), as_you_type=False)
        assert results.trace.hops == results.kind_hops and results.kind_hops
        again = [path for path, _ in refuse(results.trace, engine.config.fusion)]
        assert again[: len(results.hits)] == [hit.path for hit in results.hits]
        report = evaluate(
            engine,
            [("q1", "the company whose CEO insists on founder-friendly terms")],
            {"q1": {"Companies/Forge.md": 1}},
            channels=("fulltext", "graph"),
        )
        assert report.hybrid["MRR"] == 1.0
