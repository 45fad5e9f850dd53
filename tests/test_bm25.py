"""The bulk BM25F scorer's shortcuts into Whoosh's files agree with Whoosh's public API."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.api import Engine
from engine.channels import bm25
from engine.channels.bm25 import SegmentCache, _length_column, _scan_terms
from engine.channels.fulltext import FulltextChannel
from engine.query import parse_query

FIELDS = ("title", "aliases", "headings", "tags", "body")
TYPED = ["atl", "Priya Ku", "offline sy", "sqlc", "who attended the kick", "ro", "zz", "crdt"]


def _edited(vault: Path, index: Path) -> Engine:
    """An engine whose full-text index has several segments, some with deletions."""
    eng = Engine.open(vault, index_dir=index, embedder=None)
    eng.reindex(embed=False)
    for i, name in enumerate(["Projects/Atlas/Offline Sync Conflicts.md", "People/Priya Kumar.md"]):
        note = vault / name
        note.write_text(note.read_text(encoding="utf-8") + f"\nRoadmap rollout review {i}, Atlassian rotation.\n", "utf-8")
        eng.reindex([name], embed=False)
    (vault / "Rotations.md").write_text("# Rotations\n\nOn-call rotation for Atlas and Beacon.\n", "utf-8")
    eng.reindex(["Rotations.md"], embed=False)
    return eng


def test_shortcuts_read_what_the_public_api_reads(sample_copy: Path, tmp_path: Path) -> None:
    with _edited(sample_copy, tmp_path / "index") as eng:
        reader = eng._fulltext._searcher.reader()
        leaves = reader.leaf_readers()
        assert len(leaves) > 1 and any(leaf.has_deletions() for leaf, _ in leaves)
        for leaf, _base in leaves:
            count = leaf.doc_count_all()
            for field in FIELDS:
                slow = np.fromiter((leaf.doc_field_length(d, field, 1) for d in range(count)), np.float64, count)
                fast = _length_column(leaf, field, count)
                assert fast is not None and np.array_equal(fast, slow, equal_nan=True), field
                for start in ("a", "at", "ro", "pr", "zz", "é"):
                    public = {
                        (t.decode() if isinstance(t, bytes) else t): i.doc_frequency()
                        for t, i in leaf.iter_prefix(field, start)
                    }
                    scanned = _scan_terms(leaf, field, start)
                    assert scanned is not None and scanned[0] == public, (field, start)


def _public_postings(leaf: object, field: str, term: str) -> tuple[list[int], list[float]]:
    """A term's postings in one segment through Whoosh's public matcher (deletions left out)."""
    ids: list[int] = []
    weights: list[float] = []
    if (field, term) in leaf:  # type: ignore[operator]
        matcher = leaf.postings(field, term)  # type: ignore[attr-defined]
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
    return ids, weights


@pytest.mark.parametrize("found_by", ["whole segment", "bucket", "hashed lookup"])
def test_postings_decoded_from_the_map_are_whooshs_own(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, found_by: str
) -> None:
    """Every term of every field and segment (deletions included), and terms no segment
    holds, read the same through the segment cache as through Whoosh's matcher, whichever
    way the cache finds the term: a small segment's whole vocabulary, the term's bucket
    of a typed prefix, or one lookup in the segment's hashed term index."""
    if found_by != "whole segment":  # the sample's segments are all small
        monkeypatch.setattr(bm25, "_SMALL_SEGMENT_DOCS", 0)
    with _edited(sample_copy, tmp_path / "index") as eng:
        leaves = eng._fulltext._searcher.reader().leaf_readers()
        cache = SegmentCache()
        read = 0
        for leaf, _base in leaves:
            for field in FIELDS:
                terms = [t.decode() if isinstance(t, bytes) else t for t in leaf.lexicon(field)]
                for term in [*terms, "zzzq", "qq", "rotationz"]:
                    if found_by == "bucket":
                        cache.terms(leaf, field, term[: bm25.BUCKET_CHARS])
                    ids, weights = cache.posting(leaf, field, term)
                    assert (ids.tolist(), weights.tolist()) == _public_postings(leaf, field, term), (field, term)
                    read += len(ids) > 0
        assert read > 1000  # the sample vault's vocabulary, not a handful of terms


def test_segment_cache_survives_commits_without_going_stale(sample_copy: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    with _edited(sample_copy, index) as eng:
        live: FulltextChannel = eng._fulltext
        for text in TYPED:  # warm the caches, then change the index under them
            live.search(parse_query(text), 50)
        note = sample_copy / "Decisions/ADR-004 Sync with CRDTs.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nRotation rollout: Priya reviews the roadmap.\n", "utf-8")
        eng.reindex(["Decisions/ADR-004 Sync with CRDTs.md"], embed=False)
        fresh = FulltextChannel(index / "fulltext", eng.config.fulltext)
        try:
            for text in TYPED:
                for as_you_type in (True, False):
                    query = parse_query(text, as_you_type=as_you_type)
                    assert live.search(query, 50) == fresh.search(query, 50), text
        finally:
            fresh.close()
        hits = live.search(parse_query("rotation rollout", as_you_type=False), 50).hits
        assert "Decisions/ADR-004 Sync with CRDTs.md" in [h.path for h in hits]


