"""`cairn web [VAULT] [--port P] [--no-open]`: serve the vault's web view on 127.0.0.1 only."""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path

from engine.console import exit_code
from engine.errors import CairnError

HOST = "127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `cairn web` adds to the shared VAULT/--index-dir/--config/--no-model ones."""
    parser.add_argument("--port", type=int, default=None, help="port to listen on (default: config, else a free one)")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser")


def build_parser() -> argparse.ArgumentParser:
    """The parser of `python -m app.web` (the same options as `cairn web`)."""
    parser = argparse.ArgumentParser(
        prog="cairn web", description="Serve the local web view of a vault on 127.0.0.1."
    )
    parser.add_argument(
        "vault", nargs="?", type=Path, help="the vault folder (default: config `vault`, else the current folder)"
    )
    parser.add_argument("--index-dir", type=Path, help="where the index lives (default VAULT/.cairn)")
    parser.add_argument("--config", type=Path, help="a TOML config file (default ~/.config/cairn/config.toml)")
    parser.add_argument("--no-model", action="store_true", help="do not load the embedding model")
    add_arguments(parser)
    return parser


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0 picks a free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def launch_page(port: int, token: str, directory: Path) -> Path:
    """A private page in `directory` that sends the browser to the web view with the token.

    A process's arguments are readable by every local user (`ps`), so the browser is
    given this file's name, never the token: the file is the user's alone (0600 in a 0700
    folder) and hands the token over in the URL's fragment, which never leaves the browser.
    """
    target = html.escape(f"http://{HOST}:{port}/#token={token}", quote=True)
    page = (
        "<!doctype html>\n<meta charset=utf-8>\n<title>Cairn</title>\n"
        f'<meta http-equiv="refresh" content="0;url={target}">\n'
        f'<p><a href="{target}">Open Cairn</a></p>\n'
    )
    path = directory / "open.html"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(page)
    return path


def open_browser_when_serving(started: Callable[[], bool], url: str, *, wait_s: float = 30.0) -> threading.Thread:
    """Open `url` in the browser from a daemon thread once `started()` holds.

    A console browser (lynx, w3m, `www-browser`) or a `$BROWSER` wrapper only returns once
    it has shown the page, so the server must already be answering and must never wait
    for the browser.
    """

    def run() -> None:
        deadline = time.monotonic() + wait_s
        while not started() and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(webbrowser.Error, OSError):
            webbrowser.open(url)

    thread = threading.Thread(target=run, name="cairn-web-browser", daemon=True)
    thread.start()
    return thread


def main(argv: Sequence[str] | argparse.Namespace | None = None) -> int:
    """Open the engine, reindex in the background, print the URL and serve until Ctrl+C."""
    args = argv if isinstance(argv, argparse.Namespace) else build_parser().parse_args(argv)
    try:
        return _serve(args)
    except CairnError as exc:
        print(f"cairn web: {exc.title}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.config import load_config
    from app.wiring import open_engine
    from ui.web.server import build_app

    config = load_config(getattr(args, "config", None))
    if config.web.host not in (HOST, "localhost"):
        print(f"cairn web: ignoring web.host = {config.web.host!r}; the web view only binds {HOST}", file=sys.stderr)
    port = args.port if getattr(args, "port", None) is not None else config.web.port
    vault = Path(args.vault) if args.vault is not None else Path(config.vault).expanduser() if config.vault else Path.cwd()
    try:
        sock = bind(port)
    except OSError as exc:
        print(f"cairn web: cannot listen on {HOST}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    engine = open_engine(vault, config, index_dir=args.index_dir, no_model=getattr(args, "no_model", False))
    private_dir: Path | None = None
    try:
        bound_port = sock.getsockname()[1]
        token = secrets.token_urlsafe(24)
        app = build_app(engine, token, port=bound_port, watch=config.ui.watch)
        url = f"http://{HOST}:{bound_port}/?token={token}"
        print(url, flush=True)
        print(f"Serving {engine.vault} — press Ctrl+C to stop.", file=sys.stderr)
        server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", proxy_headers=False, server_header=False, lifespan="on")
        )
        if not getattr(args, "no_open", False):
            private_dir = Path(tempfile.mkdtemp(prefix="cairn-web-"))
            page = launch_page(bound_port, token, private_dir)
            open_browser_when_serving(lambda: server.started, page.as_uri())
        # uvicorn shuts down gracefully on Ctrl+C, then re-raises the signal: a normal stop.
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
        return 0
    finally:
        sock.close()
        engine.close()
        if private_dir is not None:
            shutil.rmtree(private_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
