"""`engine context`: top chunks, their entities and relationships, each within its token budget."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engine.api import Engine
from engine.context import entity_line, relationship_line, source_line
from engine.embedder import load_default_embedder
from engine.errors import ConfigError
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
        empty = engine.context("harvest", max_tokens=1)
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
    assert set(payload["relationships"][0]) >= {"source", "target", "relation", "words", "weight", "rank"}
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


@pytest.mark.parametrize(
    "budgets",
    [{"max_tokens": 0}, {"max_tokens": -5}, {"max_source_tokens": -1}, {"max_entity_tokens": -1}, {"depth": -1}],
)
def test_every_caller_is_refused_a_budget_the_command_line_refuses(indexed_sample: Engine, budgets: dict[str, int]) -> None:
    with pytest.raises(ConfigError):
        indexed_sample.context(QUESTION, **budgets)
