"""The web view's security properties, one test each: token, Host, same-origin, paths, inert notes."""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from web_support import BASE_URL, PORT, SECRET, TOKEN, Served, client_for, serve

from app.web import bind
from engine.api import Engine
from ui.web.server import BadPath, vault_path

PROTECTED = [
    ("GET", "/"),
    ("GET", "/?q=atlas"),
    ("GET", "/search/results?q=atlas"),
    ("GET", "/note/Glossary/CRDT.md"),
    ("GET", "/edit/Glossary/CRDT.md"),
    ("GET", "/graph/Glossary/CRDT.md"),
    ("GET", "/file/Projects/Atlas/sync-architecture.png"),
    ("GET", "/api/search?q=atlas"),
    ("GET", "/api/status"),
    ("GET", "/api/notes"),
    ("GET", "/api/notes/Glossary/CRDT.md"),
    ("PUT", "/api/notes/Glossary/CRDT.md"),
]


@pytest.mark.parametrize(("method", "url"), PROTECTED)
def test_requests_without_the_token_are_refused(anonymous: TestClient, method: str, url: str) -> None:
    response = anonymous.request(method, url, json={"text": "x", "expected_sha": None})
    assert response.status_code == 401
    assert "CRDT" not in response.text


def test_a_wrong_token_is_refused_everywhere(anonymous: TestClient) -> None:
    assert anonymous.get("/api/status", params={"token": "nope"}).status_code == 401
    assert anonymous.get("/api/status", headers={"Authorization": "Bearer nope"}).status_code == 401
    anonymous.cookies.set(f"cairn_token_{PORT}", "nope")
    assert anonymous.get("/api/status").status_code == 401


def test_token_by_query_bearer_or_cookie(anonymous: TestClient) -> None:
    assert anonymous.get("/api/status", params={"token": TOKEN}).status_code == 200
    assert anonymous.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    anonymous.cookies.set(f"cairn_token_{PORT}", TOKEN)
    assert anonymous.get("/api/status").status_code == 200


def test_token_in_the_page_url_moves_into_a_strict_httponly_cookie(anonymous: TestClient) -> None:
    response = anonymous.get("/", params={"token": TOKEN, "q": "crdt"})
    assert response.status_code == 303
    assert response.headers["location"] == "/?q=crdt"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"cairn_token_{PORT}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie


def test_static_assets_need_no_token(anonymous: TestClient) -> None:
    response = anonymous.get("/static/search.js")
    assert response.status_code == 200
    assert "AbortController" in response.text


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

