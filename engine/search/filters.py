"""Query filters: the notes a query's filters, required phrases, exclusions and `OR` choices leave to search in.

Filters apply before fusion: the searcher hands every channel the same candidate set,
so a filter never costs recall inside it. The facts filters read (tags, properties,
tasks, a note's date) come from the catalog once per catalog generation.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import json
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from engine.catalog import Catalog
from engine.entities import displayed_text
from engine.folding import fold_case, path_form
from engine.query.parse import Choice, Condition, QueryFilter
from engine.vault.links import MD_LINK

__all__ = ["FactsTable", "NoteFacts", "PhraseMatcher", "notes_meeting", "phrase_key", "text_has_phrase"]

# The notes among the second argument that hold a word or a phrase (the searcher's full text,
# else the notes' text).
NotesHolding = Callable[[str, set[str]], set[str]]

_SPACES = re.compile(r"\s+")
_ALNUM_RUN = re.compile(r"[^\W_]+")
_ANY_WIKILINK = re.compile(r"\[\[")

# Between notes searched joined (`PhraseMatcher.holding`): no pattern of a phrase without
# a NUL crosses it (blanks may start a match, a NUL ends it).
_NOTE_BREAK = "\n\x00\n"
# Filters whose notes are remembered per table (a few queries' worth).
_FILTERS_REMEMBERED = 32


@dataclass(frozen=True, slots=True)
class NoteFacts:
    """What filters read of one note."""

    path: str
    tags: tuple[str, ...]  # casefolded, without '#'
    properties: dict[str, tuple[str, ...]]  # casefolded names → values
    tasks: tuple[tuple[bool, str], ...]  # (done, casefolded text)
    date: dt.date  # the day the note is about (its name's, its frontmatter's), else its mtime's
    mtime: float


class FactsTable:
    """Every note's facts, read from the catalog (rebuilt after the catalog changes)."""

    def __init__(self, catalog: Catalog) -> None:
        self.notes: dict[str, NoteFacts] = {}
        self._remembered: dict[tuple[object, ...], frozenset[str]] = {}
        # Read at the first tag or path filter: each distinct tag's notes, each casefolded path.
        self._by_tag: dict[str, list[str]] | None = None
        self._folded_paths: list[tuple[str, str]] | None = None
        for path, tags, mtime, raw in catalog.note_facts():
            try:
                data = json.loads(raw) if raw else {}
            except ValueError:
                data = {}
            date = _date(str(data.get("date") or "")) or _day_of(mtime)
            props = {str(k): tuple(str(v) for v in values) for k, values in dict(data.get("props") or {}).items()}
            tasks = tuple((bool(done), str(text).casefold()) for done, text in list(data.get("tasks") or []))
            self.notes[path] = NoteFacts(
                path, tuple(t.lstrip("#").casefold() for t in tags), props, tasks, date, mtime
            )

    def matching(self, filters: Iterable[QueryFilter]) -> set[str]:
        """The notes every filter keeps."""
        kept = set(self.notes)
        for query_filter in filters:
            kept &= self._kept_by(query_filter)
        return kept

    def _kept_by(self, query_filter: QueryFilter) -> frozenset[str]:
        """The notes one filter keeps, remembered: while the words after a filter are typed,
        each keystroke asks for the same filter again (the table lives one catalog generation)."""
        key = (query_filter.kind, query_filter.value.casefold(), query_filter.prop_value, query_filter.negated,
               query_filter.start, query_filter.end)  # fmt: skip
        kept = self._remembered.get(key)
        if kept is None:
            if query_filter.kind == "tag":
                kept = self._tagged(query_filter.value.casefold(), query_filter.negated)
            elif query_filter.kind == "path":
                kept = self._under(_fold(query_filter.value), query_filter.negated)
            else:
                test = _test(query_filter)
                kept = frozenset(path for path, note in self.notes.items() if test(note) != query_filter.negated)
            self._remembered[key] = kept
            while len(self._remembered) > _FILTERS_REMEMBERED:
                del self._remembered[next(iter(self._remembered))]
        return kept

    def _tagged(self, value: str, negated: bool) -> frozenset[str]:
        """The notes tagged `value` or below it (#value/...), or (`negated`) all the others.

        Read from the notes of each distinct tag: typing `tag:va…` asks for a new tag at
        every keystroke, and testing each note's tags took 120 ms at 50k notes."""
        by_tag = self._by_tag
        if by_tag is None:
            by_tag = {}
            for path, note in self.notes.items():
                for tag in note.tags:
                    by_tag.setdefault(tag, []).append(path)
            self._by_tag = by_tag
        tagged = {path for tag, paths in by_tag.items() if _tag_within(tag, value) for path in paths}
        return frozenset(path for path in self.notes if path not in tagged) if negated else frozenset(tagged)

    def _under(self, value: str, negated: bool) -> frozenset[str]:
        """The notes whose path, or the path below one of its folders, starts with `value`
        (`_path_starts`), or (`negated`) all the others; the paths are casefolded once."""
        folded = self._folded_paths
        if folded is None:
            folded = self._folded_paths = [(path, _folded_path(path)) for path in self.notes]
        wanted = f"/{value}"
        return frozenset(path for path, text in folded if (wanted in text) != negated)

    def recent_first(self, paths: Collection[str]) -> list[str]:
        """`paths` by the day they are about, then modification time, newest first."""
        return sorted(paths, key=lambda p: (self.notes[p].date, self.notes[p].mtime, p), reverse=True)


