"""End-to-end tests of the web view in Debian's Chromium, driven by Playwright, with the real model."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import Recorded, Served, make_vault, other_local_server, serve

from engine.api import Engine

CHROMIUM = Path("/usr/bin/chromium")
PAPER = b"%PDF-1.4 not really a paper\n"
ATTACHMENTS_NOTE = """# Attachments

The paper: [[crdt-paper.pdf]]. The diagram, linked: [[sync-architecture.png]].
"""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A live server over a fully indexed vault copy (real embedding model)."""
    base = tmp_path_factory.mktemp("web-browser")
    vault = make_vault(base)
    (vault / "Inbox" / "crdt-paper.pdf").write_bytes(PAPER)
    (vault / "Inbox" / "Attachments.md").write_text(ATTACHMENTS_NOTE, encoding="utf-8")
    engine = Engine.open(vault, index_dir=base / "index")
    engine.reindex()
    try:
        yield from serve(engine, vault)
    finally:
        engine.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield chromium
        chromium.close()


def _ready(page: Any) -> None:
    """Wait until the shell has swapped the real page in and its scripts have run."""
    page.locator("html[data-ready]").wait_for(state="attached")


def _open(page: Any, url: str) -> None:
    page.goto(url)
    _ready(page)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (its own storage)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    context.set_default_timeout(15_000)
    yield context
    context.close()


@pytest.fixture
def page(context: Any, live: Served) -> Iterator[Any]:
    """A fresh page that has opened the printed URL (the shell keeps the token in localStorage)."""
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    _open(tab, live.login_url)
    assert tab.url == f"{live.base}/"
    yield tab
    assert not errors, errors


def _search(page: Any, query: str) -> None:
    box = page.locator("#q")
    box.click()
    box.press_sequentially(query, delay=15)
    _shown(page, query)


def _shown(page: Any, query: str) -> None:
    """Wait until the results shown are those of `query` (any characters, quotes too)."""
    page.wait_for_function(
        "q => document.querySelector('.results-meta')?.dataset.query === q", arg=query
    )


def test_typing_shows_results_with_badges(page: Any, live: Served, tmp_path: Path) -> None:
    _search(page, "offline sync conflicts")
    hits = page.locator("li.hit")
    assert hits.count() >= 3
    first = hits.first
    assert first.locator(".hit-title").inner_text() == "Offline Sync Conflicts"
    badges = first.locator(".hit-meta .badge").all_inner_texts()
    assert any(b.startswith("words “") for b in badges)
    assert any(b.startswith("meaning ") for b in badges)
    assert first.locator(".label").inner_text()
    assert first.locator(".snippet mark").count() > 0
    assert page.url.endswith("/?q=offline%20sync%20conflicts")
    # Only the last keystroke's response is shown, whatever order the responses came in.
    assert page.locator(".results-meta").get_attribute("data-query") == "offline sync conflicts"
    assert not page.locator("table.explain").first.is_visible()
    page.locator("#explain").check()
    # Why each hit is here, in sentences; the engine's numbers one click away, in a fold.
    assert page.locator(".explain-hit ul.reasons li").first.is_visible()
    assert not page.locator("table.explain").first.is_visible()
    first.locator("details.raw summary").click()
    assert page.locator("table.explain").first.is_visible()
    raw = first.locator("details.raw .badge").all_inner_texts()
    assert any(b.startswith("BM25 #") for b in raw) and any(b.startswith("VEC ") for b in raw)
    summary = page.locator(".explain-summary")
    assert "Names in your query:" in summary.inner_text() and "entities recognized" not in summary.inner_text()
    summary.locator("details.raw summary").click()
    assert "entities recognized" in summary.inner_text()
    page.locator("#explain").uncheck()
    page.screenshot(path=str(tmp_path / "search.png"), full_page=True)
    shutil.copyfile(tmp_path / "search.png", "/tmp/cairn-web-search.png")
    assert (tmp_path / "search.png").stat().st_size > 10_000


def test_the_explain_view_s_why_form_opens_the_why_page(page: Any, live: Served) -> None:
    _search(page, "offline sync")
    page.locator("#explain").check()
    page.locator(".why-form input[name=note]").first.fill("Leo Fischer")
    with page.expect_navigation():
        page.locator(".why-form button").first.click()
    page.locator("section.why").wait_for()
    assert "Leo Fischer" in page.locator("section.why h1").inner_text()
    assert page.locator("ul.why-reasons li").count() > 0


