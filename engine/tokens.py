"""The word grammar the index and the query share: terms, compound words, scripts, CJK runs.

A *term* is what a query splits into and what the full-text analyzer reads: word
pieces joined by `.`, `@`, `'`, `’` or `-` (`pubspec.yaml`, `user@example.com`,
`v1.5.2`, `state-of-the-art`), or a letter with `++` or `#` (`C++`, `C#`). Within a
term, `'`, `’` and `-` separate words, as prose uses them; `.`, `@` and `_` join the
parts of a *compound* (a file name, an address, a version, an identifier), which the
analyzer indexes whole and by its parts.

Pure text functions, linear in their input (each a regex scan or one pass): the
full-text analyzer (engine/channels/analysis.py), the query parser and the entity
dictionary all read words through them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Literal

__all__ = [
    "CJK_CLASS",
    "TERM",
    "Script",
    "cjk_runs",
    "compound_parts",
    "has_cjk",
    "is_cjk",
    "is_compound",
    "script_of",
    "words_of_term",
]


def _char_class(points: Iterable[int]) -> str:
    """A regex character class body of the given code points, as ranges."""
    ordered = sorted(set(points))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        lo, hi = re.escape(chr(ordered[i])), re.escape(chr(ordered[j]))
        parts.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "".join(parts)


# Combining marks (Arabic harakat, Devanagari vowel signs, a decomposed accent) are not
# `\w` to `re`; inside a word they belong to it, or "مُلاحَظة" would fall apart at each mark.
_MARKS = _char_class(c for c in range(0x300, 0x10000) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me"))
_PIECE = rf"\w[\w{_MARKS}]*"
TERM = re.compile(rf"[A-Za-z]#(?![\w#])|{_PIECE}(?:[.@'’\-]{_PIECE})*(?:\+\+(?![\w+]))?")
_WORD_BREAK = re.compile(r"['’\-]+")
_COMPOUND_JOINS = re.compile(r"[.@_]|\+\+$|#$")
_ATOM_BREAK = re.compile(r"[.@_+#]+")
_NUMBER = re.compile(r"[0-9.]+")

# Han, kana, Hangul and the marks that live among them (ー, 々, 〆): scripts written
# without spaces between words, so their runs are read as overlapping character pairs.
_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3041, 0x30FF),  # Hiragana, Katakana (ー is 30FC)
    (0x3105, 0x312F),  # Bopomofo
    (0x3131, 0x318E),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xD7B0, 0xD7FF),  # Hangul Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana (NFKC makes most of them full-width)
    (0x20000, 0x3FFFF),  # CJK Extensions B and later
)
# The body of a regex character class of those characters.
CJK_CLASS = "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in _CJK_RANGES)
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_HAS_CJK = re.compile(f"[{CJK_CLASS}]")

Script = Literal["latin", "cyrillic", "greek", "arabic", "other"]
_SCRIPT_RANGES: tuple[tuple[int, int, Script], ...] = (
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"),
    (0x08A0, 0x08FF, "arabic"),
    (0x1C80, 0x1C8F, "cyrillic"),
    (0x1F00, 0x1FFF, "greek"),
    (0x2DE0, 0x2DFF, "cyrillic"),
    (0xA640, 0xA69F, "cyrillic"),
    (0xFB50, 0xFDFF, "arabic"),
    (0xFE70, 0xFEFF, "arabic"),
)


def words_of_term(term: str) -> list[str]:
    """The words of a term: split at apostrophes and hyphens, edge underscores dropped."""
    words = []
    for piece in _WORD_BREAK.split(term):
        word = piece.strip("_")
        if word:
            words.append(word)
    return words


def is_compound(word: str) -> bool:
    """Whether a word joins parts with `.`, `@` or `_`, or ends in `++` / `#` (C++, C#)."""
    return _COMPOUND_JOINS.search(word) is not None


def compound_parts(word: str) -> list[str]:
    """The parts a compound is also found by: each side of an `@` that is itself a
    compound (`example.com`), then every atom (`user`, `example`, `com`). A number
    (`3.14`, `10.0.0.1`) is one value and has no parts."""
    if _NUMBER.fullmatch(word):
        return []
    parts: list[str] = []
    if "@" in word:
        parts.extend(side for side in word.split("@") if side and is_compound(side))
    parts.extend(atom for atom in _ATOM_BREAK.split(word) if atom)
    return parts


def is_cjk(char: str) -> bool:
    """Whether a character is Han, kana or Hangul (written without spaces between words)."""
    return _HAS_CJK.match(char) is not None


def has_cjk(text: str) -> bool:
    """Whether any character of `text` is Han, kana or Hangul."""
    return _HAS_CJK.search(text) is not None


def cjk_runs(word: str) -> Iterator[tuple[bool, str]]:
    """A word split into alternating runs: (True, CJK run) and (False, anything else)."""
    if _HAS_CJK.search(word) is None:
        yield False, word
        return
    at = 0
    for match in _CJK_RUN.finditer(word):
        if match.start() > at:
            yield False, word[at : match.start()]
        yield True, match.group()
        at = match.end()
    if at < len(word):
        yield False, word[at:]


def script_of(word: str) -> Script:
    """The script of a word's first letter outside ASCII, `latin` for ASCII and Latin letters."""
    if word.isascii():
        return "latin"
    for char in word:
        if char.isascii() or not char.isalpha():
            continue
        code = ord(char)
        if code < 0x0370:
            return "latin"
        for lo, hi, script in _SCRIPT_RANGES:
            if lo <= code <= hi:
                return script
        return "latin" if 0x1E00 <= code <= 0x1EFF else "other"
    return "latin"