def notes_meeting(
    choice: Choice, within: set[str], facts: FactsTable, with_word: NotesHolding, with_phrase: NotesHolding
) -> set[str]:
    """The notes among `within` that meet one of the choice's options (an `OR` of the query's parts)."""
    kept: set[str] = set()
    for option in choice.options:
        kept |= _meeting(option, within - kept, facts, with_word, with_phrase)
    return kept


def _meeting(
    condition: Condition, within: set[str], facts: FactsTable, with_word: NotesHolding, with_phrase: NotesHolding
) -> set[str]:
    """The notes among `within` that meet every part of `condition` (none of them when it is negated)."""
    held = within & facts.matching(condition.filters) if condition.filters else set(within)
    for phrase in condition.phrases:
        held &= with_phrase(phrase, held)
    for word in condition.words:
        held &= with_word(word, held)
    for word in condition.excluded_words:
        held -= with_word(word, held)
    for phrase in condition.excluded_phrases:
        held -= with_phrase(phrase, held)
    for choice in condition.choices:
        held = notes_meeting(choice, held, facts, with_word, with_phrase)
    return within - held if condition.negated else held


def _fold(text: str) -> str:
    """Text as the path filters compare it: casefolded, in one Unicode form (NFC), so that
    `file:café` finds a note a Mac named in NFD."""
    return path_form(text).casefold()


def _test(query_filter: QueryFilter) -> Callable[[NoteFacts], bool]:
    kind = query_filter.kind
    value = query_filter.value.casefold()
    if kind in ("path", "file"):
        value = _fold(query_filter.value)
    if kind == "tag":
        # `tag:work` also keeps #work/project, as Obsidian's tag search does.
        return lambda note: any(_tag_within(tag, value) for tag in note.tags)
    if kind == "path":
        return lambda note: _path_starts(note.path, value)
    if kind == "file":
        return lambda note: value in _fold(note.path.rpartition("/")[2])
    if kind == "prop":
        wanted = query_filter.prop_value.casefold() if query_filter.prop_value is not None else None
        if wanted is None:
            return lambda note: value in note.properties
        return lambda note: any(wanted in v.casefold() for v in note.properties.get(value, ()))
    if kind in ("task", "task-todo", "task-done"):
        state = {"task": None, "task-todo": False, "task-done": True}[kind]
        return lambda note: any((state is None or done == state) and value in text for done, text in note.tasks)
    start, end = query_filter.start, query_filter.end
    return lambda note: (start is None or note.date >= start) and (end is None or note.date <= end)


