"""Why a note matched: the evidence label and the highlighted best passage."""

from __future__ import annotations

import difflib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

from engine.catalog import Catalog, StoredChunk
from engine.config import FusionConfig
from engine.folding import entity_key
from engine.records import ChannelEvidence, ChannelName, CreateSafety, EvidenceLabel, Snippet
from engine.vault.plain import NO_FENCE, Fence, fence_after, plain_text

SNIPPET_CHARS = 280
_MAX_CHUNKS_SCANNED = 200
_WORD = re.compile(r"\w[\w'’\-]*", re.UNICODE)


def choose_label(
    channels: Mapping[ChannelName, ChannelEvidence],
    *,
    exact_title: bool,
    alias: bool,
    all_terms_matched: bool,
    config: FusionConfig,
    entity_matched: bool = False,
) -> EvidenceLabel:
    """The single strongest reason a note is in the results.

    `high_vector_match` uses the raw cosine, never the fused score. A note whose text
    holds the entity the query names is a keyword match, not the graph's neighbour; and
    a note full text found is never `weak_semantic`.
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
    if vectors is not None and vectors.score >= config.confidence.high_cosine:
        return "high_vector_match"
    if fulltext is not None and entity_matched:
        return "keyword_partial"
    if graph is not None and len(graph.graph_path) > 1:
        return "graph_neighbor"
    if fulltext is not None:
        return "keyword_partial"
    return "weak_semantic"


def best_chunk(
    chunks: Sequence[StoredChunk],
    hint_terms: Sequence[str],
    preferred_chunk_id: int | None = None,
    phrases: Sequence[str] = (),
) -> StoredChunk:
    """The chunk of a note that holds the query's phrases, then most distinct query words (the
    vector channel's best chunk among equals, and when none holds any), then most occurrences;
    `chunks` is not empty."""
    scanned = chunks[:_MAX_CHUNKS_SCANNED]
    preferred = next((c for c in chunks if c.id == preferred_chunk_id), None)
    best = preferred or chunks[0]
    best_key = (0, 0, 0, 0)
    patterns = _phrase_patterns(phrases)
    for stored in scanned:
        lowered = _lowered(stored.chunk.text)
        distinct = sum(1 for term in hint_terms if term in lowered)
        if not distinct:
            continue
        held = sum(1 for pattern in patterns if pattern.search(_shown(stored.chunk.text))) if patterns else 0
        # The phrases first, then most distinct query words; among equals the vector
        # channel's best chunk (it read the passage as a whole), then the most occurrences.
        key = (held, distinct, int(stored is preferred), sum(lowered.count(term) for term in hint_terms))
        if key > best_key:
            best, best_key = stored, key
    return best


def build_snippet(
    chunks: Sequence[StoredChunk],
    *,
    matches: Callable[[str], bool],
    hint_terms: Sequence[str],
    preferred_chunk_id: int | None = None,
    phrases: Sequence[str] = (),
) -> Snippet:
    """The best chunk of a note, cut to a window around its matches, highlighted.

    Args:
        chunks: the note's chunks in order.
        matches: whether a word of the text matches the query (stem or prefix).
        hint_terms: lowercase stems/prefixes used to pick the chunk cheaply.
        preferred_chunk_id: the vector channel's best chunk, used when no word matches.
        phrases: the query's required phrases: a chunk holding them is shown first, and
            the window opens on the phrase, highlighted whole.
    """
    if not chunks:
        return Snippet(text="", heading="", line=1)
    patterns = _phrase_patterns(phrases)
    chosen = best_chunk(chunks, hint_terms, preferred_chunk_id, phrases)
    return _window(chosen, matches, patterns, fence_before(chunks, chosen))


def fence_before(chunks: Sequence[StoredChunk], chosen: StoredChunk) -> Fence:
    """The code fence `chosen` starts inside, read from the note's chunks before it.

    Chunks are cut by words, so one may start in the middle of a code block: read alone,
    its closing fence would open one and show the text after it as code.
    """
    fence = NO_FENCE
    for stored, following in pairwise(chunks):
        if stored is chosen:
            break
        # Chunks overlap: read each only up to where the next begins.
        upto = following.chunk.char_start - stored.chunk.char_start
        fence = fence_after(stored.chunk.text[: max(0, upto)], fence)
    return fence


def _phrase_patterns(phrases: Sequence[str]) -> list[re.Pattern[str]]:
    return [pattern for pattern in map(_phrase_pattern, phrases) if pattern is not None]


@lru_cache(maxsize=256)
def _phrase_pattern(phrase: str) -> re.Pattern[str] | None:
    """A phrase's words in order, any blanks between them, whole words, any case."""
    words = phrase.split()
    if not words:
        return None
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)


# Names this close (difflib's ratio of the normalised strings) are probably the same note.
_PROBABLE_RATIO = 0.8
# Only this much of a query and a title is compared (difflib is quadratic).
_COMPARED_CHARS = 200