def test_chips_say_how_the_query_was_read_and_a_click_removes_one(page: Any, live: Served, tmp_path: Path) -> None:
    _search(page, '"vector tiles" -android')
    chips = page.locator("button.chip")
    assert chips.all_inner_texts() == ['"vector tiles" ×', "-android ×"]
    titles = page.locator("li.hit .hit-title").all_inner_texts()
    assert titles and not any("Android" in title for title in titles)
    page.screenshot(path=str(tmp_path / "chips.png"), full_page=True)
    chips.nth(1).click()
    _shown(page, '"vector tiles"')
    assert page.locator("#q").input_value() == '"vector tiles"'
    assert page.locator("button.chip").all_inner_texts() == ['"vector tiles" ×']


def test_nearest_notes_follow_a_divider(page: Any, live: Served) -> None:
    _search(page, "Fjordvik")
    items = page.locator("#results ol.hits > li")
    classes = [items.nth(i).get_attribute("class") or "" for i in range(items.count())]
    assert "divider" in classes
    cut = classes.index("divider")
    assert cut >= 1 and "no confident match" in items.nth(cut).inner_text()
    assert len(classes) - cut - 1 <= 3  # only a few nearest notes
    assert page.locator("details.syntax summary").inner_text() == "Search syntax"


def test_keyboard_opens_a_result_at_its_passage(page: Any, live: Served) -> None:
    _search(page, "vector tiles offline maps")
    second = page.locator("li.hit").nth(1)
    href = second.get_attribute("data-href")
    assert href and re.search(r"#L\d+$", href)
    page.locator("#q").press("ArrowDown")
    assert "selected" in (second.get_attribute("class") or "")
    page.locator("#q").press("Enter")
    page.wait_for_url(f"{live.base}{href}")
    target = page.locator("#markdown .target-line")
    target.wait_for()
    line = int(href.rsplit("#L", 1)[1])
    assert int(target.get_attribute("data-line")) <= line
    assert target.is_visible()
    in_view = page.evaluate(
        "() => { const r = document.querySelector('.target-line').getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }"
    )
    assert in_view


def test_clicking_a_result_opens_the_note(page: Any, live: Served) -> None:
    _search(page, "CRDT")
    page.locator("li.hit .hit-link").first.click()
    page.wait_for_url(re.compile(r"/note/Glossary/CRDT\.md#L\d+$"))
    assert page.locator("h1.note-title").inner_text() == "CRDT"
    assert page.locator(".backlinks li a").count() > 0
    assert page.locator("a.wikilink").count() > 0


def test_edit_and_save(page: Any, live: Served) -> None:
    path = "Glossary/Tile Pack.md"
    file = live.vault / path
    _open(page, f"{live.base}/note/Glossary/Tile%20Pack.md")
    page.locator("#edit").click()
    page.wait_for_url("**/edit/Glossary/Tile%20Pack.md")
    _ready(page)
    new_text = file.read_text(encoding="utf-8") + "\nTile packs now ship with a zebrafinch manifest.\n"
    page.locator("#text").fill(new_text)
    page.locator("#save").click()
    page.locator('#save-state[data-state="ok"]').wait_for()
    assert page.url == f"{live.base}/edit/Glossary/Tile%20Pack.md", "saving stays in the editor"
    assert file.read_text(encoding="utf-8") == new_text
    page.locator("#close").click()
    page.wait_for_url(f"{live.base}/note/Glossary/Tile%20Pack.md")
    assert "zebrafinch manifest" in page.locator("#markdown").inner_text()
    hits = live.engine.search("zebrafinch", channels=("fulltext",)).hits
    assert [h.path for h in hits] == [path]


def test_conflict_dialog_when_the_file_changed_on_disk(page: Any, live: Served) -> None:
    path = "Glossary/Tombstone.md"
    file = live.vault / path
    _open(page, f"{live.base}/edit/Glossary/Tombstone.md")
    page.locator("#text").fill("my edit from the browser\n")
    elsewhere = file.read_text(encoding="utf-8") + "\nChanged in another editor.\n"
    file.write_text(elsewhere, encoding="utf-8")
    page.locator("#save").click()
    dialog = page.locator("dialog#conflict")
    dialog.wait_for(state="visible")
    assert "changed on disk" in dialog.inner_text()
    assert file.read_text(encoding="utf-8") == elsewhere
    page.locator("#conflict-copy").click()
    page.wait_for_url(re.compile(r"/note/Glossary/Tombstone%20\(conflict%20[^/]+\)\.md$"))
    copies = list((live.vault / "Glossary").glob("Tombstone (conflict *).md"))
    assert len(copies) == 1
    assert copies[0].read_text(encoding="utf-8") == "my edit from the browser\n"
    assert file.read_text(encoding="utf-8") == elsewhere


