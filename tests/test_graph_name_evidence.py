"""A capitalised phrase is a name only with evidence beyond its capitals (docs/GRAPH.md, Names):
written inside running text, opening sentences in two notes, or a note's title; text in Title
Case (headings, quotations' pieces, labels, code, another language) names only known names."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine
from engine.entities import OPENING, TITLED, WRITTEN, read_names


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Inside running text a capital is chosen; at a sentence's or line's start it is not.
        ("We met Orbit Robotics in May.", [("Orbit Robotics", WRITTEN)]),
        ("Orbit Robotics called.", [("Orbit Robotics", OPENING)]),
        ("- Orbit Robotics called.", [("Orbit Robotics", OPENING)]),
        ("| Orbit Robotics | partner |", [("Orbit Robotics", OPENING)]),
        # After a word that explains the sentence's first capital, the next capital is chosen.
        ("Yesterday Orbit Robotics called.", [("Orbit Robotics", WRITTEN)]),
        ("Called Orbit Robotics about the budget.", [("Orbit Robotics", WRITTEN)]),
        ("- **2024-06-18** | Partner Sarah Guo joined.", [("Sarah Guo", WRITTEN)]),
        # An abbreviation's full stop, a parenthesis, a dash inside a word start no sentence.
        ("We hired Dr. Maria Chen today.", [("Maria Chen", WRITTEN)]),
        ("He played Mark (Scott Gibbs) well.", [("Scott Gibbs", WRITTEN)]),
        ("the Dallas–Fort Worth area", [("Fort Worth", WRITTEN)]),
        # A date opens a record only at a line's start.
        ("his famous 2011 Wall Street Journal essay", [("Wall Street Journal", WRITTEN)]),
        # Title Case that is no name's own: headings, callout titles, quotation pieces, labels, code.
        ("## Offene Punkte", [("Offene Punkte", TITLED)]),
        ("> [!info]- Mac Setup\n> text", [("Mac Setup", TITLED)]),
        ("Tap **Manage Extensions** to see them.", [("Manage Extensions", TITLED)]),
        ("Use `Title Case` for headings.", [("Title Case", TITLED)]),
        ("```yaml\ncast:\n  - Mark Hamill\n```", [("Mark Hamill", TITLED)]),
        ("Why Most Health Apps Fail Patients at Scale", [("Health Apps Fail Patients", TITLED)]),
        # A quotation in Title Case as a whole is a work's title: one name.
        ('She spoke on "Why Most Health Apps Fail Patients" in May.', [("Why Most Health Apps Fail Patients", WRITTEN)]),
        ("He quoted 'Do Things That Don't Scale' again.", [("Do Things That Don't Scale", WRITTEN)]),
        ('She said "we should go home" then.', []),
        # What follows a job title is the title's rest, not a name.
        ("She joins as Chief Business Officer.", [("Business Officer", TITLED)]),
        ("Hires VP of Engineering Marcus Webb.", [("Engineering Marcus Webb", TITLED)]),
        # A link's whole shown text is written; a piece of a link is not.
        ("See [[people/alice-kim|Alice Kim]] today.", [("Alice Kim", WRITTEN)]),
        ("See [[ADR-001 Flutter for the Atlas client|the decision]].", [("ADR-001 Flutter", TITLED)]),
        # Beside "&" a run is a piece of a longer name; initials alone are none.
        ("from the Surgical Adjuvant Breast & Bowel Project", [("Surgical Adjuvant Breast", TITLED), ("Bowel Project", TITLED)]),
        ("[Altschul, S. F., Gish, W.]", []),
        # A compound ending in a lower-case word modifies what it is written with.
        ("exploring an AI-powered SOC assistant", []),
    ],
)
def test_what_a_names_writing_says(text: str, expected: list[tuple[str, int]]) -> None:
    assert read_names(text) == expected


def test_a_paragraph_in_another_language_gives_its_capitals_no_weight() -> None:
    german = (
        "Geoplan vertreibt eine Plattform an Stadtwerke und Landkreise. Viele ihrer Kunden erfassen "
        "Zustandsdaten von Hydranten noch auf Papier, und der Export wird bis Ende Mai fertiggestellt."
    )
    assert {evidence for _, evidence in read_names(german)} == {TITLED}
    english = "Viele asked whether the export reaches Ende Mai before the pilot starts in the spring."
    assert ("Ende Mai", WRITTEN) in read_names(english)


# A planted vault: real names written as notes write them, beside Title Case that names nothing.
_NOTES = {
    "People/Priya Kumar.md": "# Priya Kumar\n\nPriya leads research at Orbit Robotics and advises Kestrel Cloud.\n",
    "Talks.md": (
        "# Talks\n\n## Why Most Health Apps Fail Patients\n\n"
        '- 2024-05-02 | Spoke at HLTH on "Designing for Quiet Machines" with [[Priya Kumar]].\n'
        "- Gave a keynote on **Shared Folders** and the **Export Format**.\n"
    ),
    "Companies/Lattice.md": "# Lattice - Enterprise Software Startup\n\nLattice sells to mid-market teams; Kestrel Cloud hosts its models.\n",
    "Meetings/Partnertreffen.md": (
        "# Partnertreffen\n\nTeilnehmende: Dr. Katrin Vogel (Leiterin Produktentwicklung)\n\n## Offene Punkte\n\nDer Export wird bis Ende Mai fertiggestellt. Ein Wasserverband in "
        "Brandenburg wäre bereit, und die Kunden erfassen Zustandsdaten von Hydranten noch auf Papier.\n"
    ),
    "Log.md": "# Log\n\nMarcus Webb called about the budget.\n\nHires VP of Engineering Marcus Webb from Fetch Robotics.\n",
    "Log 2.md": "# Log 2\n\nMarcus Webb signed the contract. Zoe Quint phoned once.\n",
    "Settings.md": "# Settings\n\n1. Tap **Manage Extensions**.\n2. Use `Title Case` for headings.\n\n## Orbit Robotics Roadmap\n\nNotes.\n",
}


def _names(root: Path) -> tuple[set[str], Engine]:
    vault = root / "vault"
    for path, text in _NOTES.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    engine = Engine.open(vault, index_dir=root / "index", embedder=None)
    engine.reindex(embed=False)
    names = {n.name for path in _NOTES for n in engine.neighbors(path, limit=200) if n.kind == "name"}
    return names, engine


def test_only_phrases_with_evidence_become_names(tmp_path: Path) -> None:
    names, engine = _names(tmp_path)
    with engine:
        # Inside running text (Orbit Robotics, Kestrel Cloud, Fetch Robotics), a work's title in
        # quotes, and a name that opens sentences in two notes (Marcus Webb).
        assert names == {"Orbit Robotics", "Kestrel Cloud", "Fetch Robotics", "Marcus Webb", "Designing for Quiet Machines"}
        # One note opening a sentence with it is no evidence (Zoe Quint); nor a heading, a
        # label, code, a job title's rest or a German note's nouns (in a line too short to
        # say its language, the note's is taken).


def test_title_case_text_names_the_known_names_inside_it(tmp_path: Path) -> None:
    names, engine = _names(tmp_path)
    with engine:
        # "## Orbit Robotics Roadmap" is no name, but names Orbit Robotics, written elsewhere.
        assert "Orbit Robotics" in {n.name for n in engine.neighbors("Settings.md", limit=50)}
        assert "Orbit Robotics Roadmap" not in names
        # "Hires VP of Engineering Marcus Webb" names Marcus Webb, as the vault knows him.
        log = {n.name for n in engine.neighbors("Log.md", limit=50)}
        assert "Marcus Webb" in log and "Engineering Marcus Webb" not in log
        # A query recognises the names, and none of the Title Case that names nothing.
        assert [m.surface for m in engine.plan("Orbit Robotics and Kestrel Cloud").entities] == ["Orbit Robotics", "Kestrel Cloud"]
        assert engine.plan("Health Apps Fail Patients").entities == ()
