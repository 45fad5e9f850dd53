"""The `cairn` console script: `cairn [VAULT]` opens the TUI, `cairn web …` the web view, `cairn mcp …` the MCP server."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.console import exit_code, run_console
from engine.errors import CairnError

SUBCOMMANDS = ("tui", "web", "mcp")


def _common(command: argparse.ArgumentParser, *, several: bool = False) -> None:
    if several:  # `cairn mcp` serves several vaults, each with its own index
        command.add_argument(
            "vault", nargs="*", type=Path, help="the vault folders (default: config `vault`, else the current folder)"
        )
        command.add_argument(
            "--index-dir", type=Path, action="append", help="where an index lives, once per vault in order (default VAULT/.cairn)"
        )
    else:
        command.add_argument(
            "vault", nargs="?", type=Path, help="the vault folder (default: config `vault`, else the current folder)"
        )
        command.add_argument("--index-dir", type=Path, help="where the index lives (default VAULT/.cairn)")
    command.add_argument("--config", type=Path, help="a TOML config file (default ~/.config/cairn/config.toml)")
    command.add_argument("--no-model", action="store_true", help="do not load the embedding model")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; `cairn VAULT` without a subcommand means `cairn tui VAULT`."""
    parser = argparse.ArgumentParser(
        prog="cairn",
        description="Cairn: local-first notes for a Markdown vault, with hybrid search that explains itself.",
        epilog="Without a command, `cairn [VAULT]` opens the terminal UI.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    tui = sub.add_parser("tui", help="open the terminal UI (the default)", description="Open the terminal UI.")
    _common(tui)
    tui.add_argument("--no-index", action="store_true", help="do not update the index on start")
    web = sub.add_parser("web", help="serve the local web view", description="Serve the local web view.")
    _common(web)
    web_module = _web_module()
    if web_module is not None and hasattr(web_module, "add_arguments"):
        web_module.add_arguments(web)
    mcp = sub.add_parser(
        "mcp",
        help="serve the vault to an MCP client on stdio",
        description="Serve search, context and notes to an MCP client over stdio (read-only unless --write).",
    )
    _common(mcp, several=True)
    from app.mcp import add_arguments as mcp_arguments  # argparse only: the SDK loads when serving

    mcp_arguments(mcp)
    return parser


def _web_module() -> object | None:
    if importlib.util.find_spec("app.web") is None:
        return None
    return importlib.import_module("app.web")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `cairn` console script."""
    return run_console(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or (arguments[0] not in SUBCOMMANDS and arguments[0] not in ("-h", "--help")):
        arguments.insert(0, "tui")
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        if args.command == "web":
            return _web(args)
        if args.command == "mcp":
            from app.mcp import main as mcp_main

            return mcp_main(args)
        return _tui(args)
    except CairnError as exc:
        print(f"cairn: {exc.title}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130


def _vault(args: argparse.Namespace, configured: str) -> Path:
    if args.vault is not None:
        return Path(args.vault)
    return Path(configured).expanduser() if configured else Path.cwd()


def _web(args: argparse.Namespace) -> int:
    module = _web_module()
    if module is None:
        print("cairn: the web view is not installed in this build", file=sys.stderr)
        return 1
    return int(module.main(args) or 0)  # type: ignore[attr-defined]


def _tui(args: argparse.Namespace) -> int:
    from app.config import load_config
    from app.wiring import build_app, open_engine

    config = load_config(args.config)
    engine = open_engine(_vault(args, config.vault), config, index_dir=args.index_dir, no_model=args.no_model)
    try:
        app = build_app(engine, config, index_on_start=False if args.no_index else None, hangup=True)
        app.run()
        return app.return_code or 0
    finally:
        engine.close()


if __name__ == "__main__":
    sys.exit(main())
