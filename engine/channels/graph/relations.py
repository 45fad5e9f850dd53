"""Named relations between notes: read from the sentence a link is written in, or from the property that holds it.

"Attendees: [[Priya Kumar]]" in a meeting note says Priya Kumar attended the meeting;
"Mia Brown is the founder of [[Acme]]" says Mia Brown (the note) founded Acme;
`company: "[[Acme]]"` and `works_at:: [[Acme]]` say the note's subject works at Acme.
The phrases and property names are the lexicon's (engine/lexicon/); a sentence that
relates two other notes ("[[Priya]] works at [[Acme]]" in a meeting note) names nothing
between the note and either of them.

A phrase names a relation only where the sentence's grammar puts the two notes on its two
sides: the note is the clause's subject (no subject at all, as in a log line "Led Series A
for [[X]]"; a pronoun; the note's own name; "the company") and the link its object, or the
link is the subject and the object is the note (none written, a pronoun, its name). "This
storage limit includes [[Version history]]" relates the storage limit, not the note, and a
word that merely occurs in the sentence relates nothing.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass

from engine.lexicon import Lexicon, PhraseUse, phrase_key
from engine.vault.links import MD_LINK, WIKILINK

__all__ = ["Named", "SentenceRelations", "property_relation"]

# The most words between a phrase and the link it relates ("founded in 2022 by [[X]]").
_MAX_GAP_WORDS = 4
_WORD = re.compile(r"\w+(?:['’]\w+)?")
# The most words of a clause read for its subject (before a phrase) or object (after it).
_MAX_CLAUSE_WORDS = 12
# What ends a clause inside a sentence: its subject is looked for after the last one
# before a phrase, its object before the first one after it.
_CLAUSE_BREAK = re.compile(r"[:;|()\[\]—–]|\s-\s|,")
# A subject's clause is not cut at a comma: "Kate, a partner at Sequoia, invested in" has Kate
# for its subject, and "Atlas uses a basemap, delivered as part of" the basemap.
_SUBJECT_BREAK = re.compile(r"[:;|()\[\]—–]|\s-\s")

# A relation named between the note a link is written in and the note it links:
# (relation, True when the linked note is the subject: "Priya —attended→ this meeting").
Named = tuple[str, bool]


@dataclass(frozen=True)
class _Phrase:
    start: int
    end: int
    relation: str
    use: PhraseUse


class SentenceRelations:
    """The relation phrases of one sentence and where its links are, read once."""

    def __init__(self, sentence: str, lexicon: Lexicon, names: Collection[str] = ()) -> None:
        """`names` are the note's own title and aliases: written as the clause's subject or
        object (whole, or words of one from its first on: "Kate" for Kate Lopez), they are the note."""
        split = [[w.casefold() for w in _WORD.findall(name)] for name in names]
        self._name_words = frozenset(w for words in split for w in words)
        self._first_words = frozenset(words[0] for words in split if words)
        self._lexicon = lexicon
        self._links: list[tuple[int, int]] = []
        if "[[" in sentence:
            self._links.extend(m.span() for m in WIKILINK.finditer(sentence))
        if "](" in sentence:
            self._links.extend(m.span() for m in MD_LINK.finditer(sentence))
        self._links.sort()
        self._phrases: list[_Phrase] = []
        pattern = lexicon.relation_pattern
        if pattern is None:
            return
        # A phrase inside a link is part of a name ("[[Founders Fund]]"), not of the sentence.
        pieces: list[str] = []
        last = 0
        for start, end in self._links:
            if start >= last:
                pieces.extend((sentence[last:start], " " * (end - start)))
                last = end
        pieces.append(sentence[last:])
        blanked = self._blanked = "".join(pieces)
        self._break_starts = [m.start() for m in _CLAUSE_BREAK.finditer(blanked)]
        self._subject_starts = [m.end() for m in _SUBJECT_BREAK.finditer(blanked)]
        self._passive_marks = lexicon.passive_marks
        self._clause_marks = lexicon.clause_marks
        phrases = lexicon.relation_phrases
        for match in pattern.finditer(blanked):
            text = match.group()
            found = phrases.get(phrase_key(text))
            if found is None:  # a phrase with "*" ("led * round" read "led a seed round")
                found = next(((r, u) for p, r, u in lexicon.relation_wildcards if p.fullmatch(text)), None)
            if found is not None:
                self._phrases.append(_Phrase(match.start(), match.end(), found[0], found[1]))

    def at(self, position: int) -> Named | None:
        """The relation the sentence names between its note and the note written at `position`.

        The nearest phrase before the place counts, else the nearest after it, if at most a
        few words (other than links) stand between them. A role before the place
        ("Attendees:") names the note at the place as the one who does it; an active
        phrase ("attended", "founder of") names what comes before it as the one who does
        it, a passive one ("founded by", or an active one with "by" before the place) what
        comes after it. When that other side is another link, or a clause stands between
        ("[[Delta]], which he founded"), the sentence names nothing between the two notes.
        """
        if not self._phrases:
            return None
        before = [p for p in self._phrases if p.end <= position]
        phrase = before[-1] if before else next((p for p in self._phrases if p.start >= position), None)
        if phrase is None:
            return None
        phrase_first = phrase.end <= position
        gap = self._blanked[phrase.end : position] if phrase_first else self._blanked[self._link_end(position) : phrase.start]
        gap_words = _WORD.findall(gap)
        if len(gap_words) > _MAX_GAP_WORDS:
            return None
        if phrase.use in ("subject_role", "object_role"):
            # A role names the notes listed after it ("Attendees: [[A]], [[B]]"), when it is
            # the note's own ("Its investors include"); after a name it is said of someone
            # else ("dinner with [[Drift]] founders"), and so it is with a preposition
            # between ("founders of [[Acme]]").
            if not phrase_first or any(w.casefold() in self._lexicon.prepositions for w in gap_words):
                return None
            return (phrase.relation, phrase.use == "subject_role") if self._subject_is_note(phrase.start, role=True) else None
        if not phrase_first and any(w.casefold() in self._clause_marks for w in gap_words):
            return None  # "[[Delta]], which he founded": the subject is in the clause
        use = phrase.use
        if use == "active" and phrase_first and any(w.casefold() in self._passive_marks for w in gap_words):
            use = "passive"  # "founded in 2022 by [[Ingrid Holm]]"
        # The sentence's other side of the phrase: before it when the link follows it.
        other_side_linked = (
            any(end <= phrase.start for _, end in self._links)
            if phrase_first
            else any(start >= phrase.end for start, _ in self._links)
        )
        if other_side_linked:
            return None
        # The other side must be the note, as the grammar says: the clause's subject when
        # the link follows the phrase, its object (or none, for an active phrase) when the
        # link comes first.
        if phrase_first:
            if not self._subject_is_note(phrase.start):
                return None
        elif not self._object_is_note(phrase.end, allow_none=use == "active"):
            return None
        linked_is_subject = phrase_first == (use == "passive")
        return phrase.relation, linked_is_subject

    def _subject_is_note(self, before: int, role: bool = False) -> bool:
        """Whether the subject of the clause that ends at `before` is the note: none (a log
        line, "Led Series A for"), a pronoun, the note's name, or a noun it is ("the company").

        Before a role, or a phrase right after it, the note may own it ("Its investors include",
        "Lumen's investor base includes", "His team at"); before a verb what the note owns is
        not the note ("His portfolio includes").
        """
        at_break = bisect.bisect_right(self._subject_starts, before) - 1
        clause_start = self._subject_starts[at_break] if at_break >= 0 else 0
        # A subject farther from its verb than a few words is not read (and a clause with no
        # break for thousands of words is read in bounded time).
        found = list(itertools.islice(_WORD.finditer(self._blanked, clause_start, before), _MAX_CLAUSE_WORDS + 1))
        if len(found) > _MAX_CLAUSE_WORDS:
            return False
        words = [m.group() for m in found]
        lexicon = self._lexicon
        at = 0
        # Stamps, numbers and adverbs before the subject ("In 2021 she …", "Recently he …").
        while at < len(words) and _opener(words[at], lexicon):
            at += 1
        if 0 < at < len(words):
            # An opening phrase ends at its comma: "On larger tablets, the sidebar includes …".
            comma = self._blanked.find(",", found[at].start(), before)
            if comma >= 0:
                at = next((i for i, m in enumerate(found) if m.start() > comma), len(found))
        if at == len(words):
            return True
        first = words[at]
        key = first.casefold()
        rest = [w.casefold() for w in words[at + 1 :]]
        if any(w in self._clause_marks for w in rest if w not in lexicon.subject_pronouns):
            return False  # "Mia said that Kate founded": the phrase has a subject of its own
        # A possessive owns the role or the phrase right after it ("Its investors:", "His team
        # at"), not a noun before a verb ("His portfolio includes").
        owned = role or not rest
        if key in lexicon.subject_pronouns or key in lexicon.opening_forms or (owned and key in lexicon.possessives):
            return True  # "She founded …", "Raised a seed round led by …"
        if key in lexicon.determiners:
            # "The company was founded by …", "The seed round was backed by …", "the left
            # sidebar includes" in the Sidebar's note; a determiner alone opens a fragment
            # that defines the note ("The part of [[Beacon]] where …").
            head = rest[: min(3, len(rest))]
            if not head:
                return key in lexicon.articles
            return any(w in lexicon.self_nouns or w in self._name_words for w in head)
        return self._names_the_note(words[at:], owned=owned)

    def _object_is_note(self, after: int, allow_none: bool) -> bool:
        """Whether what follows a phrase (to its clause's end) is the note: nothing (when
        `allow_none`), a preposition's phrase, a pronoun, the note's name, or a noun it is."""
        at_break = bisect.bisect_left(self._break_starts, after)
        end = self._break_starts[at_break] if at_break < len(self._break_starts) else len(self._blanked)
        words = [m.group() for m in itertools.islice(_WORD.finditer(self._blanked, after, end), _MAX_CLAUSE_WORDS)]
        lexicon = self._lexicon
        words = [w for w in words if not lexicon.is_adverb(w)]
        if not words:
            return allow_none
        key = words[0].casefold()
        if key in lexicon.object_pronouns:
            return True
        if key in lexicon.stop_words and key not in lexicon.determiners:
            return allow_none  # "attended in person at …": no object of its own
        if key in lexicon.determiners and len(words) > 1 and words[1].casefold() in lexicon.self_nouns:
            return True  # "… attended the meeting"
        return self._names_the_note(words)

    def _names_the_note(self, words: list[str], owned: bool = False) -> bool:
        """Whether the capitalised words that open `words` name the note: all words of its
        names, the first the first of one ("Kate", "Kate Lopez", not "Lopez" nor "Pitch").
        A possessive ("Lumen's") names it only where `owned` allows what it owns to stand for it."""
        run = []
        for word in words:
            if not word[:1].isupper():
                break
            bare = word.removesuffix("'s").removesuffix("’s")
            run.append(bare.casefold())
            if bare != word:
                if not owned:
                    return False
                break
        return bool(run) and run[0] in self._first_words and all(w in self._name_words for w in run)

    def _link_end(self, position: int) -> int:
        """Where the link (or name) written at `position` ends: the end of the link holding it."""
        for start, end in self._links:
            if start <= position < end:
                return end
        return position


def _opener(word: str, lexicon: Lexicon) -> bool:
    """A word before a clause's subject that is none: a number or date, a month, a sentence adverb or connective."""
    key = word.casefold()
    return word.isdigit() or key in lexicon.months or key in lexicon.subject_openers or lexicon.is_adverb(key) or key in lexicon.clause_openers


def property_relation(name: str, lexicon: Lexicon) -> Named:
    """The relation a property or inline field holding a link names (`company` → works at).

    A property the lexicon does not know is a relation of its own name ("owner"): the
    note has it, the linked note is its value.
    """
    key = phrase_key(name)
    return lexicon.relation_properties.get(key, (key, False))
