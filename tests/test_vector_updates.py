"""After edits, the vector index holds exactly the chunks that have a cached vector, backlog or not."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_an_edited_chunk_is_found_even_where_the_graph_misses_it(sample_copy: Path, tmp_path: Path) -> None:
    """An edit's chunks are searched exactly as well as through HNSW, and survive a reopen."""
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        eng.reindex()
        assert eng._vectors._strays == {}  # a bulk build: every vector found for itself
        _append(sample_copy, "Glossary/CRDT.md", "\n\n## Field notes\n\nMerge order matters less than you think.\n")
        eng.reindex(["Glossary/CRDT.md"])
        fresh = {c.id for c in eng._catalog.chunks_for("Glossary/CRDT.md")} & set(eng._vectors._strays)
        assert fresh  # the edit's new chunk is in the exact list
        chunk = eng._catalog.chunk(next(iter(fresh)))
        assert chunk is not None
        # Cut the chunk out of the HNSW graph's reach: the exact list must still find it.
        hnsw = eng._vectors._faiss.downcast_index(eng._vectors._index.index).hnsw
        ids = eng._vectors._faiss.vector_to_array(eng._vectors._index.id_map)
        position = int((ids == chunk.id).nonzero()[0][0])
        neighbors = eng._vectors._faiss.vector_to_array(hnsw.neighbors)
        neighbors[neighbors == position] = -1
        eng._vectors._faiss.copy_array_to_vector(neighbors, hnsw.neighbors)
        hits = eng.search(chunk.chunk.text, channels=["vectors"], as_you_type=False).hits
        assert hits[0].path == "Glossary/CRDT.md" and hits[0].channels["vectors"].chunk_id == chunk.id
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        assert fresh <= set(eng._vectors._strays)  # kept across a reopen (vectors.strays.json)


