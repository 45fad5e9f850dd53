"""Word lists per language: the one place the engine keeps words of a human language.

Query understanding (who-questions, asked kinds, relation words), name extraction and
evidence all read their words from a `Lexicon`, chosen by `EngineConfig.language`, the
way bm25s keeps its stop words per language. English is the only lexicon so far. The
full-text analyzer does not depend on it: it stems each word by its script
(engine/channels/analysis.py), and the embedding model is chosen in `[vectors] model`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["LANGUAGES", "Lexicon", "lexicon_for"]

LANGUAGES = ("en",)


@dataclass(frozen=True)
class Lexicon:
    """The words of one language the engine reasons with."""

    language: str
    # Words that start sentences or glue them together: never a name, never evidence.
    stop_words: frozenset[str]
    # Lower-case words inside a name ("Bank of England", "Vincent van Gogh").
    name_connectors: frozenset[str]
    # A question about a person or an actor ("Who attended …?").
    who_words: frozenset[str]
    # Words that ask for a person ("someone who speaks at conferences").
    person_words: frozenset[str]
    # Words that may come before an opening who ("And who else …?").
    clause_openers: frozenset[str]
    # Folder or tag names that file a note as a person (People/, #contact).
    person_marks: frozenset[str]
    # Folder names that file organisations (Companies/, Orgs/).
    organisation_marks: frozenset[str]
    # Folder names that name any note at all ("notes about sync" asks for no kind).
    any_note_folders: frozenset[str]
    # "Who is similar to X?" asks about X's kind of note: no relation to walk (a regex).
    resemblance: str
    # Time words a query may filter by: "today", "last week" … → (unit, offset) with unit
    # day / week / month / year and offset 0 (this one) or -1 (the one before).
    time_words: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Month names (January first) for "in March", "in March 2025".
    months: tuple[str, ...] = ()
    # The word before a month: "in March".
    month_preposition: str = ""
    # Whole words of the language (a tokenizer's vocabulary): typo correction leaves them alone,
    # "attended" is a word even where no note says it. Loaded on first use.
    known_words: Callable[[], frozenset[str]] = field(default=frozenset, repr=False, compare=False)
    resemblance_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resemblance_pattern", re.compile(rf"\b(?:{self.resemblance})\b", re.IGNORECASE))


def lexicon_for(language: str) -> Lexicon:
    """The lexicon of a language code.

    Raises:
        ConfigError: there is no lexicon for `language`.
    """
    if language == "en":
        from engine.lexicon.en import ENGLISH

        return ENGLISH
    from engine.errors import ConfigError

    raise ConfigError(f"no word lists for language {language!r} (known: {', '.join(LANGUAGES)})")
