"""The graph's flat searched side behaves as the containers it replaced: the packed link
contexts (engine/channels/graph/texts.py) as a dict, the edge arrays (sums.py) as lists."""

from __future__ import annotations

import pickle

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.channels.graph.sums import EdgeLists, pair_code
from engine.channels.graph.texts import PairTexts

_CODES = st.integers(min_value=0, max_value=40).map(lambda n: pair_code(n % 7, 7 + n))
_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "discard", "fold", "settle"]), _CODES, st.text(max_size=6)), max_size=60
)


def _same(texts: PairTexts, model: dict[int, str]) -> None:
    assert dict(texts.items()) == model
    assert [code for code, _ in texts.items()] == sorted(model)
    assert len(texts) == len(model) and bool(texts) == bool(model)
    for code in range(0, 50 << 32, 1 << 32):
        for other in (7, 20, 47):
            assert texts.get(code | other) == model.get(code | other)


# The same examples every run, none remembered from an earlier one.
@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(_OPS)
@example([("set", 7, ""), ("fold", 7, ""), ("discard", 7, "")])  # an empty string packed, then removed
def test_packed_texts_match_a_dict_through_sets_removals_and_folds(ops: list[tuple[str, int, str]]) -> None:
    texts, model = PairTexts(), {}
    for op, code, text in ops:
        if op == "set":
            texts[code] = text
            model[code] = text
        elif op == "discard":
            texts.discard(code)
            model.pop(code, None)
        elif op == "fold":
            texts.fold()
        else:
            texts.settle()
    _same(texts, model)
    _same(pickle.loads(pickle.dumps(texts)), model)
    texts.fold()
    _same(texts, model)


def test_a_copy_changes_without_changing_what_searches_read() -> None:
    published = PairTexts()
    published[pair_code(1, 2)] = " acme early inves "
    published[pair_code(3, 4)] = " meets "
    published.fold()
    edited = published.copy()
    edited[pair_code(1, 2)] = " board "
    edited.discard(pair_code(3, 4))
    edited[pair_code(5, 6)] = " advis "
    edited.fold()
    assert dict(published.items()) == {pair_code(1, 2): " acme early inves ", pair_code(3, 4): " meets "}
    assert dict(edited.items()) == {pair_code(1, 2): " board ", pair_code(5, 6): " advis "}


def test_saving_does_not_fold_the_mapping_a_search_reads() -> None:
    texts = PairTexts()
    texts[pair_code(1, 2)] = " meets "
    before = texts._codes
    assert dict(pickle.loads(pickle.dumps(texts)).items()) == {pair_code(1, 2): " meets "}
    assert texts._codes is before and texts._changed


def test_edge_lists_copy_apart_and_round_trip() -> None:
    lists = EdgeLists([(0, 1), (2, 3)], [3.0, 0.5], [0, 2])
    copied = lists.copy()
    copied.append((4, 5), 1.0, 3)
    copied.weights[0] = 0.0
    assert (lists.pairs(), list(lists.weights)) == ([(0, 1), (2, 3)], [3.0, 0.5])
    loaded = pickle.loads(pickle.dumps(copied))
    assert (loaded.pairs(), list(loaded.weights), list(loaded.relations)) == ([(0, 1), (2, 3), (4, 5)], [0.0, 0.5, 1.0], [0, 2, 3])
