"""`engine search --why NOTE`: a note's place in a search, each channel's view of it, and what pushed it down."""

from __future__ import annotations

import json

import pytest

from engine.api import Engine
from engine.console import Exit
from engine.errors import NoteNotFound
from engine.tools.cli import main

QUERY = "who attended the Atlas kickoff"


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """sample_vault without the model (exact and quick); tests must not modify it."""
    from vault_copy import copy_sample_vault

    base = tmp_path_factory.mktemp("why")
    engine = Engine.open(copy_sample_vault(base / "vault"), index_dir=base / "index", embedder=None)
    engine.reindex()
    yield engine
    engine.close()


def test_the_rank_it_reports_is_the_search_s_own(lexical: Engine) -> None:
    results = lexical.search(QUERY, limit=8, as_you_type=False)
    for rank, hit in enumerate(results.hits, start=1):
        report = lexical.why(QUERY, hit.path, limit=8)
        assert report.rank == rank
        assert report.score == pytest.approx(hit.score, abs=1e-6)
        assert report.reasons[0] == f"it is shown, {rank}{'st' if rank == 1 else 'nd' if rank == 2 else 'rd' if rank == 3 else 'th'} of 8"
        votes = {c.channel: c.vote for c in report.channels if c.vote}
        assert votes == pytest.approx(dict(hit.votes), abs=1e-6)


def test_a_note_pushed_out_says_which_cut(lexical: Engine) -> None:
    report = lexical.why(QUERY, "Leo Fischer", limit=5)
    assert report.path == "People/Leo Fischer.md"
    assert report.rank is None or report.rank > 5
    graph = next(c for c in report.channels if c.channel == "graph")
    fulltext = next(c for c in report.channels if c.channel == "fulltext")
    assert fulltext.rank is None and any(r.startswith("full text: no word of the query") for r in report.reasons)
    if graph.rank is not None and graph.rank > graph.counted:
        assert any("; only its first" in r for r in report.reasons)
    vectors = next(c for c in report.channels if c.channel == "vectors")
    assert vectors.status == "unavailable" and any(r.startswith("search by meaning did not run") for r in report.reasons)


def test_a_note_below_the_page_gives_its_score_and_the_cut(lexical: Engine) -> None:
    results = lexical.search(QUERY, limit=30, as_you_type=False)
    eighth = results.hits[7]
    report = lexical.why(QUERY, eighth.path, limit=3)
    assert report.rank == 8
    assert report.reasons[0].startswith("it ranks 8th and the search shows 3")
    assert report.cutoff == pytest.approx(results.hits[2].score, abs=1e-6)


def test_a_named_note_and_the_kind_rule(lexical: Engine) -> None:
    named = lexical.why("Atlas", "Projects/Atlas/Atlas.md")
    assert named.rank == 1 and "the query names this note by its title or an alias: it comes first" in named.reasons
    other = lexical.why("Atlas", "Projects/Atlas/Roadmap.md")
    assert any("the query names by title or alias come first: Atlas" in r for r in other.reasons)
    asked = lexical.why("someone who pushes for written proposals", "Projects/Atlas/Atlas.md")
    assert any(r.startswith("the query asks for people; this note is not one") for r in asked.reasons)


def test_a_note_that_does_not_exist_names_the_nearest(lexical: Engine) -> None:
    with pytest.raises(NoteNotFound, match="nearest: Priya Kumar"):
        lexical.why(QUERY, "Priya Kumr")


def test_engine_search_why(lexical: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    common = [str(lexical.vault), "--index-dir", str(lexical.index_dir), "--no-model", QUERY]
    assert main(["search", *common, "--why", "Leo Fischer", "--limit", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Leo Fischer (People/Leo Fischer.md):")
    assert "by links" in out and "  - " in out and "GRAPH" not in out and "vote" not in out
    assert main(["search", *common, "--why", "Leo Fischer", "--limit", "5", "--raw"]) == 0
    raw = capsys.readouterr().out
    assert "GRAPH" in raw and "fused score" in raw and "vote" in raw
    assert main(["search", *common, "--why", "Priya Kumar", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["path"] == "People/Priya Kumar.md" and payload["rank"] >= 1
    assert set(payload["channels"]) == {"fulltext", "vectors", "graph"}


def test_engine_search_why_of_a_missing_note_is_an_error(lexical: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["search", str(lexical.vault), "--index-dir", str(lexical.index_dir), "--no-model", QUERY, "--why", "Priya Kumr"])
    err = capsys.readouterr().err
    assert code == Exit.NOTE_NOT_FOUND == 7
    assert "no note is named “Priya Kumr”" in err and "did you mean:\n  Priya Kumar  (People/Priya Kumar.md)" in err
