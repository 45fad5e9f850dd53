"""Whoosh's BM25F, scored in bulk with numpy over cached posting lists.

Whoosh walks a tree of Python matcher objects per posting; an as-you-type query
(a few words plus a prefix expanded to a couple of dozen terms, times five fields)
touches hundreds of thousands of postings and took 0.3-2 s on a 10k-note vault.
Here each (field, term) posting list is read once per searcher into arrays, then
every clause is one vectorised BM25F update. Scores equal Whoosh's own:
idf = log(N / (df + 1)) + 1, the same field lengths and the same boosts, summed
over clauses like `Or`.
"""

from __future__ import annotations

import bisect
import io
import pickle
import struct
import zlib
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.channels.mapped import Region
from engine.channels.numbering import PathNumbers

_CACHED_POSTING_LISTS = 8192
# Clause scores kept per searcher, counted in document entries (16 bytes each: id and score).
_CACHED_CLAUSE_VALUES = 2_000_000
# Documents whose paths `BulkScorer.paths_of` looks up one by one; past this, by segment.
_PATHS_ONE_BY_ONE = 256


@dataclass(frozen=True)
class ScoredDoc:
    """One document of a bulk-scored query."""

    docnum: int
    score: float
    matched_terms: tuple[str, ...]


_Posting = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]
_EMPTY: _Posting = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
# A segment this small has all its terms of a field read at once.
_SMALL_SEGMENT_DOCS = 64
# Terms are looked up in the buckets of terms sharing their first letters (read once per
# segment, field and bucket): a term absent from a segment costs a dictionary lookup.
BUCKET_CHARS = 3


