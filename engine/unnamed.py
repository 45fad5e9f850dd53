"""Names the vault lacks: a question about one has no confident answer.

A word of the query that no note holds (its index term is in no note's text) and that is
no common word (the embedder's vocabulary spells it in three or more pieces, or it is
written with a capital after the query's first word) names something the vault does not
contain. Every hit then lacks the word that tells the most (no idf is higher), so none of
them is confident evidence, whatever the other words found: the hits stay in their order,
as the nearest notes, and the reading says which name no note holds. Unless one of the first
five notes matches the question's meaning strongly (a claim about a drug the notes call by
another name): then the evidence stands, and the reading still says which name is missing.

A name the engine reads as a vault word one edit away ("Temur" as "tenur") is not caught:
real questions misspell names the vault holds as often, and the correction serves them.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Sequence

from engine.records import SearchResults

__all__ = ["MIN_PIECES", "applied", "unnamed"]

log = logging.getLogger(__name__)

# A word the model's vocabulary spells in this many pieces or more is no common word
# (English words and common names are one or two: "woman", "inject"; "ralzar" is three).
MIN_PIECES = 3
# A term that occurs nowhere gets the highest idf there is; its own idf is measured
# against that of a term that cannot occur (a control character starts it).
_NOWHERE = "\x01"
_WORD = re.compile(r"[^\W_]+")
# Evidence that stands without the name: a strong match by meaning among the first notes read.
_MEANT = frozenset({"high_vector_match"})
_READ_FIRST = 5


def unnamed(
    results: SearchResults,
    idf: Callable[[Sequence[str]], dict[str, float]],
    pieces: Callable[[Sequence[str]], list[int]] | None,
) -> tuple[str, ...]:
    """The words of the query, as written, that name something no note holds (see the module docstring).

    `pieces` counts a word's pieces in the embedder's vocabulary; None (no model): only
    capitalised words are taken for names.
    """
    reading = results.reading
    stems = [s for s in reading.stems if s and s != reading.prefix]
    if not stems or not results.hits:
        return ()
    weights = idf([_NOWHERE, *stems])
    highest = weights[_NOWHERE]
    nowhere = [s for s in stems if weights.get(s, 0.0) >= highest]
    if not nowhere:
        return ()
    written = _WORD.findall(results.query)
    capitalised = {w.casefold() for w in written[1:] if w[:1].isupper()}
    titles = " ".join(hit.title.casefold() for hit in results.hits)
    found: list[str] = []
    for stem in nowhere:
        if not stem.isalnum():
            continue  # initials and codes ("d.p") are written many ways: "d. p." may well be there
        word = max(written, key=lambda w: _shared_start(w.casefold(), stem), default=stem)
        if _shared_start(word.casefold(), stem) < min(len(stem), 4):
            word = stem
        folded = word.casefold()
        if folded in titles:
            continue  # a title holds it (titles are searched apart from the text)
        # Common words in a form the vault lacks ("injecting", stem "inject") are spelt in
        # few pieces as the word or as its stem; names the model never saw, in many either way.
        if folded in capitalised or (
            pieces is not None and min(pieces([folded, stem])) >= MIN_PIECES
        ):
            found.append(word)
    return tuple(dict.fromkeys(found))


def _shared_start(a: str, b: str) -> int:
    """How many leading letters two words share."""
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared


def applied(
    results: SearchResults,
    idf: Callable[[Sequence[str]], dict[str, float]],
    pieces: Callable[[Sequence[str]], list[int]] | None,
) -> SearchResults:
    """`results`, with no hit confident and the reading saying so when the query names what no note holds."""
    try:
        names = unnamed(results, idf, pieces)
    except (
        Exception
    ):  # the index could not be read: the channels' statuses say so; the hits stand as found
        log.debug("could not look up the query's words", exc_info=True)
        return results
    if not names:
        return results
    said = f"no note holds {', '.join(f'“{name}”' for name in names)}"
    reading = dataclasses.replace(results.reading, notes=(*results.reading.notes, said))
    if any(hit.label in _MEANT for hit in results.hits[:_READ_FIRST]):
        # A note matches what the question means strongly: the vault speaks to it under another name.
        return dataclasses.replace(results, reading=reading)
    return dataclasses.replace(results, confident=0, unnamed=names, reading=reading)
