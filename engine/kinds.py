"""Which kind of note a query asks for, read from the vault's own folders.

A vault that files notes in `People/`, `Companies/` or `Meetings/` says what kind each
note is. A query that names one of those kinds ("Any portfolio companies focused on
drug discovery?", "Tell me about the people who …", "someone who speaks at
conferences") asks for notes of that kind: fusion lets the other notes' votes count
less, so a company or a person is not pushed out of the first results by a meeting
that happens to use the same words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence

from engine.lexicon import Lexicon
from engine.lexicon.en import ENGLISH
from engine.records import NO_KIND, AskedKind

__all__ = ["NoteKinds", "is_person", "linked_of_kind", "with_hops"]

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# A kind this large is most of the vault: naming it does not narrow anything.
_MAX_SHARE = 0.5


def is_person(path: str, tags: Iterable[str], lexicon: Lexicon = ENGLISH) -> bool:
    """Whether the vault files this note as a person: a People/ folder or a #person tag."""
    return _person_folder(path.rpartition("/")[0], lexicon) or _person_tagged(tags, lexicon)


def _person_folder(folder: str, lexicon: Lexicon) -> bool:
    """Whether a folder ("Team/People") files its notes as people."""
    return not lexicon.person_marks.isdisjoint(folder.casefold().split("/"))


def _person_tagged(tags: Iterable[str], lexicon: Lexicon) -> bool:
    """Whether a tag files the note as a person: #person, #crm/contact."""
    return any(t.lstrip("#").casefold().rsplit("/", 1)[-1] in lexicon.person_marks for t in tags)


