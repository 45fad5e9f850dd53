"""`cairn mcp [VAULT] [--write]`: the vault's search, context and notes as an MCP server on stdio.

The tools return the same JSON the `engine` command prints (`engine.present`). The server
is read-only unless started with `--write`, which adds `create_note` and `append`; both
write through the engine's save path (`Engine.save_note`, `Engine.create_note`), as the
editors do. stdout carries the protocol: nothing else is printed there.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from engine.console import exit_code
from engine.errors import CairnError, NoteExists, SaveConflict
from engine.present import (
    backlink_to_json,
    context_json_text,
    context_to_json,
    note_to_json,
    results_to_json,
    save_to_json,
    why_to_json,
)

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

    from engine.api import Engine

INSTRUCTIONS = (
    "Search and read a Markdown vault. `search` returns notes with the evidence of each "
    "channel (full text, vectors, entity graph), a snippet and `create_safety` (whether a "
    "note of that name exists); `context` assembles the top chunks, their entities and "
    "how those relate, within a token budget; `read` returns a note with its links and "
    "backlinks; `related` and `backlinks` follow a note's neighbourhood; `why` says why a "
    "note is where it is in a search."
)
# The most hits a tool returns at once.
_MAX_LIMIT = 100


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `cairn mcp` adds to the shared VAULT/--index-dir/--config/--no-model ones."""
    parser.add_argument("--write", action="store_true", help="also offer create_note and append (read-only without)")
    parser.add_argument("--no-index", action="store_true", help="do not update the index on start")


