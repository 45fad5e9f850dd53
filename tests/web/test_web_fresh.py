"""The web view follows the disk: notes created, edited or deleted in another editor reach it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from starlette.testclient import TestClient
from web_support import BASE_URL, PORT, TOKEN, make_vault

from engine.api import Engine
from engine.embedder import HashEmbedder
from ui.web.server import build_app

DEADLINE_S = 30.0


def eventually(check: Callable[[], bool], what: str) -> None:
    """Poll `check` until it holds; the deadline only bounds a failure, it decides nothing."""
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def paths(client: TestClient, query: str) -> list[str]:
    return [hit["path"] for hit in client.get("/api/search", params={"q": query}).json()["hits"]]


def test_a_note_changed_on_disk_is_served_and_searchable(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        app = build_app(engine, TOKEN, port=PORT)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with TestClient(app, base_url=BASE_URL, headers=headers) as client:
            assert app.state.indexer.wait(timeout=120)
            eventually(lambda: client.get("/api/status").json()["indexing"]["watching"], "the watcher started")

            created = vault / "Inbox" / "Written Elsewhere.md"
            created.write_text("# Written Elsewhere\n\nquetzalcoatlus wingspan notes\n", encoding="utf-8")
            eventually(lambda: "Inbox/Written Elsewhere.md" in paths(client, "quetzalcoatlus"), "a new note found")
            assert client.get("/api/notes/Inbox/Written Elsewhere.md").status_code == 200
            assert client.get("/note/Inbox/Written Elsewhere.md").status_code == 200

            created.write_text("# Written Elsewhere\n\nnow about hadrosaurs\n", encoding="utf-8")
            eventually(lambda: "Inbox/Written Elsewhere.md" in paths(client, "hadrosaurs"), "an edit found")
            assert "Inbox/Written Elsewhere.md" not in paths(client, "quetzalcoatlus")

            created.unlink()
            eventually(lambda: "Inbox/Written Elsewhere.md" not in paths(client, "hadrosaurs"), "a deletion seen")
            assert client.get("/api/notes/Inbox/Written Elsewhere.md").status_code == 404
            notes = {note["path"] for note in client.get("/api/notes").json()["notes"]}
            assert "Inbox/Written Elsewhere.md" not in notes
        # Leaving the app stopped the watcher: nothing runs on the engine about to close.
        assert app.state.indexer.state.watching is False


def test_no_watcher_without_a_reindex_unless_asked(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        app = build_app(engine, TOKEN, port=PORT, reindex=False)
        with TestClient(app, base_url=BASE_URL, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            assert client.get("/api/status").json()["indexing"]["watching"] is False
