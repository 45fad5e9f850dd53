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


def test_a_who_question_ranks_the_named_notes_people_above_those_reached_through_a_company(
    tmp_path: Path,
) -> None:
    """The people a meeting names attended it; the people of the company it pitched did not."""
    vault = tmp_path / "vault"
    (vault / "People").mkdir(parents=True)
    (vault / "Companies").mkdir()
    for name in ("Julia Davis", "Mark Thomas", "David Zhang", "Wendy Wilson"):
        (vault / "People" / f"{name}.md").write_text(f"# {name}\n\nInvestor.\n", "utf-8")
    (vault / "Companies" / "Vector.md").write_text(
        "# Vector\n\nBacked by [[David Zhang]]; [[Wendy Wilson]] advises it. [[David Zhang]] sits on the board.\n",
        "utf-8",
    )
    # The meeting links its company and one attendee many times, names another once.
    (vault / "Demo Day.md").write_text(
        "# Demo Day\n\n[[Vector]] pitched. [[Julia Davis]] led the day. [[Vector]] showed growth.\n\n"
        "[[Julia Davis]] closed. [[Vector]] took questions. Mark Thomas was there for his firm.\n",
        "utf-8",
    )
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        hits = eng.search("Who attended Demo Day?", channels=["graph"], as_you_type=False).hits
        ranked = [h.path for h in hits]
        path_of = {h.path: h.channels["graph"].graph_path for h in hits}
        assert path_of["People/David Zhang.md"] == ("Demo Day", "Vector", "David Zhang")
        assert ranked.index("People/Mark Thomas.md") < ranked.index("People/David Zhang.md"), ranked
        assert ranked.index("People/Mark Thomas.md") < ranked.index("People/Wendy Wilson.md"), ranked
