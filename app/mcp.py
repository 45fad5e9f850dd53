"""`cairn mcp [VAULT ...] [--write]`: the vaults' search, context and notes as an MCP server on stdio.

The tools answer brief by default, within a token budget, or with the JSON the `engine`
command prints (`detail="full"`): `engine.door` shapes both. Several vaults share one
server, each with its own index; a tool asks all of them unless its `vault` names one. The server
is read-only unless started with `--write`, which adds `create_note` and `append`; both
write through the engine's save path (`Engine.save_note`, `Engine.create_note`), as the
editors do. stdout carries the protocol: nothing else is printed there.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from engine.console import exit_code
from engine.errors import CairnError, IndexClosed, NoteExists, SaveConflict
from engine.present import brief

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

    from engine.api import Engine

INSTRUCTIONS = """\
Search and read Markdown vaults (notes linked by [[wikilinks]]). Answers come brief (path,
title, the evidence in words, the passage with heading and line) within max_tokens (default
2000); detail="full" returns every channel's numbers. When no note has confident evidence,
the answer says so first (`said`, `confident: 0`) and what follows is only the nearest notes:
do not present them as the answer.

- search: find notes about something; a note's title or alias ranks it first.
- context: the passages, entities and relationships a question needs, to answer from them.
- read: one note's text, its links and the notes linking to it.
- related / backlinks: a note's neighbourhood.
- why: why a note ranks where it does in a search (or is missing).
- create_note / append (with --write): search for the title first; a hit marked `named`
  means the note exists: append to it instead. `searchable` says whether search finds the
  new text yet.
"""
# The most hits a tool returns at once.
_MAX_LIMIT = 100
_DETAIL = Literal["brief", "full"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `cairn mcp` adds to the shared VAULT/--index-dir/--config/--no-model ones."""
    parser.add_argument("--write", action="store_true", help="also offer create_note and append (read-only without)")
    parser.add_argument("--no-index", action="store_true", help="do not update the index on start")


