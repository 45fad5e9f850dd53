"""Typed relations: the graph names how two notes relate, from a link's sentence or from the property that holds it."""

from __future__ import annotations

import multiprocessing
from dataclasses import replace
from pathlib import Path

import pytest

from engine.api import Engine
from engine.channels.graph import store
from engine.channels.graph.relations import SentenceRelations, property_relation
from engine.config import EngineConfig, GraphConfig, StructureConfig
from engine.lexicon.en import ENGLISH
from engine.records import Relation
from engine.tools.cli import main
from engine.vault import parse_note
from engine.vault.fields import inline_fields


def _at(sentence: str, name: str, note: str = "Meeting notes") -> tuple[str, bool] | None:
    """The relation the sentence, written in the note titled `note`, names between that note and the link to `name`."""
    return SentenceRelations(sentence, ENGLISH, [note]).at(sentence.index(name))


@pytest.mark.parametrize(
    ("sentence", "name", "note", "expected"),
    [
        # A role lists who does it: the linked notes attended this meeting.
        ("Attendees: [[Priya Kumar]], [[Marcus Chen]]", "Marcus Chen", "Kickoff", ("attended", True)),
        # The note's own voice: Mia Brown (this note) founded Acme.
        ("Mia Brown is the founder of [[Acme]], a robotics company.", "Acme", "Mia Brown", ("founded", False)),
        ("Chris Smith is a senior engineer at [[companies/acme|Acme]].", "companies/acme", "Chris Smith", ("works at", False)),
        ("She is a senior engineer at [[Acme]].", "Acme", "Chris Smith", ("works at", False)),
        # An active phrase after the name, and no object of its own: the linked note does it to this one.
        ("[[Ian Anderson]] attended in person at the headquarters.", "Ian Anderson", "Offsite", ("attended", True)),
        # "by" turns the phrase around; the company is how a company's note calls itself.
        ("The company was founded in 2022 by [[Ingrid Holm]].", "Ingrid Holm", "Lumen Labs", ("founded", True)),
        ("Wendy also advises [[Vector]], where she focuses on data.", "Vector", "Wendy Park", ("advises", False)),
        # "*" in a phrase stands for up to two words: articles, stages, amounts.
        ("[[Jack Davis]] led a pre-seed round, drawn to the team.", "Jack Davis", "Iris", ("invested in", True)),
        ("[[Founders Fund]] led the round.", "Founders Fund", "Iris", ("invested in", True)),
        ("Lucid raised a seed round led by [[Fiona Moore]].", "Fiona Moore", "Lucid", ("invested in", True)),
        ("The company raised a round with participation from [[Ian]].", "Ian", "Lucid", ("invested in", True)),
        ("Lumen's investor base includes [[Kate Lopez]].", "Kate Lopez", "Lumen", ("invested in", True)),
        # A log line has no subject: the note is it.
        ("Led pre-seed investment into [[Iris]].", "Iris", "Kate Lopez", ("invested in", False)),
        ("Led Series A for [[Prism]], her first solo deal.", "Prism", "Kate Lopez", ("invested in", False)),
        ("Prism's investor syndicate includes [[Carol]], [[Rosa]] and [[Tina]].", "Tina", "Prism", ("invested in", True)),
        ("[[Beth Williams]] came on as an advisor shortly after.", "Beth Williams", "Lucid", ("advises", True)),
    ],
)
def test_a_sentence_names_the_relation_and_who_does_it(sentence: str, name: str, note: str, expected: tuple[str, bool]) -> None:
    assert _at(sentence, name, note) == expected


@pytest.mark.parametrize(
    ("sentence", "name", "note"),
    [
        ("[[Priya]] works at [[Acme]].", "Priya", "Kickoff"),  # two other notes: nothing about this one
        ("[[Priya]] works at [[Acme]].", "Acme", "Kickoff"),
        ("Victor is the driving force behind [[Delta]], which he founded in 2021.", "Delta", "Victor"),  # a clause
        ("Hosts a private dinner with [[Lucid]] and [[Drift]] founders in SF.", "Drift", "Kate"),  # a role after a name
        ("[[Founders Fund]] hosted the dinner.", "Founders Fund", "Dinner"),  # a phrase inside a link is a name
        ("The part of [[Beacon]] where customers design the forms their crews fill in on [[Atlas]].", "Atlas", "Form Builder"),
        ("Met [[Priya]] for coffee.", "Priya", "Kate"),
        # The subject is someone else: the sentence relates them, not this note.
        ("Mia Brown is the founder of [[Acme]], a robotics company.", "Acme", "Kate Lopez"),
        ("Kate Smith joined [[Acme]] in May.", "Acme", "Kate Lopez"),
        # A word that merely occurs: the storage limit includes it, an internal link includes a path.
        ("This storage limit includes [[Version history|version history]].", "Version history", "Frequently asked questions"),
        ("This setting doesn't apply when an [[Internal links|internal link]] includes a folder path.", "Internal links", "Settings"),
        # The object is someone else: Priya attended another event, not this note.
        ("[[Priya Kumar]] attended a conference in Denver.", "Priya Kumar", "Kickoff"),
        # A role of someone else's: the founders of another company.
        ("Dinner with the founders of [[Acme]].", "Acme", "Kate"),
        ("Mia said that Kate founded [[Acme]].", "Acme", "Mia"),
    ],
)
def test_a_sentence_that_does_not_say_names_nothing(sentence: str, name: str, note: str) -> None:
    assert _at(sentence, name, note) is None