def test_reopening_an_index_with_a_backlog_knows_which_chunks_have_no_vector(tmp_path: Path) -> None:
    """An edit after opening must look up only its own chunks, not the whole backlog."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(5):
        (vault / f"n{i}.md").write_text(f"# N{i}\n\nSome words about topic {i}.\n", "utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        engine.reindex(embed=False)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        chunk_ids = set(engine._catalog.chunk_owners())
        assert chunk_ids and engine._vectors._uncached == chunk_ids
        engine.embed_pending(paths=["n0.md"])
        assert engine._vectors._uncached == chunk_ids - {c.id for c in engine._catalog.chunks_for("n0.md")}


def test_a_process_without_the_model_leaves_the_vector_index_alone(sample_copy: Path, tmp_path: Path) -> None:
    """Vectors off (`--no-model`): FAISS is never loaded and the index file never rewritten."""
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        eng.reindex()
        vectors = eng._vectors.chunk_count()
    before = (index / "vectors.faiss").read_bytes()
    with Engine.open(sample_copy, index_dir=index, embedder=None) as lexical:
        _append(sample_copy, "Glossary/CRDT.md", "\n\nA note written while vectors were off.\n")
        lexical.reindex(["Glossary/CRDT.md"])
        assert lexical.search("CRDT", as_you_type=False).channels["vectors"].status == "unavailable"
    assert (index / "vectors.faiss").read_bytes() == before
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as again:
        assert again._vectors.chunk_count() >= vectors - len(again._catalog.chunks_for("Glossary/CRDT.md"))
        again.reindex()
        assert again._vectors.indexed_ids() == _cached_chunk_ids(again)


def test_faiss_is_not_imported_without_the_model(sample_copy: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        eng.reindex()
    script = (
        "import sys\n"
        "from engine.api import Engine\n"
        f"e = Engine.open({str(sample_copy)!r}, index_dir={str(index)!r}, embedder=None)\n"
        "assert e.search('atlas sync', as_you_type=False).hits\n"
        "e.close()\n"
        "print(sorted(m for m in ('faiss', 'onnxruntime') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_a_repeated_vector_search_is_answered_from_memory_until_the_index_changes(
    sample_copy: Path, tmp_path: Path
) -> None:
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        first = eng.search("offline sync me", channels=("vectors",))  # "me" is still being typed
        remembered = dict(eng._vectors._answers)
        assert len(remembered) == 1
        again = eng.search("offline sync m", channels=("vectors",))
        assert [h.path for h in again.hits] == [h.path for h in first.hits]
        assert dict(eng._vectors._answers) == remembered, "the same settled words: the same answer, not searched again"
        # Two keystrokes that read as the same whole word are one search by meaning.
        assert eng.plan("offline sync merg").typed_as == eng.plan("offline sync merge").typed_as != ""
        merg = eng.search("offline sync merg", channels=("vectors",))
        assert len(eng._vectors._answers) == 2
        merge = eng.search("offline sync merge", channels=("vectors",))
        assert len(eng._vectors._answers) == 2
        assert [h.path for h in merge.hits] == [h.path for h in merg.hits]
        _append(sample_copy, "Glossary/CRDT.md", "\n\n## Offline sync\n\nOffline sync of merged replicas.\n")
        eng.reindex(["Glossary/CRDT.md"])
        assert eng._vectors._answers == {}, "an edit forgets the remembered answers"
        fresh = eng.search("offline sync me", channels=("vectors",))
        assert "Glossary/CRDT.md" in [h.path for h in fresh.hits]


class _CountingIndex:
    """The FAISS index, counting the calls that read stored vectors back."""

    def __init__(self, index: object) -> None:
        self._index = index
        self.reads = 0

    def __getattr__(self, name: str) -> object:
        if name in ("reconstruct", "reconstruct_batch", "reconstruct_n"):
            self.reads += 1
        return getattr(self._index, name)


def test_a_filtered_vector_search_compares_the_filters_chunks_exactly_and_reads_them_once(
    sample_copy: Path, tmp_path: Path
) -> None:
    import numpy as np

    from engine.query.parse import parse_query
    from engine.search.filters import FactsTable

    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        query = "tag:daily offline sync"
        first = eng.search(query, channels=("vectors",), as_you_type=False)
        kept = FactsTable(eng._catalog).matching(parse_query(query).filters)
        assert 3 <= len(kept) < len(eng.notes())
        assert first.hits and {h.path for h in first.hits} <= kept
        # The reference: every chunk of the filter's notes, compared exactly.
        vectors = dict(eng._catalog.chunk_vectors(eng._embedder.model_id))  # type: ignore[union-attr]
        owners = eng._catalog.chunk_owners()
        wanted = eng._embedder.embed_query("offline sync")  # type: ignore[union-attr]
        best: dict[str, float] = {}
        for cid, path in owners.items():
            if path in kept and cid in vectors:
                best[path] = max(best.get(path, -2.0), float(np.dot(vectors[cid], wanted)))
        expected = sorted(best, key=lambda p: -best[p])[: len(first.hits)]
        assert [h.path for h in first.hits] == expected
        counting = _CountingIndex(eng._vectors._index)
        eng._vectors._index = counting
        again = eng.search("tag:daily offline sync merge", channels=("vectors",), as_you_type=False)
        assert again.hits and {h.path for h in again.hits} <= kept
        assert counting.reads == 0, "the same filter on the next keystroke reads no stored vector again"
        eng._vectors._index = counting._index
        daily = sorted(kept)[0]
        _append(sample_copy, daily, "\n\n## Merge\n\nOffline sync merge replicas merge.\n")
        eng.reindex([daily])
        fresh = eng.search("tag:daily offline sync merge", channels=("vectors",), as_you_type=False)
        assert fresh.hits[0].path == daily, "an edit inside the filter is compared at once"


class _BlindToStrays:
    """An index whose graph search never returns the given chunk ids: HNSW's poor recall
    for fresh near-duplicates, which the exact list is there for."""

    def __init__(self, index: object, hidden: set[int]) -> None:
        self._index = index
        self._hidden = hidden

    def search(self, vectors: object, k: int, params: object = None) -> tuple[object, object]:
        scores, ids = self._index.search(vectors, k, params=params)  # type: ignore[attr-defined]
        for row, cid in enumerate(ids[0].tolist()):
            if cid in self._hidden:
                ids[0][row], scores[0][row] = -1, -3.0e38
        return scores, ids

    def __getattr__(self, name: str) -> object:
        return getattr(self._index, name)


def test_a_broad_filter_searches_the_graph_inside_it_and_the_exact_list_with_it(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the exact-comparison size, a filter (here an exclusion, which keeps most notes)
    restricts the HNSW search by a bitmap of its chunk ids: the answer is what comparing
    every chunk of the kept notes gives, and an edit's fresh chunks (searched exactly) are in it."""
    import numpy as np

    from engine.channels import vectors as vector_module

    monkeypatch.setattr(vector_module, "_EXACT_FILTERED_MAX", 0)  # every filter is broad
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder(dims=512)) as eng:
        eng.reindex()

        def exact(kept: set[str], text: str, count: int) -> list[str]:
            vectors = dict(eng._catalog.chunk_vectors(eng._embedder.model_id))  # type: ignore[union-attr]
            wanted = eng._embedder.embed_query(text)  # type: ignore[union-attr]
            best: dict[str, float] = {}
            for cid, path in eng._catalog.chunk_owners().items():
                if path in kept and cid in vectors:
                    best[path] = max(best.get(path, -2.0), float(np.dot(vectors[cid], wanted)))
            return sorted(best, key=lambda p: -best[p])[:count]

        excluded = {p for p, _ in eng.notes() if "merge" in (sample_copy / p).read_text(encoding="utf-8").lower()}
        kept = {p for p, _ in eng.notes()} - excluded
        assert excluded and len(kept) > len(excluded)
        answer = eng.search("offline sync -merge", channels=("vectors",), as_you_type=False, limit=5)
        assert [h.path for h in answer.hits] == exact(kept, "offline sync", len(answer.hits))
        note = sorted(kept)[0]
        _append(sample_copy, note, "\n\n## Zorblax\n\nZorblax quintessa vormbleth.\n")
        eng.reindex([note])
        assert eng._vectors._strays, "the edit's chunks are searched exactly as well"
        eng._vectors._index = _BlindToStrays(eng._vectors._index, set(eng._vectors._strays))
        fresh = eng.search("zorblax quintessa vormbleth -merge", channels=("vectors",), as_you_type=False, limit=5)
        assert fresh.hits[0].path == note
        assert [h.path for h in fresh.hits] == exact(kept, "zorblax quintessa vormbleth", len(fresh.hits))


