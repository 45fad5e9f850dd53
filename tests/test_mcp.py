"""`cairn mcp`: the MCP server driven by the SDK's own client over stdio, as an MCP client runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp_support import call as _call
from mcp_support import session as _session

from engine.api import Engine
from engine.embedder import load_default_embedder

READ_TOOLS = {"search", "context", "read", "related", "backlinks", "why"}


@pytest.fixture
def indexed(sample_copy: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A private copy of sample_vault, indexed with the real model."""
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index) as engine:
        engine.reindex()
    return sample_copy, index


@pytest.fixture
def lexical(sample_copy: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A private copy of sample_vault with a CRLF note, indexed without the model (the writes are the point)."""
    (sample_copy / "Inbox" / "Windows note.md").write_bytes(b"# Windows note\r\n\r\nWritten on Windows.\r\n")
    index = tmp_path / "index"
    with Engine.open(sample_copy, index_dir=index, embedder=None) as engine:
        engine.reindex()
    return sample_copy, index


def test_read_only_tools_answer_through_a_real_client_session(indexed: tuple[Path, Path]) -> None:
    vault, index = indexed

    async def body(session: ClientSession) -> None:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == READ_TOOLS  # no write tools without --write

        found = await _call(session, "search", query="who attended the Atlas kickoff", limit=5, detail="full")
        assert len(found["hits"]) == 5
        people = {hit["path"] for hit in found["hits"]}
        assert "People/Priya Kumar.md" in people
        first = found["hits"][0]
        assert {"label", "channels", "snippet", "create_safety", "vector_score", "graph_boost", "traversed"} <= set(first)
        graph = next(hit for hit in found["hits"] if hit["path"] == "People/Priya Kumar.md")["channels"]["graph"]
        assert {"source": "Priya Kumar", "relation": "attended", "target": "Atlas 2026 Kickoff", "explicit": False} in graph["relations"]

        # The query language reaches the tool: filters apply, and the plan says how it was read.
        filtered = await _call(session, "search", query="path:People atlas -kickoff", limit=5, detail="full")
        assert filtered["hits"] and all(hit["path"].startswith("People/") for hit in filtered["hits"])
        assert [chip["kind"] for chip in filtered["plan"]["chips"]] == ["path", "exclude"]
        seeded = await _call(session, "search", query="who attended the Atlas kickoff", limit=5, graph_seeding="both", max_hops=1, detail="full")
        assert len(seeded["hits"]) == 5
        for bad in ({"graph_weight": -1}, {"graph_weight": 1e308}, {"max_hops": -1}, {"graph_seeding": "x"}):
            refused_knob = await session.call_tool("search", {"query": "atlas", **bad})
            assert refused_knob.isError, bad

        named = await _call(session, "search", query="Atlas 2026 Kickoff", limit=3, detail="full")
        assert named["hits"][0]["create_safety"] == "exists"

        # What `engine context` refuses, the tool refuses too (it answered nothing for a negative budget).
        for bad in ({"max_tokens": -5}, {"max_tokens": 0}, {"max_source_tokens": -1}, {"max_entity_tokens": -1}, {"depth": -1}):
            refused_budget = await session.call_tool("context", {"question": "atlas", **bad})
            assert refused_budget.isError, bad
            assert "Invalid configuration" in refused_budget.content[0].text, refused_budget.content
        for bad_limit in (0, -3):
            assert (await session.call_tool("search", {"query": "atlas", "limit": bad_limit})).isError
            assert (await session.call_tool("related", {"path": "Atlas", "limit": bad_limit})).isError

        context = await _call(session, "context", question="who attended the Atlas kickoff", max_tokens=4000, detail="full")
        assert context["sources"] and context["entities"] and context["relationships"]
        # The server opened the saved graph (--no-index): its named relations are read from it.
        assert any(r["relation"] == "attended" for r in context["relationships"]), context["relationships"]
        assert context["used"]["printed"] <= 4000
        assert "word pieces" in context["tokenizer"]
        assert context["counts"]["chunks"] == len(context["sources"])
        # What the agent receives, all of it, fits the budget, counted by the embedder's tokenizer.
        for budget in (1500, 600):
            answer = await session.call_tool("context", {"question": "who attended the Atlas kickoff", "max_tokens": budget, "detail": "full"})
            text = next(block.text for block in answer.content if block.type == "text")
            assert load_default_embedder().text_tokens([text])[0] <= budget
        one = await _call(session, "context", question="who attended the Atlas kickoff", top_k=1)
        assert len(one["sources"]) == 1
        for bad in ({"max_tokens": -1}, {"max_source_tokens": -3}, {"max_tokens": 20}, {"top_k": 0}):
            refused = await session.call_tool("context", {"question": "atlas", **bad})
            assert refused.isError, bad

        note = await _call(session, "read", path="Priya Kumar", detail="full")
        assert note["found"] and note["path"] == "People/Priya Kumar.md"
        assert any(link["resolved"] == "Projects/Atlas/Atlas.md" for link in note["links"])
        assert any(b["path"] == "Meetings/2026/2026-01-12 Atlas Kickoff.md" for b in note["backlinks"])

        missed = await _call(session, "read", path="Priya Kumr")
        assert not missed["found"]
        assert missed["nearest"][0]["title"] == "Priya Kumar"

        related = await _call(session, "related", path="People/Priya Kumar.md", limit=3)
        assert related["hits"] and all(hit["path"] != "People/Priya Kumar.md" for hit in related["hits"])

        linking = await _call(session, "backlinks", path="Atlas")
        assert any(b["path"] == "People/Priya Kumar.md" for b in linking["backlinks"])

        why = await _call(session, "why", query="who attended the Atlas kickoff", note="Leo Fischer", limit=5)
        assert why["path"] == "People/Leo Fischer.md" and why["reasons"]
        # It explains the search as asked: without the graph, the graph casts no vote for the note.
        asked = await _call(session, "why", query="who attended the Atlas kickoff", note="Priya Kumar", limit=5, graph_weight=0, detail="full")
        assert asked["channels"]["graph"]["vote"] == 0
        assert (await _call(session, "why", query="who attended the Atlas kickoff", note="Priya Kumar", limit=5, detail="full"))["channels"]["graph"]["vote"] > 0

        refused = await session.call_tool("create_note", {"title": "Nope"})
        assert refused.isError

        unknown = await session.call_tool("backlinks", {"path": "No Such Note At All"})
        assert unknown.isError

        # A pasted page as a note name is answered, not repeated whole (it was, in the error and the log).
        huge = "N" * 100_000
        for tool, arguments in (("why", {"query": "atlas", "note": huge}), ("backlinks", {"path": huge})):
            refused_name = await session.call_tool(tool, arguments)
            assert refused_name.isError and len(refused_name.content[0].text) < 2_000
        assert len(json.dumps(await _call(session, "read", path=huge))) < 4_000

    _session(vault, index)(body)
    assert not (vault / "Nope.md").exists()


def test_write_tools_save_through_the_engine(lexical: tuple[Path, Path]) -> None:
    vault, index = lexical
    windows = vault / "Inbox" / "Windows note.md"

    async def body(session: ClientSession) -> None:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == READ_TOOLS | {"create_note", "append"}

        created = await _call(session, "create_note", title="Field trip", text="# Field trip\n\nWith [[Priya Kumar]].\n", folder="Inbox")
        assert created["path"] == "Inbox/Field trip.md" and created["indexed"]
        found = await _call(session, "search", query="Field trip", limit=3, detail="full")
        assert found["hits"][0]["path"] == "Inbox/Field trip.md"
        assert found["hits"][0]["create_safety"] == "exists"

        again = await session.call_tool("create_note", {"title": "Field trip", "folder": "Inbox"})
        assert again.isError

        appended = await _call(session, "append", path="Windows note", text="Appended line.")
        assert appended["path"] == "Inbox/Windows note.md" and appended["indexed"]

    _session(vault, index, "--write", "--no-model")(body)
    assert (vault / "Inbox" / "Field trip.md").read_bytes() == b"# Field trip\n\nWith [[Priya Kumar]].\n"
    # The note keeps its CRLF line endings; the new line takes them too.
    assert windows.read_bytes() == b"# Windows note\r\n\r\nWritten on Windows.\r\nAppended line.\r\n"


def test_a_session_follows_notes_changed_on_disk(tmp_path: Path) -> None:
    """An agent's session lasts; a note written in an editor meanwhile must be found without a restart."""
    import os
    import sys
    import time

    import anyio
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client
    from vault_copy import copy_sample_vault

    vault = copy_sample_vault(tmp_path / "vault")
    root = Path(__file__).resolve().parent.parent
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp", str(vault), "--index-dir", str(tmp_path / "index"), "--no-model"],
        env={**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(tmp_path / "config")},
        cwd=str(root),
    )

    async def found(session: ClientSession, word: str) -> list[str]:
        return [hit["path"] for hit in (await _call(session, "search", query=word, limit=5))["hits"]]

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            deadline = time.monotonic() + 60
            written = False
            while True:
                if not written and await found(session, "tombstone"):  # the first index is in
                    (vault / "Inbox" / "Numbat.md").write_text("# Numbat\n\nnumbatword\n", encoding="utf-8")
                    written = True
                if written and "Inbox/Numbat.md" in await found(session, "numbatword"):
                    break
                assert time.monotonic() < deadline, "the note written on disk was never found"
                await anyio.sleep(0.1)

    anyio.run(main)