def test_a_property_names_its_relation_or_is_one() -> None:
    assert property_relation("company", ENGLISH) == ("works at", False)
    assert property_relation("works_at", ENGLISH) == ("works at", False)
    assert property_relation("Attendees", ENGLISH) == ("attended", True)
    assert property_relation("founded-by", ENGLISH) == ("founded", True)
    assert property_relation("reports_to", ENGLISH) == ("reports to", False)
    assert property_relation("owner", ENGLISH) == ("owner", False)


def test_links_keep_the_property_or_inline_field_they_are_the_value_of() -> None:
    note = parse_note(
        "People/Priya.md",
        '---\ncompany: "[[Acme]]"\nrelated:\n  - "[[Beacon]]"\n---\n'
        "# Priya\n\nworks_at:: [[Acme]]\n- **reports_to**:: [[Ingrid]]\nPlain [[Atlas]] and [advises:: [[Orbit]]]\n"
        "```\nmentor:: [[Nobody]]\n```\n",
    )
    assert [(link.target, link.property) for link in note.links] == [
        ("Acme", "company"),
        ("Beacon", "related"),
        ("Acme", "works_at"),
        ("Ingrid", "reports_to"),
        ("Atlas", None),
        ("Orbit", "advises"),
    ]


def test_a_quoted_bold_key_types_its_links_as_an_inline_field_does() -> None:
    note = parse_note(
        "Projects/Atlas.md",
        "# Atlas\n\n> **Owner:** [[Priya Kumar]]\n> **Reports to**: [[Ingrid]]\n> - __Team:__ [[Marcus]], [[Zoë]]\n"
        "**Lead:** [[Nobody]] outside a quote\n> A quote that says [[Beacon]] in passing.\n",
    )
    assert [(link.target, link.property) for link in note.links] == [
        ("Priya Kumar", "Owner"),
        ("Ingrid", "Reports to"),
        ("Marcus", "Team"),
        ("Zoë", "Team"),
        ("Nobody", None),
        ("Beacon", None),
    ]


