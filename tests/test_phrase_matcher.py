"""A phrase is looked for in what a note shows, and the shortcut that skips rewriting links agrees."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.folding import fold_accents, fold_case
from engine.search.filters import PhraseMatcher, phrase_key, text_has_phrase
from engine.search.grams import _LAST_SPACE, PhraseGrams

_PIECES = [
    "have", "out", "Have", "OUT", "outline", "the", "to", "café", "cafe", "x", "2026",
    " ", " ", "  ", "\n", "\t", ".", ",", "!", "_", "-", "'", "#", "|", "/",
    "[[", "]]", "[", "]", "(", ")", "](", "[[out]]", "[[have|out]]", "[[Out.md]]", "[[a/out]]",
    "[[#out]]", "[[x|]]", "[[#h]]", "[[note#out|have]]", "![[out]]", "[out](x.md)", "[](y)",
    "[ have ](z)", "[[have out]]", "[[have\\|out]]", "`", "*", "ß", "İ", "e\u0301", "Ü", "[[Café]]", "ﬁ",
    "ÉTÉ", "µ", "Æ", "ÿ", "\u00a0", "\u3000", "\r\n", "\ud800", "ha", "ve o", "e ou",
]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join)
_PHRASES = st.lists(st.sampled_from(["have", "out", "the", "to", "x", "line", "cafe", "café", "have,", "out.", "2026", "ss", "ue", "fi", "!", "x !", "[", "](", "]]"]), min_size=1, max_size=3).map(" ".join)


# Latin-1 (where `fold_case` uses a byte table), Latin Extended, Greek, and what folds to more.
_CHARS = st.characters(min_codepoint=0, max_codepoint=0x3FF) | st.sampled_from("ßµẞİıſﬁΣς")


@settings(max_examples=3000, deadline=None)
@given(text=st.text(_CHARS, max_size=40))
def test_folding_case_is_casefold_then_accents(text: str) -> None:
    assert fold_case(text) == fold_accents(text.casefold())


@settings(max_examples=3000, deadline=None)
@given(text=_TEXTS, phrase=_PHRASES)
def test_the_shortcut_agrees_with_reading_what_the_note_shows(text: str, phrase: str) -> None:
    assert PhraseMatcher(phrase)(text) == text_has_phrase(text, phrase)


@settings(max_examples=1000, deadline=None)
@given(texts=st.lists(_TEXTS, max_size=8), phrase=_PHRASES)
def test_notes_searched_joined_give_what_each_alone_gives(texts: list[str], phrase: str) -> None:
    notes = [(f"n{i}", text) for i, text in enumerate(texts)]
    assert sorted(PhraseMatcher(phrase).holding(notes)) == [name for name, text in notes if text_has_phrase(text, phrase)]


def test_what_a_link_shows_is_read_and_what_it_hides_is_not() -> None:
    holds = PhraseMatcher("have out")
    assert holds("We have [[out]] here.")  # the link shows "out"
    assert holds("We [[x|have]] out here.")
    assert not holds("We [[have out|x]] here.")  # the target is hidden behind "x"
    assert not holds('We [x](y "have out") here.')  # a link's title is not shown
    assert holds("We have\n  out here.")
    assert holds("We HAVE out.") and not holds("We have, out.")
    assert PhraseMatcher("cafe au lait")("Un café au lait.")
    assert not PhraseMatcher("see !")("see ![[chart]]")  # an embed's `!` is not shown
    assert PhraseMatcher("see chart")("see ![[chart]]")
    assert PhraseMatcher("ab")("[[a]][[b]]")  # two links side by side show "ab"


@settings(max_examples=2000, deadline=None)
@given(texts=st.lists(_TEXTS, min_size=1, max_size=6), phrase=_PHRASES | _TEXTS)
def test_a_note_left_out_by_its_runs_of_four_never_holds_the_phrase(texts: list[str], phrase: str) -> None:
    notes = {f"n{i}": text for i, text in enumerate(texts)}
    kept = PhraseGrams.of_texts(notes).may_hold(phrase_key(phrase), notes)
    assert {name for name, text in notes.items() if text_has_phrase(text, phrase)} <= kept


def test_runs_of_four_leave_out_notes_that_lack_one() -> None:
    notes = {"a": "We have [[Out]] here.", "b": "We have some out here.", "c": "Behave\n  OUTSIDE!"}
    grams = PhraseGrams.of_texts(notes)
    assert grams.may_hold(phrase_key("have out"), notes) == {"a", "c"}
    assert grams.may_hold(phrase_key("out"), notes) == set(notes)  # shorter than a run: all kept
    assert grams.may_hold(phrase_key("have out"), {"a", "unknown"}) == {"a", "unknown"}


def test_a_note_gone_before_its_text_was_read_is_never_left_out() -> None:
    # The table lists the catalog's notes, then reads their text: a note deleted between
    # the two has no row. It is kept by every phrase, and read again by the next build
    # (re-added with the same text, the same sha, it must not inherit an empty row).
    class Catalog:
        def __init__(self, texts: dict[str, str], listed: dict[str, str]) -> None:
            self.texts, self.listed = texts, listed

        def file_states(self) -> dict[str, SimpleNamespace]:
            return {path: SimpleNamespace(sha=sha) for path, sha in self.listed.items()}

        def note_texts(self, paths: list[str]) -> list[tuple[str, str]]:
            return [(path, self.texts[path]) for path in paths if path in self.texts]

    listed = {"a.md": "1", "b.md": "2"}
    racing = PhraseGrams.build(Catalog({"a.md": "We have out here."}, listed))  # type: ignore[arg-type]
    key = phrase_key("have out")
    assert racing.may_hold(key, {"a.md", "b.md"}) == {"a.md", "b.md"}
    texts = {"a.md": "We have out here.", "b.md": "They have out there."}
    rebuilt = PhraseGrams.build(Catalog(texts, listed), previous=racing)  # type: ignore[arg-type]
    assert rebuilt.may_hold(key, {"a.md", "b.md"}) == {"a.md", "b.md"}
    assert rebuilt.may_hold(phrase_key("out there"), {"a.md", "b.md"}) == {"b.md"}


def test_no_blank_comes_after_the_last_one_the_table_knows() -> None:
    assert all(not chr(code).isspace() for code in range(_LAST_SPACE + 1, 0x110000))
