"""Split a parsed note's body into heading-aware, overlapping chunks of words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from engine.records import Chunk, ParsedNote

__all__ = ["CHUNKER_VERSION", "chunk_note"]

# Bumped whenever the same settings would cut a note differently: an index whose chunks
# were cut by another version is re-chunked on its next full scan.
CHUNKER_VERSION = 2

_TINY_WORDS = 20
_NON_SPACE = re.compile(r"\S")
_SPACE_RUN = re.compile(r"\s*")
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
# A cut right after a word that ends a sentence (closing quotes/brackets/emphasis allowed).
_SENTENCE_END = re.compile(r"[.!?][\"')\]”’»*_]*(?=\s)")


@lru_cache(maxsize=64)
def _n_words(n: int) -> re.Pattern[str]:
    """A pattern matching exactly n words from a word start (and the spaces between them)."""
    # Words and spaces are disjoint classes, so the regex engine scans linearly, in C.
    return re.compile(rf"\S+(?:\s+\S+){{{n - 1}}}")


@dataclass
class _Section:
    start: int  # offset of the first word
    end: int  # offset just past the last word
    words: int
    path: tuple[str, ...]


@lru_cache(maxsize=32)
def _skip_lines(n: int) -> re.Pattern[str]:
    """A pattern matching exactly n lines (each through its newline)."""
    return re.compile(rf"(?:[^\n]*\n){{{n}}}")


def _line_offset(text: str, pos: int, lines: int) -> int:
    """Offset of the line `lines` lines below the one starting at pos, or -1 past the end."""
    # Skip in power-of-two strides so the scanning happens inside the regex engine.
    while lines > 0:
        step = 1 << (lines.bit_length() - 1)
        m = _skip_lines(step).match(text, pos)
        if m is None:
            return -1
        pos = m.end()
        lines -= step
    return pos


class _LineCounter:
    """1-based line numbers of increasing offsets, counting newlines incrementally."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1

    def line_of(self, pos: int) -> int:
        if pos < self._pos:
            self._pos, self._line = 0, 1
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def _sections(note: ParsedNote, cap: int) -> list[_Section]:
    """The body cut at heading lines, each part trimmed to its words, with its heading path."""
    body = note.body
    bounds: list[tuple[int, tuple[str, ...]]] = [(0, ())]
    stack: list[tuple[int, str]] = []
    line, pos = 0, 0  # 0-based body line and its offset
    for heading in sorted(note.headings, key=lambda h: h.line):
        body_line = heading.line - note.body_line_offset - 1
        if body_line < line:
            continue
        found = _line_offset(body, pos, body_line - line)
        if found < 0:
            break
        line, pos = body_line, found
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        bounds.append((pos, tuple(t for _, t in stack)))

    sections: list[_Section] = []
    for i, (start, path) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else len(body)
        first = _NON_SPACE.search(body, start, end)
        if first is None:
            continue
        text = body[first.start() : end]
        trimmed = text.rstrip()
        sections.append(
            _Section(first.start(), first.start() + len(trimmed), _count_words(trimmed, cap), path)
        )
    return sections


def _count_words(text: str, cap: int) -> int:
    """Words in text, or cap+1 if there are more than cap (huge sections are not counted)."""
    # maxsplit stops the split early, so a 5 MB section costs no more than a short one.
    return min(len(text.split(None, cap + 1)), cap + 1)


def chunk_note(note: ParsedNote, max_words: int = 180, overlap_words: int = 30) -> list[Chunk]:
    """Cut a note's body into chunks at headings, windowing long sections with overlap."""
    body = note.body
    if not body or body.isspace():
        return []
    max_words = max(1, max_words)
    overlap_words = max(0, min(overlap_words, max_words - 1))

    # Tiny sections (a title, a heading and a line) join the next one, labelled with the
    # headings both share, so that no chunk is mostly heading noise; a long section they
    # join is then windowed from their start.
    merged: list[_Section] = []
    for sec in _sections(note, max_words):
        if merged:
            cur = merged[-1]
            if cur.words < _TINY_WORDS:
                cur.end = sec.end
                cur.words += sec.words
                cur.path = _common_prefix(cur.path, sec.path)
                continue
        merged.append(sec)

    chunks: list[Chunk] = []
    offset = note.body_line_offset
    # Chunk starts and ends each increase, so counting newlines incrementally is linear.
    start_lines, end_lines = _LineCounter(body), _LineCounter(body)

    def emit(start: int, end: int, path: tuple[str, ...]) -> None:
        chunks.append(
            Chunk(
                ordinal=len(chunks),
                text=body[start:end],
                heading_path=path,
                char_start=start,
                char_end=end,
                line_start=start_lines.line_of(start) + offset,
                line_end=end_lines.line_of(end - 1) + offset,
            )
        )

    full = _n_words(max_words)
    half = _n_words(max(1, max_words // 2))
    for sec in merged:
        if sec.words <= max_words:
            emit(sec.start, sec.end, sec.path)
            continue
        pos = sec.start
        while True:
            window = full.match(body, pos, sec.end)
            if window is None or window.end() >= sec.end:
                emit(pos, sec.end, sec.path)
                break
            floor = half.match(body, pos, sec.end)
            low = floor.end() if floor is not None else window.end()
            cut = _best_cut(body, low, window.end())
            emit(pos, cut, sec.path)
            pos = _overlap_start(body, pos, cut, overlap_words, max(1, max_words // 2))
    return chunks


def _best_cut(body: str, low: int, high: int) -> int:
    """Where to end a window, between two word ends: a paragraph end, else a sentence end."""
    # Look a little past `high` so that the blank line after the last word is seen.
    spaces = _SPACE_RUN.match(body, high)
    space_end = spaces.end() if spaces is not None else high
    # A blank line (two newlines with only blanks between) ends a paragraph; take the last.
    para = -1
    for m in _BLANK_LINE.finditer(body, low, space_end):
        para = m.start()
    if para >= 0:
        # The end of the last word before the blank line; `low` itself is a word end.
        return low + len(body[low:para].rstrip())
    last = -1
    for m in _SENTENCE_END.finditer(body, low - 1, high):
        last = m.end()
    return last if last >= low else high


def _overlap_start(body: str, start: int, cut: int, overlap: int, min_words: int) -> int:
    """Start of the next window: `overlap` words before `cut`, always after `start`."""
    text = body[start:cut]
    # A window holds at least min_words words; count only when overlap could exceed that.
    k = overlap if overlap < min_words else min(overlap, len(text.split()) - 1)
    if k <= 0:
        nxt = _NON_SPACE.search(body, cut)
        return nxt.start() if nxt is not None else cut
    head, *tail = text.rsplit(None, k)
    # `head` keeps everything before the whitespace that precedes the first tail word.
    return body.find(tail[0], start + len(head))
