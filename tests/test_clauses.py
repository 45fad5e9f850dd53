"""A question's relative clauses: read from its words, and searched by the vector channel too."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vault_copy import write_vault

from engine.api import Engine
from engine.config import EngineConfig, VectorConfig
from engine.embedder import HashEmbedder
from engine.errors import ConfigError
from engine.lexicon.en import ENGLISH
from engine.query.plan import MAX_CLAUSES, relative_clauses


def test_a_clause_runs_from_its_relative_word_to_the_punctuation_that_ends_it() -> None:
    assert relative_clauses("When was the old clock built in the city where Jan Novotný died?", ENGLISH) == (
        "where Jan Novotný died",
    )
    assert relative_clauses(
        "Besides the continent of the river which the Tekeze River turns into, where did Germany have interests?",
        ENGLISH,
    ) == ("which the Tekeze River turns into", "where did Germany have interests")


def test_no_clause_where_the_words_do_not_open_one() -> None:
    # The first word opens a question; "that" is as often a determiner; a clause must say two content words.
    assert relative_clauses("Which county is Dana Reyes's home town located in?", ENGLISH) == ()
    assert relative_clauses("Who built that peer-to-peer payments protocol?", ENGLISH) == ()
    assert relative_clauses("the house where he lived", ENGLISH) == ()
    # A clause that asks holds the question's gap.
    assert relative_clauses("Rita Olsen is a lawyer who has worked with the governor of what state?", ENGLISH) == ()
    # A query that is all clause has nothing else to ask.
    assert relative_clauses("where sync conflicts happen", ENGLISH) == ()
    assert relative_clauses("the, where sync conflicts happen", ENGLISH) == ()
    assert relative_clauses("", ENGLISH) == ()


def test_a_language_without_relative_words_reads_no_clause() -> None:
    assert relative_clauses("the city where Jan Novotný died", replace(ENGLISH, relative_words=frozenset())) == ()


_WORDS = st.sampled_from(["where", "Which", "who", "whose", "the", "city", "Karel", "died", "is", "a", "of", "river"])
_GLUE = st.sampled_from([" ", "  ", ", ", "? ", "; ", "(", ")", "\t", "\n", "'", "’"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_WORDS, _GLUE), max_size=40), st.text(max_size=30))
def test_clauses_are_runs_of_the_questions_words(pairs: list[tuple[str, str]], noise: str) -> None:
    text = "".join(w + g for w, g in pairs) + noise
    clauses = relative_clauses(text, ENGLISH)
    assert len(clauses) <= MAX_CLAUSES
    pieces = [piece.split() for piece in re.split(r"[,;:()\[\]?!]+", text)]
    for clause in clauses:
        said = clause.split()
        assert said[0].strip("\"'“”‘’.«»").casefold() in ENGLISH.relative_words
        # Every clause is a run of the words of one stretch of the text between punctuation.
        assert any(words[i : i + len(said)] == said for words in pieces for i in range(len(words)))


def test_a_query_with_operators_has_no_clause(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# Prague\n\nJan Novotný died in Prague.\n", encoding="utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        plan = eng._searcher._planner.plan("the clock in the city where Jan Novotný died", as_you_type=False)
        assert plan.clauses == ("where Jan Novotný died",)
        plan = eng._searcher._planner.plan("the clock in the city where Jan Novotný died -prague", as_you_type=False)
        assert plan.clauses == ()
        # While a short last word is typed, the clause is what the vector channel embeds.
        plan = eng._searcher._planner.plan("the clock in the city where Jan Novotný di", as_you_type=True)
        assert plan.clauses == ("where Jan Novotný",)


def _exact_ranking(eng: Engine, texts_margins: list[tuple[str, float]]) -> dict[str, float]:
    """Each note's best of (cosine of its best chunk to a text − that text's margin), compared exactly."""
    vectors = dict(eng._catalog.chunk_vectors(eng._embedder.model_id))  # type: ignore[union-attr]
    owners = eng._catalog.chunk_owners()
    best: dict[str, float] = {}
    for text, margin in texts_margins:
        wanted = eng._embedder.embed_query(text)  # type: ignore[union-attr]
        for cid, path in owners.items():
            if cid in vectors:
                best[path] = max(best.get(path, -9.0), float(np.dot(vectors[cid], wanted)) - margin)
    return best


def _clock_vault(root: Path) -> Path:
    return write_vault(
        root / "vault",
        {
            "Prague.md": "# Prague\n\nJan Novotný died in Prague.\n",
            "Clock.md": "# Astronomical clock\n\nThe astronomical clock was built in 1410, in the city hall.\n",
            "Sundial.md": "# Sundial\n\nWhen was the old garden sundial built? Nobody knows.\n",
            "Brno.md": "# Brno\n\nA city with a clock tower and a cathedral.\n",
            "Physiology.md": "# Physiology\n\nNovotný cells were named for a physiologist.\n",
        },
    )


QUESTION = "When was the old clock built in the city where Jan Novotný died?"
CLAUSE = "where Jan Novotný died"


def test_the_vector_channel_ranks_each_note_by_the_question_or_a_clause(tmp_path: Path) -> None:
    with Engine.open(_clock_vault(tmp_path), index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        margin = eng.config.vectors.clause_margin
        assert 0 < margin < 1
        hits = eng.search(QUESTION, channels=("vectors",), as_you_type=False, limit=5).hits
        whole = _exact_ranking(eng, [(QUESTION, 0.0)])
        by_clause = _exact_ranking(eng, [(CLAUSE, margin)])
        best = {path: max(whole[path], by_clause[path]) for path in whole}
        assert [h.path for h in hits] == sorted(best, key=lambda p: -best[p])[:5]
        for hit in hits:
            ev = hit.channels["vectors"]
            assert abs(ev.score - best[hit.path]) < 2e-3  # the index stores half floats
            if by_clause[hit.path] > whole[hit.path] + 2e-3:
                assert ev.clause == CLAUSE
            elif whole[hit.path] > by_clause[hit.path] + 2e-3:
                assert ev.clause is None
        # The city's note, which the question alone ranks behind the sundial, comes second by its clause.
        assert whole["Prague.md"] < whole["Sundial.md"]
        assert [h.path for h in hits[:2]] == ["Clock.md", "Prague.md"]
        assert hits[1].channels["vectors"].clause == CLAUSE


def test_a_margin_of_one_searches_the_question_alone(tmp_path: Path) -> None:
    config = EngineConfig()
    config = replace(config, vectors=replace(config.vectors, clause_margin=1.0))
    with Engine.open(_clock_vault(tmp_path), config, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        hits = eng.search(QUESTION, channels=("vectors",), as_you_type=False, limit=5).hits
        best = _exact_ranking(eng, [(QUESTION, 0.0)])
        assert all(abs(h.channels["vectors"].score - best[h.path]) < 2e-3 for h in hits)
        assert [h.path for h in hits[:2]] == ["Clock.md", "Sundial.md"]
        assert all(h.channels["vectors"].clause is None for h in hits)


def test_a_negative_margin_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="clause_margin"):
        VectorConfig(clause_margin=-0.1)
    with pytest.raises(ConfigError, match="clause_margin"):
        VectorConfig(clause_margin=float("nan"))


def test_every_front_end_says_which_clause_found_a_note(tmp_path: Path) -> None:
    from engine.present import results_to_json
    from ui.hits import explain_content
    from ui.web.pages import _detail

    with Engine.open(_clock_vault(tmp_path), index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        results = eng.search(QUESTION, as_you_type=False)
        prague = next(h for h in results.hits if h.path == "Prague.md")
        # In words: the passage is close in meaning to the clause; the raw view (F9) names it so too.
        assert f"in meaning to \u201c{CLAUSE}\u201d" in explain_content(prague, results, False).plain
        assert f"by the clause \u201c{CLAUSE}\u201d" in explain_content(prague, results, False, raw=True).plain
        assert CLAUSE in _detail(prague.channels["vectors"])
        shown = {h["path"]: h for h in results_to_json(results)["hits"]}
        assert shown["Prague.md"]["channels"]["vectors"]["clause"] == CLAUSE
        assert "clause" not in shown["Clock.md"]["channels"]["vectors"]
        assert results.clauses == (CLAUSE,) and results_to_json(results)["clauses"] == [CLAUSE]
        assert f"Also searched by meaning: \u201c{CLAUSE}\u201d." in explain_content(None, results, False).plain
        assert f"clauses \u201c{CLAUSE}\u201d" in explain_content(None, results, False, raw=True).plain
        # Full text alone searches no clause, and says so.
        assert eng.search(QUESTION, channels=("fulltext",), as_you_type=False).clauses == ()
