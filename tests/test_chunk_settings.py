"""Chunks follow the chunk settings: changing them re-cuts every note on the next full scan."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine
from engine.config import ChunkConfig, EngineConfig
from engine.embedder import HashEmbedder


def _vault(root: Path) -> Path:
    vault = root / "vault"
    vault.mkdir()
    words = " ".join(f"word{i}." for i in range(300))
    (vault / "Long.md").write_text(f"# Long\n\n{words}\n", "utf-8")
    (vault / "Short.md").write_text("# Short\n\nA few words only.\n", "utf-8")
    return vault


def _chunk_sizes(engine: Engine) -> list[int]:
    return [len(c.chunk.text.split()) for c in engine._catalog.chunks_for("Long.md")]


def _open(vault: Path, index: Path, max_words: int, overlap: int) -> Engine:
    config = EngineConfig(chunking=ChunkConfig(max_words=max_words, overlap_words=overlap))
    return Engine.open(vault, config, index_dir=index, embedder=HashEmbedder())


def test_new_chunk_settings_recut_every_note(tmp_path: Path) -> None:
    vault, index = _vault(tmp_path), tmp_path / "index"
    with _open(vault, index, 180, 30) as engine:
        engine.reindex()
        assert max(_chunk_sizes(engine)) > 100
    with _open(vault, index, 80, 16) as engine:
        report = engine.reindex()
        # No file changed, yet every note was read again and cut with the new settings.
        assert set(report.updated) == {"Long.md", "Short.md"}
        assert max(_chunk_sizes(engine)) <= 80
        status = engine.status()
        assert status.embedded_chunks == status.chunks  # the new texts are embedded
        assert engine.search("word250", as_you_type=False).hits[0].path == "Long.md"
    with _open(vault, index, 80, 16) as engine:
        assert engine.reindex().updated == ()  # the same settings: nothing to redo


def test_an_index_from_before_the_setting_was_recorded_is_recut(tmp_path: Path) -> None:
    vault, index = _vault(tmp_path), tmp_path / "index"
    with _open(vault, index, 80, 16) as engine:
        engine.reindex()
        with engine._catalog.transaction() as conn:
            conn.execute("DELETE FROM meta WHERE key='chunking'")
    with _open(vault, index, 80, 16) as engine:
        assert set(engine.reindex().updated) == {"Long.md", "Short.md"}
        assert engine.reindex().updated == ()


def test_a_single_saved_note_does_not_recut_the_vault(tmp_path: Path) -> None:
    vault, index = _vault(tmp_path), tmp_path / "index"
    with _open(vault, index, 80, 16) as engine:
        engine.reindex()
    (vault / "Short.md").write_text("# Short\n\nA few more words.\n", "utf-8")
    with _open(vault, index, 80, 16) as engine:
        assert engine.reindex(["Short.md"]).updated == ("Short.md",)


def test_a_new_chunker_version_recuts_every_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.indexer as indexer

    vault, index = _vault(tmp_path), tmp_path / "index"
    with _open(vault, index, 80, 16) as engine:
        engine.reindex()
    monkeypatch.setattr(indexer, "CHUNKER_VERSION", indexer.CHUNKER_VERSION + 1)
    with _open(vault, index, 80, 16) as engine:
        assert set(engine.reindex().updated) == {"Long.md", "Short.md"}
