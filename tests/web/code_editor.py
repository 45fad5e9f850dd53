"""Driving the web view's note editor (CodeMirror, in a shadow root over the hidden textarea) in
Chromium as a person does: a click into the text, keys, typing; reading back what it shows."""

from __future__ import annotations

from typing import Any

# CodeMirror ignores Enter for 75 ms after a suggestion list opens (its `interactionDelay`), so a
# fast typist's Enter never takes a suggestion by accident. A person reads the list first; the
# tests wait at least as long after the list shows: a lower bound, so no machine is too slow for it.
READING_THE_LIST_MS = 150


def editor_text(page: Any) -> str:
    """The text the editor holds, through its public getter (window.cairnEditor)."""
    text: str = page.evaluate("() => window.cairnEditor.getText()")
    return text


def editor_focused(page: Any) -> bool:
    """Whether the keyboard goes to the editor's text (inside its shadow root)."""
    focused: bool = page.evaluate(
        """() => {
            const host = document.activeElement;
            return host?.id === "code-editor" && !!host.shadowRoot.activeElement?.classList.contains("cm-content");
        }"""
    )
    return focused


def type_at_end(page: Any, text: str) -> None:
    """Click into the text, go to its end (ctrl+end) and type `text` key by key."""
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)


def retype(page: Any, text: str) -> None:
    """Click into the text, select all of it (ctrl+a) and type `text` over it."""
    page.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type(text)


def take_suggestion(page: Any, label: str) -> None:
    """Wait until the suggestion list, answered for what was typed last, has `label` selected; press Enter."""
    # A list still waiting for the newest answer is marked disabled and takes no Enter.
    page.locator(
        ".cm-tooltip-autocomplete:not(.cm-tooltip-autocomplete-disabled) li[aria-selected]", has_text=label
    ).wait_for()
    page.wait_for_timeout(READING_THE_LIST_MS)
    page.keyboard.press("Enter")
