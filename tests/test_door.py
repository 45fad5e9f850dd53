"""engine/door.py and engine/unnamed.py: answers under a budget, passages sent once, honest "nothing here"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.api import Engine
from engine.door import answer_text, search_answer
from engine.errors import ConfigError
from engine.present import split_hits
from engine.tools.cli import main as engine_main

SHARED = "The quarterly zephyrine review covers budgets, hiring and the roadmap for the next two quarters."


@pytest.fixture
def engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in ("Alpha", "Beta"):
        (vault / f"{name} review.md").write_text(
            f"# Review\n\n{SHARED}\n", encoding="utf-8"
        )  # one text, two notes
    for number in range(30):
        (vault / f"Note {number}.md").write_text(
            f"# Note {number}\n\nZephyrine notes, part {number}: budgets.\n", encoding="utf-8"
        )
    (vault / "Priya Kumar.md").write_text(
        "# Priya Kumar\n\nPriya leads the zephyrine project.\n", encoding="utf-8"
    )
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as opened:
        opened.reindex()
        yield opened


def test_a_passage_two_notes_share_is_sent_once(engine: Engine) -> None:
    answer = search_answer(
        engine.search("quarterly zephyrine review", as_you_type=False),
        detail="brief",
        counter=engine.token_counter(),
        max_tokens=None,
    )
    passages = [hit["passage"] for hit in answer["hits"][:2]]
    assert passages[0].endswith(SHARED)
    assert passages[1].startswith("(the same passage as ")


def test_the_brief_answer_is_what_a_person_sees_and_fits_its_budget(engine: Engine) -> None:
    results = engine.search("zephyrine budgets", limit=40, as_you_type=False)
    confident, nearest = split_hits(results)
    whole = search_answer(results, detail="brief", counter=engine.token_counter(), max_tokens=None)
    assert [h["path"] for h in whole["hits"]] == [h.path for h in (*confident, *nearest)]
    counter = engine.token_counter()
    for budget in (150, 400, 1000):
        cut = search_answer(results, detail="brief", counter=counter, max_tokens=budget)
        assert counter([answer_text(cut)])[0] <= budget
        assert cut["tokens"] == counter([answer_text(cut)])[0]
        assert [h["path"] for h in cut["hits"]] == [h["path"] for h in whole["hits"]][
            : len(cut["hits"])
        ]
        assert cut["left_out"]["hits"] == len(whole["hits"]) - len(cut["hits"]) > 0
    full = search_answer(results, detail="full", counter=counter, max_tokens=800)
    assert counter([answer_text(full)])[0] <= 800 and "channels" in full["hits"][0]
    with pytest.raises(ConfigError):
        search_answer(results, detail="brief", counter=counter, max_tokens=5)


def test_a_name_no_note_holds_has_no_confident_answer(engine: Engine) -> None:
    # Before: the common words of such a question counted as confident evidence for every hit.
    missing = engine.search("Who is Priya Trelvaxin?", as_you_type=False)
    assert missing.hits and missing.confident == 0 and missing.unnamed == ("Trelvaxin",)
    assert "no note holds “Trelvaxin”" in missing.reading.notes
    said = search_answer(missing, detail="brief", counter=engine.token_counter(), max_tokens=None)[
        "said"
    ]
    assert said == "no note names “Trelvaxin”; the nearest notes follow"
    assert engine.context("Who is Priya Trelvaxin?").sources == ()
    # A name the vault holds, and common words it lacks, leave the evidence as it was.
    for asked in ("Who is Priya Kumar?", "who reviewed the zephyrine budgets carefully"):
        found = engine.search(asked, as_you_type=False)
        assert found.confident > 0 and found.unnamed == (), asked


def test_engine_search_json_takes_detail_and_a_budget(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = str(engine.vault)
    index = str(engine.index_dir)
    engine.close()
    code = engine_main(
        [
            "search",
            vault,
            "zephyrine",
            "--index-dir",
            index,
            "--no-model",
            "--cold",
            "--json",
            "--detail",
            "brief",
            "--max-tokens",
            "200",
            "--limit",
            "30",
        ]
    )
    answer = json.loads(capsys.readouterr().out)
    assert (
        code == 0
        and next(iter(answer)) == "said"
        and answer["left_out"]["hits"] > 0
        and answer["tokens"] <= 200
    )
    code = engine_main(
        [
            "context",
            vault,
            "zephyrine budgets",
            "--index-dir",
            index,
            "--no-model",
            "--cold",
            "--json",
            "--detail",
            "brief",
            "--max-tokens",
            "300",
        ]
    )
    brief = json.loads(capsys.readouterr().out)
    assert (
        code == 0
        and brief["sources"]
        and set(brief["sources"][0]) == {"path", "title", "heading", "line", "text"}
    )


def test_channel_counts_over_real_use_keep_no_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Kestrel.md").write_text(
        "# Kestrel\n\nThe kestrel hovers over [[Meadow]].\n", encoding="utf-8"
    )
    (vault / "Meadow.md").write_text("# Meadow\n\nGrass and voles.\n", encoding="utf-8")
    index = tmp_path / "index"
    with Engine.open(vault, index_dir=index, embedder=None) as engine:
        engine.reindex()
        engine.search("kestrel hovers", as_you_type=False)
        engine.search("voles", as_you_type=False)
        engine.search("kest", as_you_type=True)  # a keystroke's search is not counted
    kept = (index / "channel_usage.json").read_text(encoding="utf-8")
    assert "kestrel" not in kept.casefold() and "voles" not in kept
    counts = json.loads(kept)
    assert counts["searches"] == 2 and counts["searches_placing"]["fulltext"] == 2
    assert (
        engine_main(
            ["status", str(vault), "--index-dir", str(index), "--no-model", "--cold", "--channels"]
        )
        == 0
    )
    assert "2 searches counted" in capsys.readouterr().out
    assert (
        engine_main(
            [
                "status",
                str(vault),
                "--index-dir",
                str(index),
                "--no-model",
                "--cold",
                "--json",
                "--channels",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["channel_usage"]["hits_placed"]["fulltext"] >= 2

    from engine.config import EngineConfig

    with Engine.open(
        vault,
        EngineConfig.from_dict({"search": {"count_channels": False}}),
        index_dir=index,
        embedder=None,
    ) as engine:
        engine.search("meadow", as_you_type=False)
    assert json.loads((index / "channel_usage.json").read_text(encoding="utf-8"))["searches"] == 2
