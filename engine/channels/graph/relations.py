"""Named relations between notes: read from the sentence a link is written in, or from the property that holds it.

"Attendees: [[Priya Kumar]]" in a meeting note says Priya Kumar attended the meeting;
"Mia Brown is the founder of [[Acme]]" says Mia Brown (the note) founded Acme;
`company: "[[Acme]]"` and `works_at:: [[Acme]]` say the note's subject works at Acme.
The phrases and property names are the lexicon's (engine/lexicon/); a sentence that
relates two other notes ("[[Priya]] works at [[Acme]]" in a meeting note) names nothing
between the note and either of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.lexicon import Lexicon, PhraseUse, phrase_key
from engine.vault.links import MD_LINK, WIKILINK

__all__ = ["Named", "SentenceRelations", "property_relation"]

# The most words between a phrase and the link it relates ("founded in 2022 by [[X]]").
_MAX_GAP_WORDS = 4
_WORD = re.compile(r"\w+")

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

    def __init__(self, sentence: str, lexicon: Lexicon) -> None:
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
            # A role names the notes listed after it ("Attendees: [[A]], [[B]]"); after a
            # name it is said of someone else ("dinner with [[Drift]] founders").
            return (phrase.relation, phrase.use == "subject_role") if phrase_first else None
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
        linked_is_subject = phrase_first == (use == "passive")
        return phrase.relation, linked_is_subject

    def _link_end(self, position: int) -> int:
        """Where the link (or name) written at `position` ends: the end of the link holding it."""
        for start, end in self._links:
            if start <= position < end:
                return end
        return position


def property_relation(name: str, lexicon: Lexicon) -> Named:
    """The relation a property or inline field holding a link names (`company` → works at).

    A property the lexicon does not know is a relation of its own name ("owner"): the
    note has it, the linked note is its value.
    """
    key = phrase_key(name)
    return lexicon.relation_properties.get(key, (key, False))
