"""Finishing a `[[` link as Obsidian's link suggester does: notes and aliases, then headings and blocks.

What is typed after `[[` is read as `name`, `name#heading` or `name#^block` (an empty
name is the note being edited). Names are matched fuzzily, ranked as the quick switcher
ranks them: the whole name, then a prefix, then a word's start, then any run, then
letters in order, where runs and word starts count and a shorter name wins a tie.
The link written is the shortest one Obsidian writes ("shortest path when possible"):
the file's name when no other file has it, else its vault path.
"""

from __future__ import annotations

import heapq
import posixpath
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from engine.records import Heading, LinkCompletion
from engine.vault.parse import code_masked
from engine.vault.plain import plain_line
from engine.vault.sections import trailing_block_id

DEFAULT_LIMIT = 20
# A longer typed name is no name being typed (a pasted paragraph): nothing is suggested.
MAX_TYPED = 200
# Obsidian leaves these out of a heading when it writes a link to it.
_UNSAFE_IN_HEADING = str.maketrans({c: " " for c in "#|^:[]%\\"})


def fold(text: str) -> str:
    """A name as typing compares it: case and accents aside."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _word_starts(text: str) -> frozenset[int]:
    return frozenset(i for i, c in enumerate(text) if c.isalnum() and (i == 0 or not text[i - 1].isalnum()))


class _Name:
    """A folded name with what scoring reads of it, worked out once (a vault's names are
    scored on every keystroke; folding and finding word starts each time cost the most)."""

    __slots__ = ("flat", "letters", "name", "ordered_starts", "starts")

    def __init__(self, folded: str) -> None:
        self.name = folded
        self.flat = folded.replace(" ", "")
        self.letters = frozenset(self.flat)
        self.starts = _word_starts(folded)
        self.ordered_starts = tuple(sorted(self.starts))


def fuzzy_score(typed: str, name: str) -> float | None:
    """How well `name` matches `typed` (both folded), higher is better; None when it does not.

    Tiers as the quick switcher's: the whole name, a prefix, a word's start, a run
    anywhere, then the letters in order (each letter counts more at a word's start or
    right after the last). Linear in the name for each start tried (at most a few).
    """
    return _match("".join(typed.split()), _Name(name))


def _match(typed: str, prepared: _Name) -> float | None:
    """fuzzy_score of a typed text with its blanks removed against a prepared name."""
    if not typed:
        return 0.0
    name, flat = prepared.name, prepared.flat
    if typed in (name, flat):
        return 1000.0 - len(name) / 100
    if name.startswith(typed) or flat.startswith(typed):
        return 800.0 - len(name) / 100
    at = name.find(typed)
    if at >= 0:
        return (600.0 if at in prepared.starts else 400.0) - at / 10 - len(name) / 100
    if not prepared.letters.issuperset(typed):
        return None  # a letter the name lacks: no order of them can match
    best: float | None = None
    first = typed[0]
    tried = 0
    position = name.find(first)
    while position >= 0 and tried < 4:
        score = _in_order(typed, prepared, position)
        if score is not None and (best is None or score > best):
            best = score
        tried += 1
        position = name.find(first, position + 1)
    return None if best is None else best - len(name) / 100


def _in_order(typed: str, prepared: _Name, start: int) -> float | None:
    name, starts = prepared.name, prepared.starts
    score = 0.0
    previous = start - 2
    at = start
    for index, char in enumerate(typed):
        found = name.find(char, at)
        if found < 0:
            return None
        if found != previous + 1 and found not in starts:
            # A later word start beats a letter inside a word, if the rest still follows it.
            later = next((i for i in prepared.ordered_starts if i > found and name[i] == char), -1)
            if later >= 0 and _follows(typed[index + 1 :], name, later + 1):
                found = later
        score += 1.0
        if found == previous + 1:
            score += 3.0
        if found in starts:
            score += 2.0
        score -= (found - previous - 1) * 0.05 if previous >= 0 else found * 0.05
        previous = found
        at = found + 1
    return score


def _follows(rest: str, name: str, at: int) -> bool:
    """Whether the letters of `rest` appear in order in `name` from `at`."""
    for char in rest:
        at = name.find(char, at) + 1
        if at == 0:
            return False
    return True


@dataclass(frozen=True)
class Names:
    """What completion needs of the vault: every note's (path, title, aliases) and the attachments."""

    notes: Sequence[tuple[str, str, tuple[str, ...]]]
    attachments: Sequence[str] = ()
    # The last text completed and the notes and files it matched (indices): see `_candidates`.
    _last: list[tuple[str, list[int], list[int]]] = field(default_factory=list, compare=False, repr=False)

    def prepare(self) -> None:
        """Fold every name now rather than on the first keystroke."""
        _ = self._scored, self._scored_files, self._name_counts

    def _candidates(self, key: str) -> tuple[Iterable[int], Iterable[int]]:
        """The notes and files worth scoring for `key`: all of them, or, while a name is typed on,
        those the text before this keystroke matched. Every match of a longer text is a match of
        its start too (the tiers and the letters-in-order test all keep), so the list only
        narrows as a name is typed, and a keystroke costs what the names still in play cost."""
        last = self._last[0] if self._last else None
        if last is not None and last[0] and key.startswith(last[0]):
            return last[1], last[2]
        return range(len(self._scored)), range(len(self._scored_files))

    def _remember(self, key: str, notes: list[int], files: list[int]) -> None:
        # One slot, replaced whole: a completion on another thread reads the old or the new.
        self._last[:] = [(key, notes, files)]

    @cached_property
    def _scored(self) -> list[tuple[str, str, _Name, _Name | None, tuple[tuple[str, _Name], ...]]]:
        """Per note: path, title, its folded title, its folded file name (None: the same as the
        title) and its folded aliases."""
        out = []
        for path, title, aliases in self.notes:
            folded_title = fold(title)
            folded_stem = fold(_stem(path))
            stem = None if folded_stem == folded_title else _Name(folded_stem)
            out.append((path, title, _Name(folded_title), stem, tuple((alias, _Name(fold(alias))) for alias in aliases)))
        return out

    @cached_property
    def _scored_files(self) -> list[tuple[str, _Name]]:
        return [(path, _Name(fold(posixpath.basename(path)))) for path in self.attachments]

    @cached_property
    def _name_counts(self) -> Counter[str]:
        bare = (_bare(path) for path, _title, _aliases in self.notes)
        return Counter(posixpath.basename(name).casefold() for name in (*bare, *self.attachments))

    def link_name(self, path: str) -> str:
        """What a wikilink to `path` writes: its name (no `.md`), or its vault path when another file has that name."""
        bare = _bare(path)
        name = posixpath.basename(bare)
        return name if self._name_counts[name.casefold()] <= 1 else bare


