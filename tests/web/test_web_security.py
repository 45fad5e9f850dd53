"""The web view's security properties, one test each: token, Host, same-origin, paths, inert notes."""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from web_support import BASE_URL, PORT, SECRET, TOKEN, Served, client_for, serve

from app.web import bind
from engine.api import Engine
from ui.web.server import BadPath, vault_path

PAGES = ["/", "/?q=atlas", "/note/Glossary/CRDT.md", "/edit/Glossary/CRDT.md", "/graph/Glossary/CRDT.md"]
PROTECTED = [
    ("GET", "/search/results?q=atlas"),
    ("GET", "/file/Projects/Atlas/sync-architecture.png"),
    ("GET", "/api/search?q=atlas"),
    ("GET", "/api/status"),
    ("GET", "/api/notes"),
    ("GET", "/api/notes/Glossary/CRDT.md"),
    ("PUT", "/api/notes/Glossary/CRDT.md"),
    ("PUT", "/note/Glossary/CRDT.md"),
    ("POST", "/"),
    ("GET", "/unknown"),
]
VAULT_WORDS = ("CRDT", "Atlas", "vault", "sync-architecture")


@pytest.mark.parametrize(("method", "url"), PROTECTED)
def test_requests_without_the_token_are_refused(anonymous: TestClient, method: str, url: str) -> None:
    response = anonymous.request(method, url, json={"text": "x", "expected_sha": None})
    assert response.status_code == 401
    assert "CRDT" not in response.text


@pytest.mark.parametrize("url", PAGES)
def test_pages_without_the_token_are_the_public_shell(anonymous: TestClient, url: str) -> None:
    response = anonymous.get(url)
    assert response.status_code == 200
    assert '<script src="/static/shell.js" defer></script>' in response.text
    assert not any(word in response.text for word in VAULT_WORDS)
    assert "set-cookie" not in response.headers
    assert "script-src 'self'" in response.headers["content-security-policy"]


@pytest.mark.parametrize("url", PAGES)
def test_the_token_in_a_page_url_or_a_cookie_still_gets_only_the_shell(anonymous: TestClient, url: str) -> None:
    # The printed URL's `?token=` is for the shell's script; the server never honours it for a page.
    separator = "&" if "?" in url else "?"
    assert "shell.js" in anonymous.get(f"{url}{separator}token={TOKEN}").text
    assert "shell.js" in anonymous.get(url, headers={"Cookie": f"cairn_token_{PORT}={TOKEN}"}).text


def test_with_the_bearer_header_pages_are_the_real_pages(client: TestClient) -> None:
    response = client.get("/note/Glossary/CRDT.md")
    assert response.status_code == 200
    assert "shell.js" not in response.text
    assert '<h1 class="note-title">CRDT</h1>' in response.text


