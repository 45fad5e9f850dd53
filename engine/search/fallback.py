"""The flat scan: what a search returns when its channels found fewer notes than asked.

A query whose words the index does not hold (a typo, a word only in a title's spelling)
with no embedding model would find nothing. Before giving up, the search compares the
query's words with every title and alias (whole words, prefixes, one edit apart) and
asks the full-text index for terms one edit from them. Hits found so are marked
`flat_scan` with the words that matched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence

from engine.channels.fulltext import within_one_edit
from engine.folding import fold_accents
from engine.lexicon import Lexicon

__all__ = ["FlatScan", "FuzzySearch"]

_WORD = re.compile(r"\w+")
# A word this short is matched whole or as a typed prefix only, never one edit apart.
_FUZZY_MIN_CHARS = 4
# Scores of a title match: the word itself, the word being typed, one edit apart.
_WHOLE, _PREFIX, _NEAR = 1.0, 0.8, 0.6

# The full-text index's fuzzy search: (query words, limit) → (path, "word ~ term" pairs).
FuzzySearch = Callable[[Sequence[str], int], list[tuple[str, tuple[str, ...]]]]


def _words(text: str) -> list[str]:
    return [fold_accents(w) for w in _WORD.findall(text.casefold())]


class FlatScan:
    """Titles and aliases by word, read from the catalog's names when first needed."""

    def __init__(self, names: Mapping[str, Sequence[str]]) -> None:
        """`names` maps each note path to its title and aliases."""
        self._names = names
        # Tuples of strings, not sets: the collector stops tracking them, and a full
        # collection no longer walks tens of thousands of sets (a stall of a keystroke).
        self._by_word: dict[str, tuple[str, ...]] | None = None
        self._by_shape: dict[str, tuple[str, ...]] = {}  # a word with one letter dropped → words

    def build(self) -> None:
        """Build the word tables now rather than at the first scan."""
        self._index()

    def _index(self) -> dict[str, tuple[str, ...]]:
        if self._by_word is None:
            by_word: dict[str, dict[str, None]] = {}
            for path, names in self._names.items():
                for name in names:
                    for word in _words(name):
                        by_word.setdefault(word, {})[path] = None
            shapes: dict[str, dict[str, None]] = {}
            for word in by_word:
                if len(word) >= _FUZZY_MIN_CHARS:
                    for shape in _deletions(word):
                        shapes.setdefault(shape, {})[word] = None
            self._by_shape = {shape: tuple(words) for shape, words in shapes.items()}
            self._by_word = {word: tuple(paths) for word, paths in by_word.items()}
            self._names = {}  # read once: the tables hold what the scan needs
        return self._by_word

    def scan(
        self,
        words: Sequence[str],
        prefix: str | None,
        lexicon: Lexicon,
        *,
        exclude: Collection[str],
        limit: int,
        fuzzy: FuzzySearch | None = None,
    ) -> list[tuple[str, tuple[str, ...]]]:
        """Notes whose titles hold the query's words (or nearly), then notes holding terms one
        edit from them: (path, what matched), best first, none of `exclude`.

        `prefix` is the word still being typed: a title word starting with it matches.
        """
        if limit <= 0:
            return []
        by_word = self._index()
        wanted = [w for w in dict.fromkeys(_words(" ".join(words))) if w not in lexicon.stop_words] or _words(" ".join(words))
        typed = fold_accents(prefix.casefold()) if prefix else ""
        scores: dict[str, float] = {}
        matched: dict[str, list[str]] = {}

        def credit(paths: Collection[str], score: float, why: str) -> None:
            for path in paths:
                if path in exclude:
                    continue
                scores[path] = scores.get(path, 0.0) + score
                matched.setdefault(path, []).append(why)

        for word in wanted:
            if word in by_word:
                credit(by_word[word], _WHOLE, word)
                continue
            if typed and word == typed and len(word) >= 2:
                near = [w for w in by_word if w.startswith(word)]
                for other in sorted(near)[:50]:
                    credit(by_word[other], _PREFIX, f"{word}… {other}")
                if near:
                    continue
            if len(word) >= _FUZZY_MIN_CHARS:
                for other in sorted(self._near(word)):
                    credit(by_word[other], _NEAR, f"{word} ~ {other}")
        ranked = sorted(scores, key=lambda path: (-scores[path], path))[:limit]
        out = [(path, tuple(dict.fromkeys(matched[path]))) for path in ranked]
        if len(out) < limit and fuzzy is not None:
            taken = set(exclude) | set(ranked)
            for path, why in fuzzy(wanted, limit + len(taken)):
                if path not in taken:
                    out.append((path, why))
                    taken.add(path)
                    if len(out) >= limit:
                        break
        return out

    def _near(self, word: str) -> set[str]:
        """Title words one edit from `word` (found through their one-letter deletions)."""
        shapes = self._by_shape
        candidates = set(shapes.get(word, ()))
        for shape in (word, *_deletions(word)):
            candidates.update(shapes.get(shape, ()))
            if shape in (self._by_word or {}):
                candidates.add(shape)
        return {c for c in candidates if c != word and within_one_edit(word, c)}


def _deletions(word: str) -> list[str]:
    """`word` with each one of its letters left out."""
    return [word[:i] + word[i + 1 :] for i in range(len(word))]
