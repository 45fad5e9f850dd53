"""Hostile requests get clean 4xx answers: body limits, symlink loops, deep JSON, odd queries, no redirects."""

from __future__ import annotations

import http.client
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from web_support import BASE_URL, PORT, TOKEN, Served, make_vault, serve

from engine.api import Engine
from engine.config import EngineConfig
from engine.embedder import HashEmbedder
from engine.errors import IndexCorrupt
from ui.web.server import build_app

MAX_NOTE_BYTES = 64 * 1024
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def small_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """An engine whose notes may be at most 64 KiB, over a vault with symlink loops."""
    base = tmp_path_factory.mktemp("web-hardening")
    vault = make_vault(base)
    (vault / "loop").symlink_to("loop")
    (vault / "ping").symlink_to("pong")
    (vault / "pong").symlink_to("ping")
    (vault / "loop.md").symlink_to("loop.md")
    os.mkfifo(vault / "Inbox" / "pipe.md")
    config = EngineConfig(max_file_bytes=MAX_NOTE_BYTES)
    engine = Engine.open(vault, config, index_dir=base / "index", embedder=HashEmbedder())
    engine.reindex()
    yield engine
    engine.close()


@pytest.fixture
def hardened(small_engine: Engine) -> TestClient:
    """An authorized client that reports server errors as responses, as a browser would see them."""
    app = build_app(small_engine, TOKEN, port=PORT, reindex=False)
    headers = {**AUTH, "Origin": BASE_URL}
    return TestClient(app, base_url=BASE_URL, headers=headers, follow_redirects=False, raise_server_exceptions=False)


@pytest.fixture(scope="module")
def small_live(small_engine: Engine) -> Iterator[Served]:
    """A real uvicorn server over the 64 KiB engine."""
    yield from serve(small_engine, small_engine.vault)


def _note(client: TestClient, path: str = "Glossary/CRDT.md") -> dict[str, str]:
    response = client.get(f"/api/notes/{path}")
    assert response.status_code == 200
    body: dict[str, str] = response.json()
    return body


