"""The word grammar and the full-text analyzer: the same terms for a note and for a query."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh.analysis import CharsetFilter, StemmingAnalyzer

from engine.channels.analysis import index_terms, query_terms
from engine.channels.fulltext import analyze_text
from engine.folding import LATIN_FOLDS
from engine.query import parse_query
from engine.tokens import cjk_runs, compound_parts, script_of, words_of_term


@pytest.mark.parametrize(
    ("text", "whole", "parts"),
    [
        ("pubspec.yaml", "pubspec.yaml", ["pubspec", "yaml"]),
        ("v1.5.2", "v1.5.2", ["v1"]),
        ("file.hastag", "file.hastag", ["file", "hastag"]),
        ("user@example.com", "user@example.com", ["user", "example.com", "com"]),
        ("snake_case_name", "snake_case_name", ["snake", "case", "name"]),
        ("C++", "c++", []),
        ("C#", "c#", []),
        ("Ｐｕｂｓｐｅｃ.yaml", "pubspec.yaml", ["pubspec", "yaml"]),
    ],
)
def test_a_compound_is_indexed_whole_and_by_its_parts(text: str, whole: str, parts: list[str]) -> None:
    terms = list(index_terms(f"see {text} here"))
    assert whole in terms
    assert set(parts) <= set(terms)
    # The query reads the same words the same way: the whole and its parts.
    assert whole in query_terms(text)
    assert parse_query(f"open {text}").terms[-1] == text.lower() or text.startswith("Ｐ")


def test_a_part_finds_the_compound_and_the_compound_finds_the_plain_word() -> None:
    note = set(index_terms("Add it to pubspec.yaml and mail user@example.com."))
    assert {"pubspec", "yaml", "user", "exampl"} <= note
    # A note that writes the parts apart still matches a query for the compound, by them.
    assert set(query_terms("pubspec.yaml")) & set(index_terms("the pubspec file in yaml"))


def test_numbers_are_one_value_and_sentence_dots_join_nothing() -> None:
    assert list(index_terms("pi is 3.14 and the host is 10.0.0.1")) == ["pi", "3.14", "host", "10.0.0.1"]
    assert list(index_terms("It ended. Then it began.")) == ["end", "then", "began"]
    assert compound_parts("3.14") == []


def test_a_repeated_compound_adds_its_parts_once() -> None:
    terms = list(index_terms("H2A.Z and H2A.Z and H2A.Z"))
    assert terms.count("h2a.z") == 3
    assert terms.count("h2a") == 1


def test_hyphens_and_apostrophes_split_words_as_before() -> None:
    assert words_of_term("state-of-the-art") == ["state", "of", "the", "art"]
    assert list(query_terms("don't re-index")) == ["don", "re", "index"]
    assert words_of_term("__init__") == ["init"]


_PROSE = (
    "Priya Kumar reviewed the migration plan with José Álvarez on Tuesday. The vector tiles "
    "were rendering slowly, so the team decided to cache them; benchmarks improved by 40% "
    "(from 2.5 s to 1.5 s). Naïve approaches failed, e.g. re-rendering everything."
)


def test_english_prose_gets_the_terms_of_the_old_analyzer() -> None:
    """Latin words go through Whoosh's StemmingAnalyzer and the accent fold, as before this
    analyzer: English ranking does not move for text without compounds."""
    old = StemmingAnalyzer() | CharsetFilter(LATIN_FOLDS)
    assert list(index_terms(_PROSE)) == [token.text for token in old(_PROSE)]


def test_cjk_runs_are_character_pairs_and_notes_also_index_characters() -> None:
    assert list(query_terms("ホーム画面")) == ["ホー", "ーム", "ム画", "画面"]
    note = list(index_terms("ホーム画面を開く"))
    assert {"ホー", "ーム", "ム画", "画面", "面を", "画", "面"} <= set(note)
    # A lone character is looked up by itself, and notes index every character.
    assert list(query_terms("傘")) == ["傘"]
    assert "傘" in index_terms("充電器、傘を忘れない")
    # Latin and kana written together are two runs.
    assert list(cjk_runs("Obsidianの使い方")) == [(False, "Obsidian"), (True, "の使い方")]
    assert list(query_terms("Obsidianの使い方")) == ["obsidian", "の使", "使い", "い方"]


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("持ち物", "旅行の前に持ち物リストを確認する。"),
        ("製造ライン", "今週は製造ラインの停止が二回あった。"),
        ("ホーム画面", "ホーム画面のウィジェットを並べ替える。"),
        ("数据库迁移", "我们讨论了数据库迁移的计划。"),
        ("데이터베이스", "다음 주에 데이터베이스 마이그레이션을 시작하기로 했습니다."),
    ],
)
def test_a_cjk_word_is_found_inside_a_longer_passage(query: str, note: str) -> None:
    assert set(query_terms(query)) <= set(index_terms(note))


@pytest.mark.parametrize(
    ("written", "asked"),
    [
        ("Синхронизация заметки", "синхронизации заметку"),  # Russian: case endings
        ("Купить ЯБЛОКИ", "яблоко"),
        ("ёлка", "елка"),
        ("Οι σημειώσεις της συνάντησης", "σημειωση συναντηση"),  # Greek: accents, endings
        ("ΣΗΜΕΙΏΣΕΙΣ", "σημειώσεις"),
        ("مُلاحَظة الاجتماع", "ملاحظة"),  # Arabic: diacritics, the article
    ],
)
def test_cyrillic_greek_and_arabic_are_folded_and_stemmed(written: str, asked: str) -> None:
    assert set(query_terms(asked)) <= set(index_terms(written))


def test_the_stemmer_is_chosen_per_word_by_script() -> None:
    terms = list(index_terms("Deploying the servers: развёртывание серверов"))
    assert terms == ["deploi", "server", "развертыван", "сервер"]
    assert [script_of(w) for w in ("server", "Álvarez", "сервер", "σημείωση", "ملاحظة", "שלום")] == [
        "latin", "latin", "cyrillic", "greek", "arabic", "other",
    ]


def test_combining_marks_stay_inside_their_word() -> None:
    assert list(index_terms("हिन्दी भाषा")) == ["हिन्दी", "भाषा"]
    assert list(index_terms("cafe\u0301")) == ["cafe"]  # NFKC composes é, the fold takes it off


def test_the_planner_stems_come_from_the_same_analyzer() -> None:
    assert analyze_text("pubspec.yaml") == list(query_terms("pubspec.yaml"))


_ALPHABET = st.sampled_from([*"abcXYZ019 .@_-'+#", "é", "ё", "ж", "σ", "ά", "م", "の", "画", "面", "한", "ー", "Ｐ", "\u0301"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_every_query_term_of_a_text_is_an_index_term_of_it(text: str) -> None:
    """Tokenisation is the same at index and query time: a note is found by its own words,
    whether the query is the whole text or the terms the query parser splits it into."""
    indexed = set(index_terms(text))
    assert set(query_terms(text)) <= indexed
    for term in parse_query(text, as_you_type=False).terms:
        assert set(analyze_text(term)) <= indexed
