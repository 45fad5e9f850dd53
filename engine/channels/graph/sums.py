"""The summed edges of the graph: each edge's occurrences per relation code and its place in the edge lists."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

Edge = tuple[int, int]  # two vertex numbers, the lower first

# An edge's sum: occurrences per relation code, then its place in the edge lists (-1
# while it has none); a list where an edit changes it, a row of five in the array.
_PLACE = 4
_WIDTH = 5
_NO_PLACE = -1


def pair_code(u: int, v: int) -> int:
    """One int for the unordered pair of vertices `u` and `v` (a dict key a third the size of a tuple)."""
    return u << 32 | v if u < v else v << 32 | u


def link_code(source: int, target: int) -> int:
    """One int for the ordered pair: `source` links to `target`."""
    return source << 32 | target


def decode(code: int) -> Edge:
    """The two vertices of a pair's code, in the order they were coded."""
    return code >> 32, code & 0xFFFFFFFF


class EdgeLists:
    """The summed edges in the graph's edge numbering: each edge's two vertices, weight and
    strongest relation code, as four parallel arrays.

    Arrays, not lists of tuples and floats: 1.47 million edges at 50,000 notes take 25 MB
    this way against 225 MB, and load from the saved graph as four byte strings.

    An edge an edit empties keeps its number at weight 0 (searches pass over it), so an
    edit only adds edges at the end of the numbering and the graph built before it stays
    right for every edge it has (`walk.NeighborCache`); a full build lays out only the
    live edges.
    """

    __slots__ = ("highs", "lows", "relations", "weights")

    def __init__(self, edges: list[Edge] | None = None, weights: list[float] | None = None, relations: list[int] | None = None) -> None:
        self.lows = array("i", [low for low, _high in edges or ()])
        self.highs = array("i", [high for _low, high in edges or ()])
        self.weights = array("d", weights or ())
        self.relations = array("b", relations or ())

    def __len__(self) -> int:
        return len(self.lows)

    def end(self, at: int) -> Edge:
        """The two vertices of edge `at`, the lower first."""
        return self.lows[at], self.highs[at]

    def append(self, edge: Edge, weight: float, relation: int) -> None:
        """Add an edge at the end of the numbering."""
        self.lows.append(edge[0])
        self.highs.append(edge[1])
        self.weights.append(weight)
        self.relations.append(relation)

    def copy(self) -> EdgeLists:
        """A copy to change while searches read this one."""
        out = EdgeLists()
        out.lows, out.highs, out.weights, out.relations = self.lows[:], self.highs[:], self.weights[:], self.relations[:]
        return out

    def pairs(self) -> list[Edge]:
        """Every edge as a pair, in numbering order (what igraph is built from; made on demand)."""
        return list(zip(self.lows.tolist(), self.highs.tolist(), strict=True))

    def _columns(self) -> tuple[array[Any], ...]:
        return self.lows, self.highs, self.weights, self.relations

    def __getstate__(self) -> tuple[bytes, ...]:
        return tuple(column.tobytes() for column in self._columns())

    def __setstate__(self, state: tuple[bytes, ...]) -> None:
        self.lows, self.highs, self.weights, self.relations = array("i"), array("i"), array("d"), array("b")
        for column, raw in zip(self._columns(), state, strict=True):
            column.frombytes(raw)
        if not len(self.lows) == len(self.highs) == len(self.weights) == len(self.relations):
            raise ValueError("edge lists of unequal lengths")


