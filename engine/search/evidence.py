"""Why a note matched: the evidence label and the highlighted best passage."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from engine.catalog import Catalog, StoredChunk
from engine.config import FusionConfig
from engine.records import ChannelEvidence, ChannelName, EvidenceLabel, Snippet
from engine.vault.links import WikiParts, shown_links

SNIPPET_CHARS = 280
_MAX_CHUNKS_SCANNED = 200
_WORD = re.compile(r"\w[\w'’\-]*", re.UNICODE)
# No part of a link may hold `[`, as in the parser (engine/vault.py): a scan from one
# `[` then stops at the next, so a run of brackets is read in linear time (a class that
# let `[` through would rescan the rest of the line from every bracket).
_HEADING_MARK = re.compile(r"^#{1,6}[ \t]+", re.MULTILINE)


def choose_label(
    channels: Mapping[ChannelName, ChannelEvidence],
    *,
    exact_title: bool,
    alias: bool,
    all_terms_matched: bool,
    config: FusionConfig,
    content_matched: bool = True,
) -> EvidenceLabel:
    """The single strongest reason a note is in the results.

    `high_vector_match` uses the raw cosine, never the fused score.
    """
    if exact_title:
        return "exact_title_match"
    if alias:
        return "alias_hit"
    fulltext = channels.get("fulltext")
    vectors = channels.get("vectors")
    graph = channels.get("graph")
    if fulltext is not None and all_terms_matched:
        return "keyword_exact"
    if vectors is not None and vectors.score >= config.high_vector_cosine:
        return "high_vector_match"
    if graph is not None and len(graph.graph_path) > 1:
        return "graph_neighbor"
    if fulltext is not None and content_matched:
        return "keyword_exact"
    return "weak_semantic"


def build_snippet(
    chunks: Sequence[StoredChunk],
    *,
    matches: Callable[[str], bool],
    hint_terms: Sequence[str],
    preferred_chunk_id: int | None = None,
) -> Snippet:
    """The best chunk of a note, cut to a window around its matches, highlighted.

    Args:
        chunks: the note's chunks in order.
        matches: whether a word of the text matches the query (stem or prefix).
        hint_terms: lowercase stems/prefixes used to pick the chunk cheaply.
        preferred_chunk_id: the vector channel's best chunk, used when no word matches.
    """
    if not chunks:
        return Snippet(text="", heading="", line=1)
    scanned = chunks[:_MAX_CHUNKS_SCANNED]
    preferred = next((c for c in chunks if c.id == preferred_chunk_id), None)
    best = preferred or chunks[0]
    best_key = (0, 0, 0)
    for stored in scanned:
        lowered = _lowered(stored.chunk.text)
        distinct = sum(1 for term in hint_terms if term in lowered)
        if not distinct:
            continue
        # Most distinct query words first; among equals the vector channel's best chunk
        # (it read the passage as a whole), then the most occurrences.
        key = (distinct, int(stored is preferred), sum(lowered.count(term) for term in hint_terms))
        if key > best_key:
            best, best_key = stored, key
    return _window(best, matches)


class NoteChunks:
    """The chunks of the notes a page of results shows, kept across keystrokes.

    Typing a query shows mostly the same notes keystroke after keystroke; their chunks are
    read from the catalog once, and again only after the catalog changed (its generation).
    """

    def __init__(self, catalog: Catalog, keep: int = 512) -> None:
        self._catalog = catalog
        self._keep = keep
        self._generation = -1
        self._chunks: OrderedDict[str, list[StoredChunk]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        """Each note's chunks in order (a note without chunks maps to nothing)."""
        generation = self._catalog.generation
        with self._lock:
            if generation != self._generation:
                self._chunks.clear()
                self._generation = generation
            known = {path: self._chunks[path] for path in paths if path in self._chunks}
            for path in known:
                self._chunks.move_to_end(path)
        missing = [path for path in paths if path not in known]
        fetched = self._catalog.chunks_of_notes(missing) if missing else {}
        with self._lock:
            if generation == self._generation:
                for path in missing:
                    self._chunks[path] = fetched.get(path, [])
                while len(self._chunks) > self._keep:
                    self._chunks.popitem(last=False)
        found = {**known, **fetched}
        return {path: found[path] for path in paths if found.get(path)}


def readable(text: str) -> str:
    """Markdown source as a reader sees it: links by their shown text, no heading marks.

    Newlines are kept, so line arithmetic on the result still matches the file.
    """
    return _HEADING_MARK.sub("", shown_links(text, _shown))


def _shown(parts: WikiParts) -> str:
    """A wikilink as a passage shows it: its display, else `Note > Heading` (or what there is)."""
    if parts.display:
        return parts.display
    fragment = parts.heading or parts.block
    if fragment and parts.target:
        return f"{parts.target} > {fragment}"
    return fragment or parts.target


# Typing repeats the same notes keystroke after keystroke: their chunks' lowercased text
# and words are kept (keyed by the text, so an edited chunk is a new entry). The words of
# a chunk take ~10 KB: 1,024 of them are a few pages of results.
@lru_cache(maxsize=4096)
def _lowered(text: str) -> str:
    return text.lower()


@lru_cache(maxsize=1024)
def _words(text: str) -> tuple[str, tuple[tuple[int, int, str], ...]]:
    """A chunk as a reader sees it, and its words with their spans in that text."""
    shown = readable(text)
    return shown, tuple((m.start(), m.end(), m.group(0)) for m in _WORD.finditer(shown))


def _window(stored: StoredChunk, matches: Callable[[str], bool]) -> Snippet:
    text, words = _words(stored.chunk.text)
    spans: list[tuple[int, int]] = []
    start, end = 0, len(text)
    for word_start, word_end, word in words:
        if word_start >= end:
            break  # past the window: nothing more to show
        if not matches(word):
            continue
        if not spans:
            # The window starts a little before the first match and is SNIPPET_CHARS long.
            if word_start > SNIPPET_CHARS // 3:
                start = _word_start(text, word_start - SNIPPET_CHARS // 4)
            end = min(len(text), start + SNIPPET_CHARS)
        spans.append((word_start, word_end))
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):
        cut = text.rfind(" ", start, end)
        end = cut if cut > start + SNIPPET_CHARS // 2 else end
    window = text[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    shift = len(prefix) - start
    highlights = tuple((a + shift, b + shift) for a, b in spans if a >= start and b <= end)
    first = spans[0][0] if spans else 0
    line = stored.chunk.line_start + text.count("\n", 0, first)
    flat = prefix + window + suffix
    return Snippet(
        text=flat,
        heading=" > ".join(stored.chunk.heading_path),
        line=line,
        highlights=highlights,
    )


def _word_start(text: str, position: int) -> int:
    """The start of the word at `position`, or `position` itself inside a very long word."""
    position = max(0, position)
    # Not further back than half a window: the window must still hold the match after
    # a 64 KB run of brackets, which is one "word".
    space = text.rfind(" ", max(0, position - SNIPPET_CHARS // 2), position)
    if space >= 0:
        return space + 1
    return 0 if position <= SNIPPET_CHARS // 2 else position