def test_conflict_overwrite_and_reload(page: Any, live: Served) -> None:
    path = "Glossary/Field Kit.md"
    file = live.vault / path
    _open(page, f"{live.base}/edit/Glossary/Field%20Kit.md")
    page.locator("#text").fill("first attempt\n")
    file.write_text("changed on disk\n", encoding="utf-8")
    page.locator("#save").click()
    page.locator("dialog#conflict").wait_for(state="visible")
    page.locator("#conflict-reload").click()
    assert page.locator("#text").input_value() == "changed on disk\n"
    page.locator("#text").fill("second attempt\n")
    file.write_text("changed on disk again\n", encoding="utf-8")
    page.locator("#save").click()
    page.locator("dialog#conflict").wait_for(state="visible")
    page.locator("#conflict-overwrite").click()
    page.locator('#save-state[data-state="ok"]').wait_for()
    assert file.read_text(encoding="utf-8") == "second attempt\n"


def test_hostile_note_runs_nothing(page: Any, live: Served) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    _open(page, f"{live.base}/note/Inbox/Evil%20Note.md")
    page.locator("#markdown").wait_for()
    assert "<script>window.pwned = 1;" in page.locator("#markdown").inner_text()
    for link in page.locator("#markdown a").all():
        href = link.get_attribute("href") or ""
        assert not href.lower().startswith("javascript:")
    page.locator("#markdown").get_by_text("harmless looking link").click()
    page.locator("#markdown").get_by_text("raw anchor").click()
    assert page.evaluate("() => window.pwned") is None
    assert page.title() != "pwned"
    assert page.title().startswith("Evil Note")
    assert not dialogs


LATE_FETCH = """() => {
  const real = window.fetch.bind(window);
  window.__late = false;
  window.fetch = (url, options) => {
    if (!String(url).includes("q=crdt")) return real(url, options);
    // Answer the superseded query late, ignoring its abort signal (but with the token).
    return new Promise((resolve) => setTimeout(async () => {
      const response = await real(url, { headers: options.headers });
      resolve(new Response(await response.text(), { status: response.status }));
      setTimeout(() => { window.__late = true; }, 50);
    }, 600));
  };
}"""


def test_a_late_response_for_an_old_query_is_ignored(page: Any, live: Served) -> None:
    page.evaluate(LATE_FETCH)
    page.locator("#q").fill("crdt")
    page.locator("#q").fill("tombstone")
    page.locator('.results-meta[data-query="tombstone"]').wait_for()
    page.wait_for_function("() => window.__late === true")
    assert page.locator(".results-meta").get_attribute("data-query") == "tombstone"
    assert page.locator("li.hit .hit-title").first.inner_text() == "Tombstone"


@pytest.fixture
def other_port() -> Iterator[tuple[str, list[Recorded]]]:
    """Another local server, as any other app on 127.0.0.1 could run."""
    yield from other_local_server()


def _leaks(token: str, received: list[Recorded]) -> list[str]:
    return [f"{r.path} {name}: {value}" for r in received for name, value in r.headers.items() if token in value]


def test_the_token_never_reaches_another_local_port(page: Any, live: Served, other_port: tuple[str, list[Recorded]]) -> None:
    other, received = other_port
    page.goto(f"{other}/landing")
    page.wait_for_load_state()
    assert page.title() == "another local app"
    seen_by_script = page.evaluate(
        "() => [document.cookie, JSON.stringify(localStorage), JSON.stringify(sessionStorage)].join(' ')"
    )
    assert live.token not in seen_by_script
    # Following a link from a Cairn page to the other port leaks nothing either (no Referer, no cookie).
    _open(page, f"{live.base}/note/Glossary/CRDT.md")
    page.evaluate(
        "(href) => { const a = document.createElement('a'); a.id = 'away'; a.href = href;"
        " a.textContent = 'away'; document.body.append(a); }",
        f"{other}/followed",
    )
    page.locator("#away").click()
    page.wait_for_url(f"{other}/followed")
    assert {"/landing", "/followed"} <= {r.path for r in received}
    assert not _leaks(live.token, received)
    assert not any("cookie" in r.headers or "authorization" in r.headers for r in received)
    assert page.context.cookies() == []


