"""Words in every script are found: compounds, CJK, Korean, Cyrillic, Greek, Arabic.

`tests/data/scripts_vault/` is a small vault written for these tests (notes in English,
Japanese, Chinese, Korean, Russian, Greek and Arabic, and notes full of file names,
versions and addresses); `scripts_queries.tsv` / `scripts_qrels.tsv` label what each
query must find. `engine eval` runs them with the default model and floors, and the
full-text channel alone must put every answer first: these are words the note contains.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import Engine
from engine.tools.cli import main
from engine.tools.eval import load_qrels, load_queries

DATA = Path(__file__).resolve().parent / "data"
VAULT = DATA / "scripts_vault"
QUERIES = DATA / "scripts_queries.tsv"
QRELS = DATA / "scripts_qrels.tsv"
# Words written in the notes: full text alone must rank the answer first for every one.
_LEXICAL = ("tok-", "cjk-", "ko-", "cyr-", "el-", "ar-", "ent-")
# Floors a little under what the default model measured (docs/QUALITY.md, "Every script").
LEXICAL_FLOORS = {"nDCG@10": 0.97, "R@5": 0.97, "MRR": 0.97}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("scripts")
    vault = base / "vault"
    shutil.copytree(VAULT, vault)
    return vault, base / "index"


@pytest.fixture(scope="module")
def engine(dirs: tuple[Path, Path]) -> Iterator[Engine]:
    vault, index = dirs
    with Engine.open(vault, index_dir=index) as eng:
        eng.reindex()
        yield eng


def _lexical_queries() -> list[tuple[str, str, str]]:
    queries = load_queries(QUERIES)
    relevant = load_qrels(QRELS)
    return [
        (qid, text, next(iter(relevant[qid])))
        for qid, text in queries
        if qid.startswith(_LEXICAL)
    ]


@pytest.mark.parametrize(("qid", "query", "answer"), _lexical_queries(), ids=lambda v: str(v))
def test_full_text_alone_finds_the_word_written_in_the_note(engine: Engine, qid: str, query: str, answer: str) -> None:
    results = engine.search(query, channels=["fulltext"], as_you_type=False, limit=5)
    assert [hit.path for hit in results.hits][:1] == [answer], qid


def test_labelled_set_meets_its_floors(dirs: tuple[Path, Path], engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    vault, index = dirs
    prefixes = [arg for prefix in _LEXICAL for arg in ("--qid-prefix", prefix)]
    code = main([
        "eval", "--json", "--vault", str(vault), "--queries", str(QUERIES), "--qrels", str(QRELS),
        "--index-dir", str(index), *prefixes,
        "--min-ndcg", str(LEXICAL_FLOORS["nDCG@10"]),
        "--min-recall5", str(LEXICAL_FLOORS["R@5"]),
        "--min-mrr", str(LEXICAL_FLOORS["MRR"]),
    ])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report["hybrid"]
    assert report["queries"] == len(_lexical_queries())
    assert report["channels"]["fulltext"]["MRR"] == 1.0


@pytest.mark.parametrize(
    ("typed", "answer"),
    [("pubspec.ya", "Flutter setup.md"), ("user@exam", "Access requests.md"), ("snake_ca", "Python naming.md")],
)
def test_a_compound_being_typed_is_found_by_its_prefix(engine: Engine, typed: str, answer: str) -> None:
    results = engine.search(typed, channels=["fulltext"], as_you_type=True, limit=3)
    assert results.hits and results.hits[0].path == answer


def test_a_cjk_title_inside_a_sentence_is_recognised_and_walked_from(engine: Engine) -> None:
    results = engine.search("アプリの設定について教えて", channels=["graph"], as_you_type=False)
    assert "アプリの設定" in results.recognized_entities
    assert results.hits and results.hits[0].path == "アプリの設定.md"


def test_english_and_russian_in_one_vault_are_both_stemmed(engine: Engine) -> None:
    # No language setting: each word is read by its own script.
    english = engine.search("restarting workers", channels=["fulltext"], as_you_type=False)
    russian = engine.search("перезапуском", channels=["fulltext"], as_you_type=False)
    assert english.hits[0].path == russian.hits[0].path == "Deployment checklist.md"
