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

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

_CACHED_POSTING_LISTS = 8192


@dataclass(frozen=True)
class ScoredDoc:
    """One document of a bulk-scored query."""

    docnum: int
    score: float
    matched_terms: tuple[str, ...]


class BulkScorer:
    """Posting lists and field lengths of one Whoosh searcher, as numpy arrays."""

    def __init__(self, searcher: Any, *, b: float, k1: float) -> None:
        self.searcher = searcher
        self._reader = searcher.reader()
        self._b = b
        self._k1 = k1
        self._doc_count = int(searcher.doc_count_all())
        self._postings: OrderedDict[tuple[str, str], tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = (
            OrderedDict()
        )
        self._lengths: dict[str, npt.NDArray[np.float64]] = {}
        self._avg_length: dict[str, float] = {}

    def _posting(self, field: str, term: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        key = (field, term)
        cached = self._postings.get(key)
        if cached is not None:
            self._postings.move_to_end(key)
            return cached
        id_parts: list[npt.NDArray[np.int64]] = []
        weight_parts: list[npt.NDArray[np.float64]] = []
        for leaf, base in self._reader.leaf_readers():
            if (field, term) not in leaf:
                continue
            ids, weights = _read_postings(leaf.postings(field, term))
            id_parts.append(ids + base)
            weight_parts.append(weights)
        found = (
            np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.int64),
            np.concatenate(weight_parts) if weight_parts else np.zeros(0, dtype=np.float64),
        )
        self._postings[key] = found
        if len(self._postings) > _CACHED_POSTING_LISTS:
            self._postings.popitem(last=False)
        return found

    def _field_lengths(self, field: str) -> npt.NDArray[np.float64]:
        lengths = self._lengths.get(field)
        if lengths is None:
            length_of = self.searcher.doc_field_length
            lengths = self._lengths[field] = np.fromiter(
                (length_of(doc, field, 1) for doc in range(self._doc_count)), dtype=np.float64, count=self._doc_count
            )
            self._avg_length[field] = float(self.searcher.avg_field_length(field) or 1)
        return lengths

    def search(self, clauses: Sequence[tuple[str, str, float]], limit: int) -> list[ScoredDoc]:
        """Top documents for the sum of (field, term, boost) BM25F clauses, best first."""
        if not self._doc_count or limit < 1:
            return []
        scores = np.zeros(self._doc_count, dtype=np.float64)
        matched: list[tuple[str, npt.NDArray[np.int64]]] = []
        k1, b = self._k1, self._b
        for field, term, boost in clauses:
            ids, weights = self._posting(field, term)
            if not len(ids):
                continue
            lengths = self._field_lengths(field)[ids]
            norm = k1 * ((1 - b) + b * lengths / self._avg_length[field])
            idf = float(self.searcher.idf(field, term))
            scores[ids] += boost * idf * (weights * (k1 + 1)) / (weights + norm)
            matched.append((term, ids))
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
        out: list[ScoredDoc] = []
        for doc in docs.tolist():
            terms = dict.fromkeys(
                term for term, ids in matched if ids[min(int(np.searchsorted(ids, doc)), len(ids) - 1)] == doc
            )
            out.append(ScoredDoc(docnum=doc, score=float(scores[doc]), matched_terms=tuple(terms)))
        return out


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
