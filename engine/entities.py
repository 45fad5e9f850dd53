"""Find entity names in free text and recognise known entities in queries."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["STOP_WORDS", "EntityDictionary", "EntityMatch", "extract_names", "normalize"]

# Words that start sentences or glue them together; they never begin (or, alone, form) a name.
# fmt: off
STOP_WORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "although", "am", "an",
    "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
    "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down",
    "during", "each", "either", "else", "even", "ever", "every", "few", "for", "from",
    "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
    "how", "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let",
    "like", "may", "me", "meanwhile", "might", "more", "most", "much", "must", "my",
    "neither", "no", "nor", "not", "now", "of", "off", "often", "on", "once", "one", "only",
    "or", "other", "our", "ours", "out", "over", "own", "per", "perhaps", "please", "same",
    "she", "should", "since", "so", "some", "still", "such", "than", "thank", "thanks",
    "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this",
    "those", "though", "through", "thus", "to", "today", "tomorrow", "too", "under", "until",
    "up", "upon", "us", "very", "via", "was", "we", "well", "were", "what", "when", "where",
    "whether", "which", "while", "who", "whom", "whose", "why", "will", "with", "within",
    "without", "would", "yes", "yesterday", "yet", "you", "your", "yours", "hi", "hello",
    "dear", "ok", "okay", "note", "see",
))
# fmt: on

_CONNECTORS = frozenset({"of", "de", "van", "von", "la"})
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
_FILE = re.compile(
    r"(?<![\w./@\\-])[\w\-]+(?:\.[\w\-]+)*\.(?:" + "|".join(_FILE_EXTENSIONS) + r")(?![\w/@\-])",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?![\w])")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
# Letter-initial words with inner apostrophes/hyphens ("O'Brien", "Jean-Luc").
_WORD = re.compile(r"[^\W\d_][\w]*(?:['’\-][\w]+)*")
_PHRASE_GAP = re.compile(r"[ \t]+|[ \t]*\u00a0[ \t]*")
_URL_TAIL = ".,;:!?'\"”’)"
_END_PUNCT = "".join(sorted(set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’«»„‚…–—·•¡¿")))
_WS = re.compile(r"\s+")
# Query and dictionary tokens: word characters with inner `.`, `-`, `'` (config.yaml, e-mail).
_TOKEN = re.compile(r"\w+(?:['’.\-]\w+)*")


def normalize(name: str) -> str:
    """Entity key for a name: casefolded, whitespace collapsed, punctuation stripped at the ends."""
    return _WS.sub(" ", name.casefold()).strip().strip(_END_PUNCT).strip()


def _is_capitalized(word: str) -> bool:
    return word[0].isupper()


def _possessive(word: str) -> bool:
    return len(word) > 2 and word[-2] in "'’" and word[-1] in "sS"


def extract_names(text: str) -> list[str]:
    """Names in free text (capitalised phrases, identifiers, file names, URLs, e-mails), deduped."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for m in _URL.finditer(text):
        url = m.group().rstrip(_URL_TAIL)
        if len(url) > 8:
            found.append((m.start(), url))
            taken.append((m.start(), m.start() + len(url)))
    for m in _EMAIL.finditer(text) if "@" in text else ():
        if free(*m.span()):
            found.append((m.start(), m.group()))
            taken.append(m.span())
    for m in _FILE.finditer(text):
        if free(*m.span()):
            found.append((m.start(), m.group()))
            taken.append(m.span())
    for start, end in _capitalized_phrases(text):
        if free(start, end):
            found.append((start, text[start:end]))
            taken.append((start, end))
    for m in _IDENTIFIER.finditer(text):
        word = m.group()
        if _CAMEL.search(word) and not word.isupper() and free(*m.span()):
            found.append((m.start(), word))

    found.sort(key=lambda item: item[0])
    seen: set[str] = set()
    names: list[str] = []
    for _, name in found:
        key = normalize(name)
        if key and key not in seen:
            seen.add(key)
            names.append(name)
    return names


