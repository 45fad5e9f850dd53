"""Saving through the web API never loses a word: one winner per version, encodings and line endings kept."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_support import client_for

from engine.api import Engine

ROOT = Path(__file__).resolve().parents[2]


def _put(client: TestClient, path: str, text: str, sha: str | None) -> Any:
    return client.put(f"/api/notes/{path}", json={"text": text, "expected_sha": sha})


def _race(engine: Engine, path: str, sha: str | None, texts: list[str]) -> list[int]:
    """PUT `texts` at once, each from its own client and thread, all against `sha`; the status codes."""
    clients = [client_for(engine) for _ in texts]
    barrier = threading.Barrier(len(texts))
    codes = [0] * len(texts)

    def put(index: int) -> None:
        barrier.wait()
        codes[index] = _put(clients[index], path, texts[index], sha).status_code

    threads = [threading.Thread(target=put, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes


def test_two_puts_of_the_same_version_keep_one_and_refuse_the_other(fresh_engine: Engine, writer: TestClient) -> None:
    path = "Glossary/CRDT.md"
    for round_number in range(20):
        sha = writer.get(f"/api/notes/{path}").json()["sha"]
        texts = [f"# CRDT\n\nround {round_number} from tab {tab}\n" for tab in range(2)]
        codes = _race(fresh_engine, path, sha, texts)
        assert sorted(codes) == [200, 409], codes
        assert (fresh_engine.vault / path).read_text(encoding="utf-8") == texts[codes.index(200)]


def test_two_creates_of_the_same_note_keep_one(fresh_engine: Engine) -> None:
    for round_number in range(20):
        path = f"Inbox/Created {round_number}.md"
        texts = [f"# Created\n\nfrom tab {tab}\n" for tab in range(2)]
        codes = _race(fresh_engine, path, None, texts)
        assert sorted(codes) == [200, 409], codes
        assert (fresh_engine.vault / path).read_text(encoding="utf-8") == texts[codes.index(200)]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("Latin.md", "# Café\n\nCrème brûlée, naïve façade.\n".encode("cp1252")),
        ("Wide.md", "\ufeff# Wide\r\n\r\nÜber straße, 東京.\r\n".encode("utf-16-le")),
        ("Crlf.md", b"# Crlf\r\n\r\nOne.\r\nTwo.\r\n"),
        ("Cr.md", b"# Cr\r\rOne.\rTwo.\r"),
        ("Leading.md", b"\n\n# Leading\n\nafter two blank lines\n"),
    ],
)
def test_an_edit_through_the_api_keeps_encoding_and_line_endings(fresh_engine: Engine, writer: TestClient, name: str, data: bytes) -> None:
    target = fresh_engine.vault / "Inbox" / name
    target.write_bytes(data)
    fresh_engine.reindex([f"Inbox/{name}"])
    note = writer.get(f"/api/notes/Inbox/{name}").json()
    assert "\ufffd" not in note["text"] and "\r" not in note["text"]
    # What a textarea sends back: LF newlines, the same text plus one appended line.
    response = _put(writer, f"Inbox/{name}", note["text"] + "Added.\n", note["sha"])
    assert response.status_code == 200, response.text
    newline = note["newline"]
    codec = {"Latin.md": "cp1252", "Wide.md": "utf-16-le"}.get(name, "utf-8")
    assert target.read_bytes() == data + f"Added.{newline}".encode(codec)


def test_the_edit_page_keeps_a_leading_blank_line(fresh_engine: Engine, writer: TestClient) -> None:
    (fresh_engine.vault / "Inbox" / "Leading.md").write_bytes(b"\n# Leading\n\ntext\n")
    fresh_engine.reindex(["Inbox/Leading.md"])
    page = writer.get("/edit/Inbox/Leading.md").text
    # An HTML parser drops one newline right after <textarea>: the page must add one.
    assert '<textarea id="text"' in page
    after_tag = page.split('<textarea id="text"', 1)[1].split(">", 1)[1]
    assert after_tag.startswith("\n\n# Leading")


def test_text_the_encoding_cannot_hold_is_refused_with_a_clear_message(fresh_engine: Engine, writer: TestClient) -> None:
    target = fresh_engine.vault / "Inbox" / "Latin.md"
    data = "# Café\n\nCrème.\n".encode("cp1252")
    target.write_bytes(data)
    fresh_engine.reindex(["Inbox/Latin.md"])
    note = writer.get("/api/notes/Inbox/Latin.md").json()
    refused = _put(writer, "Inbox/Latin.md", note["text"] + "→\n", note["sha"])
    assert refused.status_code == 422 and refused.json()["error"] == "encoding" and "cp1252" in refused.json()["message"]
    assert target.read_bytes() == data
    converted = writer.put(
        "/api/notes/Inbox/Latin.md", json={"text": note["text"] + "→\n", "expected_sha": note["sha"], "as_utf8": True}
    )
    assert converted.status_code == 200 and target.read_text(encoding="utf-8") == "# Café\n\nCrème.\n→\n"


HOLD = """
import sys
from engine.storage import WriterLock
from pathlib import Path
lock = WriterLock(Path(sys.argv[1]))
assert lock.try_acquire()
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_put_while_another_process_writes_the_index_says_not_reindexed(fresh_engine: Engine, writer: TestClient) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(fresh_engine.index_dir / "writer.lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        sha = writer.get("/api/notes/Glossary/CRDT.md").json()["sha"]
        response = _put(writer, "Glossary/CRDT.md", "# CRDT\n\nwhile locked\n", sha)
        body = response.json()
        assert response.status_code == 200 and body["reindexed"] is False and "being written by" in body["warning"]
        assert (fresh_engine.vault / "Glossary/CRDT.md").read_text(encoding="utf-8") == "# CRDT\n\nwhile locked\n"
    finally:
        holder.kill()
        holder.wait()


def test_an_oversized_save_is_reported_as_not_indexed(tmp_path: Path) -> None:
    from engine.config import EngineConfig

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Big.md").write_text("# Big\n", encoding="utf-8")
    with Engine.open(vault, EngineConfig(max_file_bytes=2000), index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        client = client_for(engine)
        sha = client.get("/api/notes/Big.md").json()["sha"]
        body = _put(client, "Big.md", "# Big\n\n" + "word " * 1000, sha).json()
        assert body["reindexed"] is False and "too large" in body["warning"]
        # Read back, the note is too large to edit here: a clear 422, not a server error.
        for url in ("/api/notes/Big.md", "/edit/Big.md"):
            answer = client.get(url)
            assert answer.status_code == 422, url
            assert "Note cannot be edited here: Big.md: too large" in answer.text
