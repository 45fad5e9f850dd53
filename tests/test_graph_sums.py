"""The graph's edge sums: arrays plus the edges touched since, read and saved as one set of sums."""

from __future__ import annotations

import pickle
import random

from engine.channels.graph.sums import EdgeSums


def _model_step(sums: EdgeSums, model: dict[tuple[int, int], list[int]], rng: random.Random) -> None:
    a, b = sorted(rng.sample(range(40), 2))
    edge = (a, b)
    held = sums.sum_of(edge)
    expected = model.setdefault(edge, [0, 0, 0, 0, -1])
    assert held == expected
    rel = rng.randrange(4)
    change = rng.choice((1, 2, -1)) if held[rel] > 0 else rng.choice((1, 2))
    held[rel] += change
    expected[rel] += change
    held[4] = expected[4] = rng.randrange(1000) if any(held[:4]) else -1


def test_sums_read_back_what_was_summed_through_compaction_and_pickling() -> None:
    rng = random.Random(3)
    sums, model = EdgeSums(), {}
    for round_ in range(6):
        for _ in range(300):
            _model_step(sums, model, rng)
        live = {edge: held for edge, held in model.items() if any(held[:4])}
        assert dict(sums.items()) == live
        assert list(dict(sums.items())) == sorted(live), "in edge order"
        assert all(sums.place(edge) == (held[4] if held[4] >= 0 else None) for edge, held in model.items())
        if round_ % 2:
            sums.compact()
            assert sums.touched_count() == 0
        sums = pickle.loads(pickle.dumps(sums))  # saved compacted: what is loaded holds no lists
        assert sums.touched_count() == 0
        assert dict(sums.items()) == live
        model = {edge: list(held) for edge, held in live.items()}


def test_a_full_build_places_edges_in_the_order_first_touched() -> None:
    sums = EdgeSums()
    for edge in ((5, 9), (1, 2), (3, 4)):
        sums.sum_of(edge)[1] += 1
    sums.sum_of((0, 7))  # touched, never summed: no place
    assert sums.lay_out()[0] == [(5, 9), (1, 2), (3, 4)]
    assert [sums.place(edge) for edge in ((5, 9), (1, 2), (3, 4), (0, 7))] == [0, 1, 2, None]