def _capitalized_phrases(text: str) -> list[tuple[int, int]]:
    """Spans of 2-5 word capitalised phrases, split at stop words, possessives trimmed."""
    spans: list[tuple[int, int]] = []
    run: list[tuple[int, int, str]] = []

    def flush() -> None:
        # Split the run at stop words ("The", "With"), then trim connectors at the ends.
        piece: list[tuple[int, int, str]] = []
        for item in [*run, None]:
            if item is None or (item[2].casefold() in STOP_WORDS and item[2] not in _CONNECTORS):
                _take(piece)
                piece = []
            else:
                piece.append(item)
        run.clear()

    def _take(piece: list[tuple[int, int, str]]) -> None:
        while piece and piece[0][2] in _CONNECTORS:
            piece.pop(0)
        while piece and piece[-1][2] in _CONNECTORS:
            piece.pop()
        if not _MIN_PHRASE <= len(piece) <= _MAX_PHRASE:
            return
        words = [w for _, _, w in piece]
        if all(w.isupper() and len(w) > 1 for w in words if w not in _CONNECTORS):
            # Shouting ("DO NOT MERGE") is not a name.
            return
        start, end = piece[0][0], piece[-1][1]
        if _possessive(words[-1]):
            end -= 2
        spans.append((start, end))

    prev_end = -1
    for m in _WORD.finditer(text):
        word = m.group()
        cap = _is_capitalized(word)
        joined = (
            run
            and prev_end >= 0
            and _PHRASE_GAP.fullmatch(text, prev_end, m.start()) is not None
            and not _possessive(run[-1][2])
        )
        if not joined:
            flush()
        if cap or (run and word in _CONNECTORS):
            run.append((m.start(), m.end(), word))
        else:
            flush()
        prev_end = m.end()
    flush()
    return spans


@dataclass(frozen=True)
class EntityMatch:
    """A known entity recognised in a query: the text as written, its span and entity ids."""

    surface: str
    start: int
    end: int
    entity_ids: tuple[str, ...]


def _token_key(token: str) -> str:
    return token.casefold().replace("’", "'")


class EntityDictionary:
    """Known entity surface forms (titles, aliases, tags, names) indexed by normalised n-gram."""

    def __init__(self, entries: Iterable[tuple[str, str]]) -> None:
        index: dict[str, dict[str, None]] = {}
        upper_exact: set[str] = set()
        findall = _TOKEN.findall
        for surface, entity_id in entries:
            tokens = findall(surface)
            if not tokens:
                continue
            key = " ".join([_token_key(t) for t in tokens])
            ids = index.get(key)
            if ids is None:
                index[key] = {entity_id: None}
            else:
                ids[entity_id] = None
            if len(tokens) == 1 and tokens[0].isupper():
                # Short all-caps aliases ("PK", "IT") match only when written that way.
                upper_exact.add(tokens[0])
        self._index = index
        self._upper_exact = frozenset(upper_exact)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, surface: object) -> bool:
        if not isinstance(surface, str):
            return False
        return " ".join(_token_key(t) for t in _TOKEN.findall(surface)) in self._index

    def _single_ok(self, written: str, key: str) -> bool:
        if len(key) >= 3 and key not in STOP_WORDS:
            return True
        return written in self._upper_exact

    def recognize(self, query: str, max_ngram: int = 6) -> list[EntityMatch]:
        """Known entities in a query: longest matches first, non-overlapping, in query order."""
        tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(query)]
        keys = [_token_key(t) for _, _, t in tokens]
        index = self._index
        n = len(tokens)
        # (tokens, chars, start token, end token, char start, char end, ids)
        candidates: list[tuple[int, int, int, int, int, int, dict[str, None]]] = []
        for i in range(n):
            key = ""
            for j in range(i, min(n, i + max(1, max_ngram))):
                key = keys[j] if j == i else f"{key} {keys[j]}"
                start, end = tokens[i][0], tokens[j][1]
                ids = index.get(key)
                written_last = tokens[j][2]
                if ids is None and _possessive(written_last):
                    # "Priya's" -> "Priya"
                    ids = index.get(key[:-2])
                    end -= 2
                    written_last = written_last[:-2]
                if ids is None:
                    continue
                if i == j and not self._single_ok(written_last, _token_key(written_last)):
                    continue
                candidates.append((j - i + 1, end - start, i, j, start, end, ids))
        candidates.sort(key=lambda c: (-c[0], -c[1], c[2]))
        used = bytearray(n)
        chosen: list[EntityMatch] = []
        for _, _, i, j, start, end, ids in candidates:
            if any(used[i : j + 1]):
                continue
            for k in range(i, j + 1):
                used[k] = 1
            chosen.append(EntityMatch(query[start:end], start, end, tuple(ids)))
        chosen.sort(key=lambda m: m.start)
        return chosen
