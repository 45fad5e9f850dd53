"""Find entity names in free text and recognise known entities in queries."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from engine.lexicon import Lexicon
from engine.lexicon.en import ENGLISH
from engine.names import one_form
from engine.tokens import CJK_CLASS, has_cjk
from engine.vault.links import shown_links

__all__ = [
    "LATIN_FOLDS",
    "STOP_WORDS",
    "EntityDictionary",
    "EntityMatch",
    "displayed_text",
    "extract_capitalized_words",
    "extract_names",
    "fold_accents",
    "fold_case",
    "is_title_word",
    "normalize",
]

# Words that start sentences or glue them together never begin (or, alone, form) a name:
# they are the lexicon's (engine/lexicon/), English unless a lexicon is given.
STOP_WORDS = ENGLISH.stop_words

_MIN_PHRASE, _MAX_PHRASE = 2, 5

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
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")
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
_END_PUNCT = "".join(sorted(set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’«»„‚…–—·•¡¿")))


def _latin_folds() -> dict[int, str]:
    """Accented Latin letters → their base letter (é → e, Å → A); other scripts untouched."""
    folds: dict[int, str] = {}
    for code in range(0xC0, 0x250):
        parts = unicodedata.normalize("NFKD", chr(code))
        if len(parts) > 1 and parts[0].isascii() and all(unicodedata.combining(c) for c in parts[1:]):
            folds[code] = parts[0]
    return folds


# "Jose Alvarez" names José Álvarez: people type names without their accents. Only Latin
# letters fold; kana keep their voicing marks (げ is not け).
_FOLDS = LATIN_FOLDS = _latin_folds()
# The same folds as a pattern: a text with a few accents is scanned in C, not read a
# character at a time by `str.translate` (about 60 ns a character).
_FOLDABLE = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_FOLDS)) + "]")


def fold_accents(text: str) -> str:
    """`text` with accented Latin letters replaced by their base letters (the full text folds the same)."""
    if text.isascii():
        return text
    return _FOLDABLE.sub(lambda m: _FOLDS[ord(m.group())], text)


def _latin1_case_folds() -> tuple[bytes, tuple[bytes, ...]]:
    """A byte table taking each Latin-1 character to `fold_accents(c.casefold())`, and the
    characters it cannot take: those folding to more than one character or out of Latin-1
    (ß is "ss", µ is Greek μ)."""
    table = bytearray(range(256))
    unfoldable = []
    for code in range(256):
        folded = fold_accents(chr(code).casefold())
        if len(folded) == 1 and ord(folded) <= 0xFF:
            table[code] = ord(folded)
        else:
            unfoldable.append(bytes([code]))
    return bytes(table), tuple(unfoldable)


_LATIN1_CASE_FOLDS, _LATIN1_UNFOLDABLE = _latin1_case_folds()


def fold_case(text: str) -> str:
    """`fold_accents(text.casefold())`: case and Latin accents folded, as phrases and
    prefixes are compared. Text of Latin-1 characters alone (most European notes) is folded
    by one byte table: 3.4 MB of accented notes in 6 ms, against 46 ms for `str.casefold`
    and the accent pattern."""
    if text.isascii():
        return text.lower()
    try:
        raw = text.encode("latin-1")
    except UnicodeEncodeError:
        return fold_accents(text.casefold())
    if any(char in raw for char in _LATIN1_UNFOLDABLE):  # a byte each: found by memchr
        return fold_accents(text.casefold())
    return raw.translate(_LATIN1_CASE_FOLDS).decode("latin-1")


# Query and dictionary tokens: word characters with inner `.`, `-`, `'` (config.yaml, e-mail);
# each Han, kana or Hangul character is a token of its own, as those scripts put no space
# between words: the title "ホーム画面" is then found inside "ホーム画面の設定を変更する".
_LETTERS = rf"[^\W{CJK_CLASS}]+"
_TOKEN = re.compile(rf"{_LETTERS}(?:['’.\-]{_LETTERS})*|[{CJK_CLASS}]")


def displayed_text(body: str) -> str:
    """A note body as a reader sees it: links reduced to their displayed text (a wikilink's
    display, else its target's name)."""
    return shown_links(body, lambda parts: parts.display or parts.target.rsplit("/", 1)[-1])


def normalize(name: str) -> str:
    """Entity key for a name: one Unicode form (NFC), casefolded, accents folded, whitespace
    collapsed, punctuation stripped at the ends."""
    name = one_form(name)
    return " ".join(name.casefold().translate(_FOLDS).split()).strip(_END_PUNCT).strip()


def _possessive(word: str) -> bool:
    return len(word) > 2 and word[-2] in "'’" and word[-1] in "sS"


def extract_names(text: str, lexicon: Lexicon = ENGLISH) -> list[str]:
    """Names in free text (capitalised phrases, identifiers, file names, URLs, e-mails), deduped."""
    found: list[tuple[int, str]] = []
    # One byte per character marks text already claimed by a URL, e-mail or file (1) or a
    # phrase (_PHRASE), so that overlap checks stay O(span) however many names the text holds.
    taken = bytearray(len(text))

    def claim(start: int, end: int, name: str, mark: int = 1) -> None:
        if not any(taken[start:end]):
            found.append((start, name))
            taken[start:end] = bytes((mark,)) * (end - start)

    for m in _URL.finditer(text):
        url = m.group().rstrip(_URL_TAIL)
        if len(url) > 8:
            claim(m.start(), m.start() + len(url), url)
    for m in _EMAIL.finditer(text) if "@" in text else ():
        claim(m.start(), m.end(), m.group())
    for m in _FILE.finditer(text):
        claim(m.start(), m.end(), m.group())
    for start, end in _capitalized_phrases(text, lexicon):
        claim(start, end, text[start:end], _PHRASE)
    for m in _CAMEL_IDENTIFIER.finditer(text):
        if taken.find(1, m.start(), m.end()) < 0 and taken.find(0, m.start(), m.end()) < 0:
            # An identifier inside a longer name is a name of its own too: "CloudKnox
            # Security" also names CloudKnox, as the company is written elsewhere. Not the
            # plural of initials ("Q3 OKRs"): that is a word of the name, not another name.
            if not _ACRONYM_PLURAL.fullmatch(m.group()):
                found.append((m.start(), m.group()))
        else:
            claim(m.start(), m.end(), m.group())

    found.sort(key=lambda item: item[0])
    seen: set[str] = set()
    names: list[str] = []
    for _, name in found:
        key = normalize(name)
        if key and key not in seen:
            seen.add(key)
            names.append(name)
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


def _capitalized_phrases(text: str, lexicon: Lexicon) -> list[tuple[int, int]]:
    """Spans of 2-5 word capitalised phrases, split at stop words, possessives trimmed."""
    spans: list[tuple[int, int]] = []
    # The regex finds runs of 2+ capitalised words in C; Python only looks at those runs.
    for run_match in _cap_run(lexicon.name_connectors).finditer(text):
        words = [
            (m.start(), m.end(), m.group())
            for m in _WORD.finditer(text, run_match.start(), run_match.end())
        ]
        at_start = _at_sentence_start(text, run_match.start())
        # A possessive ends a name: "Chen's Board Meeting" is two runs.
        first = 0
        for idx, (_, _, word) in enumerate(words):
            if _possessive(word) and idx + 1 < len(words):
                _take_run(words[first : idx + 1], spans, lexicon, at_start and first == 0)
                first = idx + 1
        _take_run(words[first:], spans, lexicon, at_start and first == 0)
    return spans


# What ends the text before a sentence, a list item, a heading, a table cell or a log line's
# stamp ("- **2024-06-18** | Led …", "8. Select Import", "> Note: …").
_OPENS_SENTENCE = frozenset(".!?:;|—–-•*#>([]\"“‘«")
_DATE_CHARS = frozenset("0123456789-/.")


def _at_sentence_start(text: str, start: int) -> bool:
    """Whether the text before `start` (blanks aside) ends a sentence, opens a line, or is a
    date or number opening a line's record ("2024-06-18 Led …"). Looks back over blanks and
    date characters only: each run's look is bounded by the text since the run before."""
    at = start - 1
    while at >= 0 and text[at] in " \t\u00a0":
        at -= 1
    if at < 0 or text[at] == "\n" or text[at] in _OPENS_SENTENCE:
        return True
    if not text[at].isdigit():
        return False
    while at >= 0 and text[at] in _DATE_CHARS:
        at -= 1
    return at < 0 or text[at] in "\n \t*|"


def _take_run(run: list[tuple[int, int, str]], spans: list[tuple[int, int]], lexicon: Lexicon, at_start: bool) -> None:
    if len(run) > _MAX_PHRASE + 2:
        # A long Title Case run is a heading or a headline, not a name.
        return
    if at_start:
        # A capital at a sentence's start says nothing: the sentence's verb, adverb or
        # function word is no part of the name after it ("Led Series B for …", "Whereas
        # Treg cells …", "Previously Feluda …").
        while run and lexicon.opens_no_name(run[0][2]):
            run = run[1:]
    # Split the run at stop words ("The", "With"), then trim connectors at the ends.
    piece: list[tuple[int, int, str]] = []
    for item in [*run, None]:
        if item is None or (item[2].casefold() in lexicon.stop_words and item[2] not in lexicon.name_connectors):
            _take_piece(_without_title(piece, lexicon), spans, lexicon.name_connectors)
            piece = []
        else:
            piece.append(item)


def _without_title(piece: list[tuple[int, int, str]], lexicon: Lexicon) -> list[tuple[int, int, str]]:
    """A piece less the job title that opens it ("Partner Hannah Kreiswirth" → Hannah
    Kreiswirth), or nothing when it is a job title ("Head of Operations", "Senior Data
    Engineer"): a title says what someone does, it names no one."""
    at = 0
    while at < len(piece) and piece[at][2].casefold() in lexicon.job_titles:
        at += 1
    rest = piece[at:]
    if rest and rest[-1][2].casefold() in lexicon.person_nouns:
        return []
    return rest


def _take_piece(piece: list[tuple[int, int, str]], spans: list[tuple[int, int]], connectors: frozenset[str]) -> None:
    while piece and piece[0][2] in connectors:
        piece.pop(0)
    while piece and piece[-1][2] in connectors:
        piece.pop()
    if len(piece) > _MAX_PHRASE and any(word in connectors for _, _, word in piece):
        # Too long for one name, but a connector may join two: "Trent Reznor of Nine Inch
        # Nails" names a man and a band.
        part: list[tuple[int, int, str]] = []
        for item in [*piece, None]:
            if item is None or item[2] in connectors:
                _take_piece(part, spans, frozenset())
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
    start, end = piece[0][0], piece[-1][1]
    if _possessive(words[-1]):
        end -= 2
    spans.append((start, end))


@dataclass(frozen=True)
class EntityMatch:
    """A known entity recognised in a query: the text as written, its span and entity ids."""

    surface: str
    start: int
    end: int
    entity_ids: tuple[str, ...]


def _token_key(token: str) -> str:
    return token.casefold().translate(_FOLDS).replace("’", "'")


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
    surface = one_form(surface)
    if "  " not in surface and surface.replace(" ", "").isalnum() and not has_cjk(surface):
        # Fast path for the common "Word Word" surface (str.isalnum is \w minus "_",
        # so tokenising would split it at the spaces only): the key is the folded casefold.
        return surface.casefold().translate(_FOLDS), (None if " " in surface else surface)
    return _surface_key(surface)


_MAX_WIDTH = 16  # tokens; a longer title is a sentence, not a name to spot in a query


def _width(key: str) -> int:
    """An upper bound on the tokens in a dictionary key (separators count as spaces)."""
    return key.count(" ") + 1


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