class EdgeSums:
    """Every edge's occurrences per relation code (links, mentions, tagged, co-occurs) and place.

    The edges are kept in arrays sorted by edge (48 bytes an edge, against some 340 as a
    dict of tuples and lists: 87 MB at 10,000 notes); the edges an edit touched since the
    last `compact` are held beside them as lists, which is what an edit reads and changes.
    Pickling saves them compacted, so a graph loaded again holds arrays only.
    """

    def __init__(self) -> None:
        self._codes: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # lower vertex << 32 | higher, sorted
        self._sums: npt.NDArray[np.int64] = np.zeros((0, _WIDTH), dtype=np.int64)
        self._touched: dict[Edge, list[int]] = {}

    def sum_of(self, edge: Edge) -> list[int]:
        """The edge's [links, mentions, tagged, co-occurs, place] to change in place (zeros and no place if new)."""
        held = self._touched.get(edge)
        if held is None:
            held = self._touched[edge] = self._stored(edge)
        return held

    def _stored(self, edge: Edge) -> list[int]:
        if not len(self._codes):  # a full build: nothing stored yet
            return [0, 0, 0, 0, _NO_PLACE]
        code = link_code(*edge)
        at = int(np.searchsorted(self._codes, code))
        if at < len(self._codes) and self._codes[at] == code:
            return [int(value) for value in self._sums[at]]
        return [0, 0, 0, 0, _NO_PLACE]

    def place(self, edge: Edge) -> int | None:
        """The edge's place in the edge lists, if it has one."""
        held = self._touched.get(edge)
        place = (held if held is not None else self._stored(edge))[_PLACE]
        return None if place == _NO_PLACE else place

    def items(self) -> Iterator[tuple[Edge, list[int]]]:
        """Every edge with a non-zero sum or a place and its [counts..., place], in edge order (copies)."""
        codes, sums = self._merged()
        for code, row in zip(codes.tolist(), sums.tolist(), strict=True):
            yield (code >> 32, code & 0xFFFFFFFF), row

    def _merged(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The stored sums with the touched ones in their stead, sorted by edge; an edge with
        neither a sum nor a place is dropped (one with a place keeps it while emptied)."""
        if not self._touched:
            return self._codes, self._sums
        count = len(self._touched)
        touched_codes = np.fromiter((a << 32 | b for a, b in self._touched), dtype=np.int64, count=count)
        touched_sums = np.fromiter(chain.from_iterable(self._touched.values()), dtype=np.int64, count=_WIDTH * count)
        touched_sums = touched_sums.reshape(-1, _WIDTH)
        kept = ~np.isin(self._codes, touched_codes)
        codes = np.concatenate((self._codes[kept], touched_codes))
        sums = np.concatenate((self._sums[kept], touched_sums))
        live = sums[:, :_PLACE].any(axis=1) | (sums[:, _PLACE] != _NO_PLACE)
        codes, sums = codes[live], sums[live]
        order = np.argsort(codes, kind="stable")
        return codes[order], sums[order]

    def compact(self) -> None:
        """Fold the touched edges into the arrays."""
        self._codes, self._sums = self._merged()
        self._touched = {}

    def lay_out(self) -> tuple[list[Edge], list[list[int]]]:
        """Place every edge with a non-zero sum in the order it was first touched, then compact
        (a full build, which touched every edge): those edges and their sums, in that order."""
        if len(self._codes):
            raise ValueError("only a full build lays out every edge anew")
        # Two lists, not a list of pairs: a quarter million new tuples would set the
        # collector walking the whole build several times.
        edges = [edge for edge, held in self._touched.items() if held[0] or held[1] or held[2] or held[3]]
        held_sums = [held for held in self._touched.values() if held[0] or held[1] or held[2] or held[3]]
        for place, held in enumerate(held_sums):
            held[_PLACE] = place
        self.compact()
        return edges, held_sums

    def touched_count(self) -> int:
        """How many edges are held as lists (what the edits since the last `compact` touched)."""
        return len(self._touched)

    def __getstate__(self) -> tuple[bytes, bytes]:
        codes, sums = self._merged()
        return codes.tobytes(), sums.tobytes()

    def __setstate__(self, state: tuple[bytes, bytes]) -> None:
        raw_codes, raw_sums = state
        codes = np.frombuffer(raw_codes, dtype=np.int64)
        sums = np.frombuffer(raw_sums, dtype=np.int64)
        if len(sums) != _WIDTH * len(codes):
            raise ValueError("edge sums of unequal lengths")
        self._codes, self._sums = codes, sums.reshape(-1, _WIDTH)
        self._touched = {}
