"""A hub's strongest neighbours: cutting its edges to the heaviest before sorting picks
exactly what sorting them all picks, ties broken by the neighbour's key either way."""

from __future__ import annotations

import random

import igraph
import pytest

from engine.channels.graph.build import Vertex
from engine.channels.graph.sums import EdgeLists
from engine.channels.graph.walk import NeighborCache, top_neighbors
from engine.config import GraphConfig


def _star(degree: int, seed: int) -> NeighborCache:
    """Vertex 0 joined to `degree` others by edges of few distinct weights (many ties)."""
    rng = random.Random(seed)
    edges = [(0, n) for n in range(1, degree + 1)]
    keys = [f"note:{n:05d}.md" for n in range(degree + 1)]
    rng.shuffle(keys)  # vertex numbers and key order disagree
    vertices = [Vertex(key, key, "note", key[5:]) for key in keys]
    weights = [float(rng.choice([0.5, 1.0, 1.5, 2.0, 3.0])) for _ in edges]
    lists = EdgeLists(edges, weights, [0] * len(edges))
    return NeighborCache(igraph.Graph(n=degree + 1, edges=edges), vertices, lists)


def _sorted_in_full(cache: NeighborCache, config: GraphConfig) -> list[int]:
    lists, vertices = cache.lists, cache.vertices
    ranked = sorted((-lists.weights[e], vertices[lists.highs[e]].key, e) for e in range(len(lists)))
    return [lists.highs[e] for _w, _k, e in ranked[: config.max_neighbors]]


@pytest.mark.parametrize(("degree", "seed"), [(10, 1), (161, 2), (2_000, 3), (5_000, 4)])
def test_the_cut_picks_what_a_full_sort_picks(degree: int, seed: int) -> None:
    config = GraphConfig()
    cache = _star(degree, seed)
    picked = [other for other, _weight, _relation in top_neighbors(cache, config, 0)]
    assert picked == _sorted_in_full(cache, config)


@pytest.mark.parametrize("limit", [0, 1, 5, 40])
@pytest.mark.parametrize("seed", range(4))
def test_the_walks_best_notes_are_those_a_full_sort_ranks_first(limit: int, seed: int) -> None:
    # The walk sorts only the notes scoring at least the limit-th best; the answer must be
    # the full sort's first `limit`, ties ordered by path, whatever the numbering.
    from engine.channels.graph.walk import _best_first

    rng = random.Random(seed)
    keys = [f"note:{n:05d}.md" for n in range(600)]
    rng.shuffle(keys)
    vertices = [Vertex(key, key, "note", key[5:]) for key in keys]
    hits = [(v, float(rng.choice([0.1, 0.25, 0.5, 0.5, 1.0]))) for v in rng.sample(range(600), 400)]
    full = sorted(hits, key=lambda item: (-item[1], vertices[item[0]].path or ""))[:limit]
    assert _best_first(list(hits), limit, vertices) == full