def test_a_wrong_token_is_refused_everywhere(anonymous: TestClient) -> None:
    assert anonymous.get("/api/status", params={"token": "nope"}).status_code == 401
    assert anonymous.get("/api/status", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert anonymous.get("/", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert anonymous.get("/note/Glossary/CRDT.md", headers={"Authorization": f"Bearer {TOKEN}x"}).status_code == 401


def test_the_api_takes_the_bearer_header_or_the_query_token(anonymous: TestClient) -> None:
    assert anonymous.get("/api/status", params={"token": TOKEN}).status_code == 200
    assert anonymous.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


@pytest.mark.parametrize(
    "url", ["/api/status", "/file/Projects/Atlas/sync-architecture.png", "/search/results?q=crdt", "/note/Glossary/CRDT.md"]
)
def test_a_cookie_is_never_a_credential(anonymous: TestClient, url: str) -> None:
    # Cookies ignore ports: a cookie-borne token would be sent to every other server on 127.0.0.1.
    for name in (f"cairn_token_{PORT}", "cairn_token"):
        response = anonymous.get(url, headers={"Cookie": f"{name}={TOKEN}"})
        if url.startswith("/note/"):
            assert "shell.js" in response.text and "CRDT" not in response.text
        else:
            assert response.status_code == 401


@pytest.mark.parametrize("url", ["/file/Projects/Atlas/sync-architecture.png", "/search/results?q=crdt"])
def test_only_the_api_takes_the_query_token(anonymous: TestClient, url: str) -> None:
    separator = "&" if "?" in url else "?"
    assert anonymous.get(f"{url}{separator}token={TOKEN}").status_code == 401


@pytest.mark.parametrize("url", [f"/?token={TOKEN}", f"/note/Glossary/CRDT.md?token={TOKEN}", "/api/status", "/"])
@pytest.mark.parametrize("authorized", [True, False])
def test_no_response_sets_a_cookie(client: TestClient, anonymous: TestClient, url: str, authorized: bool) -> None:
    response = (client if authorized else anonymous).get(url)
    assert response.status_code in (200, 401)
    assert "set-cookie" not in response.headers


@pytest.mark.parametrize("url", ["/", "/api/status", "/static/shell.js"])
def test_websockets_are_refused(client: TestClient, url: str) -> None:
    # There are none; the guard refuses them (1008, policy) before routing, token or not.
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(url):
        pass
    assert closed.value.code == 1008


def test_static_assets_need_no_token(anonymous: TestClient) -> None:
    response = anonymous.get("/static/search.js")
    assert response.status_code == 200
    assert "AbortController" in response.text
    assert "Authorization" in anonymous.get("/static/shell.js").text


def test_no_other_origin_may_open_or_embed_responses(anonymous: TestClient, client: TestClient) -> None:
    for response in (anonymous.get("/"), anonymous.get("/api/status"), client.get("/note/Glossary/CRDT.md")):
        assert response.headers["cross-origin-opener-policy"] == "same-origin"
        assert response.headers["cross-origin-resource-policy"] == "same-origin"
        assert response.headers["referrer-policy"] == "same-origin"


@pytest.mark.parametrize("host", ["evil.example", f"evil.example:{PORT}", "127.0.0.1:1", f"127.0.0.2:{PORT}", ""])
def test_a_foreign_host_header_is_refused(client: TestClient, host: str) -> None:
    response = client.get("/api/status", headers={"Host": host})
    assert response.status_code == 403


def test_localhost_with_the_right_port_is_accepted(client: TestClient) -> None:
    assert client.get("/api/status", headers={"Host": f"localhost:{PORT}"}).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": f"http://localhost:{PORT}0"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Referer": "http://evil.example/page"},
        {"Referer": f"{BASE_URL}.evil.example/"},
        {},
    ],
)
def test_state_changing_requests_need_same_origin(scratch: TestClient, scratch_engine: Engine, headers: dict[str, str]) -> None:
    scratch.headers.pop("Origin")
    path = scratch_engine.vault / "Glossary/CRDT.md"
    before = path.read_text(encoding="utf-8")
    sha = scratch.get("/api/notes/Glossary/CRDT.md").json()["sha"]
    response = scratch.put("/api/notes/Glossary/CRDT.md", json={"text": "hijacked", "expected_sha": sha}, headers=headers)
    assert response.status_code == 403
    assert path.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    "headers",
    [{"Origin": BASE_URL}, {"Sec-Fetch-Site": "same-origin"}, {"Referer": f"{BASE_URL}/edit/Glossary/CRDT.md"}],
)
def test_same_origin_writes_are_accepted(scratch: TestClient, scratch_engine: Engine, headers: dict[str, str]) -> None:
    scratch.headers.pop("Origin")
    sha = scratch.get("/api/notes/Glossary/CRDT.md").json()["sha"]
    response = scratch.put("/api/notes/Glossary/CRDT.md", json={"text": "mine", "expected_sha": sha}, headers=headers)
    assert response.status_code == 200
    assert (scratch_engine.vault / "Glossary/CRDT.md").read_text(encoding="utf-8") == "mine"