def main(args: argparse.Namespace) -> int:
    """Open the engines, bring each index up to date in the background and follow the vaults, serve MCP on stdio until the client leaves."""
    try:
        return _serve(args)
    except CairnError as exc:
        print(f"cairn mcp: {exc.title}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130


def _vaults(args: argparse.Namespace, configured: str) -> list[tuple[Path, Path | None]]:
    """Each vault to serve with its index folder (None: the vault's own)."""
    from engine.errors import ConfigError

    given = args.vault if isinstance(args.vault, list) else [args.vault] if args.vault is not None else []
    vaults = [Path(v) for v in given] or [Path(configured).expanduser() if configured else Path.cwd()]
    index_dirs = args.index_dir if isinstance(args.index_dir, list) else [args.index_dir] if args.index_dir else []
    if index_dirs and len(index_dirs) != len(vaults):
        raise ConfigError(f"{len(vaults)} vaults and {len(index_dirs)} --index-dir: give one per vault, in order, or none")
    return list(zip(vaults, index_dirs or [None] * len(vaults), strict=True))


def vault_names(vaults: list[Path]) -> list[str]:
    """A short name for each vault: its folder's name, numbered where two share one."""
    names: list[str] = []
    for vault in vaults:
        name = vault.resolve().name or str(vault)
        base, number = name, 2
        while name in names:
            name, number = f"{base}-{number}", number + 1
        names.append(name)
    return names


def _serve(args: argparse.Namespace) -> int:
    from app.config import load_config
    from app.wiring import open_engine

    config = load_config(getattr(args, "config", None))
    wanted = _vaults(args, config.vault)
    engines: dict[str, Engine] = {}
    threads: list[threading.Thread] = []
    watchers: list[Any] = []
    leaving = threading.Lock()
    left = threading.Event()

    def index_then_watch(engine: Engine, watcher: Any) -> None:
        _reindex(engine)
        with leaving:
            if watcher is not None and not left.is_set():
                watcher.start()

    try:
        for name, (vault, index_dir) in zip(vault_names([v for v, _ in wanted]), wanted, strict=True):
            engine = open_engine(vault, config, index_dir=index_dir, no_model=getattr(args, "no_model", False))
            engines[name] = engine
            # An agent's session lasts: notes changed in an editor meanwhile are followed, as the
            # TUI and the web view follow them ([ui] watch).
            watcher = engine.watcher() if config.ui.watch else None
            if watcher is not None:
                watchers.append(watcher)
            if not getattr(args, "no_index", False):
                # Searches answer at once from the index as it is; vector results join as embedding goes.
                thread = threading.Thread(target=index_then_watch, args=(engine, watcher), name="cairn-mcp-index", daemon=True)
                thread.start()
                threads.append(thread)
        build_server(engines, write=getattr(args, "write", False)).run("stdio")
        return 0
    finally:
        # The client left: the watchers stop, the first indexes stop after their current batch,
        # and what they wrote is committed before the engines close (close waits for it too).
        with leaving:
            left.set()
        for watcher in watchers:
            watcher.stop()
        for engine in engines.values():
            engine.stop()
            engine.close()
        for thread in threads:
            thread.join()
        if sys.stdout.closed:
            # The transport closes stdout when the client leaves; what flushes it at exit gets a sink.
            sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def _reindex(engine: Engine) -> None:
    try:
        engine.reindex()
    except IndexClosed:
        return  # the client left before the index was brought up to date: the next start does it
    except CairnError as exc:  # another process writes the index, a full disk: searches still answer
        print(f"cairn mcp: not indexed: {exc.title}: {exc}", file=sys.stderr)


def _limit(value: int) -> int:
    """A tool's `limit`, at most _MAX_LIMIT; below 1 is refused, as `engine search --limit` refuses it."""
    from mcp.server.fastmcp.exceptions import ToolError

    if value < 1:
        raise ToolError(f"limit {value} is not a number of at least 1")
    return min(_MAX_LIMIT, value)


def _budget(value: int | None, detail: str) -> int | None:
    """A tool's `max_tokens`: as given, else the door's default for brief answers (full ones are whole, as the CLI prints them)."""
    from mcp.server.fastmcp.exceptions import ToolError

    from engine.door import DOOR_TOKENS

    if value is not None and value < 1:
        raise ToolError(f"max_tokens {value} is not a budget of at least 1 token")
    if value is None:
        return DOOR_TOKENS if detail == "brief" else None
    return value


def build_server(engines: Engine | Mapping[str, Engine], *, write: bool = False) -> FastMCP:
    """The MCP server over open engines (one per vault, by name): read tools, and write tools when `write`."""
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError

    from engine import door
    from engine.door import DOOR_TOKENS, FULL_CONTEXT_TOKENS

    if not isinstance(engines, Mapping):
        engines = {engines.vault.name or "vault": engines}
    several = len(engines) > 1
    server = FastMCP("cairn", instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(function: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        """Register a tool; with one vault its `vault` argument is not offered (a smaller tools/list)."""
        if not several:
            signature = inspect.signature(function, eval_str=True)
            kept = [parameter for parameter in signature.parameters.values() if parameter.name != "vault"]
            function.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
        return server.tool()(function)

    def failed(exc: CairnError) -> ToolError:
        return ToolError(f"{exc.title}: {exc}")

    def chosen(vault: str | None) -> dict[str, Engine]:
        if vault is None:
            return dict(engines)
        if vault not in engines:
            raise ToolError(f"no vault named {brief(vault)!r}; the vaults here: {', '.join(engines)}")
        return {vault: engines[vault]}

    def label(name: str) -> dict[str, str]:
        return {"vault": name} if several else {}

    def each(vault: str | None, budget: int | None, answer: Callable[[str, Engine, int | None], dict[str, Any]]) -> dict[str, Any]:
        """One vault's answer, or (several asked) each vault's within its share of the budget."""
        asked = chosen(vault)
        if len(asked) == 1:
            name, engine = next(iter(asked.items()))
            return answer(name, engine, budget)
        share = None if budget is None else max(1, budget // len(asked))
        return {"vaults": [answer(name, engine, share) for name, engine in asked.items()]}

    def holding(vault: str | None, path: str) -> tuple[str, Engine, str]:
        """The vault holding the note `path` names (the first that does, unless `vault` says which)."""
        asked = chosen(vault)
        for name, engine in asked.items():
            found = engine.find_note(path)
            if found is not None:
                return name, engine, found
        nearest = "; ".join(f"{title} ({p})" for engine in asked.values() for p, title in engine.nearest_notes(path))
        raise ToolError(f"no note named {brief(path)!r}" + (f"; nearest: {nearest}" if nearest else ""))

    @tool
    def search(
        query: str,
        limit: int = 10,
        detail: _DETAIL = "brief",
        max_tokens: int | None = None,
        vault: str | None = None,
        graph_weight: float | None = None,
        max_hops: int | None = None,
        graph_seeding: Literal["query", "chunks", "both"] | None = None,
    ) -> dict[str, Any]:
        """Hybrid search of the notes: the confident hits, then (marked nearest) the nearest notes.

        The query takes the search syntax: "exact phrase", -word, a OR b, tag:x, path:Folder,
        [property:value], after:/before:YYYY-MM-DD. limit: 1-100 notes searched (brief shows the
        confident ones and 3 nearest). detail: brief, or full (every channel's scores). max_tokens:
        the answer's budget (default 2000 brief; full is whole). vault: one vault (default all). graph_weight (0-1000,
        default 1), max_hops (default 2), graph_seeding (query|chunks|both): the entity graph's knobs.
        """
        budget = _budget(max_tokens, detail)

        def answer(name: str, engine: Engine, share: int | None) -> dict[str, Any]:
            try:
                results = engine.search(
                    query,
                    limit=_limit(limit),
                    as_you_type=False,
                    graph_weight=graph_weight,
                    max_hops=max_hops,
                    graph_seeding=graph_seeding,
                )
                return door.search_answer(
                    results, detail=detail, counter=engine.token_counter(), max_tokens=share, extra=label(name)
                )
            except CairnError as exc:
                raise failed(exc) from exc

        return each(vault, budget, answer)

    @tool
    def context(
        question: str,
        detail: _DETAIL = "brief",
        max_tokens: int | None = None,
        vault: str | None = None,
        max_source_tokens: int | None = None,
        max_entity_tokens: int | None = None,
        depth: int = 2,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """What a question needs to be answered from the notes: source passages (from confident notes only), entities, relationships.

        max_tokens: all of the answer fits it (default 2000 brief, 4000 full); max_source_tokens (default 60%) and
        max_entity_tokens (default 20%) share it, relationships get the rest. depth: hops from the
        passages' entities (default 2). top_k: the most sources. vault: one vault (default all).
        """

        def answer(name: str, engine: Engine, share: int | None) -> dict[str, Any]:
            try:
                bundle = engine.context(
                    question,
                    max_tokens=share if share is not None else whole,
                    max_source_tokens=max_source_tokens,
                    max_entity_tokens=max_entity_tokens,
                    depth=depth,
                    top_k=top_k,
                    render=door.context_render(detail),
                )
            except CairnError as exc:
                raise failed(exc) from exc
            return {**label(name), **door.context_answer(bundle, detail=detail)}

        whole = max_tokens if max_tokens is not None else DOOR_TOKENS if detail == "brief" else FULL_CONTEXT_TOKENS
        return each(vault, whole, answer)

    @tool
    def read(path: str, detail: _DETAIL = "brief", max_tokens: int | None = None, vault: str | None = None) -> dict[str, Any]:
        """A note's text (whole lines, as many as max_tokens holds; default 2000), its links and the notes linking to it.

        path: a path, title or alias. A note that is not there comes back with found: false and the nearest titles.
        """
        budget = _budget(max_tokens, detail)
        asked = chosen(vault)
        for name, engine in asked.items():
            found = engine.find_note(path)
            if found is None:
                continue
            try:
                view, linking = engine.note(found), engine.backlinks(found)
                shaped = door.note_answer(view, linking, detail=detail, counter=engine.token_counter(), max_tokens=budget)
            except CairnError as exc:
                raise failed(exc) from exc
            return {**label(name), **shaped}
        return {
            "found": False,
            "path": brief(path),
            "nearest": [{**label(name), "path": p, "title": t} for name, engine in asked.items() for p, t in engine.nearest_notes(path)],
        }

    @tool
    def related(
        path: str, limit: int = 10, detail: _DETAIL = "brief", max_tokens: int | None = None, vault: str | None = None
    ) -> dict[str, Any]:
        """Notes like this one (its title and opening searched), with their evidence; as search answers."""
        name, engine, found = holding(vault, path)
        try:
            results = engine.related(found, limit=_limit(limit))
            return door.search_answer(
                results,
                detail=detail,
                counter=engine.token_counter(),
                max_tokens=_budget(max_tokens, detail),
                extra=label(name),
            )
        except CairnError as exc:
            raise failed(exc) from exc

    @tool
    def backlinks(path: str, detail: _DETAIL = "brief", max_tokens: int | None = None, vault: str | None = None) -> dict[str, Any]:
        """The notes that link to this one, each with the line that links."""
        name, engine, found = holding(vault, path)
        shaped = door.backlinks_answer(
            found,
            engine.backlinks(found),
            detail=detail,
            counter=engine.token_counter(),
            max_tokens=_budget(max_tokens, detail),
        )
        return {**label(name), **shaped}

    @tool
    def why(
        query: str,
        note: str,
        limit: int = 10,
        detail: _DETAIL = "brief",
        max_tokens: int | None = None,
        vault: str | None = None,
        graph_weight: float | None = None,
        max_hops: int | None = None,
        graph_seeding: Literal["query", "chunks", "both"] | None = None,
    ) -> dict[str, Any]:
        """Why a note is where it is in a search's results, or not in them: its rank and the reasons (full: each channel's rank, factor and vote).

        note: a path, title or alias; the other arguments are search's.
        """
        name, engine, _found = holding(vault, note)
        try:
            report = engine.why(
                query, note, limit=_limit(limit), graph_weight=graph_weight, max_hops=max_hops, graph_seeding=graph_seeding
            )
            shaped = door.why_answer(
                report, detail=detail, counter=engine.token_counter(), max_tokens=_budget(max_tokens, detail)
            )
        except CairnError as exc:
            raise failed(exc) from exc
        return {**label(name), **shaped}

    if write:

        def writing(vault: str | None) -> tuple[str, Engine]:
            if vault is None and several:
                raise ToolError(f"name the vault to write in: one of {', '.join(engines)}")
            name, engine = next(iter(chosen(vault).items()))
            return name, engine

        @tool
        def create_note(title: str, text: str | None = None, folder: str = "", vault: str | None = None) -> dict[str, Any]:
            """Create a note named `title` in `folder` (default the vault's top); refuses to replace one.

            Search for the title first: a hit marked `named` is that note. `searchable` says whether search finds it yet.
            """
            name, engine = writing(vault)
            try:
                saved = engine.create_note(folder, title, text)
            except NoteExists as exc:
                raise ToolError(f"{exc}; read it or append to it instead") from exc
            except CairnError as exc:
                raise failed(exc) from exc
            return {**label(name), **door.save_answer(saved, searchable_by_meaning=engine.has_model)}

        @tool
        def append(path: str, text: str, vault: str | None = None) -> dict[str, Any]:
            """Add text at the end of a note as new lines, in the note's own line endings; every byte it held stays.

            `searchable` says whether search finds the new text yet.
            """
            name, engine, found = holding(vault, path)
            try:
                current = engine.read_note(found)
                separator = "" if not current.text or current.text.endswith("\n") else "\n"
                added = text if text.endswith("\n") else text + "\n"
                saved = engine.save_note(found, current.text + separator + added, expected_sha=current.sha)
            except SaveConflict as exc:
                raise ToolError(f"{found} changed while appending; nothing was written, try again") from exc
            except CairnError as exc:
                raise failed(exc) from exc
            return {**label(name), **door.save_answer(saved, searchable_by_meaning=engine.has_model)}

    _prompts(server)
    return server


def _prompts(server: FastMCP) -> None:
    """The common jobs, as prompts a client offers its user."""

    @server.prompt()
    def answer_from_notes(question: str) -> str:
        """Answer a question from the vault, citing the notes."""
        return (
            f"Answer from my notes: {question}\n\n"
            "Call `context` with the question. If its `said` reports no confident evidence, say the notes do not "
            "answer it (name the nearest notes only as such) and stop. Otherwise answer from the sources alone, "
            "citing each claim as (path, line). Use `read` when a source is cut short."
        )

    @server.prompt()
    def before_writing(title: str) -> str:
        """Check whether a note exists before writing one."""
        return (
            f"Before writing a note titled “{title}”: call `search` with the title. A hit marked `named` is that "
            "note: `read` it and `append` to it rather than creating a second one. Hits with confident evidence on "
            "the same subject are candidates to append to or link with [[Title]]. Create the note only when "
            "neither exists, then check `searchable` in the answer."
        )

    @server.prompt()
    def gather(subject: str) -> str:
        """Gather what the vault says about a person, project or topic."""
        return (
            f"Gather what my notes say about {subject}.\n\n"
            f"1. `search` for “{subject}”; if `said` reports no confident evidence, say so and stop.\n"
            "2. `read` the note that is named for it (marked `named`), if any; then `backlinks` to it.\n"
            "3. `context` with a question about it for the relationships between it and other entities.\n"
            "Summarise by theme with a (path, line) for each point, and list what the notes leave open."
        )
