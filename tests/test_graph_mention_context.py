"""A note named in plain text is related as its sentence says, as a linked one is."""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine
from engine.records import Hit


def _graph_hits(tmp_path: Path, notes: dict[str, str], query: str) -> list[Hit]:
    """The graph channel's hits for `query` in a vault of `notes` (path → text); people are investors."""
    vault = tmp_path / "vault"
    for path, text in notes.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, "utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        return list(eng.search(query, channels=["graph"], as_you_type=False).hits)


def _people(*names: str) -> dict[str, str]:
    return {f"People/{name}.md": f"# {name}\n\nInvestor.\n" for name in names}


def test_the_sentence_of_a_plain_mention_names_the_relation(tmp_path: Path) -> None:
    # Mark Thomas is named first, so neither order nor position favours Victor Jackson.
    meeting = (
        "# Launch Night L7\n\nMark Thomas sent the catering order ahead of the pitches.\n\n"
        "Later that week the notes were filed. Victor Jackson rounded out the attendee list.\n"
    )
    notes = {**_people("Victor Jackson", "Mark Thomas"), "Launch Night L7.md": meeting}
    hits = _graph_hits(tmp_path, notes, "Who attended Launch Night L7?")
    ranked = [h.path for h in hits]
    assert ranked.index("People/Victor Jackson.md") < ranked.index("People/Mark Thomas.md"), ranked
    score = {h.path: h.channels["graph"].score for h in hits}
    assert score["People/Victor Jackson.md"] > score["People/Mark Thomas.md"]


def test_a_who_question_ranks_the_named_notes_people_above_those_reached_through_a_company(
    tmp_path: Path,
) -> None:
    """The people a meeting names attended it; the people of the company it pitched did not."""
    notes = {
        **_people("Julia Davis", "Mark Thomas", "David Zhang", "Wendy Wilson"),
        "Companies/Vector.md": "# Vector\n\nBacked by [[David Zhang]]; [[Wendy Wilson]] advises it. "
        "[[David Zhang]] sits on the board.\n",
        # The meeting links its company and one attendee many times, names another once.
        "Demo Day.md": "# Demo Day\n\n[[Vector]] pitched. [[Julia Davis]] led the day. [[Vector]] showed growth.\n\n"
        "[[Julia Davis]] closed. [[Vector]] took questions. Mark Thomas was there for his firm.\n",
    }
    hits = _graph_hits(tmp_path, notes, "Who attended Demo Day?")
    ranked = [h.path for h in hits]
    path_of = {h.path: h.channels["graph"].graph_path for h in hits}
    assert path_of["People/David Zhang.md"] == ("Demo Day", "Vector", "David Zhang")
    assert ranked.index("People/Mark Thomas.md") < ranked.index("People/David Zhang.md"), ranked
    assert ranked.index("People/Mark Thomas.md") < ranked.index("People/Wendy Wilson.md"), ranked
