"""`engine context`: top chunks, their entities and relationships, each within its token budget."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engine.api import Engine
from engine.context import entity_line, relationship_line, source_line, trimmed_sentence
from engine.embedder import load_default_embedder
from engine.errors import ConfigError
from engine.present import context_json_text, context_text
from engine.tools.cli import main

QUESTION = "who attended the Atlas kickoff"


def test_context_holds_chunks_entities_and_named_relationships(indexed_sample: Engine) -> None:
    bundle = indexed_sample.context(QUESTION, max_tokens=3000)
    assert bundle.sources and bundle.entities and bundle.relationships
    for source in bundle.sources:
        note = indexed_sample.note(source.path)
        assert source.title == note.info.title
        # A chunk, not the whole note, and the chunk's words are the note's.
        assert len(source.text) < len(note.text)
        assert source.text.split()[-1].strip("…") in note.text.replace("[[", "").replace("]]", "")
    assert [s.rank for s in bundle.sources] == list(range(1, len(bundle.sources) + 1))
    assert [e.rank for e in bundle.entities] == list(range(1, len(bundle.entities) + 1))
    names = {e.name for e in bundle.entities}
    assert "Atlas 2026 Kickoff" in names
    people = [e for e in bundle.entities if e.kind == "person"]
    assert people and all(e.description for e in people)
    assert any(r.relation == "attended" and r.target == "Atlas 2026 Kickoff" for r in bundle.relationships)
    counts = bundle.counts
    assert (counts.chunks, counts.entities, counts.relationships) == (
        len(bundle.sources), len(bundle.entities), len(bundle.relationships)
    )
    assert counts.neighbours == sum(1 for e in bundle.entities if e.hop > 0)


def test_every_section_stays_within_its_budget_counted_by_the_tokenizer(indexed_sample: Engine) -> None:
    bundle = indexed_sample.context(QUESTION, max_tokens=900, max_source_tokens=400, max_entity_tokens=200)
    assert bundle.budgets["sources"] == 400 and bundle.budgets["entities"] == 200
    assert bundle.used["sources"] <= 400 and bundle.used["entities"] <= 200
    assert bundle.used["total"] <= 900
    assert bundle.used["relationships"] <= bundle.budgets["relationships"] == 900 - bundle.used["sources"] - bundle.used["entities"]
    assert "word pieces" in bundle.tokenizer
    tokens = load_default_embedder().text_tokens
    assert [s.tokens for s in bundle.sources] == tokens([source_line(s) for s in bundle.sources])
    assert [e.tokens for e in bundle.entities] == tokens([entity_line(e) for e in bundle.entities])
    assert [r.tokens for r in bundle.relationships] == tokens([relationship_line(r) for r in bundle.relationships])
    assert bundle.used["sources"] == sum(s.tokens for s in bundle.sources)


def test_depth_zero_keeps_the_chunks_own_entities(indexed_sample: Engine) -> None:
    bundle = indexed_sample.context(QUESTION, depth=0)
    assert bundle.entities and all(e.hop == 0 for e in bundle.entities)
    assert bundle.counts.neighbours == 0
    deeper = indexed_sample.context(QUESTION, depth=2)
    assert deeper.counts.neighbours > 0


def test_without_a_model_tokens_are_approximated_and_it_says_so(sample_copy: Path, tmp_path: Path) -> None:
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        bundle = engine.context(QUESTION, max_tokens=1200)
    assert bundle.tokenizer.startswith("approximate")
    assert [s.tokens for s in bundle.sources] == [math.ceil(len(source_line(s)) / 4) for s in bundle.sources]
    assert bundle.channels["vectors"].status == "unavailable"
    assert bundle.sources


def _plain_vault(root: Path) -> Path:
    root.mkdir()
    (root / "a.md").write_text("# a\n\nsee [[b]] about the harvest today.\n", encoding="utf-8")
    (root / "b.md").write_text("# b\n\nplain words about nothing in particular.\n", encoding="utf-8")
    (root / "c.md").write_text("# c\n\nthe harvest was early this year.\n", encoding="utf-8")
    return root


def test_it_degrades_to_sources_and_entities_then_sources_only(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        linked = engine.context("harvest today", depth=0)
        unlinked = engine.context("early this year")
        empty = engine.context("harvest", max_tokens=0)
    assert [s.path for s in linked.sources][:1] == ["a.md"]
    assert [e.name for e in linked.entities] == ["b"]
    assert not linked.relationships and any("no edges" in note for note in linked.notes)
    assert unlinked.sources and not unlinked.entities and not unlinked.relationships
    assert any("sources only" in note for note in unlinked.notes)
    assert not empty.sources and empty.used["total"] == 0


def test_engine_context_command(indexed_sample: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    common = [str(indexed_sample.vault), "--index-dir", str(indexed_sample.index_dir), QUESTION]
    assert main(["context", *common, "--max-tokens", "1500", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) >= {"question", "sources", "entities", "relationships", "counts", "budgets", "used", "tokenizer"}
    assert set(payload["sources"][0]) == {"id", "path", "title", "heading", "line", "text", "rank", "tokens"}
    assert set(payload["relationships"][0]) >= {"source", "target", "relation", "sentence", "weight", "rank"}
    assert payload["used"]["total"] <= 1500
    assert main(["context", *common, "--depth", "1"]) == 0
    text = capsys.readouterr().out
    for section in ("## Sources", "## Entities", "## Relationships", "tokens counted as:"):
        assert section in text
    with pytest.raises(SystemExit) as usage:
        main(["context", *common, "--depth", "-1"])
    assert usage.value.code == 2


def test_a_source_cut_inside_a_code_block_reads_its_close_as_a_close(tmp_path: Path) -> None:
    # Chunks are cut by words: the one holding the tip starts inside the fence above it.
    code = "\n".join(f"step {i} of the build script" for i in range(40))
    note = f"# Build\n\n```sh\n{code}\n```\n\n> [!tip]- Tip\n> The quokka lives on **Rottnest**, see [[Island]].\n"
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Build.md").write_text(note, encoding="utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        chunks = engine._catalog.chunks_of_notes(["Build.md"])["Build.md"]  # the test's premise, read directly
        held = next(c for c in chunks if "quokka" in c.chunk.text)
        assert not held.chunk.text.lstrip().startswith("```sh")  # it starts inside the block
        bundle = engine.context("quokka Rottnest", depth=0)
    text = bundle.sources[0].text
    assert "The quokka lives on Rottnest, see Island." in text
    assert "```" not in text and "[!tip]" not in text and "**" not in text


@pytest.mark.parametrize("budget", [300, 700, 1500, 4000])
@pytest.mark.parametrize("as_json", [True, False])
def test_everything_printed_fits_the_whole_budget(
    indexed_sample: Engine, capsys: pytest.CaptureFixture[str], budget: int, as_json: bool
) -> None:
    common = [str(indexed_sample.vault), "--index-dir", str(indexed_sample.index_dir), QUESTION]
    assert main(["context", *common, "--max-tokens", str(budget), *(["--json"] if as_json else [])]) == 0
    printed = capsys.readouterr().out
    tokens = load_default_embedder().text_tokens([printed])[0]
    assert tokens <= budget
    if as_json:
        payload = json.loads(printed)
        # The count it prints is its own (or, where no number prints as its own count, just above).
        assert tokens <= payload["used"]["printed"] <= tokens + 2 and payload["budgets"]["total"] == budget
    if budget >= 1500:  # room for what the question needs, headers and all
        assert "Priya Kumar" in printed


def test_the_printed_count_is_what_the_renderer_prints(indexed_sample: Engine) -> None:
    tokens = load_default_embedder().text_tokens
    for render in (context_json_text, context_text):
        bundle = indexed_sample.context(QUESTION, max_tokens=1000, render=render)
        printed = tokens([render(bundle)])[0]
        assert printed <= bundle.used["printed"] <= min(printed + 2, 1000)
        # Everything still adds up after the cut.
        assert bundle.counts.chunks == len(bundle.sources) and bundle.counts.relationships == len(bundle.relationships)
        assert bundle.used["total"] == sum(s.tokens for s in bundle.sources) + sum(e.tokens for e in bundle.entities) + sum(
            r.tokens for r in bundle.relationships
        )


def test_a_budget_too_small_for_the_frame_is_refused_with_a_clear_message(
    indexed_sample: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError, match="cannot hold"):
        indexed_sample.context(QUESTION, max_tokens=40, render=context_json_text)
    common = [str(indexed_sample.vault), "--index-dir", str(indexed_sample.index_dir), QUESTION]
    assert main(["context", *common, "--max-tokens", "40", "--json"]) == 2
    assert "cannot hold" in capsys.readouterr().err
    for bad in ({"max_tokens": -1}, {"max_source_tokens": -5}, {"max_entity_tokens": -1}, {"top_k": 0}):
        with pytest.raises(ConfigError):
            indexed_sample.context(QUESTION, **bad)  # type: ignore[arg-type]


def test_top_k_caps_the_sources(indexed_sample: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    assert len(indexed_sample.context(QUESTION, max_tokens=4000).sources) > 2
    bundle = indexed_sample.context(QUESTION, max_tokens=4000, top_k=2)
    assert len(bundle.sources) == 2 and bundle.counts.left_out["sources"] >= 1
    common = [str(indexed_sample.vault), "--index-dir", str(indexed_sample.index_dir), QUESTION]
    assert main(["context", *common, "--top-k", "1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["sources"]) == 1


def test_a_question_nothing_answers_says_so_and_gives_nothing(indexed_sample: Engine) -> None:
    results = indexed_sample.search("quixotic zeppelin marmalade", limit=20, as_you_type=False)
    assert results.confident == 0  # the premise: nothing but nearest notes
    bundle = indexed_sample.context("quixotic zeppelin marmalade", max_tokens=4000, render=context_text)
    assert bundle.confident == 0
    assert not bundle.sources and not bundle.entities and not bundle.relationships
    assert any("no confident match" in note for note in bundle.notes)
    assert "confident: 0" in context_text(bundle)
    answered = indexed_sample.context(QUESTION, max_tokens=4000)
    assert answered.confident > 0 and len(answered.sources) <= answered.confident


def test_a_relationship_reads_as_its_sentence(indexed_sample: Engine) -> None:
    bundle = indexed_sample.context(QUESTION, max_tokens=4000)
    said = {(r.source, r.target): r.sentence for r in bundle.relationships if r.sentence}
    # The sentence as written, not a bag of its content words: links as their shown text.
    assert said[("Atlas", "Beacon")] == "Beacon is the web dashboard that sits behind Atlas."
    assert all("[[" not in sentence and "\n" not in sentence for sentence in said.values())


def test_the_relation_the_question_asks_about_comes_first(indexed_sample: Engine) -> None:
    bundle = indexed_sample.context(QUESTION, max_tokens=4000)
    relations = [r.relation for r in bundle.relationships]
    assert relations[0] == "attended"
    # Every relationship that says "attended" comes before any that does not.
    assert relations == sorted(relations, key=lambda relation: relation != "attended")


def test_a_long_sentence_is_trimmed_around_the_name_at_whole_words() -> None:
    sentence = " ".join(f"word{i}" for i in range(80)) + " and then [[Priya Kumar]] spoke " + " ".join(
        f"tail{i}" for i in range(80)
    )
    trimmed = trimmed_sentence(sentence, "Priya Kumar", limit=120)
    assert "Priya Kumar" in trimmed and "[[" not in trimmed
    assert trimmed.startswith("…") and trimmed.endswith("…")
    assert len(trimmed) <= 122
    inner = trimmed.strip("…").split()
    assert all(w.startswith(("word", "tail")) or w in {"and", "then", "Priya", "Kumar", "spoke"} for w in inner)
    assert trimmed_sentence("- **Owner:** [[Priya Kumar]]", "Priya Kumar") == "Owner: Priya Kumar"