def _tag_within(tag: str, value: str) -> bool:
    """Whether `tag` is the tag `value` or one below it: `tag:work` keeps #work/project too."""
    return tag == value or tag.startswith(value + "/")


def _path_starts(path: str, prefix: str) -> bool:
    """Whether the vault path, or the path below any of its folders, starts with `prefix`."""
    # "/a/b.md" holds "/p" exactly where the path or a part after one of its slashes starts with p.
    return f"/{prefix}" in _folded_path(path)


def _folded_path(path: str) -> str:
    """A path as `_path_starts` reads it: casefolded, after a leading slash."""
    return f"/{_fold(path)}"


def _day_of(mtime: float) -> dt.date:
    """The local day of a modification time, kept within the calendar: a file system may
    hold a time before 1970 or after the year 9999, where `datetime` cannot go."""
    try:
        return dt.date.fromtimestamp(max(mtime, 0))
    except (OverflowError, OSError, ValueError):
        return dt.date.max


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None


def phrase_key(text: str) -> str:
    """Text as phrases are compared: links as shown, case and Latin accents folded, spaces collapsed."""
    return _SPACES.sub(" ", fold_case(displayed_text(text))).strip()


def text_has_phrase(text: str, phrase: str) -> bool:
    """Whether `text` holds `phrase` (both compared by `phrase_key`)."""
    key = phrase_key(phrase)
    return bool(key) and key in phrase_key(text)


class PhraseMatcher:
    """`text_has_phrase(text, phrase)` for one phrase and many notes, mostly without
    rewriting each note's links.

    A note's text shows its links as their displayed text; rewriting them (a function call
    per link) cost a phrase over 3,700 notes of a 10k vault about 1.5 s. A note differs from
    what it shows only inside its links. So where folding case and accents keeps every
    offset and no link can take part in a match, the phrase is in what the note shows
    exactly when its words, blanks between, are in the note's own text. A link cannot take
    part when it is set apart from letters, digits and other links, shows a text that
    begins and ends with a letter or digit, hides none of the phrase's runs of letters and
    digits (an alias's target, a Markdown link's address), and none of those runs could
    reach into what it shows: set apart, its runs are whole runs of what the note shows, so
    a match holds one only as the phrase's first run (its end), its last (its start) or
    one between. For wikilinks one pattern per phrase (`_risky_wikilinks`) finds any other
    link; Markdown links are looked at one by one. Any other note is rewritten and
    compared as `text_has_phrase` does.
    """

    def __init__(self, phrase: str) -> None:
        self.key = phrase_key(phrase)
        self._words = self.key.split(" ") if self.key else []
        self._pattern = re.compile(r"\s+".join(re.escape(word) for word in self._words))
        self._runs = _ALNUM_RUN.findall(self.key)
        # A phrase holding a link's own marks may match them where a link hides them.
        self._marks = any(mark in self.key for mark in "[]()!|#^/\\")
        self._risky = _ANY_WIKILINK if self._marks else _risky_wikilinks(self._runs)

    def __call__(self, text: str) -> bool:
        if not self.key:
            return False
        wiki, markdown = "[[" in text, "](" in text
        if not (wiki and markdown):
            folded = fold_case(text)
            if len(folded) == len(text):
                if wiki:
                    apart = self._risky.search(folded) is None
                else:
                    apart = not markdown or self._markdown_links_apart(text, folded)
                if apart:
                    return self._pattern.search(folded) is not None
        return self._pattern.search(fold_case(displayed_text(text))) is not None

    def holding(self, notes: Iterable[tuple[str, str]]) -> list[str]:
        """The names of the (name, text) pairs whose text holds the phrase: as calling this
        for each, but the texts without Markdown links are searched joined: two pattern
        searches for all of them, not two for each."""
        found: list[str] = []
        names: list[str] = []
        texts: list[str] = []
        folds: list[str] = []
        joinable = bool(self.key) and _NOTE_BREAK[1] not in self.key
        for name, text in notes:
            if joinable and "](" not in text:
                folded = fold_case(text)
                if len(folded) == len(text):
                    names.append(name)
                    texts.append(text)
                    folds.append(folded)
                    continue
            if self(text):
                found.append(name)
        if not folds:
            return found
        starts = list(itertools.accumulate((len(f) + len(_NOTE_BREAK) for f in folds[:-1]), initial=0))
        joined = _NOTE_BREAK.join(folds)

        def note_at(offset: int) -> int:
            return bisect.bisect_right(starts, offset) - 1

        risky = {note_at(m.start()) for m in self._risky.finditer(joined)}
        held = {note_at(m.start()) for m in self._pattern.finditer(joined)}
        found += [names[i] for i in held - risky]
        found += [names[i] for i in risky if self(texts[i])]
        return found

    def _markdown_links_apart(self, text: str, folded: str) -> bool:
        """Whether no Markdown link of `text` could take part in a match (see the class)."""
        if self._marks:
            return False
        for m in MD_LINK.finditer(text):
            start, end = m.span()
            if _joins_before(text, start) or _joins_after(text, end):
                return False
            shown = m.group(2)
            if not (shown[:1].isalnum() and shown[-1:].isalnum()):
                return False
            if any(run in folded[start:end] for run in self._runs):
                return False  # the phrase may be in what the link hides, or reach into what it shows
        return True


