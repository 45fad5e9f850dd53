"""The full-text analyzer: one function from text to index terms, for notes and queries alike.

Per word, by script, never by a global language setting, so a vault that mixes
English and Russian finds both:

- Latin letters (and digits): lowercased, English stop words dropped, Porter-stemmed,
  accents folded (`José` is `jose`), exactly as Whoosh's StemmingAnalyzer and the
  accent fold did before;
- Cyrillic, Greek, Arabic: case-folded and stemmed with the Snowball stemmer of
  Russian, Greek or Arabic (which also fold ё, Greek accents and Arabic diacritics);
- Han, kana and Hangul runs: overlapping character pairs ("ホーム画面" → ホー ーム ム画
  画面), so a word is found inside a longer passage without a dictionary; notes also
  index each character, so a one-character query ("猫") finds it;
- other scripts: case-folded only;
- compounds (`pubspec.yaml`, `user@example.com`, `snake_case_name`, `v1.5.2`, `C++`):
  indexed whole (lowercased, unstemmed) and by their parts (engine/tokens.py).

The text is NFKC-normalised first (full-width Latin, half-width kana).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from whoosh.analysis import STOP_WORDS, Token, Tokenizer

from engine.folding import LATIN_FOLDS, typed_form
from engine.tokens import (
    TERM,
    Script,
    cjk_runs,
    compound_parts,
    is_compound,
    script_of,
    words_of_term,
)

__all__ = ["ANALYZER_VERSION", "ScriptTokenizer", "analyzer", "index_terms", "query_terms"]

# Recorded with the index format (engine/storage.py): a change here changes index terms.
ANALYZER_VERSION = 1
_MIN_LETTERS = 2  # shorter words are not indexed (Whoosh's minsize), single CJK characters are
_CACHED_STEMS = 50_000
# Whoosh's English stop words, as its StemmingAnalyzer dropped them.
_STOP_WORDS = frozenset(STOP_WORDS)


def index_terms(text: str) -> Iterator[str]:
    """The terms a note's text is indexed by."""
    return _terms(text, query=False)


def query_terms(text: str) -> Iterator[str]:
    """The terms a query's text is looked up by: a CJK run by its pairs only (a
    lone character by itself), so that a particle like の does not match every note."""
    return _terms(text, query=True)


def _terms(text: str, *, query: bool) -> Iterator[str]:
    # A compound's parts are indexed at its first occurrence only: a part is then found,
    # and a text that repeats a compound is not made longer (BM25's length norm) by it.
    expanded: set[str] = set()
    for match in TERM.finditer(typed_form(text)):
        for word in words_of_term(match.group()):
            if is_compound(word):
                whole = word.casefold().translate(LATIN_FOLDS)
                yield whole
                if whole in expanded:
                    continue
                expanded.add(whole)
                for part in compound_parts(word):
                    if is_compound(part):
                        yield part.casefold().translate(LATIN_FOLDS)
                    else:
                        yield from _word_terms(part, query)
            else:
                yield from _word_terms(word, query)


def _word_terms(word: str, query: bool) -> Iterator[str]:
    for cjk, run in cjk_runs(word):
        if cjk:
            yield from _grams(run, query)
            continue
        lowered = run.casefold()
        if len(lowered) < _MIN_LETTERS:
            continue
        script = script_of(lowered)
        if script == "latin":
            if lowered in _STOP_WORDS:
                continue
            yield _porter(lowered).translate(LATIN_FOLDS)
        else:
            yield _snowball(script, lowered)


def _grams(run: str, query: bool) -> Iterator[str]:
    if len(run) == 1:
        yield run
        return
    if not query:
        yield from run
    for at in range(len(run) - 1):
        yield run[at : at + 2]


@lru_cache(maxsize=_CACHED_STEMS)
def _porter(word: str) -> str:
    from whoosh.lang.porter import stem

    stemmed: str = stem(word)
    return stemmed


@lru_cache(maxsize=_CACHED_STEMS)
def _snowball(script: Script, word: str) -> str:
    stemmer = _snowball_stemmer(script)
    if stemmer is None:
        return word
    stemmed: str = stemmer(word)
    return stemmed or word


@lru_cache(maxsize=8)
def _snowball_stemmer(script: Script) -> Callable[[str], str] | None:
    """Snowball's pure-Python stemmer for a script's language (the same with or without PyStemmer)."""
    if script == "cyrillic":
        from snowballstemmer.russian_stemmer import RussianStemmer

        return RussianStemmer().stemWord  # type: ignore[no-any-return]
    if script == "greek":
        from snowballstemmer.greek_stemmer import GreekStemmer

        return GreekStemmer().stemWord  # type: ignore[no-any-return]
    if script == "arabic":
        from snowballstemmer.arabic_stemmer import ArabicStemmer

        return ArabicStemmer().stemWord  # type: ignore[no-any-return]
    return None


class ScriptTokenizer(Tokenizer):  # type: ignore[misc]
    """Whoosh's end of the analyzer: tokens of `index_terms` (or `query_terms` in query mode).

    Pickled into the index's schema, so it holds no state: a changed analyzer is a new
    index format (engine/storage.py), never an old index read with new terms.
    """

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Any]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        terms = query_terms(value) if mode == "query" else index_terms(value)
        for position, term in enumerate(terms):
            token.text = term
            token.boost = 1.0
            token.stopped = False
            if keeporiginal:
                token.original = term
            if positions:
                token.pos = start_pos + position
            if chars:
                token.startchar = token.endchar = start_char
            yield token


def analyzer() -> Any:
    """The Whoosh analyzer of every text field."""
    return ScriptTokenizer()
