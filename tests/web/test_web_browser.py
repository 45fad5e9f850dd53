"""End-to-end tests of the web view in Debian's Chromium, driven by Playwright, with the real model."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import Served, make_vault, serve

from engine.api import Engine

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A live server over a fully indexed vault copy (real embedding model)."""
    base = tmp_path_factory.mktemp("web-browser")
    vault = make_vault(base)
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


@pytest.fixture
def page(browser: Any, live: Served) -> Iterator[Any]:
    """A fresh page that has logged in with the printed URL (the token moves into a cookie)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(live.login_url)
    assert tab.url == f"{live.base}/"
    yield tab
    context.close()
    assert not errors, errors


def _search(page: Any, query: str) -> None:
    box = page.locator("#q")
    box.click()
    box.press_sequentially(query, delay=15)
    page.locator(f'.results-meta[data-query="{query}"]').wait_for()


def test_typing_shows_results_with_badges(page: Any, live: Served, tmp_path: Path) -> None:
    _search(page, "offline sync conflicts")
    hits = page.locator("li.hit")
    assert hits.count() >= 3
    first = hits.first
    assert first.locator(".hit-title").inner_text() == "Offline Sync Conflicts"
    badges = first.locator(".badge").all_inner_texts()
    assert any(b.startswith("BM25 #") for b in badges)
    assert any(b.startswith("VEC ") for b in badges)
    assert first.locator(".label").inner_text()
    assert first.locator(".snippet mark").count() > 0
    assert page.url.endswith("/?q=offline%20sync%20conflicts")
    # Only the last keystroke's response is shown, whatever order the responses came in.
    assert page.locator(".results-meta").get_attribute("data-query") == "offline sync conflicts"
    assert not page.locator("table.explain").first.is_visible()
    page.locator("#explain").check()
    assert page.locator("table.explain").first.is_visible()
    assert "entities recognized" in page.locator(".explain-summary").inner_text()
    page.locator("#explain").uncheck()
    page.screenshot(path=str(tmp_path / "search.png"), full_page=True)
    shutil.copyfile(tmp_path / "search.png", "/tmp/cairn-web-search.png")
    assert (tmp_path / "search.png").stat().st_size > 10_000


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
    page.goto(f"{live.base}/note/Glossary/Tile%20Pack.md")
    page.locator("#edit").click()
    page.wait_for_url("**/edit/Glossary/Tile%20Pack.md")
    new_text = file.read_text(encoding="utf-8") + "\nTile packs now ship with a zebrafinch manifest.\n"
    page.locator("#text").fill(new_text)
    page.locator("#save").click()
    page.wait_for_url(f"{live.base}/note/Glossary/Tile%20Pack.md")
    assert file.read_text(encoding="utf-8") == new_text
    assert "zebrafinch manifest" in page.locator("#markdown").inner_text()
    hits = live.engine.search("zebrafinch", channels=("fulltext",)).hits
    assert [h.path for h in hits] == [path]


def test_conflict_dialog_when_the_file_changed_on_disk(page: Any, live: Served) -> None:
    path = "Glossary/Tombstone.md"
    file = live.vault / path
    page.goto(f"{live.base}/edit/Glossary/Tombstone.md")
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
    page.goto(f"{live.base}/edit/Glossary/Field%20Kit.md")
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
    page.wait_for_url(f"{live.base}/note/Glossary/Field%20Kit.md")
    assert file.read_text(encoding="utf-8") == "second attempt\n"


def test_hostile_note_runs_nothing(page: Any, live: Served) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{live.base}/note/Inbox/Evil%20Note.md")
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
    // Answer the superseded query late, ignoring its abort signal.
    return new Promise((resolve) => setTimeout(async () => {
      const response = await real(url);
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
