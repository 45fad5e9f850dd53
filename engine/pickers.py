"""Note pickers: which notes to offer for a few typed letters, as a quick switcher offers them.

A name matches what was typed whole, from its start, from a word's start, anywhere, or
as the typed letters in order ("prkm" → Priya Kumar); titles and aliases count alike and
the path's last part too. When fewer than asked match so, the nearest spellings follow, so
that a typo ("Priya Kumr") still offers the note instead of an error.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Sequence

from engine.catalog import NoteName
from engine.folding import entity_key
from engine.records import NoteChoice

__all__ = ["choose_notes"]

# How each kind of match ranks, best first.
_TIERS = ("exact", "prefix", "word", "contains", "letters")
# The longest text compared letter by letter: a pasted paragraph is no note's name.
_MAX_TYPED = 200


def _how(key: str, name: str) -> str | None:
    """How the normalised `name` matches the normalised typed `key` (None: it does not)."""
    if name == key:
        return "exact"
    if name.startswith(key):
        return "prefix"
    at = name.find(key)
    if at > 0:
        return "word" if not name[at - 1].isalnum() else "contains"
    letters = key.replace(" ", "")
    first = position = name.find(letters[0])
    if first < 0:
        return None
    for char in letters:
        position = name.find(char, position) + 1
        if position == 0:
            return None
    # The letters in order, close together ("prkm" in "priya kumar"): spread over a long
    # name, four letters match nearly anything.
    return "letters" if position - first <= max(3 * len(letters), len(letters) + 4) else None


def choose_notes(names: Sequence[NoteName], text: str, *, limit: int = 8) -> list[NoteChoice]:
    """The notes to offer for `text`, best first (see the module's docstring)."""
    key = entity_key(text.strip().removesuffix(".md"))[:_MAX_TYPED]
    if not key or limit < 1:
        return []
    best: dict[str, tuple[int, int, str, str, str]] = {}
    for row in names:
        stem = posixpath.basename(row.path).removesuffix(".md")
        for written in (row.title, *row.aliases, stem):
            how = _how(key, entity_key(written))
            if how is None:
                continue
            rank = (_TIERS.index(how), len(written), row.title.casefold(), written, how)
            if row.path not in best or rank < best[row.path]:
                best[row.path] = rank
    titles = {row.path: row.title for row in names}
    ordered = sorted(best.items(), key=lambda item: (item[1][:3], item[0]))[:limit]
    choices = [NoteChoice(path, titles[path], rank[3], rank[4]) for path, rank in ordered]
    if len(choices) < limit:
        choices.extend(_nearest(names, key, limit - len(choices), {c.path for c in choices}))
    return choices


def _nearest(names: Sequence[NoteName], key: str, count: int, taken: set[str]) -> list[NoteChoice]:
    """The notes whose title or alias is spelt closest to `key`."""
    written: dict[str, tuple[str, str]] = {}
    for row in names:
        if row.path in taken:
            continue
        for name in (row.title, *row.aliases):
            written.setdefault(entity_key(name), (row.path, name))
            if " " not in key:
                # One typed word is compared with each word of a longer name as well ("kikcoff", kickoff).
                for word in entity_key(name).split():
                    if len(word) >= 4:
                        written.setdefault(word, (row.path, name))
    titles = {row.path: row.title for row in names}
    out: list[NoteChoice] = []
    for close in difflib.get_close_matches(key, list(written), n=count * 3, cutoff=0.6):
        path, name = written[close]
        if path in taken:
            continue
        taken.add(path)
        out.append(NoteChoice(path, titles[path], name, "nearest"))
        if len(out) == count:
            break
    return out
