"""Query filters: the notes a query's filters, required phrases and exclusions leave to search in.

Filters apply before fusion: the searcher hands every channel the same candidate set,
so a filter never costs recall inside it. The facts filters read (tags, properties,
tasks, a note's date) come from the catalog once per catalog generation.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from engine.catalog import Catalog
from engine.entities import displayed_text, fold_accents
from engine.query.parse import QueryFilter
from engine.vault.links import MD_LINK, WIKILINK, split_wikilink

__all__ = ["FactsTable", "NoteFacts", "PhraseMatcher", "phrase_key", "text_has_phrase"]

_SPACES = re.compile(r"\s+")
_ALNUM_RUN = re.compile(r"[^\W_]+")
# `WIKILINK` from its brackets on: the same links, found faster (a pattern that may begin
# with `!` is tried at every character; one that begins with `[[` skips to the brackets).
_WIKILINK_FROM_BRACKETS = re.compile(WIKILINK.pattern.removeprefix("(!?)"))
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
            date = _date(str(data.get("date") or "")) or dt.date.fromtimestamp(max(mtime, 0))
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
                kept = self._under(query_filter.value.casefold(), query_filter.negated)
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


def _test(query_filter: QueryFilter) -> Callable[[NoteFacts], bool]:
    kind = query_filter.kind
    value = query_filter.value.casefold()
    if kind == "tag":
        # `tag:work` also keeps #work/project, as Obsidian's tag search does.
        return lambda note: any(_tag_within(tag, value) for tag in note.tags)
    if kind == "path":
        return lambda note: _path_starts(note.path, value)
    if kind == "file":
        return lambda note: value in note.path.rpartition("/")[2].casefold()
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
    return f"/{path.casefold()}"


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None


def phrase_key(text: str) -> str:
    """Text as phrases are compared: links as shown, case and Latin accents folded, spaces collapsed."""
    return _SPACES.sub(" ", fold_accents(displayed_text(text).casefold())).strip()


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
    offset and no link can take part in a match (`_links_apart`), the phrase
    is in what the note shows exactly when its words, blanks between, are in the note's own
    text. Any other note is rewritten and compared as `text_has_phrase` does.
    """

    def __init__(self, phrase: str) -> None:
        self.key = phrase_key(phrase)
        self._words = self.key.split(" ") if self.key else []
        self._pattern = re.compile(r"\s+".join(re.escape(word) for word in self._words))
        self._runs = _ALNUM_RUN.findall(self.key)

    def __call__(self, text: str) -> bool:
        if not self.key:
            return False
        if not ("[[" in text and "](" in text):
            folded = text.lower() if text.isascii() else fold_accents(text.casefold())
            if len(folded) == len(text) and ("[" not in text or self._links_apart(text, folded)):
                return self._pattern.search(folded) is not None
        return self._pattern.search(fold_accents(displayed_text(text).casefold())) is not None

    def _links_apart(self, text: str, folded: str) -> bool:
        """Whether no link of `text` could take part in a match of the phrase in what it shows.

        That holds when each link is set apart from letters, digits and other links, shows a text that
        begins and ends with one, and holds no run of letters and digits of the phrase's:
        a match reaching into what a link shows would then hold such a run.
        """
        wiki = "[[" in text
        for m in (_WIKILINK_FROM_BRACKETS if wiki else MD_LINK).finditer(text):
            start, end = m.span()
            if wiki and start > 0 and text[start - 1] == "!":
                start -= 1  # an embed's `!` is shown as nothing, with the rest of the link
            if _joins_before(text, start) or _joins_after(text, end):
                return False
            shown = _shown_by_wikilink(m.group(1)) if wiki else m.group(2)
            if not (shown[:1].isalnum() and shown[-1:].isalnum()):
                return False
            if wiki and shown == m.group(1):  # `[[Name]]`: nothing hidden, only what it shows counts
                if self._may_reach(_ALNUM_RUN.findall(folded[start:end])):
                    return False
            elif any(run in folded[start:end] for run in self._runs):
                return False  # the phrase may be in what the link hides, or reach into what it shows
        return True

    def _may_reach(self, shown_runs: list[str]) -> bool:
        """Whether a match of the phrase may hold any of a link's runs of letters and digits.

        Set apart, the link's runs are whole runs of what the note shows, so a match holds
        one only as the phrase's first run (its end), its last (its start) or one between.
        """
        runs = self._runs
        if not runs:  # then no match holds a letter or digit, and a set-apart link starts and ends with one
            return False
        if len(runs) == 1:
            return any(runs[0] in shown for shown in shown_runs)
        middle = set(runs[1:-1])
        return any(
            shown.endswith(runs[0]) or shown.startswith(runs[-1]) or shown in middle for shown in shown_runs
        )


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


def _shown_by_wikilink(inside: str) -> str:
    """What `displayed_text` shows for a wikilink whose text between its brackets is `inside`."""
    if not any(mark in inside for mark in "|#/\\^") and not inside.lower().endswith(".md"):
        return inside.strip()  # `[[Name]]` shows its name (`split_wikilink` would say so, slower)
    parts = split_wikilink(inside)
    return parts.display or parts.target.rsplit("/", 1)[-1]
