"""Reading and writing as in Obsidian, in Debian's Chromium: the editor's `[[` completion and preview,
find in note, embeds (math, mermaid, sound, PDF, canvas), the local graph, tags, attachments,
and no page wider than the window at 390, 768 and 1280 px."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from code_editor import take_suggestion, type_at_end
from media_files import canvas_json, one_page_pdf, short_wav
from vault_copy import copy_vault
from web_support import Served, serve

from engine.api import Engine
from engine.embedder import HashEmbedder

CHROMIUM = Path("/usr/bin/chromium")
FIXTURE = Path(__file__).resolve().parent.parent / "data" / "obsidian_vault"
CAPTURES = Path("/tmp/cairn-captures")
SHOWCASE = """# Showcase

Open ![[Diagram.png#icon]] **Settings**.

![[Handbook.pdf]]

![[talk.wav]]

![[Plan.canvas]]

Inline $e^{i\\pi} + 1 = 0$ and a block:

$$
\\int_0^1 x^2\\,dx
$$

```mermaid
graph TD
  A[Write] --> B[Link]
```
"""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("web-reading")
    vault = copy_vault(FIXTURE, base / "vault")
    (vault / "Attachments" / "Handbook.pdf").write_bytes(one_page_pdf())
    (vault / "Attachments" / "talk.wav").write_bytes(short_wav())
    (vault / "Attachments" / "Plan.canvas").write_text(canvas_json("Linking.md"), encoding="utf-8")
    (vault / "Showcase.md").write_text(SHOWCASE, encoding="utf-8")
    # A hub with an odd number of links: two of them sit either side of the bottom of the ring.
    (vault / "Topics").mkdir()
    for number in range(1, 18):
        (vault / "Topics" / f"Topic number {number:02}.md").write_text(f"# Topic number {number:02}\n", encoding="utf-8")
    hub = "".join(f"- [[Topic number {number:02}]]\n" for number in range(1, 18))
    (vault / "Hub.md").write_text(f"# Hub\n\n{hub}", encoding="utf-8")
    (vault / ".obsidian").mkdir()
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
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        yield chromium
        chromium.close()


def _tab(browser: Any, live: Served, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme="light")
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
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


def test_typing_a_link_completes_it_and_saving_keeps_the_protocol(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/edit/Cycle%20A.md")
    file = live.vault / "Cycle A.md"
    before = file.read_bytes()
    # `[[` closes itself (`]]` after the cursor), as in Obsidian; the suggestion goes between.
    type_at_end(page, "\nSee [[Form Bui")
    take_suggestion(page, "Form Builder")
    page.keyboard.type(" next.")
    page.keyboard.press("Control+s")
    page.locator('#save-state[data-state="ok"]').wait_for()
    assert file.read_bytes() == before + b"\nSee [[Form Builder]] next."


def test_the_preview_shows_the_text_as_the_note_page_does(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/edit/Cycle%20B.md")
    page.locator("#preview-toggle").click()
    page.locator("#preview[data-rendered]").wait_for()
    assert page.locator("#preview h1").count() >= 1


def test_find_in_note_counts_and_steps_through_matches(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/note/Showcase.md")
    page.keyboard.press("Control+f")
    page.locator("#find-input").fill("x")
    count = page.locator("#find-count")
    first = count.inner_text()
    assert first.startswith("1 of ")
    page.locator("#find-input").press("Enter")
    assert count.inner_text().startswith("2 of ")
    page.locator("#find-input").press("Escape")
    assert page.locator("#find-bar").is_hidden()


def test_embeds_are_drawn(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/note/Showcase.md")
    page.locator("#markdown[data-enhanced]").wait_for(state="attached")
    assert page.locator(".math-inline .katex").count() == 1
    assert page.locator(".math-display .katex-display").count() == 1
    assert page.locator(".mermaid svg").count() == 1
    assert page.locator(".embed-file audio").count() == 1
    assert page.locator(".embed-file iframe.pdf").count() == 1
    assert page.locator(".canvas-card").count() == 4
    assert page.locator("img.icon").count() == 1
    assert page.locator("#open-obsidian").get_attribute("href").startswith("obsidian://open?vault=")
    page.screenshot(path=str(CAPTURES / "web-showcase-1280.png"), full_page=True)


def test_the_local_graph_is_a_clickable_picture(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/graph/Linking.md")
    nodes = page.locator("svg.local-graph a.graph-node")
    assert nodes.count() > 1
    page.screenshot(path=str(CAPTURES / "web-graph-1280.png"))
    other = page.locator('svg.local-graph a.graph-node:not([data-role="center"])').first
    href = other.get_attribute("href")
    other.locator("text").click()
    page.wait_for_url(f"{live.base}{href}")


def test_no_two_labels_of_the_local_graph_overlap(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/graph/Hub.md")
    boxes = page.evaluate(
        """() => Array.from(document.querySelectorAll("svg.local-graph .node-label"), (label) => {
            const box = label.getBoundingClientRect();
            return [label.textContent, box.left, box.top, box.right, box.bottom];
        })"""
    )
    assert len(boxes) == 18
    for index, (name, left, top, right, bottom) in enumerate(boxes):
        for other, left2, top2, right2, bottom2 in boxes[index + 1 :]:
            apart = right <= left2 or right2 <= left or bottom <= top2 or bottom2 <= top
            assert apart, f"{name!r} and {other!r} are drawn over each other"


def test_tags_and_attachments_are_listed(page: Any, live: Served) -> None:
    _open(page, f"{live.base}/tags")
    assert page.locator(".tag-row").count() >= 1
    _open(page, f"{live.base}/notes")
    assert page.locator('li.file[data-kind="pdf"]').count() == 1
    assert page.locator('li.file[data-kind="canvas"]').count() == 1


@pytest.mark.parametrize("width", [390, 768, 1280])
def test_no_page_is_wider_than_the_window(browser: Any, live: Served, width: int) -> None:
    tab = _tab(browser, live, width)
    try:
        for url in ("/note/Showcase.md", "/edit/Showcase.md", "/graph/Linking.md", "/tags", "/notes"):
            _open(tab, f"{live.base}{url}")
            # Measured once what the page draws after loading (math, diagrams, players, the editor) is in.
            drawn = {"note": "#markdown[data-enhanced]", "edit": ".cm-content"}.get(url.split("/")[1])
            if drawn:
                tab.locator(drawn).wait_for(state="attached")
            wide, window = tab.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
            assert wide <= window, f"{url} at {width} px is {wide} px wide"
        _open(tab, f"{live.base}/note/Showcase.md")
        tab.locator("#markdown[data-enhanced]").wait_for(state="attached")
        tab.screenshot(path=str(CAPTURES / f"web-showcase-{width}.png"))
    finally:
        tab.context.close()


@pytest.fixture(scope="module", autouse=True)
def _captures() -> None:
    CAPTURES.mkdir(parents=True, exist_ok=True)
