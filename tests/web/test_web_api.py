"""The web view's JSON API and pages through Starlette's TestClient."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_support import client_for, make_vault

from engine.api import Engine
from engine.embedder import HashEmbedder
from engine.present import results_to_json


def _without_timings(payload: dict[str, Any]) -> dict[str, Any]:
    channels = {name: {k: v for k, v in ch.items() if k != "ms"} for name, ch in payload["channels"].items()}
    return {**{k: v for k, v in payload.items() if k != "ms"}, "channels": channels}


def test_search_api_is_the_cli_json_shape(client: TestClient, shared_engine: Engine) -> None:
    response = client.get("/api/search", params={"q": "offline sync conflicts", "limit": 5})
    assert response.status_code == 200
    expected = results_to_json(shared_engine.search("offline sync conflicts", limit=5, as_you_type=False))
    assert _without_timings(response.json()) == _without_timings(expected)
    assert response.json()["hits"][0]["path"] == "Projects/Atlas/Offline Sync Conflicts.md"


def test_search_api_channels_and_limit(client: TestClient) -> None:
    payload = client.get("/api/search", params={"q": "atlas", "limit": 3, "channels": "fulltext"}).json()
    assert set(payload["channels"]) == {"fulltext"}
    assert 0 < len(payload["hits"]) <= 3
    assert all(set(hit["channels"]) == {"fulltext"} for hit in payload["hits"])
    assert client.get("/api/search", params={"q": "atlas", "channels": "bogus"}).status_code == 400
    assert client.get("/api/search", params={"q": "atlas", "limit": "many"}).status_code == 400


def test_status_api(client: TestClient) -> None:
    payload = client.get("/api/status").json()
    assert payload["notes"] == 64
    assert payload["vectors"]["status"] == "ok"
    assert payload["indexing"]["running"] is False


def test_status_api_says_what_is_embedded_and_how_long_the_rest_takes(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        engine.reindex(embed=False)
        payload = client_for(engine).get("/api/status").json()
        assert payload["backlog"]["texts"] == payload["chunks"] > 0
        assert payload["backlog"]["eta_s"] is None  # nothing measured yet
        assert payload["vectors_text"].startswith("vectors 0% · ") and "chunks to embed" in payload["vectors_text"]
        engine.embed_pending()
        payload = client_for(engine).get("/api/status").json()
        assert payload["backlog"] is None and payload["vectors_text"] == "vectors ready"


def test_note_api_returns_text_sha_links_backlinks(client: TestClient, shared_engine: Engine) -> None:
    response = client.get("/api/notes/Projects/Atlas/Atlas.md")
    assert response.status_code == 200
    note = response.json()
    data = (shared_engine.vault / "Projects/Atlas/Atlas.md").read_bytes()
    assert note["text"] == data.decode("utf-8")
    assert note["sha"] == hashlib.sha256(data).hexdigest()
    assert note["title"] == "Atlas"
    resolved = {link["target"]: link["resolved"] for link in note["links"]}
    assert resolved["sync-architecture.png"] == "Projects/Atlas/sync-architecture.png"
    assert any(b["path"] == "Projects/Project Index.md" for b in note["backlinks"])
    assert client.get("/api/notes/Nope/Missing.md").status_code == 404
    listing = client.get("/api/notes").json()["notes"]
    assert {"path": "Projects/Atlas/Atlas.md", "title": "Atlas"} in listing


def test_put_saves_atomically_and_reindexes(writer: TestClient, fresh_engine: Engine) -> None:
    path = "Glossary/Tombstone.md"
    note = writer.get(f"/api/notes/{path}").json()
    text = note["text"] + "\nThe quokkafish protocol retires tombstones.\n"
    response = writer.put(f"/api/notes/{path}", json={"text": text, "expected_sha": note["sha"]})
    assert response.status_code == 200, response.text
    assert (fresh_engine.vault / path).read_text(encoding="utf-8") == text
    assert response.json()["sha"] == hashlib.sha256(text.encode()).hexdigest()
    hits = writer.get("/api/search", params={"q": "quokkafish", "channels": "fulltext"}).json()["hits"]
    assert [h["path"] for h in hits] == [path]
    assert not list((fresh_engine.vault / "Glossary").glob(".*.tmp"))


def test_put_conflict_is_409_and_writes_nothing(writer: TestClient, fresh_engine: Engine) -> None:
    path = "Glossary/CRDT.md"
    loaded = writer.get(f"/api/notes/{path}").json()
    on_disk = loaded["text"] + "\nEdited elsewhere.\n"
    (fresh_engine.vault / path).write_text(on_disk, encoding="utf-8")
    response = writer.put(f"/api/notes/{path}", json={"text": "mine", "expected_sha": loaded["sha"]})
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "conflict"
    assert body["current_text"] == on_disk
    assert body["current_sha"] == hashlib.sha256(on_disk.encode()).hexdigest()
    assert body["copy_path"].startswith("Glossary/CRDT (conflict ")
    assert (fresh_engine.vault / path).read_text(encoding="utf-8") == on_disk
    # Overwriting on purpose sends the sha the conflict reported; a copy is a create (null sha).
    again = writer.put(f"/api/notes/{path}", json={"text": "mine", "expected_sha": body["current_sha"]})
    assert again.status_code == 200
    copy = writer.put(f"/api/notes/{body['copy_path']}", json={"text": "copy", "expected_sha": None})
    assert copy.status_code == 200
    assert (fresh_engine.vault / body["copy_path"]).read_text(encoding="utf-8") == "copy"


def test_put_with_null_sha_never_replaces_an_existing_note(writer: TestClient, fresh_engine: Engine) -> None:
    before = (fresh_engine.vault / "Glossary/CRDT.md").read_text(encoding="utf-8")
    response = writer.put("/api/notes/Glossary/CRDT.md", json={"text": "x", "expected_sha": None})
    assert response.status_code == 409
    assert (fresh_engine.vault / "Glossary/CRDT.md").read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"text": "x"}', b'{"text": 3, "expected_sha": null}', b'{"text": "x", "expected_sha": 5}'],
)
def test_put_rejects_malformed_bodies(client: TestClient, body: bytes) -> None:
    response = client.put("/api/notes/Glossary/CRDT.md", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400


def test_put_only_writes_markdown(writer: TestClient, fresh_engine: Engine) -> None:
    response = writer.put("/api/notes/evil.js", json={"text": "alert(1)", "expected_sha": None})
    assert response.status_code == 400
    assert not (fresh_engine.vault / "evil.js").exists()


# -- pages -----------------------------------------------------------------------------
def test_search_page_renders_results_with_badges(client: TestClient) -> None:
    response = client.get("/", params={"q": "CRDT"})
    assert response.status_code == 200
    html = response.text
    assert 'class="hit selected"' in html
    assert 'class="badge badge-bm25">BM25 #1 &quot;crdt&quot;</span>' in html
    assert "label-exact_title_match" in html
    assert "<mark>CRDT</mark>" in html
    assert "entities recognized" in html  # the explain view
    fragment = client.get("/search/results", params={"q": "CRDT"}).text
    assert fragment.count('<li class="hit') >= 2
    assert "<html" not in fragment
    assert "asks for" not in html  # "CRDT" names no kind of note


def test_the_explain_view_says_which_kind_a_query_asks_for(client: TestClient) -> None:
    html = client.get("/", params={"q": "people who work on sync"}).text
    assert "asks for: people (others rank lower)" in html


def test_the_explain_view_says_how_the_word_being_typed_was_searched(client: TestClient) -> None:
    typing = client.get("/", params={"q": "crdt tombst", "typing": "1"}).text
    assert "While you type: \u201ctombst\u201d searched by meaning as \u201ctombstone\u201d." in typing
    assert "searched by meaning" not in client.get("/", params={"q": "crdt tombst"}).text  # a whole query
    # A slip in the word being typed: the chip says how it was read, and the vectors read it so.
    slip = client.get("/", params={"q": "crdt tobmst", "typing": "1"}).text
    assert "tobmst → tombstone" in slip
    assert "While you type: “tobmst” searched by meaning as “tombstone”." in slip


def test_search_page_says_when_vectors_are_unavailable(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        html = client_for(engine).get("/search/results", params={"q": "atlas"}).text
    assert "Vector search is unavailable" in html


def test_search_page_says_when_vectors_are_still_embedding(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        engine.reindex(embed=False)
        html = client_for(engine).get("/search/results", params={"q": "atlas"}).text
    assert "Vector search is still embedding" in html


def test_note_page_renders_markdown_links_images_and_line_anchors(client: TestClient) -> None:
    response = client.get("/note/Projects/Atlas/Atlas.md")
    assert response.status_code == 200
    html = response.text
    assert '<h1 data-line="' in html
    assert re.search(r'<p data-line="\d+"', html)
    assert '<img class="embed" src="/file/Projects/Atlas/sync-architecture.png"' in html
    assert 'href="/note/Projects/Atlas/Sync%20Engine.md"' in html
    assert "Backlinks" in html and "Project Index" in html
    assert "Entity neighbors" in html and "Related" in html
    assert 'href="/graph/Projects/Atlas/Atlas.md"' in html
    graph = client.get("/graph/Projects/Atlas/Atlas.md")
    assert graph.status_code == 200 and "Graph neighborhood" in graph.text
    edit = client.get("/edit/Projects/Atlas/Atlas.md")
    assert edit.status_code == 200 and 'id="conflict"' in edit.text


def test_file_route_serves_images_inline_and_everything_else_as_download(client: TestClient) -> None:
    image = client.get("/file/Projects/Atlas/sync-architecture.png")
    assert image.status_code == 200
    assert image.headers["content-type"] == "image/png"
    assert "sandbox" in image.headers["content-security-policy"]
    note = client.get("/file/Glossary/CRDT.md")
    assert note.headers["content-type"] == "application/octet-stream"
    assert note.headers["content-disposition"].startswith("attachment")


def test_pages_carry_a_strict_csp_and_no_inline_script(client: TestClient) -> None:
    for url in ("/", "/?q=atlas", "/note/Projects/Atlas/Atlas.md", "/edit/Glossary/CRDT.md", "/graph/Glossary/CRDT.md"):
        response = client.get(url)
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        scripts = re.findall(r"<script\b[^>]*>", response.text)
        assert scripts and all(" src=" in tag for tag in scripts)
        assert not re.search(r"<script\b[^>]*>[^<]+</script>", response.text)