class NoteKinds:
    """Top-level folder names (stemmed) → the notes filed under them, and the vault's people."""

    def __init__(
        self,
        paths: Iterable[str],
        tagged: Iterable[tuple[str, Sequence[str]]] = (),
        stem: Callable[[str], list[str]] | None = None,
        lexicon: Lexicon = ENGLISH,
    ) -> None:
        """`tagged` holds (path, tags) of the notes whose tags may file them as people; a
        note in any folder can be tagged #person."""
        self._stem = stem
        self._lexicon = lexicon
        by_folder: dict[str, set[str]] = {}
        people: set[str] = {path for path, tags in tagged if _person_tagged(tags, lexicon)}
        folder_is_person: dict[str, bool] = {}  # per folder, not per note: vaults have few folders
        total = 0
        for path in paths:
            total += 1
            folder, slash, _name = path.rpartition("/")
            if not slash:
                continue
            person = folder_is_person.get(folder)
            if person is None:
                person = folder_is_person[folder] = _person_folder(folder, lexicon)
            if person:
                people.add(path)
            # The top-level folders are a vault's filing categories; folders below them
            # group by topic ("Projects/Atlas/"), which the query's words already reach.
            top = folder.partition("/")[0].casefold().strip()
            if top not in lexicon.any_note_folders and not top.startswith(".") and _WORD.fullmatch(top):
                by_folder.setdefault(top, set()).add(path)
        limit = total * _MAX_SHARE
        self._by_stem: dict[str, AskedKind] = {}
        for name, members in sorted(by_folder.items()):
            if len(members) <= limit:
                for key in self._stems(name):
                    self._by_stem.setdefault(key, AskedKind(name, frozenset(members)))
        self._people = AskedKind("people", frozenset(people)) if 0 < len(people) <= limit else NO_KIND
        # Whoever acts: the people and the organisations (Companies/, Organizations/),
        # each a kind of its own (the size limit holds for each, not for their union).
        self._agents = self._people
        organisations = [
            members for name, members in by_folder.items() if name in lexicon.organisation_marks and len(members) <= limit
        ]
        self._organisations = bool(organisations)
        if self._people.notes and organisations:
            agents = self._people.notes.union(*organisations)
            self._agents = AskedKind("people or organisations", frozenset(agents))

    @property
    def structured(self) -> bool:
        """Whether the vault files its people (a People/ folder, #person tags) or its
        organisations (Companies/, Organizations/) as kinds of their own."""
        return bool(self._people.notes) or self._organisations

    def _stems(self, word: str) -> list[str]:
        return self._stem(word) if self._stem is not None else [word]

    def asked_for(self, text: str) -> AskedKind:
        """The kind of note the query asks for: the first of its words that names one.

        "someone", "people", and "who" said of a noun ("the engineer who …") ask for the
        vault's people; "who" opening the question ("Who built …?") asks for people or
        organisations; a word that is a top-level folder's name, singular or plural
        ("company" for Companies/), asks for that folder. A possessive ("other companies'
        apps", "the company's founder") says whose the next thing is: it names no kind.
        In a language whose compounds end in their head (`Lexicon.head_last`), a kind word
        right before another noun the engine knows modifies it: "project meetings" are
        meetings, "meeting attendees" and "company investors" are people the relation
        names, not meetings or companies. "meeting notes" stays meetings: notes is any note.
        """
        lexicon = self._lexicon
        words = [(match.group().casefold(), match) for match in _WORD.finditer(text)]
        opening = True  # no word before this one but "and", "so", …
        for at, (word, _match) in enumerate(words):
            if _possessive(word):
                opening = False
                continue
            person = word in lexicon.person_words
            found = self._kind_of(word)
            if word in lexicon.who_words:
                # "who" after a noun ("the engineer who cut …") is said of people; opening
                # a question ("Who built it?") it asks for whoever acted, a person or an organisation.
                asked = self._agents if opening else self._people
                if asked.notes:
                    return asked
            elif (person or found is not None) and self._modifies_next(words, at, text):
                opening = False
                continue
            elif self._people.notes and (person or (found is None and self._heads_as_person(words, at, text))):
                return self._people
            opening = opening and word in lexicon.clause_openers
            if found is not None:
                return found
        return NO_KIND

    def _heads_as_person(self, words: Sequence[tuple[str, re.Match[str]]], at: int, text: str) -> bool:
        """Whether the word at `at` is a noun for a person (`Lexicon.person_nouns`) that heads
        its phrase: "Orbit fintech engineers", "the careful engineer (likes Rust, hates
        slide decks)", "staff engineers before joining". In a language whose compounds
        end in their head, such a noun right before another word that is not a stop word
        modifies it, and the phrase is about something else: "developer advocacy",
        "engineer meetings" (meetings), "the thing designers chase"."""
        lexicon = self._lexicon
        word, match = words[at]
        if word not in lexicon.person_nouns:
            return False
        if not lexicon.head_last or at + 1 >= len(words):
            return True
        following, after = words[at + 1]
        return bool(text[match.end() : after.start()].strip()) or following in lexicon.stop_words

    def _kind_of(self, word: str) -> AskedKind | None:
        """The folder kind a (casefolded) word names, singular or plural."""
        for key in self._stems(word):
            found = self._by_stem.get(key)
            if found is not None:
                return found
        return None

    def _modifies_next(self, words: Sequence[tuple[str, re.Match[str]]], at: int, text: str) -> bool:
        """Whether the word at `at`, which names a kind, modifies the noun right after it
        ("project meetings", "meeting attendees"): only in a language whose compounds
        end in their head, and only where nothing but spaces parts the two words."""
        lexicon = self._lexicon
        if not lexicon.head_last or at + 1 >= len(words):
            return False
        _word, match = words[at]
        following, after = words[at + 1]
        if text[match.end() : after.start()].strip() or _possessive(following):
            return False
        return (
            following in lexicon.person_words
            or following in lexicon.role_nouns
            or self._kind_of(following) is not None
        )


def _possessive(word: str) -> bool:
    """Whether a word is written as a possessive: "companies'", "company's" (either apostrophe)."""
    return word.endswith(("'", "’")) or (len(word) > 2 and word[-2] in "'’" and word[-1] == "s")


def linked_of_kind(targets: Iterable[str], kind_notes: Collection[str]) -> tuple[str, ...]:
    """The notes of the asked kind among a note's link targets: most linked first, then as written.

    "The company whose CEO insists on founder-friendly terms": the words describe the
    CEO, whose note is the best keyword match; the company asked for is the note of that
    kind the CEO's note links to, one hop away.
    """
    counts = Counter(target for target in targets if target in kind_notes)  # in first-written order
    written = {target: at for at, target in enumerate(counts)}
    return tuple(sorted(counts, key=lambda target: (-counts[target], written[target])))


def with_hops(ranking: Sequence[str], hops: Sequence[str]) -> list[str]:
    """A graph ranking with the notes reached by a kind hop first (search and eval's re-fusion)."""
    if not hops:
        return list(ranking)
    first = set(hops)
    return [*hops, *(path for path in ranking if path not in first)]
