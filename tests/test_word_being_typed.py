"""The word being typed, read as the whole word it most likely becomes in the vault: what
the vector channel embeds while the user types (`QueryPlan.typed_as`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from vault_copy import write_vault

from engine.api import Engine
from engine.present import typed_as_text
from engine.query import embedded_text
from ui.hits import explain_content


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("typed")
    notes = {
        "Themes.md": "# Themes\n\nA theme changes how the app looks. Install a theme from the gallery.\n",
        "Community.md": "# Community\n\nThe community shares plugins. Community plugins extend the app.\n",
        "Dark mode.md": "# Dark mode\n\nThe dark theme is a setting. Then there is the light one.\n",
        "Install.md": "# Install\n\nTo install the app, download it. Installing takes a minute.\n",
    }
    opened = Engine.open(write_vault(root / "vault", notes), index_dir=root / "index", embedder=None)
    opened.reindex(embed=False)
    yield opened
    opened.close()


def test_the_word_being_typed_is_read_as_the_vaults_commonest_word_it_begins(engine: Engine) -> None:
    # "the" begins "then", "there", "these" (stop words, no index terms) and "theme": the one
    # word it can become that a note holds, as the commonest English word read so ("themes").
    plan = engine.plan("how do i install a community the")
    assert plan.typed_as == "themes"
    assert embedded_text(plan) == "how do i install a community themes"
    # "communism" and "community" read as the same index term: the commoner English word is the one.
    assert engine.plan("plugins of the communi").typed_as == "community"
    # Past its stem ("installi" is no index term's beginning), still the word it becomes.
    assert engine.plan("app installi").typed_as == "installing"
    # The letters typed stay as typed.
    assert engine.plan("Install a Them").typed_as == "Themes"


def test_nothing_is_guessed_where_no_guess_is_grounded(engine: Engine) -> None:
    # A whole query has no word being typed.
    assert engine.plan("install a community the", as_you_type=False).typed_as == ""
    # A word no note holds ("tombstone"), or one no known word begins.
    assert engine.plan("app tombst").typed_as == ""
    assert engine.plan("app zzqx").typed_as == ""
    # Three letters alone: the whole vector search would rest on a guess. After other words,
    # or from four letters on, the fragment is read.
    assert engine.plan("ins").typed_as == ""
    assert embedded_text(engine.plan("ins")) == ""
    assert engine.plan("how to ins").typed_as == "install"
    assert engine.plan("inst").typed_as == "install"
    # Not a word: digits and punctuation stay as typed.
    assert engine.plan("app v2").typed_as == ""


def test_the_reading_says_what_the_word_was_searched_as(engine: Engine) -> None:
    typing = engine.search("how to ins", as_you_type=True)
    assert typing.reading.prefix == "ins"
    assert typing.reading.typed_as == "install"
    assert engine.search("how to ins", as_you_type=False).reading.typed_as == ""
    # Said as typed, in every front end's explain view.
    written = engine.search("How to Ins", as_you_type=True)
    assert typed_as_text(written.reading) == "\u201cIns\u201d searched by meaning as \u201cInstall\u201d"
    assert "While you type: \u201cIns\u201d searched by meaning as \u201cInstall\u201d." in explain_content(None, written, False).plain
