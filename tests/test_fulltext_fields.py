"""What the full-text document of a note holds besides its body."""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine


def test_folders_count_as_tags(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "People").mkdir(parents=True)
    (vault / "Projects").mkdir()
    (vault / "People" / "Ada Park.md").write_text("# Ada Park\n\nPushes back hard on microservices.\n", "utf-8")
    (vault / "Projects" / "Mesh.md").write_text(
        "# Mesh\n\nThe microservices split. People pushed back on the timeline.\n", "utf-8"
    )
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
        hits = engine.search("people who push back on microservices", channels=["fulltext"], as_you_type=False).hits
        assert [h.path for h in hits] == ["People/Ada Park.md", "Projects/Mesh.md"]
        # A folder name is a word of the note, not of its text: the snippet never shows it.
        assert "People" not in hits[0].snippet.text


def test_accents_fold_in_full_text(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Bogotá trip.md").write_text("# Bogotá trip\n\nMet José at the café.\n", "utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
        for typed in ("jose cafe", "José café", "bogota", "bogot"):
            hits = engine.search(typed, channels=["fulltext"]).hits
            assert [h.path for h in hits] == ["Bogotá trip.md"], typed
        for typed, typing in (("cafe", False), ("caf", True)):
            snippet = engine.search(typed, channels=["fulltext"], as_you_type=typing).hits[0].snippet
            assert [snippet.text[a:b] for a, b in snippet.highlights] == ["café"], typed
