"""A note named in plain text is related as its sentence says, as a linked one is."""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine


def test_the_sentence_of_a_plain_mention_names_the_relation(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "People").mkdir(parents=True)
    for name in ("Victor Jackson", "Mark Thomas"):
        (vault / "People" / f"{name}.md").write_text(f"# {name}\n\nInvestor.\n", "utf-8")
    # Mark Thomas is named first, so neither order nor position favours Victor Jackson.
    (vault / "Demo Day W30.md").write_text(
        "# Demo Day W30\n\nMark Thomas sent the catering order ahead of the pitches.\n\n"
        "Later that week the notes were filed. Victor Jackson rounded out the attendee list.\n",
        "utf-8",
    )
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        hits = eng.search("Who attended Demo Day W30?", channels=["graph"], as_you_type=False).hits
        ranked = [h.path for h in hits]
        assert ranked.index("People/Victor Jackson.md") < ranked.index("People/Mark Thomas.md"), ranked
        score = {h.path: h.channels["graph"].score for h in hits}
        assert score["People/Victor Jackson.md"] > score["People/Mark Thomas.md"]