class SegmentCache:
    """Posting lists, field lengths and term buckets per Whoosh segment, kept across searchers.

    A written segment never changes except for its deletions (part of the posting
    key), so an edit, which adds one small segment, leaves what was read from the
    others valid: the keystrokes after a save stay as fast as those before it.
    """

    def __init__(self) -> None:
        self._postings: OrderedDict[tuple[str, int, str, str], _Posting] = OrderedDict()
        self._lengths: dict[tuple[str, str], npt.NDArray[np.float64]] = {}
        self._terms: dict[tuple[str, str, str], dict[str, int]] = {}
        # Where each term of a bucket keeps its postings (offset << 32 | length; -1 inlined).
        self._extents: dict[tuple[str, str, str], dict[str, int] | None] = {}
        self._deleted: dict[tuple[str, int], npt.NDArray[np.bool_]] = {}
        self._paths: dict[str, list[str]] = {}

    def posting(self, leaf: Any, field: str, term: str, segment: tuple[str, int] | None = None) -> _Posting:
        """One segment's posting list for (field, term), deleted documents left out.

        `segment` is the leaf's (segment id, deletion count), if the caller knows it.

        Postings are decoded straight from the mapped segment (Whoosh 2.7's W3 blocks); an
        index of another layout, or inlined postings, go through Whoosh's reader.
        """
        if segment is None:
            segment = segment_key(leaf)
        key = (*segment, field, term)
        found = self._postings.get(key)
        if found is not None:
            self._postings.move_to_end(key)
            return found
        # A term of a bucket read already (a typed word's expansions) is found there; any
        # other is looked up in the segment's hashed term index (reading a bucket to find one
        # word, as typo correction's variants would, costs more). Either way its postings
        # are decoded straight from the map.
        bucket = self._extents.get((segment[0], field, term[:BUCKET_CHARS])) if len(term) >= BUCKET_CHARS else None
        if bucket is None and leaf.doc_count_all() <= _SMALL_SEGMENT_DOCS:
            # A save's segment holds a note or a few: all its terms are read at once, so
            # a word it lacks (most words, and most of a typo's variants) is a lookup.
            whole = (segment[0], field, "")
            if whole not in self._extents:
                self._read_bucket(leaf, field, "")
            bucket = self._extents[whole]
        packed = bucket.get(term, _ABSENT) if bucket is not None else _term_extent(leaf, field, term)
        if packed == _ABSENT:
            found = _EMPTY
        elif packed is not None and packed >= 0:
            found = _read_extent(leaf._terms._postfile, packed >> 32, packed & 0xFFFFFFFF)
            if found is not None and leaf.has_deletions():
                ids, weights = found
                keep = ~self._deleted_mask(leaf)[ids]
                found = (ids[keep], weights[keep])
        if found is None:
            found = _read_postings(leaf.postings(field, term)) if (field, term) in leaf else _EMPTY
        self._postings[key] = found
        if len(self._postings) > _CACHED_POSTING_LISTS:
            self._postings.popitem(last=False)
        return found

    def lengths(self, leaf: Any, field: str) -> npt.NDArray[np.float64]:
        """Every document's length in `field` for one segment (deleted ones included)."""
        key = (leaf.segment().segment_id(), field)
        found = self._lengths.get(key)
        if found is None:
            count = int(leaf.doc_count_all())
            found = _length_column(leaf, field, count)
            if found is None:
                length_of = leaf.doc_field_length
                found = np.fromiter((length_of(doc, field, 1) for doc in range(count)), dtype=np.float64, count=count)
            self._lengths[key] = found
        return found

    def terms(self, leaf: Any, field: str, start: str) -> dict[str, int]:
        """One segment's terms in `field` beginning with `start`, with their document frequencies."""
        key = (leaf.segment().segment_id(), field, start)
        found = self._terms.get(key)
        if found is None:
            self._read_bucket(leaf, field, start)
            found = self._terms[key]
        return found

    def _read_bucket(self, leaf: Any, field: str, start: str) -> None:
        key = (leaf.segment().segment_id(), field, start)
        scanned = _scan_terms(leaf, field, start)
        if scanned is None:
            counts: dict[str, int] = {}
            for term, info in leaf.iter_prefix(field, start):
                text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
                counts[text] = int(info.doc_frequency())
            self._terms[key], self._extents[key] = counts, None
        else:
            self._terms[key], self._extents[key] = scanned

    def _deleted_mask(self, leaf: Any) -> npt.NDArray[np.bool_]:
        segment = leaf.segment()
        key = (segment.segment_id(), segment.deleted_count())
        mask = self._deleted.get(key)
        if mask is None:
            mask = np.zeros(int(leaf.doc_count_all()), dtype=bool)
            deleted = np.fromiter(segment.deleted_docs(), dtype=np.int64)
            mask[deleted[deleted < len(mask)]] = True
            self._deleted = {k: v for k, v in self._deleted.items() if k[0] != key[0]}
            self._deleted[key] = mask
        return mask

    def paths(self, leaf: Any) -> list[str]:
        """The stored path of every document of one segment, by its number there (deleted
        ones included: a deletion does not change what a document stored)."""
        key = leaf.segment().segment_id()
        found = self._paths.get(key)
        if found is None:
            stored = leaf.stored_fields
            found = self._paths[key] = [str(stored(docnum)["path"]) for docnum in range(leaf.doc_count_all())]
        return found

    def has_paths(self, leaf: Any) -> bool:
        """Whether the stored paths of this segment are read already."""
        return leaf.segment().segment_id() in self._paths

    def keep_only(self, leaves: Sequence[Any]) -> None:
        """Forget lengths, terms and paths of segments a merge has removed (postings age out)."""
        live = {leaf.segment().segment_id() for leaf in leaves}
        self._lengths = {k: v for k, v in self._lengths.items() if k[0] in live}
        self._terms = {k: v for k, v in self._terms.items() if k[0] in live}
        self._extents = {k: v for k, v in self._extents.items() if k[0] in live}
        self._deleted = {k: v for k, v in self._deleted.items() if k[0] in live}
        self._paths = {k: v for k, v in self._paths.items() if k in live}


def segment_key(leaf: Any) -> tuple[str, int]:
    """What names a segment's postings: its id and how many of its documents are deleted."""
    segment = leaf.segment()
    return segment.segment_id(), segment.deleted_count()


