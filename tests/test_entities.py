"""Tests for engine.entities: name extraction, normalisation and query-time recognition."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from engine.api import Engine
from engine.entities import (
    EntityDictionary,
    EntityMatch,
    extract_capitalized_words,
    extract_names,
    is_title_word,
)
from engine.folding import entity_key

# ---------------------------------------------------------------------------
# extract_names
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Meeting with Marcus Chen today.", ["Marcus Chen"]),
        ("The Beta Board Meeting was long.", ["Beta Board Meeting"]),
        ("Yesterday Marcus Chen called.", ["Marcus Chen"]),
        ("In Paris we met Jean-Luc Picard.", ["Jean-Luc Picard"]),
        ("She works at Bank of America.", ["Bank of America"]),
        (
            "Ludwig van Beethoven and Charles de Gaulle",
            ["Ludwig van Beethoven", "Charles de Gaulle"],
        ),
        ("Marcus Chen's notes", ["Marcus Chen"]),
        ("Notes from Acme Labs' offsite", ["Acme Labs"]),
        (
            "Priya met Marcus Chen, Priya Patel and Dana Scully.",
            ["Marcus Chen", "Priya Patel", "Dana Scully"],
        ),
    ],
)
def test_capitalized_phrases(text: str, expected: list[str]) -> None:
    assert extract_names(text) == expected


def test_capitalized_words_are_single_title_case_words() -> None:
    text = "Neighbours is a soap. It was shot in Oahu; the NASA team used SQLCipher. Über Zoë, über neighbours."
    assert extract_capitalized_words(text) == ["Neighbours", "Oahu", "Über", "Zoë"]
    assert is_title_word("Neighbours") and is_title_word("Zoë")
    assert not is_title_word("NASA") and not is_title_word("SQLCipher") and not is_title_word("oahu")


@pytest.mark.parametrize(
    "text",
    [
        "Marcus. Chen went home.",  # a sentence boundary splits the phrase
        "Marcus\nChen",  # so does a line break
        "Just one name: Marcus.",
        "DO NOT MERGE THIS",  # shouting
        "This Is A Very Long Title Case Heading Here",  # headline, not a name
        "the bank of america",  # lower case
        "Bank of",  # connector at the end is dropped, leaving one word
    ],
)
def test_not_names(text: str) -> None:
    assert [n for n in extract_names(text) if " " in n] == []


def test_phrase_length_limits() -> None:
    assert extract_names("Alpha Beta Gamma Delta Epsilon ran.") == [
        "Alpha Beta Gamma Delta Epsilon"
    ]
    # A run of 6+ words (without stop words) is too long to be a name.
    assert extract_names("Alpha Beta Gamma Delta Epsilon Zeta Eta Theta ran.") == []


def test_identifiers() -> None:
    names = extract_names(
        "Call getUser on FooBar, then HTTPServer and iPhone; not ALLCAPS or plain."
    )
    assert names == ["getUser", "FooBar", "HTTPServer", "iPhone"]


def test_file_names() -> None:
    names = extract_names(
        "Edit config.yaml, main.py and docs/setup.md; README.MD too. Not e.g. this."
    )
    assert names == ["config.yaml", "main.py", "docs/setup.md", "README.MD"]


def test_urls_and_emails() -> None:
    text = "See https://example.com/a/b?q=1. Mail ops+alerts@mail.example.co.uk or www.example.org."
    assert extract_names(text) == [
        "https://example.com/a/b?q=1",
        "ops+alerts@mail.example.co.uk",
        "www.example.org",
    ]


def test_url_does_not_also_yield_its_file_name() -> None:
    assert extract_names("get https://host.example/files/report.pdf now") == [
        "https://host.example/files/report.pdf"
    ]


def test_order_and_dedupe() -> None:
    text = "Marcus Chen wrote main.py. Later MARCUS CHEN and marcus chen reviewed main.py."
    assert extract_names(text) == ["Marcus Chen", "main.py"]


@pytest.mark.parametrize(
    "text", ["", "   ", "\x00\x01\x02", "```\ncode\n```", "[[Link]] #tag `x`", "é" * 10_000]
)
def test_extract_names_never_crashes(text: str) -> None:
    assert isinstance(extract_names(text), list)


def test_extract_names_is_linear_on_hostile_input() -> None:
    hostile = "a." * 200_000 + "@" + "b-" * 100_000
    t0 = time.process_time()
    extract_names(hostile)
    assert time.process_time() - t0 < 3.0  # ~0.4 s CPU normally


def test_extract_names_is_linear_in_the_number_of_names() -> None:
    text = "and Marcus Chen met FooBar about x.py then " * 20_000
    t0 = time.process_time()
    names = extract_names(text)
    assert names == ["Marcus Chen", "FooBar", "x.py"]
    assert time.process_time() - t0 < 5.0  # ~0.6 s CPU normally; was quadratic once


# ---------------------------------------------------------------------------
# entity_key
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Marcus Chen", "marcus chen"),
        ("  Marcus \t\n Chen, ", "marcus chen"),
        ('"Beta Board Meeting."', "beta board meeting"),
        ("(Acme Labs)", "acme labs"),
        ("Straße", "strasse"),
        ("C++", "c"),
        ("node.js", "node.js"),
        ("...", ""),
    ],
)
def test_normalize(name: str, key: str) -> None:
    assert entity_key(name) == key


# ---------------------------------------------------------------------------
# EntityDictionary.recognize
# ---------------------------------------------------------------------------


@pytest.fixture
def dictionary() -> EntityDictionary:
    return EntityDictionary(
        [
            ("Marcus Chen", "person:marcus"),
            ("Marcus", "person:marcus"),
            ("Priya", "person:priya"),
            ("Priya Patel", "person:priya"),
            ("Beta Board Meeting", "meeting:beta"),
            ("Beta", "project:beta"),
            ("Board", "concept:board"),
            ("PK", "person:pk"),
            ("IT", "dept:it"),
            ("the", "junk:the"),
            ("ox", "animal:ox"),
            ("config.yaml", "file:config"),
            ("Acme Labs", "company:acme"),
            ("acme labs", "company:acme-dup"),
            ("Chen, Marcus", "person:marcus-formal"),
            ("O'Brien", "person:obrien"),
        ]
    )


def surfaces(matches: list[EntityMatch]) -> list[str]:
    return [m.surface for m in matches]


def test_longest_match_first_and_non_overlapping(dictionary: EntityDictionary) -> None:
    query = "notes from the beta board meeting with marcus chen"
    matches = dictionary.recognize(query)
    assert surfaces(matches) == ["beta board meeting", "marcus chen"]
    assert matches[0].entity_ids == ("meeting:beta",)
    for m in matches:
        assert query[m.start : m.end] == m.surface


def test_shorter_matches_fill_the_gaps(dictionary: EntityDictionary) -> None:
    assert surfaces(dictionary.recognize("Beta and Board, Marcus")) == ["Beta", "Board", "Marcus"]


def test_case_insensitive_and_ids_merged(dictionary: EntityDictionary) -> None:
    matches = dictionary.recognize("What does ACME LABS do?")
    assert surfaces(matches) == ["ACME LABS"]
    assert matches[0].entity_ids == ("company:acme", "company:acme-dup")


def test_possessive_matches_the_name(dictionary: EntityDictionary) -> None:
    matches = dictionary.recognize("Priya's plan and Marcus Chen’s review")
    assert [(m.surface, m.start, m.end) for m in matches] == [
        ("Priya", 0, 5),
        ("Marcus Chen", 17, 28),
    ]


def test_apostrophe_names(dictionary: EntityDictionary) -> None:
    assert surfaces(dictionary.recognize("ask O’Brien")) == ["O’Brien"]


def test_stop_words_and_short_tokens_ignored(dictionary: EntityDictionary) -> None:
    assert dictionary.recognize("the ox is in it") == []


def test_uppercase_short_alias_matches_only_in_caps(dictionary: EntityDictionary) -> None:
    assert surfaces(dictionary.recognize("ask PK about it")) == ["PK"]
    assert dictionary.recognize("ask pk about it") == []
    assert surfaces(dictionary.recognize("IT said it works")) == ["IT"]


def test_punctuation_breaks_ngrams(dictionary: EntityDictionary) -> None:
    assert surfaces(dictionary.recognize("Marcus. Chen")) == ["Marcus"]
    matches = dictionary.recognize("Chen, Marcus")
    assert [(m.surface, m.entity_ids) for m in matches] == [
        ("Chen, Marcus", ("person:marcus-formal",))
    ]


def test_file_name_entity(dictionary: EntityDictionary) -> None:
    assert surfaces(dictionary.recognize("where is config.yaml loaded")) == ["config.yaml"]


def test_max_ngram_limits_match_length(dictionary: EntityDictionary) -> None:
    assert surfaces(dictionary.recognize("beta board meeting", max_ngram=2)) == ["beta", "board"]


def test_a_long_title_is_recognised_whole() -> None:
    title = "Demo Day W37 – Cipher Batch 13 Presentation"  # seven words
    names = EntityDictionary([(title, "note:w37"), ("Demo Day W37", "name:w37"), ("Cipher Batch", "name:cb")])
    found = names.recognize(f"Who attended {title}?")
    assert surfaces(found) == [title] and found[0].entity_ids == ("note:w37",)
    # ... also when the long name arrives in an update rather than the first build.
    grown = EntityDictionary([("Demo Day W37", "name:w37")]).updated([(title, "note:w37")], [])
    assert surfaces(grown.recognize(f"who attended {title}")) == [title]


def test_empty_inputs() -> None:
    empty = EntityDictionary([])
    assert len(empty) == 0
    assert empty.recognize("anything at all") == []
    d = EntityDictionary([("", "x"), ("   ", "y"), ("!!!", "z")])
    assert len(d) == 0
    assert d.recognize("") == []


def test_contains() -> None:
    d = EntityDictionary([("Marcus Chen", "m")])
    assert "marcus   chen" in d
    assert "Marcus" not in d
    assert 3 not in d


def test_dictionary_scales() -> None:
    rng = random.Random(7)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu", "ba", "de"]

    def word() -> str:
        return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))).capitalize()

    entries = [
        (" ".join(word() for _ in range(rng.randint(1, 3))), f"e{i}") for i in range(200_000)
    ]
    t0 = time.process_time()
    dictionary = EntityDictionary(entries)
    build = time.process_time() - t0
    query = " ".join(
        rng.choice([e[0] for e in entries[:50]] + ["the", "and", "of"]) for _ in range(500)
    )[:2000]
    t0 = time.process_time()
    matches = dictionary.recognize(query)
    recognize = time.process_time() - t0
    assert matches
    # Budgets are CPU seconds with headroom: ~0.5 s and ~2 ms on a normal laptop.
    assert build < 2.0
    assert recognize < 0.05


def test_updated_dictionary_answers_like_a_fresh_build() -> None:
    notes = [("Atlas", "note:Projects/Atlas.md"), ("PK", "note:People/Priya Kumar.md"), ("Beacon", "note:Beacon.md")]
    tags = [("atlas", "tag:atlas"), ("sync", "tag:sync")]
    names = [("Marcus Chen", "name:marcus chen"), ("Atlas", "name:atlas"), ("IT", "name:it")]
    before = EntityDictionary([*notes, *tags, *names])
    removed = [("Marcus Chen", "name:marcus chen"), ("IT", "name:it")]
    added = [("Zoë Laurent", "name:zoë laurent"), ("sync", "tag:sync"), ("PK", "name:pk")]
    updated = before.updated(added, removed)
    # A full build's order: notes, tags, then names by key.
    names_after = [("Atlas", "name:atlas"), ("PK", "name:pk"), ("Zoë Laurent", "name:zoë laurent")]
    fresh = EntityDictionary([*notes, *tags, *names_after])
    for query in ["Atlas sync with PK", "Marcus Chen and Zoë Laurent", "IT and it", "pk met the Beacon team"]:
        assert updated.recognize(query) == fresh.recognize(query), query
    # The original is untouched.
    assert [m.surface for m in before.recognize("Marcus Chen in IT")] == ["Marcus Chen", "IT"]
    assert [m.surface for m in updated.recognize("Marcus Chen in IT")] == []


def test_accents_fold_for_latin_letters_only() -> None:
    names = EntityDictionary([("José Álvarez", "note:jose"), ("現場（げんば）", "note:genba")])
    assert [m.entity_ids for m in names.recognize("what does Jose Alvarez own")] == [("note:jose",)]
    assert entity_key("Aschenbrödel") == "aschenbrodel" == entity_key("Aschenbrodel")
    # Voicing marks are part of a kana, not an accent: げんば is not けんは.
    assert entity_key("げんば") != entity_key("けんは")


@pytest.mark.parametrize(
    ("title", "query"),
    [
        ("ホーム画面", "ホーム画面の設定を変更する方法"),
        ("製造ライン", "先週の製造ラインの停止について"),
        ("持ち物", "旅行の持ち物リスト"),
        ("数据库迁移", "我们讨论了数据库迁移的计划"),
        ("학교", "학교에서 공부했다"),
        ("Obsidianの使い方", "Obsidianの使い方を教えて"),
    ],
)
def test_a_cjk_title_is_recognised_inside_a_longer_query(title: str, query: str) -> None:
    """CJK puts no space between words: each character is a token, so a title's characters
    are found wherever they stand in the query."""
    dictionary = EntityDictionary([(title, "note:t"), ("画面", "note:short")])
    matches = dictionary.recognize(query)
    assert [(m.surface, m.entity_ids) for m in matches] == [(title, ("note:t",))]
    assert query[matches[0].start : matches[0].end] == title
    assert title in dictionary


def test_a_lone_cjk_character_is_no_entity() -> None:
    # One character is too short to name a note by (as a one-letter Latin word is).
    dictionary = EntityDictionary([("猫", "note:cat")])
    assert dictionary.recognize("我的猫很可爱") == []


@pytest.mark.parametrize(
    "text",
    [
        "See [the conventions](Markdown%20Conventions.md) and [x](Other%20Note.md).",
        "See [c](<Markdown Conventions.md>) here.",
        "the file Caf%C3%A9%20Menu.md and notes/2024%20Plan.md",
    ],
)
def test_a_percent_escaped_or_linked_file_name_leaves_no_junk_name(text: str) -> None:
    """`[x](Markdown%20Conventions.md)` made a name "20Conventions.md" (the link is an edge of its own)."""
    names = extract_names(text)
    assert not [name for name in names if name[:1].isdigit() or "%" in name], names
    assert extract_names("see [site](https://x.io/a%20b.md) and notes/plan.md") == ["https://x.io/a%20b.md", "notes/plan.md"]


# ---------------------------------------------------------------------------
# A sentence's verb, adverb or function word opens no name
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A log line's verb, after a date stamp and a table bar, a bullet or nothing.
        ("- **2021-09-22** | Led Series B for an AI-native workflow startup.", ["Series B"]),
        ("2023-06-30 Hired Maria Chen as Head of Protein Science.", ["Maria Chen", "Protein Science"]),
        ("Called Priya Kumar about the budget.", ["Priya Kumar"]),
        ("Announces Acme Robotics as a partner. Completed purchase of Orbit Labs.", ["Acme Robotics", "Orbit Labs"]),
        # An instruction's verb, in a numbered step or a heading.
        ("8. Select Import and wait.", []),
        ("## Install Obsidian CLI", ["Obsidian CLI"]),
        # An adverb, a function word or a document's section label.
        ("Previously Feluda Das ran the studio.", ["Feluda Das"]),
        ("Whereas Treg Cells do, others do not.", ["Treg Cells"]),
        ("Unlike Escherichia Coli, it grows slowly.", ["Escherichia Coli"]),
        ("BACKGROUND Heart Failure is common.", ["Heart Failure"]),
    ],
)
def test_a_sentence_opener_is_no_part_of_the_name_after_it(text: str, expected: list[str]) -> None:
    assert extract_names(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Inside a sentence a capital is meant: the same words are a name there.
        ("We saw Led Zeppelin live.", ["Led Zeppelin"]),
        ("She worked with Announced Ventures.", ["Announced Ventures"]),
        # A participle that names things, an -ing word and a capitalised common noun open names.
        ("United States officials met.", ["United States"]),
        ("Rolling Stone ran the story.", ["Rolling Stone"]),
        ("Daily Mail readers wrote in.", ["Daily Mail"]),
        ("NASA Ames Research Center opened a lab.", ["NASA Ames Research Center"]),
    ],
)
def test_a_name_that_opens_a_sentence_is_still_a_name(text: str, expected: list[str]) -> None:
    assert extract_names(text) == expected


def test_an_identifier_inside_a_longer_name_is_a_name_of_its_own() -> None:
    # Written once as "CloudKnox Security", the company is asked about (and written) as CloudKnox.
    assert extract_names("Completed the purchase of CloudKnox Security last year.") == ["CloudKnox Security", "CloudKnox"]
    assert extract_names("We met at the BioConnect Summit in Boston.") == ["BioConnect Summit", "BioConnect"]
    dictionary = EntityDictionary([("CloudKnox Security", "name:cloudknox security"), ("CloudKnox", "name:cloudknox")])
    assert [m.entity_ids for m in dictionary.recognize("who bought CloudKnox")] == [("name:cloudknox",)]


def test_a_query_naming_part_of_a_longer_name_reaches_its_note(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Deals.md").write_text("# Deals\n\nCompleted the purchase of CloudKnox Security in July.\n", encoding="utf-8")
    (vault / "Other.md").write_text("# Other\n\nNothing about identity here.\n", encoding="utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        results = engine.search("CloudKnox", limit=5, channels=("graph",))
    assert [hit.path for hit in results.hits][:1] == ["Deals.md"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A job title says what someone does; it names no one, and is no part of the name after it.
        ("Partner Hannah Kreiswirth joined the call.", ["Hannah Kreiswirth"]),
        ("She is Head of Operations at Acme Robotics.", ["Acme Robotics"]),
        ("We hired a Senior Data Engineer and a Principal Designer.", []),
        # The plural of initials inside a name is a word of it, not another name.
        ("The Q3 OKRs are due.", ["Q3 OKRs"]),
    ],
)
def test_a_job_title_is_no_name_nor_the_plural_of_initials_inside_one(text: str, expected: list[str]) -> None:
    assert extract_names(text) == expected


def test_a_percent_encoded_path_leaves_no_file_name_behind() -> None:
    text = "See [the retro](Meetings/2026-03-04%20Sprint%205%20Retro.md) and notes/plan.md."
    assert extract_names(text) == ["notes/plan.md"]
