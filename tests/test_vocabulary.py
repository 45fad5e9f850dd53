"""One vocabulary for people: plain labels, strengths, words as typed and reasons as sentences."""

from __future__ import annotations

import typing
from collections.abc import Iterator

import pytest

from engine.api import Engine
from engine.present import (
    hit_label,
    hit_reasons,
    label_text,
    meaning_strength,
    plain_badges,
    query_sentences,
    strength_bar,
    why_lines,
)
from engine.records import ChannelEvidence, EvidenceLabel, Hit, Relation, Snippet
from engine.vocabulary import LABEL_WORDS

# What only the engine's developers say: none of it may reach the plain views.
JARGON = ("BM25", "VEC", "GRAPH", "vote", "fused", "fusion", "cosine", "create_safety", "rank ", "keyword_", "_match")
QUERIES = ("who attended the Atlas kickoff", "offline sync conflicts", "computer", "tombst", "kikcoff", "tag:atlas")


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    from vault_copy import copy_sample_vault

    base = tmp_path_factory.mktemp("vocabulary")
    engine = Engine.open(copy_sample_vault(base / "vault"), index_dir=base / "index", embedder=None)
    engine.reindex()
    yield engine
    engine.close()


def _hit(**channels: ChannelEvidence) -> Hit:
    return Hit("A.md", "A", 0.1, "keyword_partial", channels, Snippet("text", "", 1))  # type: ignore[arg-type]


def test_every_label_the_engine_gives_has_plain_words() -> None:
    for label in typing.get_args(EvidenceLabel):
        assert label in LABEL_WORDS, f"{label} has no plain words"
        assert "_" not in label_text(label)
    assert label_text("keyword_exact") == "all your words"
    assert label_text("exact_title_match") == "title match"
    assert label_text("high_vector_match") == "similar meaning"


def test_an_unknown_label_reads_as_its_own_words() -> None:
    assert label_text("reranked_by_cross_encoder") == "reranked by cross encoder"
    assert label_text("") == "found"


def test_matched_words_are_shown_as_typed_never_as_index_terms() -> None:
    hit = _hit(fulltext=ChannelEvidence(rank=1, score=3.0, matched_terms=("comput", "the"), matched_words=("computer",)))
    shown = [b.text for b in plain_badges(hit)]
    assert shown == ["words “computer”"]
    assert "comput " not in " ".join(hit_reasons(hit)) and "“computer”" in hit_reasons(hit)[0]
    only_stop_words = _hit(fulltext=ChannelEvidence(rank=9, score=1.0, matched_terms=("who",), matched_words=()))
    assert plain_badges(only_stop_words) == ()
    assert hit_label(only_stop_words) == "common words only" and hit_label(hit) == "some of your words"
    assert "who" not in " ".join(hit_reasons(only_stop_words))


def test_meaning_is_a_word_and_a_bar_that_grow_with_the_cosine() -> None:
    cells = [meaning_strength(cosine)[1] for cosine in (0.05, 0.2, 0.31, 0.45, 0.6, 0.95)]
    assert cells == sorted(cells) and cells[0] == 1 and cells[-1] == 4
    assert meaning_strength(0.6)[0] == "very close in meaning"
    assert strength_bar(3) == "●●●○" and strength_bar(9) == "●●●●" and strength_bar(-1) == "○○○○"
    hit = _hit(vectors=ChannelEvidence(rank=2, score=0.62))
    assert [b.text for b in plain_badges(hit)] == ["meaning ●●●●"]
    assert hit_reasons(hit) == ["A passage of it is very close in meaning to your query (the 2nd closest)."]


def test_links_say_where_they_come_from() -> None:
    linked = _hit(graph=ChannelEvidence(rank=1, score=0.5, graph_path=("Atlas", "A"), graph_relation="links to"))
    assert [b.text for b in plain_badges(linked)] == ["linked from Atlas"]
    links = _hit(graph=ChannelEvidence(rank=1, score=0.5, graph_path=("Atlas", "A"), graph_relation="linked from"))
    assert [b.text for b in plain_badges(links)] == ["links to Atlas"]
    tagged = _hit(graph=ChannelEvidence(rank=1, score=0.5, graph_path=("#atlas", "A"), graph_relation="tagged"))
    assert [b.text for b in plain_badges(tagged)] == ["tagged #atlas"]
    named = _hit(graph=ChannelEvidence(rank=1, score=0.5, graph_path=("A",)))
    assert [b.text for b in plain_badges(named)] == ["named in your query"]
    relation = Relation("A", "attended", "Kickoff", explicit=False)
    said = _hit(graph=ChannelEvidence(rank=1, score=0.5, graph_path=("Kickoff", "A"), graph_relation="links to", relations=(relation,)))
    assert [b.text for b in plain_badges(said)] == ["A attended Kickoff"]
    assert "A attended Kickoff." in hit_reasons(said)


def test_real_searches_read_without_jargon(lexical: Engine) -> None:
    for query in QUERIES:
        results = lexical.search(query, limit=10, as_you_type=query == "tombst")
        texts = [*query_sentences(results)]
        for hit in results.hits:
            texts.append(label_text(hit.label))
            texts.extend(badge.text for badge in plain_badges(hit))
            texts.extend(hit_reasons(hit))
            for words in (hit.channels["fulltext"].matched_terms if "fulltext" in hit.channels else ()):
                # An index term that is not a word as typed never shows ("atla" of atlas).
                if words not in hit.channels["fulltext"].matched_words:
                    assert not any(f"“{words}”" in text for text in texts), (query, words)
        for text in texts:
            assert not any(term in text for term in JARGON), (query, text)


def test_why_reads_plainly_and_raw_keeps_the_numbers(lexical: Engine) -> None:
    report = lexical.why("who attended the Atlas kickoff", "Leo Fischer", limit=5)
    plain = "\n".join(why_lines(report))
    assert plain.startswith("Leo Fischer (People/Leo Fischer.md): ")
    for term in ("vote", "fused", "fusion counts", "GRAPH", "BM25", "factor"):
        assert term not in plain, term
    assert "by meaning did not run" in plain and "by words" in plain
    raw = "\n".join(why_lines(report, raw=True))
    assert "fused score" in raw and "vote" in raw and "GRAPH" in raw
