"""The summed edges of the graph: each edge's occurrences per relation code and its place in the edge lists."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator
from itertools import chain

Edge = tuple[int, int]  # two vertex numbers, the lower first

# An edge's sum: occurrences per relation code, then its place in the edge lists (-1
# while it has none); as a list where an edit changes it, as five numbers in an array.
_PLACE = 4
_WIDTH = 5
_NO_PLACE = -1


def _code(edge: Edge) -> int:
    return edge[0] << 32 | edge[1]


class EdgeSums:
    """Every edge's occurrences per relation code (links, mentions, tagged, co-occurs) and place.

    The edges are kept in sorted arrays (48 bytes an edge, against some 340 as a dict of
    tuples and lists: 87 MB at 10,000 notes); the edges an edit touched since the last
    `compact` are held beside them as lists, which is what an edit reads and changes.
    Pickling saves them compacted, so a graph loaded again holds arrays only.
    """

    def __init__(self) -> None:
        self._codes = array("q")  # sorted edge codes (lower vertex << 32 | higher)
        self._sums = array("q")  # five numbers per code
        self._touched: dict[Edge, list[int]] = {}

    def sum_of(self, edge: Edge) -> list[int]:
        """The edge's [links, mentions, tagged, co-occurs, place] to change in place (zeros and no place if new)."""
        held = self._touched.get(edge)
        if held is None:
            held = self._touched[edge] = self._stored(edge)
        return held

    def _stored(self, edge: Edge) -> list[int]:
        code = _code(edge)
        at = bisect.bisect_left(self._codes, code)
        if at < len(self._codes) and self._codes[at] == code:
            return self._sums[_WIDTH * at : _WIDTH * at + _WIDTH].tolist()
        return [0, 0, 0, 0, _NO_PLACE]

    def place(self, edge: Edge) -> int | None:
        """The edge's place in the edge lists, if it has one."""
        held = self._touched.get(edge)
        place = (held if held is not None else self._stored(edge))[_PLACE]
        return None if place == _NO_PLACE else place

    def items(self) -> Iterator[tuple[Edge, list[int]]]:
        """Every edge with a non-zero sum and its [counts..., place], in edge order (a copy per edge)."""
        touched = sorted(self._touched.items(), key=lambda item: _code(item[0]))
        codes, sums = self._codes, self._sums
        at, next_touched = 0, 0
        while at < len(codes) or next_touched < len(touched):
            code = codes[at] if at < len(codes) else None
            if next_touched < len(touched) and (code is None or _code(touched[next_touched][0]) <= code):
                edge, held = touched[next_touched]
                next_touched += 1
                if code is not None and _code(edge) == code:
                    at += 1  # the touched sum replaces the stored one
                if any(held[:_PLACE]):
                    yield edge, list(held)
                continue
            assert code is not None
            yield (code >> 32, code & 0xFFFFFFFF), sums[_WIDTH * at : _WIDTH * at + _WIDTH].tolist()
            at += 1

    def compact(self) -> None:
        """Fold the touched edges into the arrays (dropping the edges whose sums are all zero)."""
        if self._codes:
            merged = list(self.items())  # in code order already
            codes = [_code(edge) for edge, _held in merged]
            helds = [held for _edge, held in merged]
        else:
            # A full build: the touched edges are all there are, and sorting them by code
            # beats merging (sorting the codes' ranks beats sorting the edge tuples).
            helds = [held for held in self._touched.values() if held[0] or held[1] or held[2] or held[3]]
            unsorted = [a << 32 | b for (a, b), held in self._touched.items() if held[0] or held[1] or held[2] or held[3]]
            order = sorted(range(len(unsorted)), key=unsorted.__getitem__)
            codes = [unsorted[at] for at in order]
            helds = [helds[at] for at in order]
        self._codes = array("q", codes)
        self._sums = array("q", chain.from_iterable(helds))
        self._touched = {}

    def lay_out(self) -> list[tuple[Edge, list[int]]]:
        """Place every edge with a non-zero sum in the order it was first touched, then compact
        (a full build, which touched every edge)."""
        if self._codes:
            raise ValueError("only a full build lays out every edge anew")
        laid = [(edge, held) for edge, held in self._touched.items() if held[0] or held[1] or held[2] or held[3]]
        for place, (_edge, held) in enumerate(laid):
            held[_PLACE] = place
        self.compact()
        return laid

    def touched_count(self) -> int:
        """How many edges are held as lists (what the edits since the last `compact` touched)."""
        return len(self._touched)

    def __getstate__(self) -> tuple[bytes, bytes]:
        if self._touched:
            compacted = EdgeSums()
            compacted._codes, compacted._sums, compacted._touched = self._codes, self._sums, self._touched
            compacted.compact()
            return compacted.__getstate__()
        return self._codes.tobytes(), self._sums.tobytes()

    def __setstate__(self, state: tuple[bytes, bytes]) -> None:
        codes, sums = (array("q", raw) for raw in state)
        if len(sums) != _WIDTH * len(codes):
            raise ValueError("edge sums of unequal lengths")
        self._codes, self._sums = codes, sums
        self._touched = {}
