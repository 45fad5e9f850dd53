"""The editor's stand-ins: every character the TextArea would split a line on comes back."""

from __future__ import annotations

import pytest
from textual.document._document import Document

from ui.editor_text import BREAKS, NotEditableHere, from_editor, to_editor


def test_every_character_splitlines_breaks_on_is_kept_and_comes_back() -> None:
    text = "a" + "b".join(BREAKS) + "c\nd\n"
    held = to_editor(text)
    assert Document(held).line_count == 3  # only the real newlines split lines
    assert from_editor(Document(held).text) == text
    breaking = {chr(code) for code in range(0x3000) if len(f"x{chr(code)}y".splitlines()) == 2}
    assert breaking == set("\n\r" + BREAKS), "every character str.splitlines breaks on has a stand-in"


def test_a_note_holding_a_stand_in_is_not_opened_in_the_editor() -> None:
    with pytest.raises(NotEditableHere, match="U\\+F8F1"):
        to_editor("uses \uf8f1 itself\n")
