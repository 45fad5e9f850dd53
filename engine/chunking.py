"""Split a parsed note's body into heading-aware, overlapping chunks of words."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from engine.records import Chunk, ParsedNote

__all__ = ["chunk_note"]

_WORD = re.compile(r"\S+")
_TINY_WORDS = 20
_SENTENCE_END = frozenset(".!?")
_CLOSERS = frozenset("\"')]”’»*_")


@dataclass
class _Section:
    first_word: int
    end_word: int  # exclusive
    path: tuple[str, ...]

    @property
    def words(self) -> int:
        return self.end_word - self.first_word


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def chunk_note(note: ParsedNote, max_words: int = 180, overlap_words: int = 30) -> list[Chunk]:
    """Cut a note's body into chunks at headings, windowing long sections with overlap."""
    body = note.body
    if not body or body.isspace():
        return []
    max_words = max(1, max_words)
    overlap_words = max(0, min(overlap_words, max_words - 1))
    line_starts = _line_starts(body)

    starts: list[int] = []
    ends: list[int] = []
    for m in _WORD.finditer(body):
        s, e = m.span()
        starts.append(s)
        ends.append(e)
    n_words = len(starts)
    if n_words == 0:
        return []

    # Section boundaries (char offsets) with the heading path that applies from there on.
    bounds: list[tuple[int, tuple[str, ...]]] = [(0, ())]
    stack: list[tuple[int, str]] = []
    for heading in sorted(note.headings, key=lambda h: h.line):
        body_line = heading.line - note.body_line_offset - 1
        if not 0 <= body_line < len(line_starts):
            continue
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        bounds.append((line_starts[body_line], tuple(t for _, t in stack)))

    sections: list[_Section] = []
    for i, (char_start, path) in enumerate(bounds):
        first = bisect.bisect_left(starts, char_start)
        end = bisect.bisect_left(starts, bounds[i + 1][0]) if i + 1 < len(bounds) else n_words
        if end > first:
            sections.append(_Section(first, end, path))

    # Tiny sections (a heading and a line) join the next one when the result still fits,
    # labelled with the headings both share, so that no chunk is mostly heading noise.
    merged: list[_Section] = []
    for sec in sections:
        if merged:
            cur = merged[-1]
            if (
                cur.words < _TINY_WORDS
                and cur.end_word == sec.first_word
                and cur.words + sec.words <= max_words
            ):
                cur.end_word = sec.end_word
                cur.path = _common_prefix(cur.path, sec.path)
                continue
        merged.append(sec)

    chunks: list[Chunk] = []
    offset = note.body_line_offset

    def emit(first: int, end: int, path: tuple[str, ...]) -> None:
        char_start = starts[first]
        char_end = ends[end - 1]
        line_start = bisect.bisect_right(line_starts, char_start) + offset
        line_end = bisect.bisect_right(line_starts, char_end - 1) + offset
        chunks.append(
            Chunk(
                ordinal=len(chunks),
                text=body[char_start:char_end],
                heading_path=path,
                char_start=char_start,
                char_end=char_end,
                line_start=line_start,
                line_end=line_end,
            )
        )

    for sec in merged:
        i = sec.first_word
        while True:
            if sec.end_word - i <= max_words:
                emit(i, sec.end_word, sec.path)
                break
            end = _best_cut(body, starts, ends, i, i + max_words)
            emit(i, end, sec.path)
            i = max(end - overlap_words, i + 1)
    return chunks


def _best_cut(body: str, starts: list[int], ends: list[int], first: int, limit: int) -> int:
    """Exclusive word index to end a window at: a paragraph end, else a sentence end, else limit."""
    floor = first + max(1, (limit - first) // 2)
    sentence = 0
    for k in range(limit - 1, floor - 1, -1):
        # Words k and k+1 exist because the section is longer than the window.
        if body.count("\n", ends[k], starts[k + 1]) >= 2:
            return k + 1
        if not sentence and _ends_sentence(body, starts[k], ends[k]):
            sentence = k + 1
    return sentence or limit


def _ends_sentence(body: str, start: int, end: int) -> bool:
    j = end - 1
    while j > start and body[j] in _CLOSERS:
        j -= 1
    return body[j] in _SENTENCE_END
