"""A note is named in text as the name finder reads its title there: with initials
("M. Ward"), inside a long run two names join ("Trent Reznor of Nine Inch Nails"), and
without a leading stop word ("The Hukilau Song" read as "Hukilau Song")."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine
from engine.entities import extract_names


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the third album by singer-songwriter M. Ward. The title", ["M. Ward"]),
        ("George W. Bush met J. R. R. Tolkien.", ["George W. Bush", "J. R. R. Tolkien"]),
        ("produced by Trent Reznor of Nine Inch Nails. Reznor", ["Trent Reznor", "Nine Inch Nails"]),
        ("She works at Bank of America.", ["Bank of America"]),  # a short run stays one name
        ("He chose Plan B. Then it rained.", ["Plan B"]),  # a sentence's end is no initial
        ("stationed at a U.S. Army base", []),  # nor is an abbreviation's inner letter
        ("Alpha Beta Gamma Delta Epsilon Zeta ran.", []),  # a long run without a connector
    ],
)
def test_names_with_initials_and_joined_names(text: str, expected: list[str]) -> None:
    assert [name for name in extract_names(text) if " " in name] == expected


def _vault(root: Path) -> Path:
    root.mkdir()
    notes = {
        "M. Ward.md": "# M. Ward\n\nA singer-songwriter from Portland, Oregon.\n",
        "Trent Reznor.md": "# Trent Reznor\n\nAn American musician and record producer.\n",
        "The Hukilau Song.md": "# The Hukilau Song\n\nA song written after a luau in Laie.\n",
        "Hukilau Song.md": None,  # see the second test
        "Vincent.md": "# Transfiguration of Vincent\n\nThe third studio album by singer-songwriter M. Ward.\n",
        "Soundtrack.md": (
            "# Natural Born Killers (soundtrack)\n\nThe soundtrack, produced by Trent Reznor of Nine Inch Nails."
            " He compiled it on tour. The Hukilau Song is not on it.\n"
        ),
    }
    for name, text in notes.items():
        if text is not None:
            (root / name).write_text(text, "utf-8")
    return root


def test_the_graph_joins_notes_named_these_ways(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        assert "M. Ward.md" in {n.path for n in eng.neighbors("Vincent.md")}
        linked = {n.path for n in eng.neighbors("Soundtrack.md")}
        assert {"Trent Reznor.md", "The Hukilau Song.md"} <= linked
        names = {n.name for n in eng.neighbors("Soundtrack.md")}
        assert "Nine Inch Nails" in names  # a name no note has is a vertex of its own


def test_an_exact_title_wins_over_a_title_read_without_its_stop_word(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    (vault / "Hukilau Song.md").write_text("# Hukilau Song\n\nAnother note of that name.\n", "utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        linked = {n.path for n in eng.neighbors("Soundtrack.md")}
        assert "Hukilau Song.md" in linked and "The Hukilau Song.md" not in linked
