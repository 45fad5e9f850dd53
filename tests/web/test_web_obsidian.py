"""The web view over the Obsidian fixture vault: notes rendered as Obsidian shows them, browsing, new notes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from vault_copy import copy_vault
from web_support import BASE_URL, TOKEN, client_for

from engine.api import Engine
from engine.embedder import HashEmbedder

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "obsidian_vault"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("web-obsidian")
    vault = copy_vault(FIXTURE, base / "vault")
    opened = Engine.open(vault, index_dir=base / "index", embedder=HashEmbedder())
    opened.reindex()
    yield opened
    opened.close()


@pytest.fixture
def client(engine: Engine) -> TestClient:
    return client_for(engine)


def _page(client: TestClient, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.text
    return response.text


def test_callouts_render_with_type_title_colour_and_fold(client: TestClient) -> None:
    html = _page(client, "/note/Callouts.md")
    assert html.count('class="callout"') == 9
    assert re.search(r'<div class="callout" data-callout="info" data-tone="blue" data-kind="info"[^>]*>\s*<div class="callout-title"', html)
    folded = re.search(r'<details class="callout" data-callout="tip"[^>]*>', html)
    assert folded and " open" not in folded.group(0), "`-` starts folded"
    opened = re.search(r'<details class="callout" data-callout="warning"[^>]*>', html)
    assert opened and opened.group(0).endswith(" open>"), "`+` starts open"
    assert 'data-callout="note" data-tone="blue" data-kind="custom-type"' in html
    assert 'data-kind="faq"' in html and "[!" not in html.split('<div class="markdown"')[1]
    assert '<span class="callout-title-inner">Here\'s a callout title</span>' in html
    assert "<mark class=\"highlight\">highlights</mark>" in html


def test_embeds_show_sections_images_and_files(client: TestClient) -> None:
    html = _page(client, "/note/Embeds.md")
    assert html.count('class="embed"') >= 6
    assert '<a class="wikilink" href="/note/Linking.md#h-link-to-a-heading">Linking &gt; Link to a heading</a>' in html
    title = '<div class="embed-title"><span class="embed-mark" aria-hidden="true">↳</span> '
    # An embedded block is its text alone, as Obsidian shows it: no `Linking > ^b15695` title, a small mark opens it.
    assert f'{title}<a class="wikilink" href="/note/Linking.md#%5Eb15695">' not in html
    block = html.split('<a class="embed-open" href="/note/Linking.md#%5Eb15695"', 1)[1]
    assert '<div class="embed-content">\n<p>Learn how to link notes, headings and blocks.</p>' in block.split("</div></div>", 1)[0]
    assert '<img class="embed" src="/file/Attachments/Diagram.png" alt="Diagram.png" width="100">' in html
    assert '<img class="embed" src="/file/Attachments/Diagram.png" alt="Diagram.png" width="100" height="60">' in html
    assert 'data-kind="pdf" data-file-src="/file/Attachments/Handbook.pdf"' in html
    # A Markdown image's size is its size, not its caption; an outside image is a link named by its file.
    assert '<img src="/file/Attachments/Diagram.png" alt="Diagram" width="80">' in html
    assert 'href="https://example.com/images/Engelbart.jpg" rel="noopener noreferrer">🖼 Engelbart.jpg · 250 px</a>' in html
    assert "not shown again: it embeds itself" in html and "no such note" in html
    assert "no “No such heading” in it" in html
    # What an embed shows carries no line anchors of this page (they are another file's lines).
    inside = html.split('<div class="embed-content">', 1)[1].split("</div></div>", 1)[0]
    assert "data-line" not in inside


def test_code_block_ids_comments_tasks_footnotes_math_tables(client: TestClient) -> None:
    html = _page(client, "/note/Formatting.md")
    body = html.split('<div class="markdown"', 1)[1]
    assert "<code>[[Three laws of motion]]</code>" in body and "Three laws of motion</a>" not in body
    assert 'class="tag" href="/?q=%23formatting/inline">#formatting/inline</a>' in body
    assert "#not-a-tag" in body and "?q=%23not-a-tag" not in body
    assert "nobody sees this" not in body and "block comment" not in body
    assert "Ingrid Holm<br />\nNotes: Marcus" in body, "a single line break stays a break"
    assert body.count('type="checkbox"') == 3 and body.count('checked="checked"') == 2
    assert '<sup class="footnote-ref"><a href="#fn-1">1</a></sup>' in body and 'id="fn-1"' in body
    assert '<code class="math">e^{i\\pi} + 1 = 0</code>' in body and '<pre class="math"' in body
    assert "money like $5 and $10 stays text." in body
    assert '<div class="table-wrap"><table' in body and "<td>a | b</td>" in body
    assert '<a class="wikilink" href="/note/Linking.md">an aliased link</a>' in body
    linking = _page(client, "/note/Linking.md")
    assert 'id="^b15695"' in linking and "^b15695</p>" not in linking
    assert '<li data-line="14" id="^list-item">' in linking


def test_the_note_page_lists_links_by_title_and_says_when_a_title_is_shared(client: TestClient) -> None:
    html = _page(client, "/note/People/Priya%20Kumar.md")
    links = html.split("<h2>Links", 1)[1].split("</ul>", 1)[0]
    titles = re.findall(r'title="[^"]+">([^<]+)</a>', links)
    assert titles == ["Form Builder", "Callouts", "Formatting"]
    copy = _page(client, "/note/Projects/Form%20Builder%20(copy).md")
    assert 'Another note has this title: <a href="/note/Projects/Form%20Builder.md">Projects/Form Builder.md</a>' in copy


def test_the_notes_page_has_a_tree_recent_notes_and_a_new_note_form(client: TestClient) -> None:
    html = _page(client, "/notes")
    assert '<li class="folder"><details><summary>People/</summary>' in html
    assert 'data-search="people/priya kumar.md priya kumar"' in html
    assert '<span class="path">Projects/Form Builder (copy).md</span>' in html, "shared titles show paths"
    assert 'id="new-note-form"' in html and '<option value="Projects"></option>' in html
    assert "Recently changed" in html
    home = _page(client, "/")
    assert "Recently changed" in home and 'href="/notes"' in home


def test_the_notes_page_opens_through_the_shell(engine: Engine) -> None:
    anonymous = client_for(engine, authorized=False)
    response = anonymous.get("/notes")
    assert response.status_code == 200 and "shell.js" in response.text and "Priya" not in response.text


def test_a_new_note_is_created_through_the_engine(engine: Engine, client: TestClient) -> None:
    response = client.post("/api/notes", json={"title": "Meeting with Priya", "folder": "People"})
    assert response.status_code == 201, response.text
    assert response.json()["path"] == "People/Meeting with Priya.md"
    assert (engine.vault / "People" / "Meeting with Priya.md").read_text(encoding="utf-8") == "# Meeting with Priya\n\n"
    assert "People/Meeting with Priya.md" in dict(engine.notes())
    again = client.post("/api/notes", json={"title": "Meeting with Priya", "folder": "People"})
    assert again.status_code == 409 and again.json()["error"] == "exists"
    for body in ({"title": ""}, {"folder": "x"}, {"title": "x", "folder": "../out"}, {"title": "x", "folder": ".git"}):
        assert client.post("/api/notes", json=body).status_code == 400, body
    assert client.post("/api/notes", content=b"not json").status_code == 400
    other = TestClient(client.app, base_url=BASE_URL, headers={"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.test"})
    assert other.post("/api/notes", json={"title": "Evil"}).status_code == 403
    assert not (engine.vault / "Evil.md").exists()


def test_the_notes_page_lists_every_note_before_the_first_index(tmp_path: Path) -> None:
    vault = copy_vault(FIXTURE, tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as fresh:
        assert fresh.notes() == [], "nothing is indexed yet"
        html = _page(client_for(fresh), "/notes")
    assert 'data-search="people/priya kumar.md priya kumar"' in html
    assert html.count('<li class="note"') == sum(1 for _ in vault.rglob("*.md"))


def test_results_name_each_note_by_its_path_too(client: TestClient) -> None:
    html = _page(client, "/?q=form+builder")
    assert '<span class="hit-path">Projects/Form Builder.md</span>' in html
    assert '<span class="hit-path">Projects/Form Builder (copy).md</span>' in html
