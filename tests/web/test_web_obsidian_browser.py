"""The web view over the Obsidian fixture vault in Debian's Chromium: reading, browsing, editing, narrow windows.

Screenshots of the same callout, embed and table as the TUI snapshots are written to
/tmp/cairn-captures/ (docs/captures/ holds the ones the docs cite).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from vault_copy import copy_vault
from web_support import Served, serve

from engine.api import Engine
from engine.embedder import HashEmbedder

CHROMIUM = Path("/usr/bin/chromium")
FIXTURE = Path(__file__).resolve().parent.parent / "data" / "obsidian_vault"
CAPTURES = Path("/tmp/cairn-captures")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("web-obsidian-browser")
    vault = copy_vault(FIXTURE, base / "vault")
    engine = Engine.open(vault, index_dir=base / "index", embedder=HashEmbedder())
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


def _tab(browser: Any, live: Served, width: int, height: int = 900) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme="light")
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    _open(page, live.login_url)
    return page


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.locator("html[data-ready]").wait_for(state="attached")


@pytest.fixture
def page(browser: Any, live: Served) -> Iterator[Any]:
    tab = _tab(browser, live, 1280)
    yield tab
    assert not tab.errors, tab.errors
    tab.context.close()


def test_saving_with_ctrl_s_stays_in_the_editor_and_says_saved(page: Any, live: Served) -> None:
    file = live.vault / "Cycle B.md"
    _open(page, f"{live.base}/edit/Cycle%20B.md")
    text = file.read_text(encoding="utf-8") + "\nSaved from the browser with the keyboard.\n"
    page.locator("#text").fill(text)
    page.locator("#text").press("Control+s")
    page.locator('#save-state[data-state="ok"]').wait_for()
    assert page.locator("#save-state").inner_text() == "Saved"
    assert page.url == f"{live.base}/edit/Cycle%20B.md"
    assert page.evaluate("() => document.activeElement.id") == "text"
    assert file.read_text(encoding="utf-8") == text
    page.locator("#close").click()
    page.wait_for_url(f"{live.base}/note/Cycle%20B.md")


def test_the_conflict_dialog_focuses_keep_editing(page: Any, live: Served) -> None:
    file = live.vault / "Cycle A.md"
    _open(page, f"{live.base}/edit/Cycle%20A.md")
    page.locator("#text").fill("my edit from the browser\n")
    elsewhere = file.read_text(encoding="utf-8") + "\nChanged in another editor.\n"
    file.write_text(elsewhere, encoding="utf-8")
    page.locator("#save").click()
    page.locator("dialog#conflict").wait_for(state="visible")
    assert page.evaluate("() => document.activeElement.id") == "conflict-cancel"
    page.keyboard.press("Enter")
    page.locator("dialog#conflict").wait_for(state="hidden")
    assert page.locator("#text").input_value() == "my edit from the browser\n"
    assert file.read_text(encoding="utf-8") == elsewhere


def test_a_new_note_from_the_notes_page(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/notes")
    page.locator("#new-title").fill("Browser note")
    page.locator("#new-folder").fill("Projects")
    page.locator("#new-note-form button[type=submit]").click()
    page.wait_for_url(f"{live.base}/edit/Projects/Browser%20note.md")
    assert (live.vault / "Projects" / "Browser note.md").read_text(encoding="utf-8") == "# Browser note\n\n"


def test_the_tree_filters_as_you_type_and_enter_opens_the_first_match(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/notes")
    page.locator("#tree-filter").fill("priya")
    shown = page.locator("#note-tree li.note:visible")
    assert shown.count() == 1 and shown.first.inner_text() == "Priya Kumar"
    page.locator("#tree-filter").press("Enter")
    page.wait_for_url(f"{live.base}/note/People/Priya%20Kumar.md")
    page.wait_for_selector(".sidebar ul.links")  # the shell fetches the page with the token first
    assert [a.inner_text() for a in page.locator(".sidebar ul.links > li > a").all()] == ["Form Builder", "Callouts", "Formatting"]


def test_block_and_heading_links_scroll_to_their_target(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/note/Linking.md")
    page.locator('#markdown a:text-is("Linking > ^b15695")').click()
    target = page.locator("#markdown .target-line")
    target.wait_for()
    assert target.get_attribute("id") == "^b15695"
    page.locator("#markdown a:text-is(\"this note's next section\")").click()
    page.wait_for_function("() => document.querySelector('#markdown .target-line').id === 'h-link-to-a-block'")


def test_a_folded_callout_opens_on_a_click(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/note/Callouts.md")
    tip = page.locator('details.callout[data-callout="tip"]')
    assert tip.get_attribute("open") is None
    assert not page.get_by_text("The body of a folded tip").is_visible()
    tip.locator("summary").click()
    assert page.get_by_text("The body of a folded tip").is_visible()


def test_done_tasks_are_struck_through_and_open_ones_are_not(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/note/Formatting.md")
    decoration = "(e) => getComputedStyle(e).textDecorationLine"
    items = page.locator("#markdown li.task-list-item")
    assert [items.nth(i).evaluate(decoration) for i in range(items.count())] == ["none", "line-through", "line-through"]


_TOO_WIDE = """(width) => Array.from(document.querySelectorAll('body *'))
  .filter((e) => e.getBoundingClientRect().right > width + 0.5 && !e.closest('pre, .table-wrap'))
  .map((e) => `${e.tagName}.${e.className}`).slice(0, 8)"""
NARROW_PAGES = ["/", "/?q=callout", "/note/Callouts.md", "/note/Embeds.md", "/note/Formatting.md", "/notes", "/edit/Formatting.md"]


@pytest.mark.parametrize("width", [390, 700])
def test_no_page_is_wider_than_a_narrow_window(browser: Any, live: Served, width: int) -> None:
    tab = _tab(browser, live, width, 800)
    try:
        for url in NARROW_PAGES:
            _open(tab, f"{live.base}{url}")
            widths = tab.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            assert widths[0] <= widths[1], f"{url} at {width}px: {widths[0]} px wide: {tab.evaluate(_TOO_WIDE, width)}"
        _open(tab, f"{live.base}/?q=callout")
        box = tab.locator("label.toggle").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, "the explain toggle is whole"
        tab.locator("#explain").check()
        tab.locator("li.hit details.raw summary").first.click()  # the numbers are one click away
        assert tab.locator("table.explain").first.is_visible()
        widths = tab.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], "explain tables scroll inside the page"
        assert not tab.errors, tab.errors
    finally:
        tab.context.close()


CAPTURED = {
    "callouts": ("/note/Callouts.md", 'details.callout[data-callout="tip"]'),
    "embeds": ("/note/Embeds.md", "#markdown .embed"),
    "table": ("/note/Formatting.md#h-tables", "#markdown .table-wrap"),
}


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("name", list(CAPTURED))
def test_capture_the_callout_embed_and_table(browser: Any, live: Served, name: str, width: int, tmp_path: Path) -> None:
    url, shown = CAPTURED[name]
    tab = _tab(browser, live, width, 900)
    try:
        _open(tab, f"{live.base}{url}")
        tab.locator(shown).first.scroll_into_view_if_needed()
        if name == "callouts":
            tab.evaluate("() => window.scrollTo(0, document.querySelector('.callout').getBoundingClientRect().top + window.scrollY - 80)")
        target = tmp_path / f"web-{name}-{width}.png"
        # The note's column, as tall as a screen: what the capture is about, small enough to keep.
        box = tab.locator("article.note").bounding_box()
        assert box is not None
        clip = {"x": 0, "y": 0, "width": min(box["x"] + box["width"] + 16, width), "height": 760}
        tab.screenshot(path=str(target), clip=clip)
        assert target.stat().st_size > 10_000
        CAPTURES.mkdir(exist_ok=True)
        shutil.copyfile(target, CAPTURES / target.name)
        assert not tab.errors, tab.errors
    finally:
        tab.context.close()
