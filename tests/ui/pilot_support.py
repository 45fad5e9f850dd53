"""Helpers for the TUI Pilot tests (imported by test modules next to it)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from textual.widget import Widget
from textual.widgets.markdown import MarkdownBlock
from textual.worker import WorkerCancelled, WorkerFailed

SIZE = (120, 40)

T = TypeVar("T")


def run(coroutine: Awaitable[T]) -> T:
    """Run a Pilot test body (no pytest-asyncio needed)."""
    return asyncio.run(coroutine)  # type: ignore[arg-type]


async def settle(pilot: object) -> None:
    """Wait until no worker runs and the messages they posted were handled.

    A worker that failed or was cancelled counts as finished: tests check the
    notification a failure becomes, not the exception.
    """
    app = pilot.app  # type: ignore[attr-defined]
    for _ in range(20):
        running = [worker for worker in app.workers if worker.is_running]
        if not running:
            await pilot.pause()  # type: ignore[attr-defined]
            if not any(worker.is_running for worker in app.workers):
                return
            continue
        for worker in running:
            try:
                await worker.wait()
            except (WorkerFailed, WorkerCancelled):
                continue
        await pilot.pause()  # type: ignore[attr-defined]


def link_targets(root: Widget) -> list[str]:
    """The hrefs of every link drawn in the Markdown blocks under `root`, in order."""
    import ast

    found: list[str] = []
    for block in root.query(MarkdownBlock):
        for span in block._content.spans:
            meta = getattr(span.style, "meta", None) or {}
            click = str(meta.get("@click", ""))
            if click.startswith("link(") and click.endswith(")"):
                found.append(ast.literal_eval(click[5:-1]))
    return found
