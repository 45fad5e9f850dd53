"""The web view's "why isn't this note here?" (a form in the explain view, a page, an API) and the search API's graph knobs."""

from __future__ import annotations

from starlette.testclient import TestClient

QUERY = "who attended the Atlas kickoff"


def test_the_api_explains_a_note(client: TestClient) -> None:
    answer = client.get("/api/why", params={"q": QUERY, "note": "Leo Fischer", "limit": "5"})
    assert answer.status_code == 200
    payload = answer.json()
    assert payload["path"] == "People/Leo Fischer.md" and payload["reasons"]
    assert set(payload["channels"]) == {"fulltext", "vectors", "graph"}


def test_the_api_explains_the_search_as_asked(client: TestClient) -> None:
    # The same graph knobs as /api/search: without the graph, the graph casts no vote for the note.
    plain = client.get("/api/why", params={"q": QUERY, "note": "Priya Kumar", "limit": "5"}).json()
    assert plain["channels"]["graph"]["vote"] > 0
    asked = client.get("/api/why", params={"q": QUERY, "note": "Priya Kumar", "limit": "5", "graph_weight": "0"})
    assert asked.status_code == 200 and asked.json()["channels"]["graph"]["vote"] == 0
    for bad in ({"graph_weight": "-1"}, {"max_hops": "x"}, {"graph_seeding": "x"}):
        assert client.get("/api/why", params={"q": QUERY, "note": "Priya Kumar", **bad}).status_code == 400


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
    assert "Leo Fischer" in page.text and "fusion counts" in page.text  # in the raw fold


def test_the_note_page_names_a_neighbour_s_relation(client: TestClient) -> None:
    page = client.get("/note/People/Priya Kumar.md")
    assert page.status_code == 200
    assert '<span class="relation">Priya Kumar —attended→ Atlas 2026 Kickoff</span>' in page.text
    # A property that holds a link is a relation of its own ("owner: [[Priya Kumar]]" in Atlas).
    assert '<span class="relation">Atlas —owner→ Priya Kumar</span>' in page.text


def test_the_search_api_takes_the_graph_knobs(client: TestClient) -> None:
    plain = client.get("/api/search", params={"q": QUERY}).json()
    assert any(hit["graph_boost"] > 0 for hit in plain["hits"])
    without = client.get("/api/search", params={"q": QUERY, "graph_weight": "0", "max_hops": "1", "graph_seeding": "both"})
    assert without.status_code == 200
    assert all(hit["graph_boost"] == 0 for hit in without.json()["hits"])
    for bad in ({"graph_weight": "-1"}, {"graph_weight": "inf"}, {"graph_weight": "1e308"}, {"max_hops": "two"}, {"graph_seeding": "x"}):
        assert client.get("/api/search", params={"q": QUERY, **bad}).status_code == 400


def test_a_typo_in_the_why_form_offers_the_nearest_notes_not_an_error(client: TestClient) -> None:
    page = client.get("/why", params={"q": QUERY, "note": "Priya Kumr"})
    assert page.status_code == 404
    assert "No note is named “Priya Kumr”" in page.text and "Engine error" not in page.text
    # Each offer is the same question about the note it names, and the form comes again.
    assert "/why?q=who%20attended%20the%20Atlas%20kickoff&amp;note=People/Priya%20Kumar.md" in page.text
    assert 'class="why-form"' in page.text and 'value="Priya Kumr"' in page.text
    missing = client.get("/api/why", params={"q": QUERY, "note": "Priya Kumr"}).json()
    assert missing["nearest"][0] == {"path": "People/Priya Kumar.md", "title": "Priya Kumar"}


def test_the_note_picker_api_offers_titles_and_aliases_as_typed(client: TestClient) -> None:
    choices = client.get("/api/notes", params={"q": "prkm"}).json()["choices"]
    assert choices[0]["path"] == "People/Priya Kumar.md" and choices[0]["how"] == "letters"
    assert client.get("/api/notes", params={"q": ""}).json() == {"choices": []}
    assert "notes" in client.get("/api/notes").json()  # without q: every note, as before


def test_the_why_page_speaks_plainly_and_keeps_the_numbers_in_a_fold(client: TestClient) -> None:
    page = client.get("/why", params={"q": QUERY, "note": "Leo Fischer"}).text
    plain, _, raw = page.partition('<details class="raw">')
    assert "by links" in plain and "vote" not in plain and "fused score" not in plain
    assert "fused score" in raw and "vote" in raw
