"""After edits, the vector index holds exactly the chunks that have a cached vector, backlog or not."""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine
from engine.embedder import HashEmbedder


def _cached_chunk_ids(eng: Engine) -> set[int]:
    model = eng._embedder.model_id  # type: ignore[union-attr]
    return {cid for cid, _vector in eng._catalog.chunk_vectors(model)}


def _append(vault: Path, path: str, text: str) -> None:
    note = vault / path
    note.write_text(note.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_edits_keep_every_cached_chunk_searchable(sample_copy: Path, tmp_path: Path) -> None:
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        everything = _cached_chunk_ids(eng)
        assert everything and eng._vectors.indexed_ids() == everything
        # The edited note's unchanged chunks get new ids; their vectors come from the cache.
        _append(sample_copy, "People/Priya Kumar.md", "\n\n## Travel\n\nFlying to Lisbon for the offsite.\n")
        eng.reindex(["People/Priya Kumar.md"])
        assert eng._vectors.indexed_ids() == _cached_chunk_ids(eng) == {
            c.id for path, _ in eng.notes() for c in eng._catalog.chunks_for(path)
        }


def test_edits_during_an_embedding_backlog(sample_copy: Path, tmp_path: Path) -> None:
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex(embed=False)  # everything is backlog
        assert eng._vectors.indexed_ids() == set()
        eng.embed_pending(paths=["Glossary/CRDT.md"])
        _append(sample_copy, "Glossary/CRDT.md", "\n\nSee also the tombstone note.\n")
        eng.reindex(["Glossary/CRDT.md"])
        _append(sample_copy, "People/Marcus Chen.md", "\n\nOut of office next week.\n")
        eng.reindex(["People/Marcus Chen.md"])  # embeds this note, not the backlog
        indexed = eng._vectors.indexed_ids()
        assert indexed == _cached_chunk_ids(eng)
        owners = {c.id: path for path, _ in eng.notes() for c in eng._catalog.chunks_for(path)}
        assert {owners[c] for c in indexed} == {"Glossary/CRDT.md", "People/Marcus Chen.md"}
        eng.embed_pending()
        assert eng._vectors.indexed_ids() == _cached_chunk_ids(eng) == set(owners)
