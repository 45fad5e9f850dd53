"""The web view's "why isn't this note here?": a form in the explain view, a page and an API."""

from __future__ import annotations

from starlette.testclient import TestClient

QUERY = "who attended the Atlas kickoff"


def test_the_api_explains_a_note(client: TestClient) -> None:
    answer = client.get("/api/why", params={"q": QUERY, "note": "Leo Fischer", "limit": "5"})
    assert answer.status_code == 200
    payload = answer.json()
    assert payload["path"] == "People/Leo Fischer.md" and payload["reasons"]
    assert set(payload["channels"]) == {"fulltext", "vectors", "graph"}


def test_a_missing_note_is_a_404_naming_the_nearest(client: TestClient) -> None:
    missing = client.get("/api/why", params={"q": QUERY, "note": "Priya Kumr"})
    assert missing.status_code == 404 and "Priya Kumar" in missing.json()["message"]
    assert client.get("/api/why", params={"q": QUERY}).status_code == 400


def test_the_explain_view_offers_the_question_and_names_relations(client: TestClient) -> None:
    results = client.get("/search/results", params={"q": QUERY})
    assert results.status_code == 200
    assert 'class="why-form"' in results.text
    assert "—attended→ Atlas 2026 Kickoff" in results.text
    page = client.get("/why", params={"q": QUERY, "note": "Leo Fischer"})
    assert page.status_code == 200
    assert "Leo Fischer" in page.text and "fusion" in page.text