@pytest.mark.parametrize("kept", [set(), {"a.md"}, {"a.md", "c.md", "gone.md"}, {"a.md", "b.md", "c.md", "d.md"}])
def test_a_filters_mask_is_the_same_read_from_the_kept_notes_or_from_those_left_out(kept: set[str]) -> None:
    from engine.channels.numbering import PathNumbers

    numbered = {"a.md": 4, "b.md": 0, "c.md": 2, "d.md": 5}
    numbers = PathNumbers(numbered, 7)
    as_list = numbers.mask(sorted(kept))  # a list is read path by path
    as_set = numbers.mask(frozenset(kept))  # a set keeping most is read from the paths it leaves out
    marked = {numbered[p] for p in kept if p in numbered}
    assert as_list.tolist() == as_set.tolist() == [i in marked for i in range(7)]


def test_vectors_are_kept_in_half_precision_unless_asked_and_an_older_index_still_serves(
    sample_copy: Path, tmp_path: Path
) -> None:
    """`vectors.storage`: fp16 by default (half the memory), float32 on request; an index
    built with the other storage is read and searched as it is until it is rebuilt."""
    import dataclasses

    import faiss

    from engine.config import EngineConfig, VectorConfig
    from engine.errors import ConfigError

    with pytest.raises(ConfigError, match=r"vectors\.storage"):
        VectorConfig(storage="int4")
    float32 = EngineConfig(vectors=dataclasses.replace(VectorConfig(), storage="float32"))
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder(), config=float32) as eng:
        eng.reindex()
        assert isinstance(faiss.downcast_index(eng._vectors._index.index), faiss.IndexHNSWFlat)
        before = [h.path for h in eng.search("offline sync", channels=("vectors",), as_you_type=False).hits]
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:  # the default: fp16
        assert isinstance(faiss.downcast_index(eng._vectors._index.index), faiss.IndexHNSWFlat)
        assert [h.path for h in eng.search("offline sync", channels=("vectors",), as_you_type=False).hits] == before
        eng.reindex(full=True)
        assert isinstance(faiss.downcast_index(eng._vectors._index.index), faiss.IndexHNSWSQ)
        assert [h.path for h in eng.search("offline sync", channels=("vectors",), as_you_type=False).hits] == before