def test_bulk_scores_are_whooshs_own_and_repeats_score_the_same(sample_copy: Path, tmp_path: Path) -> None:
    """Top 50 of the bulk scorer = Whoosh's BM25F over the same Or of boosted terms (the sums
    in another order: equal to 1e-9); a keystroke that repeats clauses (their scores kept)
    gives the same answer to the last bit."""
    from whoosh import query as wq

    with _edited(sample_copy, tmp_path / "index") as eng:
        channel: FulltextChannel = eng._fulltext
        searcher = channel._searcher
        scorer = channel._scorer_for(searcher)
        for text in ["offline sync conflicts", "atlas roadmap rollout", "priya kumar review", "crdt tombstone"]:
            stems = [s for word in text.split() for s in channel.analyze(word)]
            clauses = [(field, stem, 1.0) for stem in dict.fromkeys(stems) for field in FIELDS]
            ours = scorer.search(clauses, 50)
            again = scorer.search(clauses, 50)
            assert ours == again
            whoosh = searcher.search(wq.Or([wq.Term(f, t, boost=b) for f, t, b in clauses]), limit=50)
            assert [d.docnum for d in ours] == [hit.docnum for hit in whoosh], text
            assert [round(d.score, 9) for d in ours] == [round(hit.score, 9) for hit in whoosh], text


def test_the_path_map_is_read_per_segment_and_equals_whooshs_own(sample_copy: Path, tmp_path: Path) -> None:
    """A filter's path → document map, read once per segment (deleted documents left out),
    is the one Whoosh's own reader gives; `prepare` reads it ahead with a reader of its
    own, and after a save reads only the new segment."""
    with _edited(sample_copy, tmp_path / "index") as eng:
        channel: FulltextChannel = eng._fulltext
        channel.prepare()
        segments = channel._segments
        read_before = dict(segments._paths)
        leaves = channel._searcher.reader().leaf_readers()
        assert any(leaf.has_deletions() for leaf, _ in leaves)
        assert {leaf.segment().segment_id() for leaf, _ in leaves} == set(read_before)

        def same_as_whoosh() -> None:
            scorer = channel._scorer_for(channel._searcher)
            whoosh = {str(fields["path"]): docnum for docnum, fields in channel._searcher.reader().iter_docs()}
            assert len(whoosh) == eng.status().notes
            assert {path: int(scorer.docnums([path])[0]) for path in whoosh} == whoosh
            assert len(scorer.docnums(list(whoosh))) == len(whoosh)

        same_as_whoosh()
        note = sample_copy / "People/Priya Kumar.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nRotation handover notes.\n", "utf-8")
        eng.reindex(["People/Priya Kumar.md"], embed=False)
        channel.prepare()
        kept = {key: paths for key, paths in segments._paths.items() if key in read_before}
        assert kept and all(paths is read_before[key] for key, paths in kept.items())  # not read again
        assert len(segments._paths) == len(kept) + 1  # the save's new segment, read once
        same_as_whoosh()


def test_the_configured_k1_and_b_are_the_ones_scored_with(sample_copy: Path, tmp_path: Path) -> None:
    """`[fulltext] bm25_k1` and `bm25_b` reach both scorers: without length normalisation
    (b = 0) a long note's score no longer depends on its length."""
    from dataclasses import replace

    from whoosh import query as wq

    from engine.config import EngineConfig

    default = EngineConfig()
    flat = replace(default, fulltext=replace(default.fulltext, bm25_k1=0.9, bm25_b=0.0))
    scores = {}
    for name, config in (("default", default), ("flat", flat)):
        with Engine.open(sample_copy, config, index_dir=tmp_path / name, embedder=None) as eng:
            eng.reindex(embed=False)
            channel: FulltextChannel = eng._fulltext
            scorer = channel._scorer_for(channel._searcher)
            assert (scorer._k1, scorer._b) == ((1.2, 0.75) if name == "default" else (0.9, 0.0))
            clauses = [(field, "atla", 1.0) for field in FIELDS]
            ours = scorer.search(clauses, 20)
            whoosh = channel._searcher.search(wq.Or([wq.Term(f, t, boost=b) for f, t, b in clauses]), limit=20)
            assert [round(d.score, 9) for d in ours] == [round(hit.score, 9) for hit in whoosh]
            scores[name] = [d.score for d in ours]
    assert scores["default"] != scores["flat"]
