"""engine context, --why, the search knobs, create_safety, named relations and `cairn mcp` on a dataset vault (BrainBench).

Indexed without the model (a couple of seconds): these are about the graph, the budgets and the
tools, which the lexical channels and the graph answer alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp_support import call, session

from engine.api import Engine

BRAINBENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "brainbench"
QUESTION = "Who has invested in Apex?"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (BRAINBENCH / "vault").is_dir():
        pytest.skip("the shared datasets are not present")
    index = tmp_path_factory.mktemp("bb-agents") / "index"
    with Engine.open(BRAINBENCH / "vault", index_dir=index, embedder=None) as engine:
        engine.reindex()
    return index


@pytest.fixture(scope="module")
def engine(index_dir: Path) -> Iterator[Engine]:
    """The index opened again, as a later session opens the saved graph."""
    with Engine.open(BRAINBENCH / "vault", index_dir=index_dir, embedder=None) as opened:
        yield opened


def test_context_names_who_invested_within_its_budgets(engine: Engine) -> None:
    bundle = engine.context(QUESTION, max_tokens=1500)
    assert bundle.sources and bundle.entities and bundle.relationships and not bundle.notes
    assert all(bundle.used[part] <= bundle.budgets[part] for part in ("sources", "entities", "relationships"))
    assert bundle.used["total"] <= 1500
    named = {(r.source, r.relation, r.target) for r in bundle.relationships}
    assert ("Priya Taylor", "invested in", "Apex") in named
    # The founder is not who was asked about: the sources are the investors' (fusion's
    # other_relation_factor); asked about the founding, the same bundle names her.
    founding = engine.context("Who founded Apex?", max_tokens=1500)
    assert ("Nina Rodriguez", "founded", "Apex") in {(r.source, r.relation, r.target) for r in founding.relationships}
    assert bundle.counts.chunks == len(bundle.sources) and bundle.counts.neighbours > 0
    shallow = engine.context(QUESTION, max_tokens=1500, depth=0)
    assert shallow.counts.neighbours == 0


def test_search_evidence_knobs_and_create_safety(engine: Engine) -> None:
    results = engine.search(QUESTION, limit=5, as_you_type=False)
    investor = next(hit for hit in results.hits if hit.path == "people/priya-taylor-85.md")
    assert [(r.source, r.relation, r.target) for r in investor.channels["graph"].relations] == [
        ("Priya Taylor", "invested in", "Apex")
    ]
    assert "graph" in investor.votes
    without = engine.search(QUESTION, limit=5, as_you_type=False, graph_weight=0.0)
    assert all("graph" not in hit.votes for hit in without.hits)
    named = engine.search("Apex", limit=3, as_you_type=False)
    assert named.hits[0].path == "companies/apex-18.md" and named.hits[0].create_safety == "exists"
    assert all(hit.create_safety == "unknown" for hit in named.hits[1:])


def test_why_a_note_is_not_in_the_results(engine: Engine) -> None:
    shown = engine.why(QUESTION, "Priya Taylor", limit=5)
    assert shown.rank is not None and shown.rank <= 5
    missing = engine.why(QUESTION, "Umbra", limit=5)
    assert missing.rank is None or missing.rank > 5
    assert missing.reasons


def test_the_mcp_tools_through_a_client_session(index_dir: Path) -> None:
    async def body(client: ClientSession) -> None:
        found = await call(client, "search", query=QUESTION, limit=5)
        assert "people/priya-taylor-85.md" in {hit["path"] for hit in found["hits"]}
        filtered = await call(client, "search", query="path:companies fintech", limit=5)
        assert filtered["hits"] and all(hit["path"].startswith("companies/") for hit in filtered["hits"])
        context = await call(client, "context", question=QUESTION, max_tokens=1200, depth=1, detail="full")
        assert any(r["relation"] == "invested in" for r in context["relationships"])
        note = await call(client, "read", path="Apex", detail="full")
        assert note["path"] == "companies/apex-18.md" and note["backlinks"]
        missed = await call(client, "read", path="Apexx Labz")
        assert not missed["found"] and missed["nearest"]
        why = await call(client, "why", query=QUESTION, note="Priya Taylor", limit=5)
        assert why["path"] == "people/priya-taylor-85.md"

    session(BRAINBENCH / "vault", index_dir, "--no-model")(body)