class BulkScorer:
    """Posting lists and field lengths of one Whoosh searcher, as numpy arrays."""

    def __init__(self, searcher: Any, cache: SegmentCache, *, b: float, k1: float) -> None:
        self.searcher = searcher
        # An index without segments (nothing committed yet) reads as one empty reader
        # that has no segment: it has no documents to score either.
        self._leaves: list[tuple[Any, int]] = [
            (leaf, base) for leaf, base in searcher.reader().leaf_readers() if leaf.segment() is not None
        ]
        self._segment_keys = [segment_key(leaf) for leaf, _base in self._leaves]
        self._cache = cache
        cache.keep_only([leaf for leaf, _base in self._leaves])
        self._b = b
        self._k1 = k1
        self._doc_count = int(searcher.doc_count_all())
        self._lengths: dict[str, npt.NDArray[np.float64]] = {}
        self._avg_length: dict[str, float] = {}
        self._paths: dict[int, str] = {}
        self._by_path: PathNumbers | None = None
        # Each clause's BM25F contribution per document, for the keystrokes that repeat it
        # (every word already typed): only the sum is computed again.
        self._clauses: OrderedDict[tuple[str, str, float], _Posting] = OrderedDict()
        self._clause_values = 0

    def _posting(self, field: str, term: str) -> _Posting:
        id_parts: list[npt.NDArray[np.int64]] = []
        weight_parts: list[npt.NDArray[np.float64]] = []
        for (leaf, base), segment in zip(self._leaves, self._segment_keys, strict=True):
            ids, weights = self._cache.posting(leaf, field, term, segment)
            if len(ids):
                id_parts.append(ids + base)
                weight_parts.append(weights)
        if len(id_parts) == 1:
            return id_parts[0], weight_parts[0]
        return (
            np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.int64),
            np.concatenate(weight_parts) if weight_parts else np.zeros(0, dtype=np.float64),
        )

    def _field_lengths(self, field: str) -> npt.NDArray[np.float64]:
        lengths = self._lengths.get(field)
        if lengths is None:
            parts = [self._cache.lengths(leaf, field) for leaf, _base in self._leaves]
            lengths = self._lengths[field] = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float64)
            self._avg_length[field] = float(self.searcher.avg_field_length(field) or 1)
        return lengths

    def _clause(self, field: str, term: str, boost: float) -> _Posting:
        """The documents of one (field, term) clause and its BM25F score in each."""
        key = (field, term, boost)
        found = self._clauses.get(key)
        if found is not None:
            self._clauses.move_to_end(key)
            return found
        ids, weights = self._posting(field, term)
        if len(ids):
            k1, b = self._k1, self._b
            lengths = self._field_lengths(field)[ids]
            norm = k1 * ((1 - b) + b * lengths / self._avg_length[field])
            idf = self.idf(field, term)
            found = (ids, boost * idf * (weights * (k1 + 1)) / (weights + norm))
        else:
            found = (ids, weights)
        self._clauses[key] = found
        self._clause_values += len(ids)
        while self._clause_values > _CACHED_CLAUSE_VALUES and len(self._clauses) > 1:
            _key, (dropped, _scores) = self._clauses.popitem(last=False)
            self._clause_values -= len(dropped)
        return found

    def path_of(self, docnum: int) -> str:
        """The stored path of a document of this searcher."""
        path = self._paths.get(docnum)
        if path is None:
            path = self._paths[docnum] = str(self.searcher.stored_fields(docnum)["path"])
        return path

    def paths_of(self, docnums: Collection[int]) -> list[str]:
        """The stored paths of many documents of this searcher.

        Past a few hundred, each segment's list of paths is read whole (once, then kept, as
        a filter's candidates read it): one stored-fields lookup per document cost 15 µs.
        """
        if len(docnums) < _PATHS_ONE_BY_ONE:
            return [self.path_of(doc) for doc in docnums]
        bases = [base for _leaf, base in self._leaves]
        found = []
        for doc in docnums:
            leaf, base = self._leaves[bisect.bisect_right(bases, doc) - 1]
            found.append(self._cache.paths(leaf)[doc - base])
        return found

    def terms(self, field: str, start: str) -> dict[str, int]:
        """Terms of `field` beginning with `start` over all segments, document frequencies summed."""
        counts: dict[str, int] = {}
        for leaf, _base in self._leaves:
            for term, df in self._cache.terms(leaf, field, start).items():
                counts[term] = counts.get(term, 0) + df
        return counts

    def idf(self, field: str, term: str) -> float:
        """Whoosh's BM25 idf of a term, log(N / (df + 1)) + 1, and 1 in an index of no documents.

        Whoosh's own formula takes the log of 0 there (a ValueError): an empty vault, or
        any search typed before a first index commits anything.
        """
        if not self._doc_count:
            return 1.0
        return float(self.searcher.idf(field, term))

    def docnums(self, paths: Collection[str]) -> npt.NDArray[np.int64]:
        """The live document numbers of notes at `paths` (a query filter's candidates)."""
        numbers = self._by_path
        if numbers is None:
            # Each segment's paths are read once (a save adds a small segment and marks
            # deletions in the others): after a save at 50k notes this took 0.37 s.
            by_path: dict[str, int] = {}
            for leaf, base in self._leaves:
                stored = self._cache.paths(leaf)
                if leaf.has_deletions():
                    deleted = set(leaf.segment().deleted_docs())
                    by_path.update((path, base + n) for n, path in enumerate(stored) if n not in deleted)
                else:
                    by_path.update(zip(stored, range(base, base + len(stored)), strict=True))
            numbers = self._by_path = PathNumbers(by_path, max(by_path.values(), default=-1) + 1)
        return np.flatnonzero(numbers.mask(paths))

    def docs_with(self, term: str, fields: Sequence[str]) -> npt.NDArray[np.int64]:
        """Document numbers holding `term` in any of `fields`."""
        parts = [self._posting(field, term)[0] for field in fields]
        parts = [ids for ids in parts if len(ids)]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        # Sorted and deduplicated by hand: np.unique imports numpy.ma (25 ms) at its first
        # call, which would land on a keystroke.
        found = np.sort(np.concatenate(parts))
        if len(found) > 1:
            found = found[np.concatenate(([True], found[1:] != found[:-1]))]
        return found

    def search(
        self, clauses: Sequence[tuple[str, str, float]], limit: int, allowed: npt.NDArray[np.int64] | None = None
    ) -> list[ScoredDoc]:
        """Top documents for the sum of (field, term, boost) BM25F clauses, best first.

        `allowed` (document numbers) keeps only those: the cut to `limit` happens inside
        them, so a filter never pushes a match out.
        """
        if not self._doc_count or limit < 1:
            return []
        scores = np.zeros(self._doc_count, dtype=np.float64)
        matched: list[tuple[str, npt.NDArray[np.int64]]] = []
        for field, term, boost in clauses:
            ids, contribution = self._clause(field, term, boost)
            if not len(ids):
                continue
            scores[ids] += contribution
            matched.append((term, ids))
        if allowed is not None:
            mask = np.zeros(self._doc_count, dtype=bool)
            mask[allowed[allowed < self._doc_count]] = True
            scores[~mask] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if not len(candidates):
            return []
        if len(candidates) > limit:
            # Keep the `limit` best; at the boundary score the lowest document numbers win,
            # as in Whoosh's collector (candidates are in ascending document order).
            candidate_scores = scores[candidates]
            boundary = np.partition(candidate_scores, len(candidates) - limit)[len(candidates) - limit]
            above = candidates[candidate_scores > boundary]
            ties = candidates[candidate_scores == boundary]
            candidates = np.concatenate([above, ties[: limit - len(above)]])
        # Best score first; ties by document number, as Whoosh's collector orders them.
        order = np.lexsort((candidates, -scores[candidates]))
        docs = candidates[order]
        # Which terms each kept document matched: one vectorised lookup per clause.
        terms_of: list[dict[str, None]] = [{} for _ in range(len(docs))]
        for term, ids in matched:
            at = np.minimum(np.searchsorted(ids, docs), len(ids) - 1)
            for i in np.flatnonzero(ids[at] == docs).tolist():
                terms_of[i][term] = None
        return [
            ScoredDoc(docnum=doc, score=float(scores[doc]), matched_terms=tuple(terms))
            for doc, terms in zip(docs.tolist(), terms_of, strict=True)
        ]