# -- request body limits ----------------------------------------------------------------
def test_a_body_over_the_limit_is_413_and_writes_nothing(hardened: TestClient, small_engine: Engine) -> None:
    file = small_engine.vault / "Glossary/CRDT.md"
    before = file.read_bytes()
    sha = _note(hardened)["sha"]
    body = json.dumps({"text": "x" * (7 * MAX_NOTE_BYTES), "expected_sha": sha}).encode()
    response = hardened.put("/api/notes/Glossary/CRDT.md", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert file.read_bytes() == before


def test_a_note_under_the_limit_is_taken_however_the_client_escapes_it(hardened: TestClient, small_engine: Engine) -> None:
    sha = _note(hardened)["sha"]
    text = "\u00e9" * (MAX_NOTE_BYTES // 2)  # two bytes of UTF-8 each, six of escaped JSON
    body = json.dumps({"text": text, "expected_sha": sha}, ensure_ascii=True).encode()
    assert len(body) > 2 * MAX_NOTE_BYTES + 64 * 1024  # more than twice the note and some
    response = hardened.put("/api/notes/Glossary/CRDT.md", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    assert (small_engine.vault / "Glossary/CRDT.md").read_text(encoding="utf-8") == text


def test_a_note_over_the_engines_size_limit_is_saved_and_reported_not_indexed(
    hardened: TestClient, small_engine: Engine
) -> None:
    # Under the body limit (JSON overhead allowed) but more than the index reads: the
    # user's text is kept, and the answer says the index skipped it.
    file = small_engine.vault / "Glossary/CRDT.md"
    sha = _note(hardened)["sha"]
    response = hardened.put("/api/notes/Glossary/CRDT.md", json={"text": "é" * MAX_NOTE_BYTES, "expected_sha": sha})
    assert response.status_code == 200
    assert response.json()["reindexed"] is False and "too large" in response.json()["warning"]
    assert file.read_text(encoding="utf-8") == "é" * MAX_NOTE_BYTES


def test_a_note_at_the_size_limit_saves(hardened: TestClient, small_engine: Engine) -> None:
    note = _note(hardened, "Glossary/Tile Pack.md")
    text = note["text"] + "\n" + "\n" * (MAX_NOTE_BYTES - len(note["text"].encode()) - 1)
    assert len(text.encode()) == MAX_NOTE_BYTES
    response = hardened.put("/api/notes/Glossary/Tile Pack.md", json={"text": text, "expected_sha": note["sha"]})
    assert response.status_code == 200, response.text


def _raw_put(live: Served, headers: list[tuple[str, str]]) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", live.port), timeout=10)
    lines = [
        "PUT /api/notes/Glossary/CRDT.md HTTP/1.1",
        f"Host: 127.0.0.1:{live.port}",
        f"Authorization: Bearer {TOKEN}",
        f"Origin: {live.base}",
        "Content-Type: application/json",
        *(f"{name}: {value}" for name, value in headers),
    ]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    return sock


def _status_line(sock: socket.socket) -> str:
    reply = b""
    while b"\r\n" not in reply:
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
    return reply.split(b"\r\n", 1)[0].decode()


def test_a_too_large_content_length_is_refused_before_any_body_is_read(small_live: Served) -> None:
    sock = _raw_put(small_live, [("Content-Length", str(200 * 1024 * 1024))])
    try:
        # Nothing of the announced 200 MB is sent: the answer must not wait for it.
        assert _status_line(sock) == "HTTP/1.1 413 Request Entity Too Large"
    finally:
        sock.close()


def test_a_streamed_body_is_cut_off_at_the_limit(small_live: Served, small_engine: Engine) -> None:
    before = (small_engine.vault / "Glossary/CRDT.md").read_bytes()
    sock = _raw_put(small_live, [("Transfer-Encoding", "chunked")])
    try:
        chunk = b'{"text": "' + b"x" * 16 * 1024
        for _ in range(7 * MAX_NOTE_BYTES // len(chunk) + 1):
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        # The body never ends: a server that read it all first would never answer.
        assert _status_line(sock) == "HTTP/1.1 413 Request Entity Too Large"
    finally:
        sock.close()
    assert (small_engine.vault / "Glossary/CRDT.md").read_bytes() == before


def test_deeply_nested_json_is_400(hardened: TestClient) -> None:
    for body in (b"[" * 50_000 + b"]" * 50_000, b'{"a":' * 20_000 + b"1" + b"}" * 20_000):
        response = hardened.put("/api/notes/Glossary/CRDT.md", content=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 400
        assert response.json()["error"] == "bad_request"


# -- symlink loops and odd paths ------------------------------------------------------------
@pytest.mark.parametrize("path", ["loop", "loop/x.png", "ping/x.png", "loop.md"])
@pytest.mark.parametrize("prefix", ["/file/", "/note/", "/edit/", "/graph/", "/api/notes/"])
def test_a_symlink_loop_is_a_clean_client_error(hardened: TestClient, prefix: str, path: str) -> None:
    response = hardened.get(prefix + path)
    assert response.status_code in (400, 404)
    assert "Traceback" not in response.text
    if prefix.startswith("/api/"):
        assert response.json()["error"] in ("unsafe_path", "not_found")


@pytest.mark.parametrize("path", ["loop.md", "loop/x.md", "ping/x.md", "pong/deeper/x.md"])
def test_saving_into_a_symlink_loop_is_400(hardened: TestClient, path: str) -> None:
    response = hardened.put(f"/api/notes/{path}", json={"text": "x", "expected_sha": None})
    assert response.status_code == 400
    assert response.json()["error"] == "unsafe_path"


@pytest.mark.parametrize("sha", [None, "0" * 64])
def test_saving_onto_a_fifo_is_400_and_never_blocks(small_live: Served, sha: str | None) -> None:
    # Over a real socket with a timeout: reading the FIFO would block the server's thread for good.
    conn = http.client.HTTPConnection("127.0.0.1", small_live.port, timeout=10)
    body = json.dumps({"text": "x", "expected_sha": sha})
    conn.request("PUT", "/api/notes/Inbox/pipe.md", body=body, headers={**AUTH, "Origin": small_live.base})
    response = conn.getresponse()
    assert response.status == 400
    assert json.loads(response.read())["error"] == "unsafe_path"
    conn.close()


@pytest.mark.parametrize("prefix", ["/file/", "/note/", "/edit/", "/api/notes/"])
def test_a_fifo_is_never_opened(hardened: TestClient, prefix: str) -> None:
    assert hardened.get(prefix + "Inbox/pipe.md").status_code in (400, 404)


@pytest.mark.parametrize("prefix", ["/file/", "/note/", "/api/notes/"])
def test_a_too_long_file_name_is_a_clean_client_error(hardened: TestClient, prefix: str) -> None:
    response = hardened.get(prefix + "x" * 300 + ".md")
    assert response.status_code in (400, 404)
    saved = hardened.put("/api/notes/" + "x" * 300 + ".md", json={"text": "x", "expected_sha": None})
    assert saved.status_code == 400


# -- query parameters ---------------------------------------------------------------------
@pytest.mark.parametrize("query", ["channels=", "channels=,", "channels=%20,%20", ""])
def test_no_channels_means_all_channels(hardened: TestClient, query: str) -> None:
    response = hardened.get(f"/api/search?q=atlas&{query}")
    assert response.status_code == 200
    assert set(response.json()["channels"]) == {"fulltext", "vectors", "graph"}
    assert hardened.get(f"/search/results?q=atlas&{query}").status_code == 200


@pytest.mark.parametrize("limit", ["-1", "0", "1e9", "NaN", "inf", "", "1.5", "99999999999999999999999", "٣"])
def test_odd_limits_are_clamped_or_400(hardened: TestClient, limit: str) -> None:
    response = hardened.get("/api/search", params={"q": "atlas", "limit": limit})
    assert response.status_code in (200, 400)
    if response.status_code == 200:
        assert 1 <= len(response.json()["hits"]) <= 200
    else:
        assert response.json() == {"error": "bad_request", "message": "limit must be a whole number (1-200)"}


# -- no route redirects, least of all off-origin ------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        f"//evil.example/?token={TOKEN}",
        f"/\\evil.example/?token={TOKEN}",
        "//evil.example/%2e%2e",
        f"/?token={TOKEN}",
        f"/note/Glossary/CRDT.md?token={TOKEN}",
        "/api/status/",
        "/api/notes/",
        "/static",
        "/static/",
        "/note",
        "/note/",
    ],
)
@pytest.mark.parametrize("authorized", [True, False])
def test_nothing_ever_redirects(small_live: Served, url: str, authorized: bool) -> None:
    # Over a real socket, because httpx would normalise `//host` and `/\host` away.
    conn = http.client.HTTPConnection("127.0.0.1", small_live.port, timeout=10)
    conn.request("GET", url, headers=AUTH if authorized else {})
    response = conn.getresponse()
    response.read()
    conn.close()
    assert not 300 <= response.status < 400, (url, response.status, response.getheader("location"))
    assert response.getheader("location") is None


# -- unhandled errors -------------------------------------------------------------------------
def test_an_unhandled_error_is_a_json_500_without_a_traceback(
    hardened: TestClient, small_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise KeyError("catalog row vanished")

    monkeypatch.setattr(small_engine, "status", broken)
    response = hardened.get("/api/status")
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == "internal"
    assert body["message"]
    assert "Traceback" not in response.text and "catalog row vanished" not in response.text
    assert "content-security-policy" in response.headers
    assert response.headers["x-content-type-options"] == "nosniff"


def test_an_unhandled_error_on_a_page_is_an_html_500(
    hardened: TestClient, small_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: str) -> None:
        raise ValueError("graph exploded")

    monkeypatch.setattr(small_engine, "local_graph", broken)  # what the graph page asks the façade for
    response = hardened.get("/graph/Glossary/CRDT.md")
    assert response.status_code == 500
    assert response.headers["content-type"].startswith("text/html")
    assert "graph exploded" not in response.text and "Traceback" not in response.text
    assert "content-security-policy" in response.headers


def test_an_engine_error_outside_a_note_route_is_json_with_its_title(
    hardened: TestClient, small_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def damaged(*args: object, **kwargs: object) -> None:
        raise IndexCorrupt("the full-text index cannot be read")

    monkeypatch.setattr(small_engine, "search", damaged)
    response = hardened.get("/api/search", params={"q": "atlas"})
    assert response.status_code == 500
    assert response.json() == {
        "error": "engine_error",
        "message": "Index is damaged: the full-text index cannot be read",
    }
    assert "x-frame-options" in response.headers


def test_routing_errors_are_json_with_a_code(hardened: TestClient) -> None:
    assert hardened.delete("/api/notes/Glossary/CRDT.md").json()["error"] == "method_not_allowed"
    assert hardened.get("/api/nothing-here").json()["error"] == "not_found"
    assert hardened.get("/api/search", params={"q": "x", "channels": "bogus"}).json() == {
        "error": "bad_request",
        "message": "unknown channel(s): bogus",
    }


# -- a little fuzzing -----------------------------------------------------------------------
SEGMENTS = st.sampled_from(
    ["", ".", "..", "%2e%2e", "%2f", "%5c", "%00", "%ff", "%ed%a0%80", "%", "%zz", "~", "loop", "ping", "Glossary",
     "CRDT.md", "x" * 300, "a b", "é", "\\", ";", "?", "#", "%3f", "%23", ".cairn", "con", "*"]
)
PREFIXES = st.sampled_from(["/", "/note/", "/edit/", "/graph/", "/file/", "/api/notes/", "/api/search", "/search/results", "//", "/static/", "/api/"])
QUERIES = st.lists(
    st.tuples(
        st.sampled_from(["q", "limit", "channels", "typing", "token", "x", "q[]"]),
        st.one_of(st.text(max_size=40), st.sampled_from(["-1", "1e9", "NaN", ",", "fulltext,,graph", "%ff", "\x00"])),
    ),
    max_size=4,
)
METHODS = st.sampled_from(["GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS", "PATCH"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=METHODS, prefix=PREFIXES, segments=st.lists(SEGMENTS, max_size=4), query=QUERIES)
def test_fuzzed_requests_never_500_or_redirect(
    hardened: TestClient, method: str, prefix: str, segments: list[str], query: list[tuple[str, str]]
) -> None:
    from urllib.parse import urlencode

    url = prefix + "/".join(segments) + ("?" + urlencode(query) if query else "")
    body = json.dumps({"text": "fuzz", "expected_sha": "0" * 64}) if method in ("PUT", "POST", "PATCH") else None
    try:
        response = hardened.request(method, url, content=body)
    except Exception as exc:
        if type(exc).__name__ != "InvalidURL":
            raise
        reject()  # the test client itself cannot send this URL (e.g. a path of four slashes)
    assert response.status_code < 500, (method, url, response.text[:300])
    assert not 300 <= response.status_code < 400, (method, url)


@pytest.mark.parametrize(
    "raw",
    [b"q=%ff%fe", b"q=\xff\xfe", b"q=a&q=b&limit=2&limit=x", b"q=" + b"atlas+" * 3000, b"channels=\xff", b"limit=%00"],
)
def test_hostile_query_strings_are_answered(hardened: TestClient, raw: bytes) -> None:
    scope_query = raw.decode("latin-1")
    for path in ("/api/search", "/search/results", "/"):
        response = hardened.get(f"{path}?{scope_query}")
        assert response.status_code in (200, 400), (path, raw[:40], response.text[:200])


def test_a_file_in_a_looping_directory_downloads_nothing(hardened: TestClient, small_engine: Engine) -> None:
    assert not Path(small_engine.vault / "loop").is_file()
    response = hardened.get("/file/loop/loop/loop")
    assert response.status_code in (400, 404)


def test_a_folder_named_like_a_note_is_a_client_error(hardened: TestClient, small_engine: Engine) -> None:
    (small_engine.vault / "Folder.md").mkdir(exist_ok=True)
    for sha in (None, "0" * 64):
        response = hardened.put("/api/notes/Folder.md", json={"text": "# x\n", "expected_sha": sha})
        assert response.status_code == 400 and "Folder.md is a folder, not a note" in response.json()["message"]
    assert (small_engine.vault / "Folder.md").is_dir() and not list((small_engine.vault / "Folder.md").iterdir())


@pytest.mark.parametrize("sha", [None, "0" * 64])
@pytest.mark.parametrize("path", ["Glossary/CRDT.md/x.md", "Glossary/CRDT.md/deeper/x.md"])
def test_a_note_used_as_a_folder_is_a_client_error_and_writes_nothing(
    hardened: TestClient, small_engine: Engine, path: str, sha: str | None
) -> None:
    before = sorted(p.relative_to(small_engine.vault).as_posix() for p in small_engine.vault.rglob("*"))
    response = hardened.put(f"/api/notes/{path}", json={"text": "# x\n", "expected_sha": sha})
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "unsafe_path"
    assert "Glossary/CRDT.md is a file, not a folder" in response.json()["message"]
    created = hardened.post("/api/notes", json={"title": "x", "folder": "Glossary/CRDT.md"})
    assert created.status_code == 400, created.text
    assert sorted(p.relative_to(small_engine.vault).as_posix() for p in small_engine.vault.rglob("*")) == before


def test_a_long_note_name_is_never_echoed_whole(hardened: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    """A 100 KB name in /api/why made a 100 KB answer and a 100 KB log line."""
    name = "N" * 60_000
    for url in ("/api/why", "/why"):
        response = hardened.get(url, params={"q": "crdt", "note": name})
        assert response.status_code == 404
        assert name not in response.text and "N" * 1_000 not in response.text
        assert len(response.text) < 8_000, len(response.text)  # the page's frame and a cut name
    assert all(len(record.getMessage()) < 2_000 for record in caplog.records)  # whatever is logged is cut
    long_path = hardened.get("/api/notes/" + "a" * 3_000 + ".md")
    assert long_path.status_code in (400, 404) and len(long_path.text) < 2_000
