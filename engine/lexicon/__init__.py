"""Word lists per language: the one place the engine keeps words of a human language.

Query understanding (who-questions, asked kinds, relation words), name extraction and
evidence all read their words from a `Lexicon`, chosen by `EngineConfig.language`, the
way bm25s keeps its stop words per language. English is the only lexicon so far. The
full-text analyzer does not depend on it: it stems each word by its script
(engine/channels/analysis.py), and the embedding model is chosen in `[vectors] model`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["LANGUAGES", "Lexicon", "PhraseUse", "RelationWords", "lexicon_for"]

LANGUAGES = ("en",)

# How a relation phrase relates the notes on either side of it in a sentence.
#   active:       X <phrase> Y, X does it to Y ("attended", "founder of", "works at")
#   passive:      X <phrase> Y, Y does it to X ("attended by", "founded by", "manages")
#   subject_role: the note it names does it ("Attendees: [[A]], [[B]]", "investors")
#   object_role:  the note it names has it done ("Manager: [[B]]")
# A phrase's word "*" stands for up to two words of any kind ("led * round" reads "led a
# seed round", "led their $2M round"), so one phrase covers its articles and amounts.
PhraseUse = Literal["active", "passive", "subject_role", "object_role"]

_ANY_WORDS = r"(?:[^\s,;]+[ \t]+){0,2}"


@dataclass(frozen=True)
class RelationWords:
    """How one language writes one named relation between two notes ("attended", "works at").

    The sentence phrases are read in a link's sentence; the properties name frontmatter
    properties and inline fields that hold links (`company: "[[Acme]]"`): an object
    property names what the note relates to, a subject property who relates to the note.
    """

    name: str
    active: tuple[str, ...] = ()
    passive: tuple[str, ...] = ()
    subject_roles: tuple[str, ...] = ()
    object_roles: tuple[str, ...] = ()
    object_properties: tuple[str, ...] = ()
    subject_properties: tuple[str, ...] = ()
    # Other relations (by name) this one includes: a founder works at the company.
    implies: tuple[str, ...] = ()

    def uses(self) -> list[tuple[str, PhraseUse]]:
        """Every sentence phrase with how it relates its two sides."""
        return [
            *((p, "active") for p in self.active),
            *((p, "passive") for p in self.passive),
            *((p, "subject_role") for p in self.subject_roles),
            *((p, "object_role") for p in self.object_roles),
        ]


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
    # Whole words of the language (a tokenizer's vocabulary), each with its rank, commonest
    # first: typo correction leaves them alone ("attended" is a word even where no note says
    # it), and a word being typed is read as one of them. Loaded on first use.
    known_words: Callable[[], Mapping[str, int]] = field(default=dict, repr=False, compare=False)
    # Named relations between notes, read from a link's sentence and from properties.
    relations: tuple[RelationWords, ...] = ()
    # Words that turn an active phrase passive before the name ("founded in 2022 by X").
    passive_marks: frozenset[str] = frozenset()
    # Words that open a clause with its own subject between a name and a phrase ("X, which he founded").
    clause_marks: frozenset[str] = frozenset()
    # Frontmatter properties that describe a note in a line, first found first used.
    description_properties: tuple[str, ...] = ()
    # Nouns that name a person by what they do ("engineer", "designers"): heading a query
    # ("the careful engineer (hates slide decks)", "Orbit fintech engineers") they ask for
    # the vault's people (engine/kinds.py). A relation's role nouns ("founders", "advisors")
    # are not among them: the relation rules answer those.
    person_nouns: frozenset[str] = frozenset()
    # Words that open a question ("what", "which", "is"): a query opening with one, or ending
    # with a question mark, asks for something a note names (engine/search/fusion.py).
    question_words: frozenset[str] = frozenset()
    # Words that open a relative clause inside a question ("the city where X is located",
    # "the river which Y turns into"): the clause asks its own part of the question, and
    # the vector channel searches it too (engine/query/plan.py, `relative_clauses`).
    relative_words: frozenset[str] = frozenset()
    # Words that ask inside a clause ("who worked with the mayor of what city"): such a
    # clause holds the question's gap, not a hop it names, and is not searched apart.
    gap_words: frozenset[str] = frozenset()
    # Whether a compound of nouns ends in its head, as English does ("project meetings" are
    # meetings): a kind named right before another noun then modifies it (engine/kinds.py).
    head_last: bool = False
    # At a sentence's start a capital says nothing: a name never opens with the sentence's
    # verb, adverb or another function word ("Led Series B for …", "Whereas Treg cells …",
    # "Previously Feluda …"). These are the words that tell: function words beyond the stop
    # words, and words that open a clause as prepositions do ("Using", "Following").
    sentence_openers: frozenset[str] = frozenset()
    # Verbs (base forms) sentences and log lines open with: their inflected forms
    # ("Announced", "Leads", "Launching") never open a name at a sentence's start. A verb
    # whose base form is a name's first word as often ("Mark", "Launch", "Sync") is left out.
    verbs: tuple[str, ...] = ()
    # Verbs whose base form, an instruction ("Install Obsidian", "Select Import"), never opens one either.
    instruction_verbs: tuple[str, ...] = ()
    # The irregular forms of those verbs (lead → led, begin → began, begun).
    irregular_verbs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # How the language inflects a regular verb (base → its other forms); `verbs` are read through it.
    inflect: Callable[[str], tuple[str, ...]] = field(default=lambda _verb: (), repr=False, compare=False)
    # Endings that make an adverb of an adjective, with what they stand for ("ically" → "ic"):
    # a word so made from a known word is an adverb ("Previously", "Highly").
    adverb_endings: tuple[tuple[str, str], ...] = ()
    # Words with such an ending that are adjectives, made from nouns ("weekly", "friendly").
    not_adverbs: frozenset[str] = frozenset()
    # Words that open a job title ("Head of Operations", "Partner Hannah Kreiswirth", "VP of
    # Engineering"): no part of a name; a title ending in a person noun names no one.
    job_titles: frozenset[str] = frozenset()
    # The job titles that stand right before a person's name as an honorific does ("Partner
    # Sarah Guo", "CEO Jane Doe"); after the others ("Chief", "Senior", "Head of") comes the
    # rest of the title ("Chief Business Officer", "VP of Engineering"), not a name.
    name_titles: frozenset[str] = frozenset()
    # Words written with a full stop that ends no sentence ("Dr. Maria Chen", "Mr. Watanabe").
    abbreviations: frozenset[str] = frozenset()
    # Words that label a part of a document, written in capitals at its start ("BACKGROUND",
    # "METHODS", "NOTE"): no part of the name after them.
    section_labels: frozenset[str] = frozenset()
    # The pronouns a note's sentences refer to its subject by, as a clause's subject ("she
    # founded"), as its object ("backed him") and as an owner ("its investors include"): a
    # relation said of one is said of the note.
    subject_pronouns: frozenset[str] = frozenset()
    object_pronouns: frozenset[str] = frozenset()
    possessives: frozenset[str] = frozenset()
    # Nouns a note's sentences refer to its subject by, after a determiner ("the company",
    # "this meeting", "the seed round").
    self_nouns: frozenset[str] = frozenset()
    # Prepositions: between a role and a link, one says the role is another's ("founders of [[Acme]]").
    prepositions: frozenset[str] = frozenset()
    # Words that open a noun phrase ("the", "this", "their"): after a relation phrase, what
    # follows them is its object.
    determiners: frozenset[str] = frozenset()
    # The articles among them: an article alone before a phrase opens a fragment that
    # defines the note ("The part of [[Beacon]] where …"); "This includes …" does not.
    articles: frozenset[str] = frozenset()
    # Words a clause may open with before its subject, or end with after its object, that
    # are neither ("Also", "In 2021 she …", "… attended today").
    subject_openers: frozenset[str] = frozenset()
    resemblance_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    # Every relation phrase, longest first, as one pattern (no groups: an alternation of
    # named groups is four times slower to scan); each phrase without "*" (lowercased, one
    # space between words) with its relation and use; and each with "*", longest first, as
    # a pattern a match is checked against.
    relation_pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    relation_phrases: dict[str, tuple[str, PhraseUse]] = field(init=False, repr=False, compare=False)
    relation_wildcards: tuple[tuple[re.Pattern[str], str, PhraseUse], ...] = field(
        init=False, repr=False, compare=False
    )
    # Property names (lowercased, `_` and `-` as spaces) → (relation, True if the linked note is the subject).
    relation_properties: dict[str, tuple[str, bool]] = field(init=False, repr=False, compare=False)

    @functools.cached_property
    def role_nouns(self) -> frozenset[str]:
        """The one-word names of a relation's side ("attendees", "investor", "founders"): nouns
        for the people or organisations a relation joins, whatever folder they are filed in."""
        words = (
            word
            for relation in self.relations
            for word in (*relation.subject_roles, *relation.object_roles, *relation.subject_properties)
        )
        return frozenset(word.casefold() for word in words if " " not in word and "*" not in word)

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of every word list: what the graph was read with (a saved graph read
        with other words is rebuilt, as a new phrase names relations the old one did not)."""
        words = {
            f.name: _sorted(getattr(self, f.name))
            for f in dataclasses.fields(self)
            # known_words is loaded on use, from the model's vocabulary; questions and the
            # nouns that ask for people are read from queries only.
            if f.init and f.name not in ("known_words", "question_words", "person_nouns", "inflect")
        }
        words["opening_forms"] = _sorted(self.opening_forms)
        words["relations"] = [_sorted(dataclasses.astuple(relation)) for relation in self.relations]
        return hashlib.sha256(json.dumps(words, sort_keys=True, default=str).encode()).hexdigest()[:16]

    @functools.cached_property
    def opening_forms(self) -> frozenset[str]:
        """Every word (lowercased) that never opens a name at a sentence's start, but the adverbs
        `is_adverb` reads: the sentence openers and the listed verbs' forms."""
        forms = set(self.sentence_openers)
        for verb in (*self.verbs, *self.instruction_verbs):
            forms.update(self.inflect(verb))
            forms.update(self.irregular_verbs.get(verb, ()))
        forms.update(self.instruction_verbs)
        return frozenset(forms)

    def is_adverb(self, word: str) -> bool:
        """Whether a word is an adverb made from a known word by an adverb ending ("recently")."""
        key = word.casefold()
        if key in self.not_adverbs:
            return False
        for ending, stands_for in self.adverb_endings:
            if key.endswith(ending):
                stem = key[: -len(ending)] + stands_for
                if len(stem) >= 4 and stem in self.known_words():
                    return True
        return False

    def opens_no_name(self, word: str) -> bool:
        """Whether a capitalised word at a sentence's start is the sentence's verb, adverb or
        function word rather than a name's first word."""
        key = word.casefold()
        if word.isupper() and len(word) > 1:
            return key in self.section_labels
        return key in self.opening_forms or key in self.stop_words or self.is_adverb(key)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resemblance_pattern", re.compile(rf"\b(?:{self.resemblance})\b", re.IGNORECASE))
        phrases: dict[str, tuple[str, PhraseUse]] = {}  # as written, lowercased: "co-founded by"
        properties: dict[str, tuple[str, bool]] = {}
        for relation in self.relations:
            for phrase, use in relation.uses():
                phrases.setdefault(phrase.casefold(), (relation.name, use))
                if "*" not in phrase:
                    # A property named like a phrase relates as the phrase does.
                    properties.setdefault(phrase_key(phrase), (relation.name, use in ("passive", "subject_role")))
            for name in relation.object_properties:
                properties.setdefault(phrase_key(name), (relation.name, False))
            for name in relation.subject_properties:
                properties.setdefault(phrase_key(name), (relation.name, True))
        pattern = None
        # Longest first, so "founder of" is read before "founder"; words are separated by
        # any run of blanks, never by a backtracking group (linear in the sentence).
        ordered = sorted(phrases, key=lambda p: (-len(p), p))
        if ordered:
            body = "|".join(_phrase_regex(p) for p in ordered)
            pattern = re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)
        wildcards = tuple(
            (re.compile(_phrase_regex(p), re.IGNORECASE), *phrases[p]) for p in ordered if "*" in p.split()
        )
        plain = {phrase_key(p): phrases[p] for p in reversed(ordered) if "*" not in p.split()}
        object.__setattr__(self, "relation_pattern", pattern)
        object.__setattr__(self, "relation_phrases", plain)
        object.__setattr__(self, "relation_wildcards", wildcards)
        object.__setattr__(self, "relation_properties", properties)


def _sorted(value: object) -> object:
    """A word list in a fixed order (sets are ordered by salted hashes), recursively."""
    if isinstance(value, (set, frozenset)):
        return sorted((_sorted(v) for v in value), key=repr)
    if isinstance(value, dict):
        return sorted(((str(k), _sorted(v)) for k, v in value.items()), key=repr)
    if isinstance(value, (list, tuple)):
        return [_sorted(v) for v in value]
    return value


def _phrase_regex(phrase: str) -> str:
    """A phrase's words as a pattern: any blanks between words, "*" any two words or none."""
    out = ""
    for word in phrase.split():
        out += _ANY_WORDS if word == "*" else re.escape(word) + r"[ \t]+"
    return out.removesuffix(r"[ \t]+")


def phrase_key(text: str) -> str:
    """A relation phrase or property name as the lexicon keys it: lowercase, one space between words."""
    return " ".join(text.replace("_", " ").replace("-", " ").casefold().split())


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