def test_the_printed_url_leaves_the_token_in_this_origins_storage_only(page: Any, live: Served) -> None:
    assert page.context.cookies() == []
    assert page.evaluate("() => localStorage.getItem('cairn.token')") == live.token
    assert page.evaluate("() => document.cookie") == ""
    # A new tab of the same profile opens pages without the token in its URL.
    other = page.context.new_page()
    _open(other, f"{live.base}/note/Glossary/CRDT.md#L3")
    assert other.locator("h1.note-title").inner_text() == "CRDT"
    assert other.url == f"{live.base}/note/Glossary/CRDT.md#L3"
    other.close()


def test_the_token_may_come_in_the_fragment_and_other_parameters_stay(context: Any, live: Served) -> None:
    tab = context.new_page()
    _open(tab, f"{live.base}/?q=tombstone#token={live.token}")
    assert tab.url == f"{live.base}/?q=tombstone"
    assert tab.locator("li.hit .hit-title").first.inner_text() == "Tombstone"
    _open(tab, f"{live.base}/note/Glossary/CRDT.md?token={live.token}#L3")
    assert tab.url == f"{live.base}/note/Glossary/CRDT.md#L3"
    assert tab.locator("h1.note-title").inner_text() == "CRDT"


@pytest.mark.parametrize("how", ["no token", "wrong token", "stale stored token"])
def test_without_a_valid_token_the_shell_says_to_open_the_printed_url(context: Any, live: Served, how: str) -> None:
    tab = context.new_page()
    if how == "stale stored token":
        _open(tab, f"{live.base}/")
        tab.evaluate("() => localStorage.setItem('cairn.token', 'from-before-a-restart')")
    url = f"{live.base}/note/Glossary/CRDT.md" + ("?token=wrong" if how == "wrong token" else "")
    _open(tab, url)
    message = tab.locator("#shell-token")
    assert message.is_visible()
    assert "Open the URL that cairn web printed" in message.inner_text()
    assert "CRDT" not in tab.content()
    assert tab.evaluate("() => localStorage.getItem('cairn.token')") is None
    assert tab.url == f"{live.base}/note/Glossary/CRDT.md"


def test_note_images_load_through_the_token(page: Any, live: Served, tmp_path: Path) -> None:
    _open(page, f"{live.base}/note/Projects/Atlas/Atlas.md")
    image = page.locator("#markdown img.embed").first
    page.wait_for_function("() => { const i = document.querySelector('#markdown img.embed'); return i && i.complete && i.naturalWidth > 0; }")
    assert (image.get_attribute("src") or "").startswith("blob:")
    assert image.get_attribute("data-file-src") == f"{live.base}/file/Projects/Atlas/sync-architecture.png"
    assert page.evaluate("() => document.querySelector('#markdown img.embed').naturalWidth") == 1
    page.screenshot(path=str(tmp_path / "note.png"), full_page=True)
    shutil.copyfile(tmp_path / "note.png", "/tmp/cairn-web-note.png")


def test_file_links_download_or_open_through_the_token(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/note/Inbox/Attachments.md")
    with page.expect_download() as downloaded:
        page.locator("#markdown a.wikilink", has_text="crdt-paper.pdf").click()
    download = downloaded.value
    assert download.suggested_filename == "crdt-paper.pdf"
    assert Path(download.path()).read_bytes() == PAPER
    with page.context.expect_page() as opened:
        page.locator("#markdown a.wikilink", has_text="sync-architecture.png").click()
    assert opened.value.url.startswith(f"blob:{live.base}/")
    assert page.url == f"{live.base}/note/Inbox/Attachments.md"


def test_the_edit_page_renders_inside_the_shell(page: Any, live: Served, tmp_path: Path) -> None:
    _open(page, f"{live.base}/edit/Glossary/CRDT.md")
    assert page.locator("#text").input_value() == (live.vault / "Glossary/CRDT.md").read_text(encoding="utf-8")
    assert page.evaluate("() => document.activeElement.id") == "text"
    assert page.title() == "Edit CRDT · Cairn"
    page.screenshot(path=str(tmp_path / "edit.png"), full_page=True)
    shutil.copyfile(tmp_path / "edit.png", "/tmp/cairn-web-edit.png")
