"""A title with a parenthesised qualifier ("Mirage (metal band)") is asked about by its bare name."""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine
from engine.channels.graph.build import without_qualifier as _without_qualifier


def test_bare_name_of_a_qualified_title() -> None:
    assert _without_qualifier("Mirage (metal band)") == "Mirage"
    assert _without_qualifier("L'Amour (music venue)") == "L'Amour"
    assert _without_qualifier("f(x)") == ""  # no space before the parenthesis: part of the name
    assert _without_qualifier("Mirage") == ""
    assert _without_qualifier("(untitled)") == ""


def test_a_query_names_the_note_by_its_bare_name(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Mirage (metal band).md").write_text(
        "# Mirage (metal band)\n\nA heavy metal band formed in 1983 by Richard Morgan.\n", "utf-8"
    )
    (vault / "Richard Morgan.md").write_text("# Richard Morgan\n\nA Welsh singer.\n", "utf-8")
    (vault / "Desert Trip.md").write_text(
        "# Desert Trip\n\nWe saw a Mirage on the road. Richard Morgan drove.\n", "utf-8"
    )
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        results = eng.search("who sang in Mirage", channels=["graph"], as_you_type=False)
        assert "Mirage" in results.recognized_entities
        assert "Richard Morgan.md" in [h.path for h in results.hits]
        # Text that writes the bare name is not taken to mean the band.
        neighbors = {n.path for n in eng.neighbors("Desert Trip.md")}
        assert "Mirage (metal band).md" not in neighbors