def test_the_exact_list_grows_in_place_and_a_chunk_added_again_keeps_its_row(sample_copy: Path, tmp_path: Path) -> None:
    """An edit's chunks go on the exact list; the list's arrays are appended to, not built
    again from every row (37k rows at 50k notes), and hold each chunk once."""
    import numpy as np

    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        vectors = eng._vectors
        rng = np.random.default_rng(3)
        first = rng.standard_normal((3, vectors._dims)).astype(np.float32)
        vectors._add_strays([900001, 900002, 900003], first)
        buffer = vectors._stray_vectors
        before = len(vectors._strays)
        again = rng.standard_normal((2, vectors._dims)).astype(np.float32)
        vectors._add_strays([900002, 900004], again)
        assert vectors._stray_vectors is buffer  # room was left: appended in place
        assert len(vectors._strays) == before + 1
        ids, matrix = vectors._stray_arrays()
        assert len(ids) == len(matrix) == len(vectors._strays) == len(set(ids.tolist()))
        assert [vectors._strays[cid] for cid in ids.tolist()] == list(range(len(ids)))
        row = dict(zip(ids.tolist(), matrix, strict=True))
        assert np.array_equal(row[900001], first[0]) and np.array_equal(row[900003], first[2])
        assert np.array_equal(row[900002], again[0]) and np.array_equal(row[900004], again[1])


def test_room_made_for_growth_changes_no_answer_and_edits_still_land(sample_copy: Path, tmp_path: Path) -> None:
    """A writer's `prepare` grows the loaded index's arrays by one row and back (so that an
    edit's first vector does not reallocate them); answers and later edits are unaffected."""
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        eng.reindex()
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        vectors = eng._vectors
        before = [eng.search(q, as_you_type=False, channels=("vectors",)).hits for q in ("offline sync", "Priya travel")]
        vectors.prepare()
        assert vectors._roomy
        after = [eng.search(q, as_you_type=False, channels=("vectors",)).hits for q in ("offline sync", "Priya travel")]
        assert before == after and before[0]
        _append(sample_copy, "People/Priya Kumar.md", "\n\nQuillfeather sandbox review with the lighthouse crew.\n")
        eng.reindex(["People/Priya Kumar.md"])
        hits = eng.search("Quillfeather sandbox review lighthouse crew", as_you_type=False, channels=("vectors",)).hits
        assert hits and hits[0].path == "People/Priya Kumar.md"


def test_the_chunk_owners_are_read_at_their_first_use(sample_copy: Path, tmp_path: Path) -> None:
    """A search without the model never reads the 65k-row chunk map of a 10k vault; a
    vector search reads it, and finds the notes it names."""
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        eng.reindex()
    with Engine.open(sample_copy, index_dir=index, embedder=None) as eng:
        assert eng.search("offline sync", limit=5, as_you_type=False).hits
        assert eng._vectors._owner_loader is not None, "read without need"
    with Engine.open(sample_copy, index_dir=index, embedder=HashEmbedder()) as eng:
        hits = eng.search("offline sync", limit=5, channels=["vectors"], as_you_type=False).hits
        assert hits and eng._vectors._owner_loader is None
        assert set(eng._vectors._owners.values()) == {path for path, _title in eng.notes()}
