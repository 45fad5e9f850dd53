"""A note's text as the TextArea holds it, and back, with no character lost on the way.

Textual's TextArea splits lines with `str.splitlines()`, which also breaks on characters
a note keeps inside a line: form feed, vertical tab, the file/group/record separators,
NEL (U+0085), and the Unicode line and paragraph separators (U+2028, U+2029). A note
holding one would come back from the editor with a line break in its place. The editor
holds a private-use stand-in for each instead (U+F8F0–U+F8F7) and the save puts the
character back.
"""

from __future__ import annotations

BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
STAND_INS = "".join(chr(0xF8F0 + index) for index in range(len(BREAKS)))
_TO_EDITOR = str.maketrans(BREAKS, STAND_INS)
_FROM_EDITOR = str.maketrans(STAND_INS, BREAKS)


class NotEditableHere(ValueError):
    """The note already holds one of the stand-ins: the editor could not tell them apart."""


def to_editor(text: str) -> str:
    """The text the TextArea is given for `text` (LF text from the engine).

    Raises:
        NotEditableHere: `text` holds a stand-in character itself.
    """
    found = next((char for char in STAND_INS if char in text), None)
    if found is not None:
        raise NotEditableHere(
            f"the note holds U+{ord(found):04X}, a private-use character this editor needs for itself; "
            "edit it in another editor"
        )
    return text.translate(_TO_EDITOR)


def from_editor(text: str) -> str:
    """The note's text for the TextArea's `text`: each stand-in back to its character."""
    return text.translate(_FROM_EDITOR)