# Whoosh 2.7's W3 codec: a term index record is two lengths, the key (a field number and
# the term) and the term info (`W3TermInfo`: flags, weight, document frequency, lengths,
# weight, ids, then the postings' offset and length unless they are inlined).
_RECORD_LENGTHS = struct.Struct("!ii")
_TERM_INFO_SIZE = struct.calcsize("!BfIBBfII")
_EXTENT = struct.Struct("!qi")
_BLOCK_LENGTH = struct.Struct("!i")
# `_term_extent` of a term the segment does not hold (-1 is inlined postings).
_ABSENT = -2
_POSTINGS_MAGIC = b"W3Bl"


def _mapped_term_index(leaf: Any) -> tuple[Any, Any, Region] | None:
    """A segment's W3 terms reader, its term index and the mapped file that index reads, or
    None when the segment is not a mapped W3 one (its terms are then read through Whoosh)."""
    try:
        terms = leaf._terms
        index = terms._tindex
        region = index.dbfile
    except AttributeError:
        return None
    if not isinstance(region, Region) or not isinstance(getattr(terms, "_postfile", None), Region):
        return None
    return terms, index, region


def _scan_terms(leaf: Any, field: str, start: str) -> tuple[dict[str, int], dict[str, int]] | None:
    """A segment's terms beginning with `start`, read straight from its mapped W3 term
    index: their document frequencies and where their postings are (None: not W3 mapped).

    The records are stored in key order, so the bucket is one sequential read; Whoosh's
    iterator costs four file calls per term.
    """
    mapped = _mapped_term_index(leaf)
    if mapped is None:
        return None
    terms, index, region = mapped
    try:
        wanted = terms._keycoder(field, start.encode("utf-8"))
        first = index.closest_key_pos(wanted)
        end = region.absolute(index.endofdata)
    except (AttributeError, TypeError):
        return None
    source = region.source
    counts: dict[str, int] = {}
    extents: dict[str, int] = {}
    if first is None:
        return counts, extents
    skip = len(wanted) - len(start.encode("utf-8"))
    unpack_lengths = _RECORD_LENGTHS.unpack
    at = region.absolute(first)
    while at < end:
        key_length, data_length = unpack_lengths(source[at : at + 8])
        key_at = at + 8
        key = source[key_at : key_at + key_length]
        if not key.startswith(wanted):
            break
        info_at = key_at + key_length
        info = source[info_at : info_at + data_length]
        term = key[skip:].decode("utf-8")
        counts[term] = int.from_bytes(info[5:9], "big")
        extents[term] = _extent(info)
        at = info_at + data_length
    return counts, extents