def _risky_wikilinks(runs: list[str]) -> re.Pattern[str]:
    """A pattern finding, in folded text, any wikilink that might take part in a match of a
    phrase with these runs of letters and digits (see `PhraseMatcher`).

    An alias (`[[Target|shown]]`) hides its target: such a link is passed only when none
    of the runs is anywhere inside it. A heading, block or folder (`#`, `^`, `/`) is never
    passed. Every branch starts at the link's `[[`, so the pattern skips from link to link.
    """
    inside = r"[^\[\]\n]*?"
    escaped = [re.escape(run) for run in dict.fromkeys(runs)]
    reach = [r"[#/\\^]", r"\.md\]\]"]  # shows part of what it says, or another name
    if len(runs) == 1:
        reach.append(escaped[0])
    elif runs:
        reach += [rf"{escaped[0]}(?![^\W_])", rf"(?<![^\W_]){re.escape(runs[-1])}"]
        reach += [rf"(?<![^\W_]){re.escape(run)}(?![^\W_])" for run in dict.fromkeys(runs[1:-1])]
    branches = [
        r"(?<=[^\W_]\[\[)|(?<=[\])!]\[\[)",  # run into from before (a letter, a digit, a link), or an embed
        r"(?![^\W_])",  # shows a text that does not begin with a letter or digit
        r"[^\[\]\n|]*+\|(?![^\W_])",  # an alias that does not
        rf"{inside}(?:{'|'.join(reach)})",
        r"[^\[\]\n]*+\]\](?:(?<![^\W_]\]\])|(?=[^\W_]|!?\[))",  # ends without one, or runs into what follows
    ]
    if escaped:
        branches.append(rf"(?=[^\[\]\n|]*+\|){inside}(?:{'|'.join(escaped)})")  # a run an alias may hide
    return re.compile(r"\[\[(?:" + "|".join(branches) + ")")


def _joins_before(text: str, start: int) -> bool:
    """Whether what comes before a link starting at `start` may run into what it shows: a
    letter or digit, or the end of another link (`[[a]][[b]]` shows "ab")."""
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] in "])")


def _joins_after(text: str, end: int) -> bool:
    """Whether what follows a link ending at `end` may run into what it shows: a letter or
    digit, or the start of another link (`[`, `![`)."""
    if end >= len(text):
        return False
    char = text[end]
    return char.isalnum() or char == "[" or (char == "!" and text[end + 1 : end + 2] == "[")
