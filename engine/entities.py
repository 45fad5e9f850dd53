"""Find entity names in free text and recognise known entities in queries."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from engine.folding import LATIN_FOLDS, entity_key, path_form
from engine.lexicon import Lexicon
from engine.lexicon.en import ENGLISH
from engine.tokens import CJK_CLASS, has_cjk
from engine.vault.links import MD_LINK, WIKILINK, shown_links

__all__ = [
    "OPENING",
    "STOP_WORDS",
    "TITLED",
    "WRITTEN",
    "EntityDictionary",
    "EntityMatch",
    "displayed_text",
    "extract_capitalized_words",
    "extract_names",
    "identifier_like",
    "in_other_language",
    "is_title_word",
    "read_names",
]

# Words that start sentences or glue them together never begin (or, alone, form) a name:
# they are the lexicon's (engine/lexicon/), English unless a lexicon is given.
STOP_WORDS = ENGLISH.stop_words

_MIN_PHRASE, _MAX_PHRASE = 2, 5

# What a capitalised phrase's writing says of it (kept with each mention; the graph decides
# with the whole vault, engine/channels/graph/build.py). Identifiers are always WRITTEN.
WRITTEN = 0  # capitalised where a capital is chosen: inside running text, or a link's whole text
OPENING = 1  # capitalised where every word is: at a sentence's, line's or table cell's start
# Capitalised as a title is: in a heading, a Title Case line, a quotation, an emphasised label,
# a piece of a link, after a job title, or in a language the lexicon does not read.
TITLED = 2

_URL = re.compile(
    r"\b(?:https?|ftp)://[^\s<>\"'()\[\]{}]+|\bwww\.[^\s<>\"'()\[\]{}]+", re.IGNORECASE
)
_EMAIL = re.compile(r"(?<![\w.+\-])[\w.+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")
# fmt: off
_FILE_EXTENSIONS = (
    "md", "markdown", "txt", "rst", "pdf", "csv", "tsv", "json", "jsonl", "yaml", "yml",
    "toml", "ini", "cfg", "conf", "env", "xml", "html", "htm", "css", "scss", "less", "js",
    "mjs", "cjs", "ts", "tsx", "jsx", "py", "pyi", "ipynb", "rb", "go", "rs", "java", "kt",
    "kts", "scala", "swift", "c", "h", "cc", "cpp", "hpp", "cs", "php", "pl", "lua", "r",
    "sql", "sh", "bash", "zsh", "ps1", "bat", "lock", "log", "png", "jpg", "jpeg", "gif",
    "svg", "webp", "bmp", "ico", "mp3", "mp4", "wav", "mov", "zip", "gz", "tgz", "tar", "bz2",
    "xz", "7z", "docx", "doc", "xlsx", "xls", "pptx", "ppt", "odt", "ods", "epub", "canvas",
    "excalidraw", "dockerfile", "makefile", "proto", "graphql", "vue", "svelte", "dart", "ex",
    "exs", "erl", "hs", "ml", "clj", "nix", "tf",
)
# fmt: on
# Not right after "%": "Sprint%205%20Retro.md" is a path written for a URL, not "20Retro.md".
_FILE = re.compile(
    r"(?<![\w./@\\%-])(?:[\w\-]+/)*[\w\-]+(?:\.[\w\-]+)*\.(?:"
    + "|".join(_FILE_EXTENSIONS)
    + r")(?![\w/@\-])",
    re.IGNORECASE,
)
# camelCase / PascalCase / HTTPServer: a lower->upper or UPPER->Upper+lower step inside.
_CAMEL_IDENTIFIER = re.compile(
    r"(?<![\w.])(?=[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z]{2}[a-z]))[A-Za-z][A-Za-z0-9]*(?![\w])"
)
_ACRONYM_PLURAL = re.compile(r"[A-Za-z0-9]*[A-Z]e?s")
# Letter-initial words with inner apostrophes/hyphens ("O'Brien", "Jean-Luc").
_WORD = re.compile(r"[^\W\d_][\w]*(?:['’\-][\w]+)*")


def _char_class(chars: Iterable[str]) -> str:
    """A regex character class body for the given characters, as ranges."""
    points = sorted(ord(c) for c in chars)
    parts: list[str] = []
    i = 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        lo, hi = re.escape(chr(points[i])), re.escape(chr(points[j]))
        parts.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "".join(parts)


_GAP = r"[ \t\u00a0]+"


@functools.cache
def _cap_words() -> tuple[str, str]:
    """A capitalised word, and one or an initial, as regex source. `re` has no \\p{Lu}:
    the upper- and titlecase letters of the BMP, as a class, stand in for it. Built at the
    first name read (a scan of 65,536 characters, 23 ms), not when a search imports this."""
    upper = _char_class(c for c in map(chr, range(0x10000)) if c.isupper() or c.istitle())
    cap_word = rf"[{upper}]\w*(?:['’\-]\w+)*"
    # An initial inside a name ("M. Ward", "George W. Bush"): a capital and a full stop,
    # followed by another capitalised word.
    initial = rf"[{upper}]\.(?={_GAP}[{upper}])"
    return cap_word, rf"(?:{initial}|{cap_word})"


@functools.cache
def _single_cap() -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'’\-]){_cap_words()[0]}")


@functools.lru_cache(maxsize=8)
def _cap_run(connectors: frozenset[str]) -> re.Pattern[str]:
    """Runs of 2+ capitalised words or initials, a lexicon's lower-case connector allowed
    between two. A run never starts right after a full stop ("U.S. Army" holds no "S. Army")."""
    inner = "|".join(sorted(map(re.escape, connectors)))
    joined = f"(?:(?:{inner}){_GAP})?" if inner else ""
    run_word = _cap_words()[1]
    return re.compile(rf"(?<![\w'’\-.]){run_word}(?:{_GAP}{joined}{run_word})+")


_URL_TAIL = ".,;:!?'\"”’)"
_PHRASE = 2  # the mark of text a capitalised phrase claimed
# Query and dictionary tokens: word characters with inner `.`, `-`, `'` (config.yaml, e-mail);
# each Han, kana or Hangul character is a token of its own, as those scripts put no space
# between words: the title "ホーム画面" is then found inside "ホーム画面の設定を変更する".
_LETTERS = rf"[^\W{CJK_CLASS}]+"
_TOKEN = re.compile(rf"{_LETTERS}(?:['’.\-]{_LETTERS})*|[{CJK_CLASS}]")


def displayed_text(body: str) -> str:
    """A note body as a reader sees it: links reduced to their displayed text (a wikilink's
    display, else its target's name)."""
    return shown_links(body, lambda parts: parts.display or parts.target.rsplit("/", 1)[-1])


def _possessive(word: str) -> bool:
    return len(word) > 2 and word[-2] in "'’" and word[-1] in "sS"


def extract_names(text: str, lexicon: Lexicon = ENGLISH) -> list[str]:
    """Names text may hold (capitalised phrases, identifiers, file names, URLs, e-mails), deduped;
    `read_names` says how much each one's writing says it is a name."""
    return [name for name, _evidence in read_names(text, lexicon)]


def read_names(text: str, lexicon: Lexicon = ENGLISH, *, foreign: bool | None = None) -> list[tuple[str, int]]:
    """The names text may hold, each with its evidence (WRITTEN, OPENING or TITLED), deduped
    by key in written order; a name written several ways keeps its strongest evidence.

    `foreign` says whether the text `text` was cut from (a note, for a chunk) is in another
    language than the lexicon's (`in_other_language`): a paragraph too short to tell is
    taken to be in that text's; None reads it from `text` itself."""
    found: list[tuple[int, str, int]] = []
    # One byte per character marks text already claimed by a URL, e-mail or file (1) or a
    # phrase (_PHRASE), so that overlap checks stay O(span) however many names the text holds.
    taken = bytearray(len(text))

    def claim(start: int, end: int, name: str, evidence: int, mark: int = 1) -> None:
        if not any(taken[start:end]):
            found.append((start, name, evidence))
            taken[start:end] = bytes((mark,)) * (end - start)

    for m in _URL.finditer(text):
        url = m.group().rstrip(_URL_TAIL)
        if len(url) > 8:
            claim(m.start(), m.start() + len(url), url, WRITTEN)
    for m in MD_LINK.finditer(text) if "](" in text else ():
        # A destination written for a machine (`<Markdown Conventions.md>`, `Markdown%20Conventions.md`)
        # would give a piece of its name ("Conventions.md"); the link is an edge of its own.
        start, end = m.span(3)
        if start >= 0 and any(char in text[start:end] for char in " %<"):
            taken[start:end] = b"\x01" * (end - start)
    for m in _EMAIL.finditer(text) if "@" in text else ():
        claim(m.start(), m.end(), m.group(), WRITTEN)
    in_code_or_link = _CodeOrLink(text)
    for m in _FILE.finditer(text):
        at = m.start()
        if at > 1 and text[at - 1] == " " and text[at - 2].isalnum() and in_code_or_link(at):
            continue  # the end of a file name with blanks in it (`Zoë Laurent.md`), no name of its own
        claim(at, m.end(), m.group(), WRITTEN)
    if any(mark in text for mark in "\"“‘'"):
        around = _Surroundings(text, lexicon)
        for start, end in _work_titles(text, lexicon):
            if not around.in_code_or_heading(start, end):
                claim(start, end, text[start:end], WRITTEN, _PHRASE)
    for start, end, evidence in _capitalized_phrases(text, lexicon, foreign):
        claim(start, end, text[start:end], evidence, _PHRASE)
    for m in _CAMEL_IDENTIFIER.finditer(text):
        if taken.find(1, m.start(), m.end()) < 0 and taken.find(0, m.start(), m.end()) < 0:
            # An identifier inside a longer name is a name of its own too: "CloudKnox
            # Security" also names CloudKnox, as the company is written elsewhere. Not the
            # plural of initials ("Q3 OKRs"): that is a word of the name, not another name.
            if not _ACRONYM_PLURAL.fullmatch(m.group()):
                found.append((m.start(), m.group(), WRITTEN))
        else:
            # The plural of initials alone ("LLMs", "VCs") names a kind of thing rather than
            # one, but the vault's writers look things up by it: without it, a BrainBench
            # question about LLMs loses its answer from the top 5 (R@5 0.9497 → 0.9441).
            claim(m.start(), m.end(), m.group(), WRITTEN)

    found.sort(key=lambda item: item[0])
    place: dict[str, int] = {}
    names: list[tuple[str, int]] = []
    for _, name, evidence in found:
        key = entity_key(name)
        if not key:
            continue
        seen = place.get(key)
        if seen is None:
            place[key] = len(names)
            names.append((name, evidence))
        elif evidence < names[seen][1]:
            names[seen] = (names[seen][0], evidence)
    return names


def extract_capitalized_words(text: str, lexicon: Lexicon = ENGLISH) -> list[str]:
    """Single Title-case words ("Neighbours", "Oahu"), deduped, stop words left out.

    Not names by themselves (every sentence starts with one), but a word that is a
    note's title is a mention of that note, as Obsidian's unlinked mentions count it.
    """
    seen: set[str] = set()
    words: list[str] = []
    for m in _single_cap().finditer(text):
        word = m.group()
        key = word.casefold()
        if len(word) < 3 or key in seen or key in lexicon.stop_words or not is_title_word(word):
            continue
        seen.add(key)
        words.append(word)
    return words


def is_title_word(surface: str) -> bool:
    """One Title-case word: an initial capital and no other (so not an identifier or acronym)."""
    return bool(surface) and surface[0].isupper() and surface[1:] == surface[1:].lower() and _WORD.fullmatch(surface) is not None


# A quotation on one line: in double quotes, curly quotes, or single quotes that open after
# a blank and close before one ("Don't" holds no closing quote).
_QUOTATION = re.compile(
    r'"([^"\n]{2,160})"|“([^”\n]{2,160})”|‘([^\n]{2,160}?)’(?!\w)|(?<![\w\'])\'([^\n]{2,160}?)\'(?!\w)'
)
_MAX_TITLE_WORDS = 12


class _CodeOrLink:
    """Whether a place is inside a code span or a wikilink on its line (an odd number of
    backticks, or an unclosed "[[", before it), asked of places in written order: the text
    is read once."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._read = 0
        self._ticks = 0
        self._linking = False

    def __call__(self, at: int) -> bool:
        segment = self._text[self._read : at]
        line = segment.rfind("\n")
        if line >= 0:
            segment = segment[line + 1 :]
            self._ticks, self._linking = 0, False
        self._ticks += segment.count("`")
        opened, closed = segment.rfind("[["), segment.rfind("]]")
        if opened != closed:
            self._linking = opened > closed
        self._read = at
        return self._ticks % 2 == 1 or self._linking


def _work_titles(text: str, lexicon: Lexicon) -> list[tuple[int, int]]:
    """Spans of quotations written in Title Case as a whole: a work's title ("The Big Doll
    House", "Why Most AI Products Fail at the Integration Layer") is one name; the pieces of
    it that the capitalised runs hold are none (see `_Surroundings.titled`)."""
    spans: list[tuple[int, int]] = []
    for m in _QUOTATION.finditer(text):
        group = next(i for i in range(1, 5) if m.group(i) is not None)
        start, end = m.start(group), m.end(group)
        while end > start and text[end - 1] in ".,;:!? \t\\":
            end -= 1
        while start < end and text[start] in " \t":
            start += 1
        words = [w.group() for w in _WORD.finditer(text, start, end)]
        if not 2 <= len(words) <= _MAX_TITLE_WORDS or not text[start].isupper():
            continue
        if words[0].casefold() in lexicon.articles and len(words) > 2:
            # "The Mom Test" is asked about, and written, as "Mom Test" too.
            start = text.index(words[1], start + len(words[0]))
            words = words[1:]
        capitals = [w for w in words if w[0].isupper()]
        if len(capitals) < 2 or all(w.isupper() for w in capitals):
            continue
        if all(w[0].isupper() or w.casefold() in lexicon.stop_words or w in lexicon.name_connectors for w in words):
            spans.append((start, end))
    return spans


def _capitalized_phrases(text: str, lexicon: Lexicon, foreign: bool | None = None) -> list[tuple[int, int, int]]:
    """Spans of 2-5 word capitalised phrases with their evidence, split at stop words, possessives trimmed."""
    spans: list[tuple[int, int, int]] = []
    around = _Surroundings(text, lexicon, foreign)
    # The regex finds runs of 2+ capitalised words in C; Python only looks at those runs.
    for run_match in _cap_run(lexicon.name_connectors).finditer(text):
        start, end = run_match.span()
        words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text, start, end)]
        if text[end : end + 1] in _GLUE and text[end + 1 : end + 2].isalnum():
            words.pop()  # "Oakland R&D": the last letter is an abbreviation's, not the name's
        if words and len(words[0][2]) == 1 and _AFTER_NUMBER.search(text, max(0, start - 4), start):
            words.pop(0)  # "at 9.4 T. Chronic hypoxia": a unit's letter, no initial
        shown = around.in_link(start, end)
        if shown is None:
            # A run beside "&" is a piece of a longer name ("National Surgical Adjuvant Breast
            # & Bowel Project", "Johnson & Johnson").
            titled = around.titled(start, end) or _AMPERSAND.match(text, end) is not None or (
                _AMPERSAND_BEFORE.search(text, max(0, start - 3), start) is not None
            )
            at_start = _at_sentence_start(text, start, lexicon)
        else:
            # A link's shown text, written whole, names what it links to; a piece of it
            # ("[[ADR-001 Flutter for the Atlas client]]") is no name of its own.
            titled, at_start = not shown, False
        # A possessive ends a name: "Chen's Board Meeting" is two runs.
        first = 0
        for idx, (_, _, word) in enumerate(words):
            if _possessive(word) and idx + 1 < len(words):
                _take_run(words[first : idx + 1], spans, lexicon, at_start and first == 0, titled)
                first = idx + 1
        _take_run(words[first:], spans, lexicon, at_start and first == 0, titled)
    return spans


# What ends the text before a sentence, a table cell, a label, a log line's stamp, a quotation
# or a bracket ("- **2024-06-18** | Led …", "8. Select Import", "**Note:** …", "<b>…"), and what
# opens a line or a clause before one (a list item, a heading; a dash between blanks). A capital
# after a parenthesis, a semicolon or a dash inside a word is chosen ("(Scott McGregor)",
# "Dallas–Fort Worth").
_OPENS_SENTENCE = frozenset(".!?:|\"“‘«[]>*")
_OPENS_LINE = frozenset("—–-•#+")
_DATE_CHARS = frozenset("0123456789-/.")
_LINE_MARKUP = frozenset(" \t*_|>-+#—–•")


def _at_sentence_start(text: str, start: int, lexicon: Lexicon) -> bool:
    """Whether the text before `start` (blanks aside) ends a sentence, opens a line, or is a
    date or number opening a line's record ("2024-06-18 Led …"). A full stop after an
    abbreviation ("Dr. Maria Chen") ends none. Looks back over blanks, date characters and a
    line's markup only: each run's look is bounded by the text since the run before."""
    at = start - 1
    while at >= 0 and text[at] in " \t\u00a0":
        at -= 1
    if at < 0 or text[at] == "\n":
        return True
    if text[at] == ".":
        word = at
        while word > 0 and text[word - 1].isalpha():
            word -= 1
        return text[word:at].casefold() not in lexicon.abbreviations
    if text[at] in _OPENS_SENTENCE:
        return True
    if text[at] in _OPENS_LINE:
        return (at > 0 and text[at - 1] in " \t") or _opens_line(text, at)
    if not text[at].isdigit():
        return False
    while at >= 0 and text[at] in _DATE_CHARS:
        at -= 1
    # The date opens the line ("- **2024-06-18** Led", "2023-06-30 Hired"): not "his 2011 Wall Street Journal essay".
    return _opens_line(text, at)


def _opens_line(text: str, at: int) -> bool:
    """Whether only a line's markup (bullets, heading marks, quote marks, emphasis) stands
    between the line's start and `at`."""
    while at >= 0 and text[at] in _LINE_MARKUP:
        at -= 1
    return at < 0 or text[at] == "\n"


_GLUE = frozenset("&+")
_AFTER_NUMBER = re.compile(r"\d[ \t]+$")
_AMPERSAND = re.compile(r"[ \t]+&[ \t]+\w")
_AMPERSAND_BEFORE = re.compile(r"&[ \t]+$")
# A heading, or a callout's title ("> [!info]- Mac OS").
_HEADING = re.compile(r"[ \t>]*(?:#{1,6}(?:[ \t]|$)|\[![^\]\n]*\])")
_FENCE = re.compile(r"^[ \t]{0,3}(?:```|~~~)", re.MULTILINE)
_TOGGLING_QUOTES = frozenset('"“”„«»')
_EMPHASIS = frozenset("*_")
# A paragraph of at least this many lower-case words, few of them the lexicon's stop words
# and many no word of its language, is in another language (or is code).
_FOREIGN_WORDS, _FOREIGN_STOPS, _FOREIGN_UNKNOWN = 8, 0.15, 0.4
_WORD_PARTS = re.compile(r"[-'’]")


def _foreign(text: str, start: int, end: int, lexicon: Lexicon) -> bool | None:
    """Whether a paragraph is in a language the lexicon does not read: terse English (a log
    line, a table) has few stop words too, but its words are the language's words. None
    when it has too few lower-case words to tell."""
    known = lexicon.known_words()
    if not known:
        return False
    lowered = [m.group() for m in _WORD.finditer(text, start, end) if m.group()[0].islower()]
    if len(lowered) < _FOREIGN_WORDS:
        return None
    if sum(word in lexicon.stop_words for word in lowered) >= _FOREIGN_STOPS * len(lowered):
        return False
    parts = [part for word in lowered for part in _WORD_PARTS.split(word) if part]
    return sum(part not in known for part in parts) > _FOREIGN_UNKNOWN * len(parts)


def in_other_language(text: str, lexicon: Lexicon = ENGLISH) -> bool:
    """Whether a text (a note) is, as a whole, in another language than the lexicon's."""
    return bool(_foreign(text, 0, len(text), lexicon))


class _Surroundings:
    """What the text around a capitalised run says of its capitals: a heading's, a title's,
    a quotation's, code's, an emphasised label's, a link's or another language's. Runs are asked about in written order; each line and paragraph is read
    once, so the whole is linear."""

    def __init__(self, text: str, lexicon: Lexicon, foreign: bool | None = None) -> None:
        self._text = text
        self._lexicon = lexicon
        # The line of the last run: start, end, whether it is titled whole (a heading, a
        # callout's title, fenced code), and the spans its quotation marks and its code
        # marks enclose (each as starts and ends, merged).
        self._line: tuple[int, int, bool, _Spans, _Spans] = (0, -1, False, ([], []), ([], []))
        self._fenced = False  # inside a fenced code block, as of `_fences_read`
        self._fences_read = 0
        self._paragraph = (0, -1, False)  # start, end, foreign
        self._text_foreign = foreign  # the whole text's language, read when first needed
        self._links: list[tuple[int, int, int, int]] | None = None  # start, end, shown start, shown end
        self._link_starts: list[int] = []

    def titled(self, start: int, end: int) -> bool:
        """Whether the run's capitals are a title's rather than its own: it is in a heading or
        a callout's title, quoted, in code, an emphasised label (**Export Format**), or in a
        paragraph of a language the lexicon does not read (German capitalises every noun)."""
        text = self._text
        _, _, whole, quoted, code = self._line_of(start)
        if whole or _within(quoted, start, end) or _within(code, start, end):
            return True
        if start and text[start - 1] in _EMPHASIS:
            after = end
            while after < len(text) and text[after] in ".:…":
                after += 1
            if text.startswith(text[start - 1], after):
                return True
        return self._foreign(start)

    def in_code_or_heading(self, start: int, end: int) -> bool:
        """Whether the span is in code, a heading or a callout's title."""
        _, _, whole, _, code = self._line_of(start)
        return whole or _within(code, start, end)

    def _line_of(self, at: int) -> tuple[int, int, bool, _Spans, _Spans]:
        line = self._line
        if not line[0] <= at <= line[1]:
            text = self._text
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            if start > self._fences_read:
                fences = sum(1 for _ in _FENCE.finditer(text, self._fences_read, start))
                self._fenced ^= fences % 2 == 1
                self._fences_read = start
            if self._fenced or _HEADING.match(text, start, end):
                line = (start, end, True, ([], []), ([], []))
            else:
                quoted, code = _quoted(text[start:end], start)
                line = (start, end, False, _merged(quoted), _merged(code))
            self._line = line
        return line

    def _foreign(self, at: int) -> bool:
        text = self._text
        start, end, foreign = self._paragraph
        if not start <= at <= end:
            start = text.rfind("\n\n", 0, at) + 1
            end = text.find("\n\n", at)
            end = len(text) if end < 0 else end
            read = _foreign(text, start, end, self._lexicon)
            if read is None:
                # Too short to tell ("Teilnehmende: Dr. Katrin Vogel (Leiterin …)"): the text's
                # language is the paragraph's, read once.
                if self._text_foreign is None:
                    self._text_foreign = in_other_language(text, self._lexicon)
                read = self._text_foreign
            foreign = read
            self._paragraph = (start, end, foreign)
        return foreign

    def in_link(self, start: int, end: int) -> bool | None:
        """None when the run is in no link; True when it is a link's whole shown text; False
        when it is a part of a link (of its target, or of a longer shown text)."""
        links = self._links
        if links is None:
            links = self._links = _link_spans(self._text)
            self._link_starts = [link[0] for link in links]
        if not links:
            return None
        at = bisect.bisect_right(self._link_starts, start) - 1
        if at < 0 or links[at][1] < end:
            return None
        return links[at][2:] == (start, end)


_Spans = tuple[list[int], list[int]]  # starts and ends of spans in order, none overlapping


def _merged(spans: Iterable[tuple[int, int]]) -> _Spans:
    """Spans joined where they overlap (a quotation inside another), as starts and ends."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(spans):
        if ends and start <= ends[-1]:
            ends[-1] = max(end, ends[-1])
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def _within(spans: _Spans, start: int, end: int) -> bool:
    at = bisect.bisect_right(spans[0], start) - 1
    return at >= 0 and end <= spans[1][at]


def _quoted(line: str, offset: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The spans (offset into the text) a line's quotation marks enclose, and those its code
    marks do: double quotes of any style toggle, a single quote opens after a blank and closes
    before one (an apostrophe, inside a word, does neither), backticks toggle."""
    quoted: list[tuple[int, int]] = []
    code: list[tuple[int, int]] = []
    if not any(mark in line for mark in "\"“”„«»'‘’`"):
        return quoted, code
    double = single = tick = -1
    for at, char in enumerate(line):
        if char == "`":
            if tick < 0:
                tick = at
            else:
                code.append((offset + tick, offset + at))
                tick = -1
        elif char in _TOGGLING_QUOTES:
            if double < 0:
                double = at
            else:
                quoted.append((offset + double, offset + at))
                double = -1
        elif char in "'‘’":
            before = line[at - 1] if at else " "
            after = line[at + 1] if at + 1 < len(line) else " "
            if single < 0 and not before.isalnum() and after.isalnum():
                single = at
            elif single >= 0 and before.isalnum() and not after.isalnum():
                quoted.append((offset + single, offset + at))
                single = -1
    return quoted, code


def _link_spans(text: str) -> list[tuple[int, int, int, int]]:
    """Each wikilink's and Markdown link's span and the span of the text it shows, in order."""
    spans: list[tuple[int, int, int, int]] = []
    if "[[" in text:
        for m in WIKILINK.finditer(text):
            inner, at = m.group(2), m.start(2)
            pipe = inner.find("|")
            if pipe >= 0:
                shown_start, shown_end = at + pipe + 1, m.end(2)
            else:
                cut = min((i for i in (inner.find("#"), inner.find("^")) if i >= 0), default=len(inner))
                shown_start, shown_end = at + inner.rfind("/", 0, cut) + 1, at + cut
            while shown_start < shown_end and text[shown_start].isspace():
                shown_start += 1
            while shown_end > shown_start and text[shown_end - 1].isspace():
                shown_end -= 1
            spans.append((m.start(), m.end(), shown_start, shown_end))
    if "](" in text:
        spans.extend((m.start(), m.end(), m.start(2), m.end(2)) for m in MD_LINK.finditer(text))
        spans.sort()
    return spans


def _take_run(
    run: list[tuple[int, int, str]], spans: list[tuple[int, int, int]], lexicon: Lexicon, at_start: bool, titled: bool
) -> None:
    if len(run) > _MAX_PHRASE + 2:
        # A long Title Case run is a heading or a headline, not a name.
        return
    evidence = TITLED if titled else WRITTEN
    stop_words, connectors = lexicon.stop_words, lexicon.name_connectors
    # A function word capitalised where no sentence starts is a title's ("Why Most AI
    # Products Fail", "Do Things That Don't Scale") or a longer name's ("the First Round
    # Review"): what is left of the run is a piece of one, not a name of its own.
    title_case = any(word.casefold() in stop_words and word not in connectors for _, _, word in run[int(at_start) :])
    if at_start:
        # A capital at a sentence's start says nothing: the sentence's verb, adverb or
        # function word is no part of the name after it ("Led Series B for …", "Whereas
        # Treg cells …", "Previously Feluda …"); a capital after it was chosen, but not one
        # after a section's label in capitals ("METHODS Differentiation of …").
        chosen = False
        while run and lexicon.opens_no_name(run[0][2]):
            chosen = chosen or not run[0][2].isupper()
            run = run[1:]
        if not chosen and not titled:
            evidence = OPENING
    if title_case:
        evidence = TITLED
    # Split the run at stop words ("The", "With"), then trim connectors at the ends.
    piece: list[tuple[int, int, str]] = []
    for item in [*run, None]:
        if item is None or (item[2].casefold() in stop_words and item[2] not in connectors):
            for part in _at_inner_title(piece, lexicon):
                rest, after_title = _without_title(part, lexicon)
                if after_title == TITLED or (after_title == WRITTEN and evidence == OPENING):
                    evidence_of_rest = after_title
                else:
                    evidence_of_rest = evidence
                _take_piece(rest, spans, connectors, evidence_of_rest)
            piece = []
        else:
            piece.append(item)


def _at_inner_title(piece: list[tuple[int, int, str]], lexicon: Lexicon) -> list[list[tuple[int, int, str]]]:
    """A piece split before a title that stands before a name inside it: "Acme Labs CEO Jane
    Doe" is Acme Labs and CEO Jane Doe, "American President Harry Truman" President Harry
    Truman (and American, no name alone)."""
    for at in range(1, len(piece)):
        title = piece[at][2].casefold() in lexicon.name_titles
        if title and piece[at - 1][2].casefold() not in lexicon.job_titles and at + 1 < len(piece):
            return [piece[:at], piece[at:]]
    return [piece]


def _without_title(
    piece: list[tuple[int, int, str]], lexicon: Lexicon
) -> tuple[list[tuple[int, int, str]], int | None]:
    """A piece less the job title that opens it ("Partner Hannah Kreiswirth" → Hannah
    Kreiswirth), or nothing when it is a job title ("Head of Operations", "Senior Data
    Engineer"): a title says what someone does, it names no one. And, when it had one, what
    that says of the rest: TITLED for a title's rest ("Chief Business Officer", "VP of
    Engineering Marcus Webb"), a name only where the vault names it so elsewhere; WRITTEN
    after a title that stands before a name ("Partner Sarah Guo"). A title after a name is
    no part of it either ("Vector CTO")."""
    at = 0
    while at < len(piece) and piece[at][2].casefold() in lexicon.job_titles:
        at += 1
    end = len(piece)
    while end > at and piece[end - 1][2].casefold() in lexicon.name_titles:
        end -= 1
    rest = piece[at:end]
    if rest and rest[-1][2].casefold() in lexicon.person_nouns:
        return [], None
    if not at:
        return rest, None
    # "Partner Sarah Guo": a title that stands before a name as an honorific does, and
    # explains a sentence's first capital as an opening verb would.
    before_name = all(word.casefold() in lexicon.name_titles for _, _, word in piece[:at])
    if before_name and rest and rest[0][2] not in lexicon.name_connectors:
        return rest, WRITTEN
    return rest, TITLED


def _modifier(word: str) -> bool:
    tail = word.rpartition("-")[2]
    return tail != word and tail.isalpha() and tail.islower()


def _take_piece(
    piece: list[tuple[int, int, str]], spans: list[tuple[int, int, int]], connectors: frozenset[str], evidence: int
) -> None:
    while piece and piece[0][2] in connectors:
        piece.pop(0)
    while piece and piece[-1][2] in connectors:
        piece.pop()
    # A compound ending in a lower-case word modifies what it is written with ("AI-powered
    # SOC", "Boston-area VCs", "Indian Hindi-language"): no word of a name at its ends.
    while piece and _modifier(piece[0][2]):
        piece.pop(0)
    while piece and _modifier(piece[-1][2]):
        piece.pop()
    if len(piece) > _MAX_PHRASE and any(word in connectors for _, _, word in piece):
        # Too long for one name, but a connector may join two: "Trent Reznor of Nine Inch
        # Nails" names a man and a band.
        part: list[tuple[int, int, str]] = []
        for item in [*piece, None]:
            if item is None or item[2] in connectors:
                _take_piece(part, spans, frozenset(), evidence)
                part = []
            else:
                part.append(item)
        return
    if not _MIN_PHRASE <= len(piece) <= _MAX_PHRASE:
        return
    words = [w for _, _, w in piece]
    if all(w.isupper() and len(w) > 1 for w in words if w not in connectors):
        # Shouting ("DO NOT MERGE") is not a name.
        return
    if all(len(w) == 1 for w in words):
        return  # initials alone ("S. F" of a citation's "Altschul, S. F.")
    start, end = piece[0][0], piece[-1][1]
    if _possessive(words[-1]):
        end -= 2
    spans.append((start, end, evidence))


@dataclass(frozen=True)
class EntityMatch:
    """A known entity recognised in a query: the text as written, its span and entity ids."""

    surface: str
    start: int
    end: int
    entity_ids: tuple[str, ...]


def _token_key(token: str) -> str:
    return token.casefold().translate(LATIN_FOLDS).replace("’", "'")


def _gap_key(gap: str) -> str:
    """Separator between two tokens in a key: a space, or the punctuation between them."""
    # "Marcus, Chen" must not match "Marcus Chen", nor "Priya. Patel" match "Priya Patel".
    punct = "".join(gap.split())
    return f" {punct} " if punct else " "


def _tokens(text: str) -> tuple[list[tuple[int, int, str, str]], list[str]]:
    """Tokens (start, end, as written, key) of text and the separator keys between them."""
    tokens = [(m.start(), m.end(), m.group(), _token_key(m.group())) for m in _TOKEN.finditer(text)]
    gaps = [_gap_key(text[a[1] : b[0]]) for a, b in pairwise(tokens)]
    return tokens, gaps


def _surface_key(surface: str) -> tuple[str, str | None]:
    """Dictionary key of a surface form, and the token itself if it is a single token."""
    tokens, gaps = _tokens(surface)
    if not tokens:
        return "", None
    parts = [tokens[0][3]]
    for gap, token in zip(gaps, tokens[1:], strict=False):
        parts.append(gap)
        parts.append(token[3])
    return "".join(parts), (tokens[0][2] if len(tokens) == 1 else None)


def _entry_key(surface: str) -> tuple[str, str | None]:
    """A dictionary entry's lookup key, and the surface itself when it is one word.

    A name is keyed in one Unicode form (NFC): a heading written on macOS spells "é" as "e"
    and a combining accent, and a query types it as one character."""
    surface = surface.strip()
    surface = path_form(surface)
    if "  " not in surface and surface.replace(" ", "").isalnum() and not has_cjk(surface):
        # Fast path for the common "Word Word" surface (str.isalnum is \w minus "_",
        # so tokenising would split it at the spaces only): the key is the folded casefold.
        return surface.casefold().translate(LATIN_FOLDS), (None if " " in surface else surface)
    return _surface_key(surface)


_MAX_WIDTH = 16  # tokens; a longer title is a sentence, not a name to spot in a query


# The shapes of an identifier (each linear: no nested repetition). A CamelCase word joins
# words of two or more letters (GeoPackage, FeatureCollection, SQLCipher); a term that
# only mixes cases (vCJD, UreA, mRNAs, LaHave) is a word of its field, not an identifier.
# A file name ends in a dot and a short extension; a path has a slash between word
# characters.
_IDENTIFIER = re.compile(
    r"\A(?:\S*[a-z]{2}[A-Z][a-z]\S*|\S*[A-Z]{3}[a-z]{2}\S*|\S+\.[A-Za-z0-9]{1,5}|\S*\w[/\\]\w\S*|\S+@\S+\.\S+|https?://\S+)\Z"
)


def identifier_like(name: str) -> bool:
    """Whether `name` is written as an identifier (no blank; the shapes above)."""
    return len(name) >= 3 and _IDENTIFIER.match(name) is not None


def _width(key: str) -> int:
    """The tokens in a dictionary key: a path or a URL is several tokens joined by "/" or ":"
    ("src/sync/merge.py" is three), so a query must be read that many tokens wide to find it."""
    return max(1, key.count(" ") + 1, len(_TOKEN.findall(key)))


_KIND_ORDER = {"note": 0, "tag": 1, "name": 2}


def _entity_order(entity_id: str) -> tuple[int, str]:
    """Where a full build puts an entity among a key's ids: notes, tags, names, each by id."""
    return (_KIND_ORDER.get(entity_id.partition(":")[0], 3), entity_id)


class EntityDictionary:
    """Known entity surface forms (titles, aliases, tags, names) indexed by normalised n-gram."""

    def __init__(self, entries: Iterable[tuple[str, str]]) -> None:
        index: dict[str, dict[str, None]] = {}
        upper: dict[str, int] = {}
        widest = 1
        for surface, entity_id in entries:
            key, single = _entry_key(surface)
            if not key:
                continue
            widest = max(widest, _width(key))
            ids = index.get(key)
            if ids is None:
                index[key] = {entity_id: None}
            else:
                ids[entity_id] = None
            if single is not None and single.isupper():
                # Short all-caps aliases ("PK", "IT") match only when written that way.
                upper[single] = upper.get(single, 0) + 1
        self._index = index
        self._upper = upper
        self._upper_exact = frozenset(upper)
        self._widest = widest

    def updated(
        self, added: Iterable[tuple[str, str]], removed: Iterable[tuple[str, str]]
    ) -> EntityDictionary:
        """A copy with `removed` entries taken out and `added` put in (this one is unchanged).

        Answers equal a dictionary built from scratch over the same entries, provided
        entries come in the order a full build uses (notes, then tags, then names, each
        by key): a key's entity ids are kept in that order.
        """
        index = dict(self._index)
        upper = dict(self._upper)
        widest = self._widest  # a bound: a removed long name may leave it wider than needed
        touched: set[str] = set()
        for surface, entity_id in removed:
            key, single = _entry_key(surface)
            ids = index.get(key) if key else None
            if ids is None or entity_id not in ids:
                continue
            index[key] = {i: None for i in ids if i != entity_id}
            touched.add(key)
            if single is not None and single.isupper() and upper.get(single, 0) > 0:
                upper[single] -= 1
                if not upper[single]:
                    del upper[single]
        for surface, entity_id in added:
            key, single = _entry_key(surface)
            if not key:
                continue
            index[key] = {**index.get(key, {}), entity_id: None}
            widest = max(widest, _width(key))
            touched.add(key)
            if single is not None and single.isupper():
                upper[single] = upper.get(single, 0) + 1
        for key in touched:
            ids = index[key]
            if ids:
                index[key] = dict.fromkeys(sorted(ids, key=_entity_order))
            else:
                del index[key]
        copy = EntityDictionary(())
        copy._index = index
        copy._upper = upper
        copy._upper_exact = frozenset(upper)
        copy._widest = widest
        return copy

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, surface: object) -> bool:
        return isinstance(surface, str) and _surface_key(surface.strip())[0] in self._index

    def _single_ok(self, written: str, stop_words: frozenset[str]) -> bool:
        key = _token_key(written)
        if len(key) >= 3 and key not in stop_words:
            return True
        return written in self._upper_exact

    def recognize(self, query: str, max_ngram: int | None = None, *, lexicon: Lexicon = ENGLISH) -> list[EntityMatch]:
        """Known entities in a query: longest matches first, non-overlapping, in query order.

        Args:
            max_ngram: the most tokens a match may span (default: as many as the
                longest entry, so a seven-word meeting title is found whole).
            lexicon: whose stop words are never a one-word match.
        """
        tokens, gaps = _tokens(query)
        index = self._index
        n = len(tokens)
        width = max(1, min(self._widest, _MAX_WIDTH) if max_ngram is None else max_ngram)
        # (tokens, chars, first token, last token, char start, char end, ids)
        candidates: list[tuple[int, int, int, int, int, int, dict[str, None]]] = []
        for i in range(n):
            key = ""
            start = tokens[i][0]
            for j in range(i, min(n, i + width)):
                key = tokens[j][3] if j == i else key + gaps[j - 1] + tokens[j][3]
                end = tokens[j][1]
                written_last = tokens[j][2]
                ids = index.get(key)
                if ids is None and _possessive(written_last):
                    # "Priya's" -> "Priya"
                    ids = index.get(key[:-2])
                    end -= 2
                    written_last = written_last[:-2]
                if ids is None:
                    continue
                if i == j and not self._single_ok(written_last, lexicon.stop_words):
                    continue
                candidates.append((j - i + 1, end - start, i, j, start, end, ids))
        candidates.sort(key=lambda c: (-c[0], -c[1], c[2]))
        used = bytearray(n)
        chosen: list[EntityMatch] = []
        for _, _, i, j, start, end, ids in candidates:
            if any(used[i : j + 1]):
                continue
            used[i : j + 1] = b"\x01" * (j - i + 1)
            chosen.append(EntityMatch(query[start:end], start, end, tuple(ids)))
        chosen.sort(key=lambda m: m.start)
        return chosen
