"""Which file and folder names can be indexed, and how any name or text is shown on one line.

A name that is not valid UTF-8 reaches Python as lone surrogates (PEP 383): SQLite,
JSON and terminals cannot take them. Control characters (a line break, ESC) break
every one-line listing of paths and can drive the terminal that prints them.
"""

from __future__ import annotations

import re

_NOT_UTF8 = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# The invisible marks that reorder the text around them (bidirectional embeddings,
# overrides, isolates and marks): "evil\u202etxt.md" shows as "evildm.txt". A name or
# message holding one can show as another.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# A name or other input a message repeats is cut to this many characters (a 100 KB "note
# name" made 100 KB error messages and log lines).
SHOWN_CHARS = 200


def brief(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` as a message repeats it: whole when short, else its start and end around an ellipsis."""
    if len(text) <= limit:
        return text
    kept = max(limit - 30, 2)  # room for the count between the two ends
    head, tail = kept - kept // 2, kept // 2
    return f"{text[:head]}… ({len(text) - kept} characters left out) …{text[len(text) - tail :]}"


def has_hidden_control(text: str) -> bool:
    """Whether `text` holds a control character or an invisible mark that reorders text."""
    return bool(_CONTROL.search(text) or _BIDI.search(text))


def name_problem(name: str, *, folder: bool) -> str:
    """Why a file or folder of this name cannot be indexed ("" when it can)."""
    what, then = ("folder name", "its notes are not indexed; rename it") if folder else ("file name", "rename it to index it")
    if _NOT_UTF8.search(name):
        return f"{what} is not valid UTF-8 ({then})"
    if _CONTROL.search(name):
        return f"{what} contains a control character such as a line break ({then})"
    return ""


def path_problem(rel: str) -> str:
    """Why a vault-relative path cannot be indexed because of its names ("" when it can)."""
    parts = rel.split("/")
    for depth, part in enumerate(parts, start=1):
        problem = name_problem(part, folder=depth < len(parts))
        if problem:
            return problem
    return ""


def printable_path(path: str) -> str:
    """A path (or any text) as valid UTF-8 on one line: bytes that are not UTF-8 as \\xNN, control characters escaped.

    `caf\\xe9.md` names the file whose name is the bytes `caf`, 0xE9, `.md`.
    """
    if not _NOT_UTF8.search(path) and not _CONTROL.search(path) and not _BIDI.search(path):
        return path
    out: list[str] = []
    for char in path:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode keeps it
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        elif _CONTROL.match(char):
            out.append(_ESCAPES.get(char, f"\\x{code:02x}"))
        elif _BIDI.match(char):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)
