"""Nothing a user types into search raises: empty, one-note and sample vaults, any text, any time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from vault_copy import copy_sample_vault

from engine.api import Engine
from engine.channels.base import ChannelAnswer
from engine.embedder import Embedder, load_default_embedder
from engine.query import Query
from engine.records import SearchResults

ONE_NOTE = "# Harbor Lantern\n\nThe lantern at the harbor is lit at dusk by [[Mara]].\n"

# What people paste or mistype: operators, quotes, control characters, scripts whose
# case mapping changes their length, a whole page of text, only punctuation.
AWKWARD = [
    "",
    " ",
    "*",
    "**",
    "?",
    '"',
    "'",
    '"unclosed',
    "''''",
    "-",
    "--",
    "#",
    "[[",
    "]]",
    "((a OR b) AND NOT c)",
    "title:harbor",
    "harbor*",
    "\x00",
    "\x00harbor\x00",
    "\x1b[2Jharbor",
    "\t\n\r\x0b\x0c",
    "\u202eharbor",
    "İstanbul ǅ ß ﬁ",
    "e\u0301\u0301\u0301",
    "🙂🙂 harbor 🙂",
    "\udce9harbor",
    "har\ud800bor",
    "日本語の検索",
    "!@#$%^&*()_+-=[]{}|;:,.<>/?`~",
    "a" * 100_000,
    " ".join(["lantern"] * 10_000),
    " ".join(f"w{i}" for i in range(10_000)),
]

QUERIES = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=80),
    st.lists(st.sampled_from([*" *?\"'()-:#[]\\\x00\n", "harbor", "lan", "Mara", "AND", "NOT"]), max_size=12).map("".join),
)


@pytest.fixture(scope="module")
def model() -> Embedder:
    return load_default_embedder()


@pytest.fixture(scope="module")
def vaults(tmp_path_factory: pytest.TempPathFactory, model: Embedder) -> Iterator[dict[str, Engine]]:
    """An empty vault, a one-note vault and sample_vault, each indexed with the real model."""
    base = tmp_path_factory.mktemp("search-never-raises")
    (base / "empty").mkdir()
    (base / "one").mkdir()
    (base / "one" / "Harbor Lantern.md").write_text(ONE_NOTE, encoding="utf-8")
    copy_sample_vault(base / "sample")
    engines: dict[str, Engine] = {}
    try:
        for name in ("empty", "one", "sample"):
            engines[name] = Engine.open(base / name, index_dir=base / f"{name}-index", embedder=model)
            engines[name].reindex()
        yield engines
    finally:
        for engine in engines.values():
            engine.close()


def check(results: SearchResults, limit: int) -> None:
    assert len(results.hits) <= limit
    for name, status in results.channels.items():
        assert status.status in ("ok", "degraded"), (name, status)
    for hit in results.hits:
        text = hit.snippet.text
        assert all(0 <= start <= end <= len(text) for start, end in hit.snippet.highlights), hit.snippet


@pytest.mark.parametrize("vault", ["empty", "one", "sample"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES, as_you_type=st.booleans())
@example(query="harbor", as_you_type=False)
@example(query="lan", as_you_type=True)
def test_any_query_answers(vaults: dict[str, Engine], vault: str, query: str, as_you_type: bool) -> None:
    check(vaults[vault].search(query, limit=10, as_you_type=as_you_type), 10)


@pytest.mark.parametrize("query", AWKWARD, ids=[ascii(query)[:24] for query in AWKWARD])
def test_awkward_queries_on_an_empty_vault(vaults: dict[str, Engine], query: str) -> None:
    for as_you_type in (True, False):
        results = vaults["empty"].search(query, as_you_type=as_you_type)
        check(results, 20)
        assert results.hits == ()


def test_an_empty_vault_answers_every_channel_ok(vaults: dict[str, Engine]) -> None:
    results = vaults["empty"].search("lantern harbor", as_you_type=False)
    assert results.hits == ()
    assert {name: st.status for name, st in results.channels.items()} == {
        "fulltext": "ok", "vectors": "ok", "graph": "ok"
    }, results.channels


def test_the_one_note_is_found_word_by_word(vaults: dict[str, Engine]) -> None:
    engine = vaults["one"]
    for typed in ("h", "ha", "harb", "harbor", "harbor l", "harbor lantern"):
        results = engine.search(typed)
        check(results, 20)
        if len(typed) >= 4:
            assert [hit.path for hit in results.hits] == ["Harbor Lantern.md"], typed


def test_searches_typed_during_a_first_index_answer(tmp_path: Path, model: Embedder) -> None:
    vault = copy_sample_vault(tmp_path / "vault")
    engine = Engine.open(vault, index_dir=tmp_path / "index", embedder=model)
    failures: list[BaseException] = []
    answered: list[SearchResults] = []
    done = threading.Event()

    def type_queries() -> None:
        typed = "offline tile packs for the field"
        while not done.is_set():
            for end in range(1, len(typed) + 1):
                try:
                    answered.append(engine.search(typed[:end]))
                except BaseException as exc:  # recorded: the assertion below shows it
                    failures.append(exc)

    typist = threading.Thread(target=type_queries)
    typist.start()
    try:
        engine.reindex()
        engine.reindex(full=True)  # the full-text index is rebuilt under the searches
    finally:
        done.set()
        typist.join(60)
        engine.close()
    assert not failures, failures[:3]
    assert answered
    for results in answered:
        check(results, 20)


def test_any_limit_answers(vaults: dict[str, Engine]) -> None:
    for limit in (0, 1, 10**9):
        check(vaults["sample"].search("offline sync", limit=limit), max(limit, 0))


class _Broken:
    """A channel whose every search raises, as a bug or a damaged file would."""

    name = "graph"

    def search(self, query: Query, limit: int) -> ChannelAnswer:
        raise RuntimeError("boom")


def test_a_raising_channel_degrades_only_itself(vaults: dict[str, Engine], monkeypatch: pytest.MonkeyPatch) -> None:
    engine = vaults["sample"]
    monkeypatch.setitem(engine._searcher._channels, "graph", _Broken())
    results = engine.search("offline sync conflicts", as_you_type=False)
    assert results.hits
    assert results.channels["graph"].status == "unavailable"
    assert "boom" in results.channels["graph"].message
    assert results.channels["fulltext"].status == "ok"


def test_failing_full_text_weights_degrade_full_text(
    vaults: dict[str, Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = vaults["sample"]

    def broken(_terms: object) -> dict[str, float]:
        raise ValueError("math domain error")

    monkeypatch.setattr(engine._searcher, "_term_weights", broken)
    results = engine.search("offline sync conflicts", as_you_type=False)
    assert results.hits
    assert results.channels["fulltext"].status == "degraded"
    assert "math domain error" in results.channels["fulltext"].message


def test_a_failing_refresh_still_answers(vaults: dict[str, Engine], monkeypatch: pytest.MonkeyPatch) -> None:
    engine = vaults["sample"]

    def broken() -> bool:
        raise OSError("segment vanished")

    monkeypatch.setattr(engine._session, "_catch_up", broken)
    monkeypatch.setattr(engine._session, "last_refresh_check", 0.0)
    results = engine.search("offline sync conflicts", as_you_type=False)
    assert results.hits
    assert any("segment vanished" in st.message for st in results.channels.values()), results.channels
