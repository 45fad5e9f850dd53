"""Note pickers: the notes offered for a few typed letters, as a quick switcher offers them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.api import Engine
from engine.catalog import NoteName
from engine.pickers import choose_notes

NAMES = [
    NoteName("People/Priya Kumar.md", "Priya Kumar", ("Priya",)),
    NoteName("Meetings/2026-01-12 Atlas Kickoff.md", "Atlas 2026 Kickoff", ()),
    NoteName("Projects/Atlas/Atlas.md", "Atlas", ("Project Atlas",)),
    NoteName("Meetings/Offsite Lisbon.md", "Offsite Lisbon — November 2025", ()),
    NoteName("Glossary/Tombstone.md", "Tombstone", ()),
]


def _offered(text: str, limit: int = 8) -> list[tuple[str, str]]:
    return [(choice.title, choice.how) for choice in choose_notes(NAMES, text, limit=limit)]


def test_whole_names_then_beginnings_then_words_then_letters() -> None:
    assert _offered("atlas") == [("Atlas", "exact"), ("Atlas 2026 Kickoff", "prefix")]
    assert _offered("kickoff")[0] == ("Atlas 2026 Kickoff", "word")
    assert _offered("prkm") == [("Priya Kumar", "letters")]
    assert _offered("project atl")[0] == ("Atlas", "prefix")  # an alias counts as the title does


def test_letters_spread_over_a_long_name_do_not_match() -> None:
    assert ("Offsite Lisbon — November 2025", "letters") not in _offered("tomb")


def test_a_typo_still_offers_the_note() -> None:
    assert _offered("Priya Kumr")[0] == ("Priya Kumar", "letters")
    assert _offered("tombstnoe")[0] == ("Tombstone", "nearest")
    assert _offered("kikcoff") == [("Atlas 2026 Kickoff", "nearest")]  # one word of a longer title


def test_case_accents_and_md_do_not_matter_and_nothing_typed_offers_nothing() -> None:
    assert _offered("PRIYA KUMAR.md")[0] == ("Priya Kumar", "exact")
    assert _offered("") == [] and _offered("   ") == []
    assert len(_offered("a", limit=2)) == 2


def test_a_pasted_paragraph_is_cut_and_answers(lexical: Engine) -> None:
    assert lexical.note_choices("sync " * 10_000, limit=3) is not None


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    from vault_copy import copy_sample_vault

    base = tmp_path_factory.mktemp("pickers")
    engine = Engine.open(copy_sample_vault(base / "vault"), index_dir=base / "index", embedder=None)
    engine.reindex()
    yield engine
    engine.close()


def test_the_facade_offers_the_vault_s_notes(lexical: Engine) -> None:
    choices = lexical.note_choices("zoe", limit=3)
    assert choices[0].path == "People/Zoë Laurent.md"
    assert [c.path for c in lexical.note_choices("Sync Design", limit=1)] == ["Meetings/2026/2026-02-09 Sync Design Review.md"]