ESCAPES = [
    "%2e%2e/secret.md",
    "%2E%2E%2Fsecret.md",
    "Inbox/%2e%2e/%2e%2e/secret.md",
    "..%2fsecret.md",
    "%2fetc%2fpasswd",
    "%2Fetc/passwd",
    "Inbox/escape.md",  # a symlink to a file outside the vault
    ".cairn/catalog.sqlite",
    "%2ecairn/manifest.json",
    "Inbox%00/x.md",
]


@pytest.mark.parametrize("prefix", ["/note/", "/edit/", "/graph/", "/file/", "/api/notes/"])
@pytest.mark.parametrize("raw", ESCAPES)
def test_paths_never_read_outside_the_vault(client: TestClient, prefix: str, raw: str) -> None:
    response = client.get(prefix + raw)
    assert response.status_code in (400, 404)
    assert SECRET not in response.text
    assert "root:" not in response.text


@pytest.mark.parametrize("raw", ["%2e%2e/written.md", "%2Fwritten.md", "Inbox/escape.md", "%2ecairn/x.md"])
def test_paths_never_write_outside_the_vault(scratch: TestClient, scratch_engine: Engine, raw: str) -> None:
    outside = scratch_engine.vault.parent
    before = (outside / "secret.md").read_text(encoding="utf-8")
    response = scratch.put("/api/notes/" + raw, json={"text": "pwned", "expected_sha": None})
    assert response.status_code in (400, 404, 409)
    assert not (outside / "written.md").exists()
    assert not (scratch_engine.vault / ".cairn" / "x.md").exists()
    assert (outside / "secret.md").read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    "raw", ["../x.md", "a/../../x.md", "/etc/passwd", "\\x.md", "a\\..\\x.md", ".hidden/x.md", "a//b.md", "", "a/./b.md"]
)
def test_vault_path_refuses_escapes(raw: str) -> None:
    with pytest.raises(BadPath):
        vault_path(raw)


def test_raw_dot_dot_over_a_real_socket_is_refused(live: Served) -> None:
    # http.client sends the path as written (TestClient/httpx would normalise `..` away).
    for raw in ("/file/../secret.md", "/note/../secret.md", "/file/Inbox/../../secret.md", "/api/notes/../secret.md"):
        conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
        conn.request("GET", raw, headers={"Authorization": f"Bearer {TOKEN}"})
        response = conn.getresponse()
        body = response.read().decode("utf-8", "replace")
        conn.close()
        assert response.status in (400, 404), raw
        assert SECRET not in body


def test_hostile_note_renders_inert(client: TestClient) -> None:
    html = client.get("/note/Inbox/Evil%20Note.md").text
    article = html[html.index('id="markdown"') :]
    assert "&lt;script&gt;window.pwned = 1;" in article
    assert not re.search(r"<script\b", article)
    assert not re.search(r"<[a-z]+[^>]*\son\w+=", article)
    assert "javascript:" not in "".join(re.findall(r'(?:href|src)="([^"]*)"', article))
    assert 'href="/note/Projects/Atlas/Atlas.md"' in article


def test_only_loopback_is_bound() -> None:
    sock = bind(0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()


@pytest.fixture
def scratch(scratch_engine: Engine) -> TestClient:
    """An authorized client over this module's writable engine."""
    return client_for(scratch_engine)


@pytest.fixture(scope="module")
def live(shared_engine: Engine) -> Iterator[Served]:
    """A real uvicorn server over the shared engine."""
    yield from serve(shared_engine, shared_engine.vault)


def test_bearer_client_needs_no_cookie(live: Served) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
    conn.request("GET", "/api/status", headers={"Authorization": f"Bearer {TOKEN}"})
    assert conn.getresponse().status == 200
    conn.close()