def _bare(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def complete_link(
    typed: str,
    names: Names,
    *,
    source: str | None,
    resolve: Callable[[str], str | None],
    note_text: Callable[[str], str],
    headings: Callable[[str], Sequence[Heading]],
    limit: int = DEFAULT_LIMIT,
) -> list[LinkCompletion]:
    """The ways to finish a link whose text so far (after `[[`) is `typed`, best first.

    Args:
        typed: what follows `[[` up to the cursor (`atl`, `Atlas#ris`, `Atlas#^b1`, `#Set`).
        names: the vault's notes and attachments.
        source: the note being edited (an empty name before `#` is this note).
        resolve: a link target to the path it points to from `source` (None: dangling).
        note_text: a note's LF text (for its blocks).
        headings: a note's headings.
        limit: at most this many.
    """
    if len(typed) > MAX_TYPED or "|" in typed or "]" in typed or "\n" in typed:
        return []
    name, hash_mark, fragment = typed.partition("#")
    if not hash_mark:
        return _notes(name, names, limit)
    path: str | None = resolve(name) if name.strip() else source
    if path is None or not path.lower().endswith(".md"):
        return []
    prefix = names.link_name(path) if name.strip() else ""
    if fragment.startswith("^"):
        return _blocks(fragment[1:], path, prefix, note_text(path), limit)
    return _headings(fragment, path, prefix, headings(path), limit)


def _notes(typed: str, names: Names, limit: int) -> list[LinkCompletion]:
    key = "".join(fold(typed).split())
    # (score, order, path, label, alias or None, kind, title): links are written for the few shown only.
    scored: list[tuple[float, int, str, str, str | None, str]] = []
    note_candidates, file_candidates = names._candidates(key)
    matched_notes: list[int] = []
    matched_files: list[int] = []
    entries = names._scored
    for index in note_candidates:
        path, title, folded_title, folded_stem, aliases = entries[index]
        found = len(scored)
        by_title = _match(key, folded_title)
        by_stem = by_title if folded_stem is None else _match(key, folded_stem)
        best = max((s for s in (by_title, by_stem) if s is not None), default=None)
        if best is not None:
            # Of two notes with one title, the one whose file name matches better comes first.
            best += (by_stem or 0.0) / 10_000
            scored.append((best, len(scored), path, title, None, "note"))
        for alias, folded_alias in aliases if key else ():
            score = _match(key, folded_alias)
            if score is not None:
                # A note found by its alias ranks just below the same match of a title.
                scored.append((score - 0.5, len(scored), path, alias, title, "alias"))
        if len(scored) > found:
            matched_notes.append(index)
    if key:
        files = names._scored_files
        for index in file_candidates:
            path, folded_file = files[index]
            score = _match(key, folded_file)
            if score is not None:
                scored.append((score - 1.0, len(scored), path, posixpath.basename(path), None, "file"))
                matched_files.append(index)
        names._remember(key, matched_notes, matched_files)
    out: list[LinkCompletion] = []
    for _score, _order, path, label, title_of, kind in heapq.nsmallest(limit, scored, key=lambda item: (-item[0], item[1])):
        link = names.link_name(path)
        if kind == "alias":
            out.append(LinkCompletion(f"{link}|{label}", label, f"{title_of} · {path}", path, "alias"))
        else:
            out.append(LinkCompletion(link, label, path, path, "file" if kind == "file" else "note"))
    return out


def _stem(path: str) -> str:
    return posixpath.basename(_bare(path))


def heading_link_text(heading: str) -> str:
    """A heading as a link writes it: the characters Obsidian leaves out become blanks, blanks collapsed."""
    return " ".join(heading.translate(_UNSAFE_IN_HEADING).split())


def _headings(typed: str, path: str, prefix: str, headings: Iterable[Heading], limit: int) -> list[LinkCompletion]:
    key = fold(typed.strip())
    scored: list[tuple[float, int, LinkCompletion]] = []
    for order, heading in enumerate(headings):
        text = heading_link_text(heading.text)
        if not text:
            continue
        score = fuzzy_score(key, fold(text))
        if score is None:
            continue
        detail = f"H{heading.level} · line {heading.line}"
        scored.append((score, order, LinkCompletion(f"{prefix}#{text}", text, detail, path, "heading")))
    if key:
        scored.sort(key=lambda item: (-item[0], item[1]))
    return [completion for _score, _order, completion in scored[:limit]]


def block_ids(text: str) -> list[tuple[str, int, str]]:
    """(id, 1-based line, the block's text as read) of every `^id` in a note's LF text, outside code."""
    masked, _body_start = code_masked(text)
    lines = text.split("\n")
    out: list[tuple[str, int, str]] = []
    for number, line in enumerate(masked.split("\n")):
        if "^" not in line:
            continue
        found = trailing_block_id(line)
        if found is None:
            continue
        shown = found[0].strip()
        if not shown:
            # An id alone on its line names the block above it.
            above = number - 1
            while above >= 0 and not lines[above].strip():
                above -= 1
            shown = lines[above].strip() if above >= 0 else ""
        out.append((found[1], number + 1, plain_line(shown)))
    return out


def _blocks(typed: str, path: str, prefix: str, text: str, limit: int) -> list[LinkCompletion]:
    key = fold(typed.strip())
    scored: list[tuple[float, int, LinkCompletion]] = []
    for order, (ident, line, shown) in enumerate(block_ids(text)):
        score = max((s for s in (fuzzy_score(key, fold(ident)), fuzzy_score(key, fold(shown))) if s is not None), default=None)
        if score is None:
            continue
        label = shown if len(shown) <= 80 else shown[:79] + "…"
        scored.append((score, order, LinkCompletion(f"{prefix}#^{ident}", label or f"^{ident}", f"^{ident} · line {line}", path, "block")))
    if key:
        scored.sort(key=lambda item: (-item[0], item[1]))
    return [completion for _score, _order, completion in scored[:limit]]
