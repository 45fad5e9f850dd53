"""Word keys shared by the index and the query side: the words of a sentence that name a relation."""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.lexicon import Lexicon

__all__ = ["QUERY_WORD", "RELATION_KEY_LETTERS", "relation_keys"]

QUERY_WORD = re.compile(r"\w+")
# Crude stems: the first five letters, so "invested", "investor" and "investment" meet.
RELATION_KEY_LETTERS = 5


def relation_keys(words: Iterable[str], lexicon: Lexicon) -> set[str]:
    """The keys of the content words among `words` (casefolded): what a link's sentence or a query says of a relation."""
    return {
        word[:RELATION_KEY_LETTERS]
        for word in words
        if len(word) >= 4 and word not in lexicon.stop_words and not word.isdigit()
    }