def main(args: argparse.Namespace) -> int:
    """Open the engine, bring the index up to date in the background, serve MCP on stdio until the client leaves."""
    try:
        return _serve(args)
    except CairnError as exc:
        print(f"cairn mcp: {exc.title}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130


def _serve(args: argparse.Namespace) -> int:
    from app.config import load_config
    from app.wiring import open_engine

    config = load_config(getattr(args, "config", None))
    vault = Path(args.vault) if args.vault is not None else Path(config.vault).expanduser() if config.vault else Path.cwd()
    engine = open_engine(vault, config, index_dir=args.index_dir, no_model=getattr(args, "no_model", False))
    try:
        if not getattr(args, "no_index", False):
            # Searches answer at once from the index as it is; vector results join as embedding goes.
            threading.Thread(target=_reindex, args=(engine,), name="cairn-mcp-index", daemon=True).start()
        build_server(engine, write=getattr(args, "write", False)).run("stdio")
        return 0
    finally:
        engine.close()
        if sys.stdout.closed:
            # The transport closes stdout when the client leaves; what flushes it at exit gets a sink.
            sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def _reindex(engine: Engine) -> None:
    try:
        engine.reindex()
    except CairnError as exc:  # another process writes the index, a full disk: searches still answer
        print(f"cairn mcp: not indexed: {exc.title}: {exc}", file=sys.stderr)


def _limit(value: int) -> int:
    return max(1, min(_MAX_LIMIT, value))


def build_server(engine: Engine, *, write: bool = False) -> FastMCP:
    """The MCP server over an open engine: read tools, and write tools when `write`."""
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError

    server = FastMCP("cairn", instructions=INSTRUCTIONS, log_level="WARNING")

    def failed(exc: CairnError) -> ToolError:
        return ToolError(f"{exc.title}: {exc}")

    @server.tool()
    def search(
        query: str,
        limit: int = 10,
        graph_weight: float | None = None,
        max_hops: int | None = None,
        graph_seeding: Literal["query", "chunks", "both"] | None = None,
    ) -> dict[str, Any]:
        """Hybrid search: each hit with its evidence label, channel scores, snippet and create_safety.

        The query takes the search syntax: "exact phrase", -word, a OR b, tag:x, path:Folder,
        file:name, [property:value], task:text, after:/before:YYYY-MM-DD, "last week"; `plan`
        says how it was read (filters, corrected typos), `confident` how many hits have firm evidence.

        Args:
            query: what to look for, in words (a note's name finds it first).
            limit: how many notes (1-100).
            graph_weight: the entity graph's weight in fusion (default 1; 0 leaves it out; at most 1000).
            max_hops: how far the graph walks from the named entities (default 2).
            graph_seeding: where the walk starts: the entities the query names ("query", the
                default), those the top chunks name ("chunks"), or both.
        """
        try:
            results = engine.search(
                query,
                limit=_limit(limit),
                as_you_type=False,
                graph_weight=graph_weight,
                max_hops=max_hops,
                graph_seeding=graph_seeding,
            )
        except CairnError as exc:
            raise failed(exc) from exc
        return results_to_json(results)

    @server.tool()
    def context(
        question: str,
        max_tokens: int = 4000,
        max_source_tokens: int | None = None,
        max_entity_tokens: int | None = None,
        depth: int = 2,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """What a question needs from the vault: Sources (top chunks), Entities and Relationships, within token budgets.

        Args:
            question: the question, in words.
            max_tokens: the whole budget: all of the answer, as JSON, fits it.
            max_source_tokens: the sources' part (default 60%).
            max_entity_tokens: the entities' part (default 20%); relationships get the rest.
            depth: hops from the chunks' entities (0: only theirs).
            top_k: the most sources (default: as many as the budget holds).
        """
        try:
            bundle = engine.context(
                question,
                max_tokens=max_tokens,
                max_source_tokens=max_source_tokens,
                max_entity_tokens=max_entity_tokens,
                depth=max(0, depth),
                top_k=top_k,
                render=context_json_text,
            )
        except CairnError as exc:
            raise failed(exc) from exc
        return context_to_json(bundle)

    @server.tool()
    def read(path: str) -> dict[str, Any]:
        """A note's text with its links and backlinks; `path` may also be a title or alias.

        A note that is not there comes back with `found: false` and the nearest titles.
        """
        found = engine.find_note(path)
        if found is None:
            return {
                "found": False,
                "path": path,
                "nearest": [{"path": p, "title": t} for p, t in engine.nearest_notes(path)],
            }
        try:
            return note_to_json(engine.note(found), engine.backlinks(found))
        except CairnError as exc:
            raise failed(exc) from exc

    @server.tool()
    def related(path: str, limit: int = 10) -> dict[str, Any]:
        """Notes like this one (its title and opening as a hybrid query), with their evidence."""
        found = _known(engine, path)
        try:
            return results_to_json(engine.related(found, limit=_limit(limit)))
        except CairnError as exc:
            raise failed(exc) from exc

    @server.tool()
    def backlinks(path: str) -> dict[str, Any]:
        """The notes that link to this one, each with the line that links."""
        found = _known(engine, path)
        return {"path": found, "backlinks": [backlink_to_json(b) for b in engine.backlinks(found)]}

    @server.tool()
    def why(
        query: str,
        note: str,
        limit: int = 10,
        graph_weight: float | None = None,
        max_hops: int | None = None,
        graph_seeding: Literal["query", "chunks", "both"] | None = None,
    ) -> dict[str, Any]:
        """Why a note is where it is in a search's results, or not in them: each channel's rank, factor and vote, and the reasons.

        `note` is a path, title or alias; the other arguments are the search's, as `search` takes them.
        """
        try:
            return why_to_json(
                engine.why(
                    query,
                    note,
                    limit=_limit(limit),
                    graph_weight=graph_weight,
                    max_hops=max_hops,
                    graph_seeding=graph_seeding,
                )
            )
        except CairnError as exc:
            raise failed(exc) from exc

    if write:

        @server.tool()
        def create_note(title: str, text: str | None = None, folder: str = "") -> dict[str, Any]:
            """Create a note named `title` in `folder` (default the vault's top); refuses to replace one.

            Check `create_safety` in a search for the title first: `exists` means there is one.
            """
            try:
                return save_to_json(engine.create_note(folder, title, text))
            except NoteExists as exc:
                raise ToolError(f"{exc}; read it or append to it instead") from exc
            except CairnError as exc:
                raise failed(exc) from exc

        @server.tool()
        def append(path: str, text: str) -> dict[str, Any]:
            """Add text at the end of a note, as new lines in the note's own line endings; every byte it held stays."""
            found = _known(engine, path)
            try:
                current = engine.read_note(found)
                separator = "" if not current.text or current.text.endswith("\n") else "\n"
                added = text if text.endswith("\n") else text + "\n"
                return save_to_json(engine.save_note(found, current.text + separator + added, expected_sha=current.sha))
            except SaveConflict as exc:
                raise ToolError(f"{found} changed while appending; nothing was written, try again") from exc
            except CairnError as exc:
                raise failed(exc) from exc

    return server


def _known(engine: Engine, name: str) -> str:
    """The path of the note a path, title or alias names, or a tool error naming the nearest."""
    from mcp.server.fastmcp.exceptions import ToolError

    found = engine.find_note(name)
    if found is None:
        nearest = "; ".join(f"{title} ({path})" for path, title in engine.nearest_notes(name))
        raise ToolError(f"no note named {name!r}" + (f"; nearest: {nearest}" if nearest else ""))
    return found