def create_safety(asked: str, title: str, aliases: Sequence[str], *, exact: bool) -> CreateSafety:
    """Whether a note named as the query says already exists: this one (`exists`: its title or
    alias is the query), probably this one (`probable`: nearly the same name, or one name holds
    the other, at least half as long, as whole words), or nothing says so (`unknown`).

    `asked` is the query as `normalized_name` reads it.
    """
    if exact:
        return "exists"
    if not asked:
        return "unknown"
    for name in (title, *aliases):
        known = normalized_name(name)
        if not known:
            continue
        # The ratio is at most 2·min/(sum) of the lengths, and quick_ratio bounds it from the
        # letters alone: most titles are ruled out before the quadratic comparison.
        if 2 * min(len(asked), len(known)) >= _PROBABLE_RATIO * (len(asked) + len(known)):
            matcher = difflib.SequenceMatcher(None, asked, known, autojunk=False)
            if matcher.quick_ratio() >= _PROBABLE_RATIO and matcher.ratio() >= _PROBABLE_RATIO:
                return "probable"
        shorter, longer = (asked, known) if len(asked) <= len(known) else (known, asked)
        if len(shorter) >= max(4, len(longer) // 2) and _holds_words(longer, shorter):
            return "probable"
    return "unknown"


@lru_cache(maxsize=8192)
def normalized_name(name: str) -> str:
    """A name as create_safety compares it: `folding.entity_key`, cut to the compared length."""
    return entity_key(name)[:_COMPARED_CHARS]


def _holds_words(text: str, part: str) -> bool:
    """Whether `part` occurs in `text` as whole words."""
    at = text.find(part)
    while at >= 0:
        end = at + len(part)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(part, at + 1)
    return False


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


def readable(text: str, fence: Fence = NO_FENCE) -> str:
    """Markdown source as a reader sees it (engine/vault/plain.py): links by their shown text,
    no heading, quote, list or emphasis marks, no fences, comments or block ids.

    Newlines are kept, so line arithmetic on the result still matches the file; `fence`
    is the code block the text starts inside, if any.
    """
    return plain_text(text, fence)


# Typing repeats the same notes keystroke after keystroke: their chunks' lowercased text
# and words are kept (keyed by the text, so an edited chunk is a new entry). The words of
# a chunk take ~10 KB: 1,024 of them are a few pages of results.
@lru_cache(maxsize=4096)
def _lowered(text: str) -> str:
    return text.lower()


@lru_cache(maxsize=1024)
def _shown(text: str, fence: Fence = NO_FENCE) -> str:
    """A chunk as a reader sees it (a phrase is looked for there; most chunks read for one
    are not shown, so their words are not listed)."""
    return readable(text, fence)


@lru_cache(maxsize=1024)
def _words(text: str, fence: Fence = NO_FENCE) -> tuple[str, tuple[tuple[int, int, str], ...]]:
    """A chunk as a reader sees it, and its words with their spans in that text."""
    shown = _shown(text, fence)
    return shown, tuple((m.start(), m.end(), m.group(0)) for m in _WORD.finditer(shown))


@lru_cache(maxsize=1024)
def _words_by_letter(text: str, fence: Fence = NO_FENCE) -> dict[str, tuple[int, ...]]:
    """Where a chunk's words are (their indexes in `_words`), by the lowercase first letter
    of each plain ASCII alphabetic word; every other word under ""."""
    found: dict[str, list[int]] = {}
    for i, (_start, _end, word) in enumerate(_words(text, fence)[1]):
        key = word[0].lower() if word.isascii() and word.isalpha() else ""
        found.setdefault(key, []).append(i)
    return {key: tuple(indexes) for key, indexes in found.items()}


def _candidates(text: str, fence: Fence, count: int, letters: frozenset[str] | None) -> Iterable[int]:
    """The indexes of a chunk's words that may match: all of them, or (`letters` known) the
    plain ASCII words beginning with one of `letters` and every other word, in order."""
    if letters is None:
        return range(count)
    index = _words_by_letter(text, fence)
    return sorted(i for key in (*letters, "") for i in index.get(key, ()))


def _window(
    stored: StoredChunk, matches: Callable[[str], bool], phrases: Sequence[re.Pattern[str]] = (), fence: Fence = NO_FENCE
) -> Snippet:
    text, words = _words(stored.chunk.text, fence)
    spans: list[tuple[int, int]] = []
    start, end = 0, len(text)
    found = [m for m in (pattern.search(text) for pattern in phrases) if m is not None]
    held = sorted((m.start(), m.end()) for m in found)
    if held:
        # The window opens on the first phrase, which is highlighted whole.
        if held[0][0] > SNIPPET_CHARS // 3:
            start = _word_start(text, held[0][0] - SNIPPET_CHARS // 4)
        end = min(len(text), start + SNIPPET_CHARS)
    # A matcher that tells the first letters a plain word needs (`letters`) is asked only
    # about the words it could match: most words of a passage begin with none of them.
    for i in _candidates(stored.chunk.text, fence, len(words), getattr(matches, "letters", None)):
        word_start, word_end, word = words[i]
        if word_start >= end:
            break  # past the window: nothing more to show
        if not matches(word) or any(a <= word_start < b for a, b in held):
            continue
        if not spans and not held:
            # The window starts a little before the first match and is SNIPPET_CHARS long.
            if word_start > SNIPPET_CHARS // 3:
                start = _word_start(text, word_start - SNIPPET_CHARS // 4)
            end = min(len(text), start + SNIPPET_CHARS)
        spans.append((word_start, word_end))
    spans = sorted([*spans, *held])
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):
        cut = text.rfind(" ", start, end)
        end = cut if cut > start + SNIPPET_CHARS // 2 else end
    window = text[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    shift = len(prefix) - start
    highlights = tuple((a + shift, b + shift) for a, b in spans if a >= start and b <= end)
    first = held[0][0] if held else spans[0][0] if spans else 0
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
