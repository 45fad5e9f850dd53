"""A real MCP client session to `cairn mcp` started as a subprocess, as an MCP client runs it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent


def session(vault: Path, index: Path, *extra: str) -> Callable[[Callable[[ClientSession], Awaitable[None]]], None]:
    """Run `body` with a client session to `cairn mcp VAULT` started as a subprocess; it must end cleanly."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp", str(vault), "--index-dir", str(index), "--no-index", *extra],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )

    def run(body: Callable[[ClientSession], Awaitable[None]]) -> None:
        async def main() -> None:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                await body(client)

        anyio.run(main)

    return run


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result; the call must succeed and its text be the same JSON."""
    result = await session.call_tool(tool, arguments)
    assert not result.isError, result.content
    assert result.structuredContent is not None
    # The text content is the same JSON, for clients that read text only.
    text = next(block.text for block in result.content if block.type == "text")
    assert json.loads(text) == result.structuredContent
    return result.structuredContent
