"""Query parsing: normalise, bound, split into complete terms and a typed prefix."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.tokens import TERM

MAX_QUERY_CHARS = 512
# The terms the full-text analyzer reads (engine/tokens.py): `pubspec.yaml`, `C++` stay whole.
_WORD = TERM
# Control characters and lone surrogates (pasted binary, a bad byte in a command line)
# mean nothing to search for, and the tokenizer of the embedding model rejects surrogates.
_UNUSABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass(frozen=True)
class Query:
    """A parsed query as every channel receives it.

    `prefix` is the last word when the user is still typing it (no trailing space);
    channels may treat it as a prefix. `terms` holds every word, prefix included.
    """

    raw: str
    text: str
    terms: tuple[str, ...]
    prefix: str | None

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to search for (blank or only punctuation)."""
        return not self.terms


def parse_query(raw: str, *, as_you_type: bool = True) -> Query:
    """Parse what the user typed; long input is cut to MAX_QUERY_CHARS."""
    text = " ".join(_UNUSABLE.sub(" ", raw[: MAX_QUERY_CHARS * 2]).split())[:MAX_QUERY_CHARS]
    words = [m.group(0).strip("'’-").lower() for m in _WORD.finditer(text)]
    terms = tuple(w for w in words if w)
    still_typing = as_you_type and bool(terms) and bool(raw) and not raw[-1].isspace() and raw.rstrip()[-1:].isalnum()
    prefix = terms[-1] if still_typing else None
    return Query(raw=raw, text=text, terms=terms, prefix=prefix)