def _extent(info: bytes) -> int:
    """Where a term info says the postings are (offset << 32 | length), or -1 if inlined."""
    if info[0]:
        return -1
    offset, length = _EXTENT.unpack(info[_TERM_INFO_SIZE : _TERM_INFO_SIZE + 12])
    return int(offset) << 32 | int(length)


def _term_extent(leaf: Any, field: str, term: str) -> int | None:
    """Where one segment keeps a term's postings (`_extent`), `_ABSENT`, or None if its
    term index is not W3 mapped."""
    mapped = _mapped_term_index(leaf)
    if mapped is None:
        return None
    terms, index, region = mapped
    try:
        key = terms._keycoder(field, term.encode("utf-8"))
    except (AttributeError, TypeError):
        return None
    for position, length in index.ranges_for_key(key):
        return _extent(region.get(position, length))
    return _ABSENT


def _read_extent(postfile: Region, offset: int, length: int) -> _Posting | None:
    """A term's postings decoded from its W3 blocks in the mapped postings file (None: not W3).

    Each block is a length (negative for the last), a pickled block info (count, last id,
    max weight, compression, lengths) and the pickled, maybe compressed (ids as deltas,
    weights, values); weights are None when all are 1 and one number when all are equal.
    """
    raw = postfile.get(offset, length)
    if raw[:4] != _POSTINGS_MAGIC:
        return None
    stream = io.BytesIO(raw)
    id_parts: list[npt.NDArray[np.int64]] = []
    weight_parts: list[npt.NDArray[np.float64]] = []
    at = 4
    while at < len(raw):
        (block_length,) = _BLOCK_LENGTH.unpack_from(raw, at)
        end = at + 4 + abs(block_length)
        stream.seek(at + 4)
        count, _last, _most, compression, _short, _long = pickle.load(stream)
        data = raw[stream.tell() : end]
        ids, weights, _values = pickle.loads(zlib.decompress(data) if compression else data)
        id_parts.append(np.cumsum(np.asarray(ids, dtype=np.int64)))
        if weights is None or isinstance(weights, float):
            # Whoosh reads these into a float32 array
            weight_parts.append(np.full(count, 1.0 if weights is None else weights, dtype=np.float32).astype(np.float64))
        else:
            weight_parts.append(np.asarray(weights, dtype=np.float64))
        at = end
        if block_length < 0:
            break
    if len(id_parts) == 1:
        return id_parts[0], weight_parts[0]
    if not id_parts:
        return _EMPTY
    return np.concatenate(id_parts), np.concatenate(weight_parts)