def test_a_quoted_typed_link_is_a_typed_edge(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Atlas.md").write_text("# Atlas\n\n> **Owner:** [[Priya Kumar]]\n\nThe app.\n", encoding="utf-8")
    (vault / "Beacon.md").write_text("# Beacon\n\nowner:: [[Priya Kumar]]\n\nThe dashboard.\n", encoding="utf-8")
    (vault / "Priya Kumar.md").write_text("# Priya Kumar\n\nEngineering lead.\n", encoding="utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        neighbours = {n.name: n.relation for n in engine.neighbors("Priya Kumar.md")}
    assert neighbours["Atlas"] == Relation("Atlas", "owner", "Priya Kumar", explicit=True)
    assert neighbours["Beacon"] == Relation("Beacon", "owner", "Priya Kumar", explicit=True)


def _inline_fields(line: str) -> int:
    return len(inline_fields(line))


def _sentence_relations(sentence: str) -> int:
    relations = SentenceRelations(sentence, ENGLISH)
    return sum(1 for at in range(0, len(sentence), 997) if relations.at(at) is not None)


@pytest.mark.parametrize(
    ("stage", "text"),
    [
        (_inline_fields, "a" * 60 + "::" + "[b:: " * 40_000),
        (_inline_fields, "- **" + "x " * 200_000 + "::"),
        (_inline_fields, "> " * 100_000 + "**" + "x" * 100_000 + ":**"),
        (_inline_fields, ">" + " **x:" * 100_000),
        (_sentence_relations, "works " * 100_000 + "at"),
        (_sentence_relations, "attended by " * 50_000),
        (_sentence_relations, "led a seed " * 50_000 + "round"),  # a phrase's "*" words
    ],
)
def test_relation_reading_is_linear(stage: object, text: str) -> None:
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(stage, (text,))  # type: ignore[arg-type]
        try:
            pending.get(30.0)
        except multiprocessing.TimeoutError:
            pytest.fail("relation reading is not linear")


def _vault(root: Path) -> Path:
    (root / "People").mkdir(parents=True)
    (root / "Companies").mkdir()
    (root / "Meetings").mkdir()
    (root / "People" / "Priya Kumar.md").write_text(
        '---\ncompany: "[[Acme]]"\ntags: [person]\n---\n# Priya Kumar\n\nEngineering lead. She advises [[Orbit]].\n',
        encoding="utf-8",
    )
    (root / "People" / "Marcus Chen.md").write_text(
        "# Marcus Chen\n\nworks_at:: [[Acme]]\n\nProduct manager.\n", encoding="utf-8"
    )
    (root / "Companies" / "Acme.md").write_text("# Acme\n\nA robotics company.\n", encoding="utf-8")
    (root / "Companies" / "Orbit.md").write_text("# Orbit\n\nA biotech startup.\n", encoding="utf-8")
    (root / "Meetings" / "Kickoff.md").write_text(
        "# Kickoff\n\nAttendees: [[Priya Kumar]], [[Marcus Chen]]\n\nWe planned the year.\n", encoding="utf-8"
    )
    return root


def test_the_graph_names_relations_in_search_evidence_and_neighbours(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        results = engine.search("Who attended Kickoff?", limit=5, as_you_type=False)
        priya = next(hit for hit in results.hits if hit.path == "People/Priya Kumar.md")
        assert Relation("Priya Kumar", "attended", "Kickoff") in priya.channels["graph"].relations
        neighbours = {n.name: n.relation for n in engine.neighbors("People/Priya Kumar.md")}
        assert neighbours["Acme"] == Relation("Priya Kumar", "works at", "Acme", explicit=True)
        assert neighbours["Orbit"] == Relation("Priya Kumar", "advises", "Orbit")
        assert neighbours["Kickoff"] == Relation("Priya Kumar", "attended", "Kickoff")
        marcus = {n.name: n.relation for n in engine.neighbors("People/Marcus Chen.md")}
        assert marcus["Acme"] == Relation("Marcus Chen", "works at", "Acme", explicit=True)


def test_an_edit_renames_the_relation_as_a_rebuild_would(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    kickoff = vault / "Meetings" / "Kickoff.md"
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        text = engine.read_note("Meetings/Kickoff.md")
        engine.save_note("Meetings/Kickoff.md", text.text.replace("Attendees:", "Investors:"), expected_sha=text.sha)
        patched = {n.name: n.relation for n in engine.neighbors("Meetings/Kickoff.md")}
    assert patched["Priya Kumar"] == Relation("Priya Kumar", "invested in", "Kickoff")
    assert kickoff.read_text(encoding="utf-8").startswith("# Kickoff\n\nInvestors:")
    with Engine.open(vault, index_dir=tmp_path / "fresh", embedder=None) as fresh:
        fresh.reindex()
        assert {n.name: n.relation for n in fresh.neighbors("Meetings/Kickoff.md")} == patched


def test_the_explain_view_writes_the_relation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = _vault(tmp_path / "vault")
    index = str(tmp_path / "index")
    assert main(["reindex", str(vault), "--index-dir", index, "--no-model"]) == 0
    capsys.readouterr()
    assert main(["search", str(vault), "--index-dir", index, "--no-model", "--explain", "Who attended Kickoff?"]) == 0
    assert "Priya Kumar attended Kickoff" in capsys.readouterr().out
    assert main(["search", str(vault), "--index-dir", index, "--no-model", "--explain", "--raw", "Who attended Kickoff?"]) == 0
    assert "Priya Kumar —attended→ Kickoff" in capsys.readouterr().out


def test_a_named_relation_the_query_asks_about_can_weigh_more(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    (vault / "Meetings" / "Kickoff.md").write_text(
        "# Kickoff\n\nAttendees: [[Priya Kumar]]\n\nWe discussed [[Marcus Chen]] and his roadmap.\n", encoding="utf-8"
    )

    def scores(boost: float) -> dict[str, float]:
        config = EngineConfig(graph=GraphConfig(typed_relation_boost=boost))
        with Engine.open(vault, config, index_dir=tmp_path / f"index-{boost}", embedder=None) as engine:
            engine.reindex()
            hits = engine.search("Who attended Kickoff?", limit=5, channels=["graph"], as_you_type=False).hits
            return {hit.path: hit.channels["graph"].score for hit in hits}

    plain, boosted = scores(0.0), scores(2.0)
    priya, marcus = "People/Priya Kumar.md", "People/Marcus Chen.md"
    assert boosted[priya] > plain[priya]
    assert boosted[marcus] == plain[marcus]  # "discussed" names no relation


def test_the_saved_graph_format_changed_with_the_named_relations() -> None:
    assert store.SAVED_FORMAT >= 11


def _startup(root: Path) -> Path:
    """A company with a founder and an investor, each of whom writes about it at length."""
    (root / "People").mkdir(parents=True)
    (root / "Companies").mkdir()
    (root / "Companies" / "Kestrel.md").write_text(
        "# Kestrel\n\nKestrel was founded by [[Ada Moss]] in 2021.\n\n"
        "The seed round was backed by [[Ben Ivers]].\n",
        encoding="utf-8",
    )
    (root / "People" / "Ada Moss.md").write_text(
        "---\ntags: [person]\n---\n# Ada Moss\n\nAda runs [[Kestrel]]. Kestrel, Kestrel, Kestrel: she talks of Kestrel "
        "all day, and Kestrel's investors too.\n",
        encoding="utf-8",
    )
    (root / "People" / "Ben Ivers.md").write_text(
        "---\ntags: [person]\n---\n# Ben Ivers\n\nAn angel. He put money into [[Kestrel]].\n", encoding="utf-8"
    )
    return root


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("Who invested in Kestrel?", "People/Ben Ivers.md"),
        # A founder works at the company (founded includes works at): not set aside.
        ("Who works at Kestrel?", "People/Ada Moss.md"),
    ],
)
def test_the_asked_relation_ranks_before_another_one(tmp_path: Path, query: str, first: str) -> None:
    vault = _startup(tmp_path / "vault")
    assert EngineConfig().fusion.structure.other_relation_factor < 1, "the default sets other relations aside"
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        hits = [hit.path for hit in engine.search(query, limit=5, as_you_type=False).hits]
    assert hits[0] == first, hits


def test_without_the_relation_factor_the_founder_who_writes_more_ranks_first(tmp_path: Path) -> None:
    vault = _startup(tmp_path / "vault")
    config = EngineConfig(fusion=replace(EngineConfig().fusion, structure=StructureConfig(other_relation_factor=1.0)))
    with Engine.open(vault, config, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        hits = [hit.path for hit in engine.search("Who invested in Kestrel?", limit=5, as_you_type=False).hits]
    assert hits[0] == "People/Ada Moss.md", hits  # what the factor is for: this test shows it is needed


def _two_hats(root: Path) -> Path:
    """An investor who writes of herself as an advisor, twice; the company's note says she led its round."""
    (root / "People").mkdir(parents=True)
    (root / "Companies").mkdir()
    (root / "Companies" / "Kestrel.md").write_text(
        "# Kestrel\n\nKestrel was founded by [[Ada Moss]] in 2021.\n\n"
        "In 2022 Kestrel raised a seed round led by [[Cleo Park]].\n",
        encoding="utf-8",
    )
    (root / "People" / "Ada Moss.md").write_text(
        "---\ntags: [person]\n---\n# Ada Moss\n\nAda is the founder of [[Kestrel]]. Kestrel, Kestrel, Kestrel: "
        "she talks of Kestrel all day, and of who invested in it.\n",
        encoding="utf-8",
    )
    (root / "People" / "Cleo Park.md").write_text(
        "---\ntags: [person]\n---\n# Cleo Park\n\nCleo is an advisor to [[Kestrel]].\n\n"
        "She became advisor to [[Kestrel]] in 2023.\n",
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize(
    ("query", "relation"),
    [("Who invested in Kestrel?", "invested in"), ("Who advises Kestrel?", "advises")],
)
def test_a_pair_named_by_two_relations_answers_a_question_about_either(
    tmp_path: Path, query: str, relation: str
) -> None:
    vault = _two_hats(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        hits = engine.search(query, limit=5, as_you_type=False).hits
        neighbours = {n.name: n.relation for n in engine.neighbors("People/Cleo Park.md")}
    assert hits[0].path == "People/Cleo Park.md", [hit.path for hit in hits]
    # The evidence names the relation asked about; the neighbour list the one said most.
    assert Relation("Cleo Park", relation, "Kestrel") in hits[0].channels["graph"].relations
    assert neighbours["Kestrel"] == Relation("Cleo Park", "advises", "Kestrel")
