"""Helpers for the web view tests: a sample-vault copy with hostile extras, clients, a live server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from starlette.testclient import TestClient
from vault_copy import copy_sample_vault

from engine.api import Engine

TOKEN = "test-token-0123456789"
PORT = 8765
BASE_URL = f"http://127.0.0.1:{PORT}"
SECRET = "TOP-SECRET-OUTSIDE-THE-VAULT"

# A 1x1 PNG, so embeds of sync-architecture.png resolve and render.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5d5b1c60000000049454e44ae426082"
)

EVIL_NOTE = """# Evil Note

<script>window.pwned = 1; document.title = "pwned";</script>

<img src="x" onerror="window.pwned = 2; document.title = 'pwned'">

A [harmless looking link](javascript:window.pwned=3;document.title='pwned') and
<a href="javascript:window.pwned=4">raw anchor</a> and [[Atlas]].

[autolink](<javascript:window.pwned=5>) and ![img](javascript:window.pwned=6)
"""


def make_vault(base: Path) -> Path:
    """Copy sample_vault to `base/vault` and add an image, a hostile note, and a secret outside."""
    vault = base / "vault"
    copy_sample_vault(vault)
    (vault / "Projects" / "Atlas" / "sync-architecture.png").write_bytes(PNG)
    (vault / "Inbox" / "Evil Note.md").write_text(EVIL_NOTE, encoding="utf-8")
    (base / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    (vault / "Inbox" / "escape.md").symlink_to(base / "secret.md")
    return vault


@dataclass
class Served:
    """A live uvicorn server over an engine, on a free 127.0.0.1 port."""

    engine: Engine
    vault: Path
    port: int
    token: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def login_url(self) -> str:
        return f"{self.base}/?token={self.token}"


def serve(engine: Engine, vault: Path, token: str = TOKEN) -> Iterator[Served]:
    """Run build_app under uvicorn in a background thread until the generator is closed."""
    import uvicorn

    from app.web import bind
    from ui.web.server import build_app

    sock = bind(0)
    port = sock.getsockname()[1]
    app = build_app(engine, token, port=port, reindex=False)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    # The socket already listens, so requests made before uvicorn accepts simply wait.
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield Served(engine, vault, port, token)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def client_for(engine: Engine, *, authorized: bool = True) -> TestClient:
    """A TestClient on 127.0.0.1:PORT; authorized clients send the token as a Bearer header."""
    from ui.web.server import build_app

    app = build_app(engine, TOKEN, port=PORT, reindex=False)
    headers = {"Authorization": f"Bearer {TOKEN}", "Origin": BASE_URL} if authorized else {}
    return TestClient(app, base_url=BASE_URL, headers=headers, follow_redirects=False)


@dataclass
class Recorded:
    """One request another local server received: its path and headers."""

    path: str
    headers: dict[str, str]


def other_local_server() -> Iterator[tuple[str, list[Recorded]]]:
    """Another HTTP server on a free 127.0.0.1 port that records every request it gets."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received: list[Recorded] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            received.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}))
            body = b"<!doctype html><title>another local app</title><p>another local app</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