def _length_column(leaf: Any, field: str, count: int) -> npt.NDArray[np.float64] | None:
    """A segment's field lengths read as one byte column (Whoosh 2.7's W3 codec), or None.

    Whoosh stores each length as one lossy byte; decoding them one call per document
    took most of the first query after opening a 10k-note index. A document without
    the field reads as NaN, as `doc_field_length` gives it (None); it has no postings
    there, so it is never scored.
    """
    try:
        from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield

        reader = leaf._perdoc._cached_reader(_lenfield(field), LENGTHS_COLUMN)
        if reader is None:
            return np.ones(count, dtype=np.float64)  # `doc_field_length`'s default
        stored = min(int(reader._count), count)
        raw = np.frombuffer(reader._dbfile.get(reader._basepos, stored), dtype=np.uint8)
    except (AttributeError, ImportError, TypeError):
        return None
    column = np.full(count, np.nan, dtype=np.float64)
    column[:stored] = _byte_lengths()[raw]
    return column


@lru_cache(maxsize=1)
def _byte_lengths() -> npt.NDArray[np.float64]:
    from whoosh.util.numeric import byte_to_length

    return np.array([np.nan] + [float(byte_to_length(b)) for b in range(1, 256)], dtype=np.float64)


def _read_postings(matcher: Any) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """A segment's posting list for one term, without deleted documents.

    Whoosh 2.7's block matcher is read a whole block at a time (the public
    per-posting API costs four Python calls per posting); anything else
    (inlined single postings) goes through the public API.
    """
    deleted: frozenset[int] | None = None
    if getattr(matcher, "_exclude", False) and hasattr(matcher, "child"):
        deleted = frozenset(matcher._ids)  # FilterMatcher over the segment's deletions
        matcher = matcher.child
    ids: list[int] = []
    weights: list[float] = []
    if all(hasattr(matcher, name) for name in ("_read_ids", "_read_weights", "_next_block", "_atend")):
        while not matcher._atend:
            matcher._read_ids()
            matcher._read_weights()
            ids.extend(matcher._ids)
            weights.extend(matcher._weights)
            matcher._next_block()
    else:
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
    id_array = np.asarray(ids, dtype=np.int64)
    weight_array = np.asarray(weights, dtype=np.float64)
    if deleted:
        keep = ~np.isin(id_array, np.fromiter(deleted, dtype=np.int64, count=len(deleted)))
        id_array, weight_array = id_array[keep], weight_array[keep]
    return id_array, weight_array
