"""Query parsing: the words to rank by, the typed prefix, and the operators Obsidian's search knows.

`"exact phrase"`, `-word`, `-"phrase"`, `a OR b`, `tag:x`, `path:` / `folder:`, `file:`,
`[prop]`, `[prop:value]`, `task:` / `task-todo:` / `task-done:`, `after:DATE`, `before:DATE`,
and plain time words ("last week", "yesterday's standup") are read off the query; what
remains are the words every channel ranks by. `OR` joins any two parts of that language
around it (`tag:atlas OR tag:maps`, `word OR path:Inbox`, `(tag:a -draft) OR "a phrase"`,
parentheses grouping parts): a note must meet one of them (a `Choice`). Nothing here
raises: an unbalanced quote or an unknown `foo:` is read as words, and `readings` says so.
Every pass is linear, except that each level of parentheses reads its own text again.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Literal

from engine.lexicon import Lexicon
from engine.lexicon.en import ENGLISH
from engine.tokens import TERM

MAX_QUERY_CHARS = 512
# The terms the full-text analyzer reads (engine/tokens.py): `pubspec.yaml`, `C++` stay whole.
_WORD = TERM
# Control characters and lone surrogates (pasted binary, a bad byte in a command line)
# mean nothing to search for, and the tokenizer of the embedding model rejects surrogates.
_UNUSABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

FilterKind = Literal["tag", "path", "file", "prop", "task", "task-todo", "task-done", "date"]
_OPERATORS: dict[str, FilterKind] = {
    "tag": "tag",
    "path": "path",
    "folder": "path",
    "file": "file",
    "task": "task",
    "task-todo": "task-todo",
    "task-done": "task-done",
    "after": "date",
    "before": "date",
}
# `key:value`, `key:"value with spaces"`, optionally negated; the key is a known operator only.
_OPERATOR = re.compile(r'(-?)([A-Za-z][A-Za-z-]*):(?:"([^"]*)"|(\S*))')
# `[prop]`, `[prop:value]`, `[prop:"value"]`, optionally negated.
_PROPERTY = re.compile(r'(-?)\[([^\[\]:"]+?)(?::(?:"([^"]*)"|([^\[\]]*)))?\]')
_PHRASE = re.compile(r'(-?)"([^"]*)"')
_EXCLUDED = re.compile(r"(?<!\S)-(?=[\w])([\w][\w'’.\-]*)")
_OR = re.compile(r"(?<!\S)OR(?!\S)")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
# A time word filters a query of at most this many other words ("meetings last week");
# in a longer question ("who was born in March?") it is read as words. Quotes likewise:
# in a short query they ask for the exact phrase; in a longer question they mark a title
# ('Who sang "Dear Brother" on the 1968 album?') that the answer note need not contain.
MAX_WORDS_WITH_TIME = 6
MAX_WORDS_WITH_PHRASE = 6
# Phrases without a letter or digit named in the reading that says they were ignored.
_SHOWN_WORDLESS = 3


@dataclass(frozen=True)
class QueryFilter:
    """One filter read from the query: the notes it keeps, and how it was written (for a chip)."""

    kind: FilterKind
    value: str = ""
    # [prop:value]: the property's name is `value`, the value it must hold `prop_value`.
    prop_value: str | None = None
    negated: bool = False
    # Dates (inclusive): a note's date must lie in [start, end].
    start: dt.date | None = None
    end: dt.date | None = None
    written: str = ""


@dataclass(frozen=True)
class Condition:
    """What a note must hold for one side of an `OR`: every part of it (they are ANDed).

    The parts are the query language's: filters, words (each one required here, unlike
    the words a query ranks by), phrases, exclusions, and choices of their own (from
    parentheses). `negated` (`-(a b)`): the note must not meet all of them.
    """

    filters: tuple[QueryFilter, ...] = ()
    words: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    excluded_words: tuple[str, ...] = ()
    excluded_phrases: tuple[str, ...] = ()
    choices: tuple[Choice, ...] = ()
    negated: bool = False

    @property
    def all_words(self) -> tuple[str, ...]:
        """Every word this condition requires, its choices' included."""
        return (*self.words, *(word for choice in self.choices for word in choice.words))


@dataclass(frozen=True)
class Choice:
    """Parts of a query joined by `OR`: a note is kept when it meets one of the options."""

    options: tuple[Condition, ...]
    written: str  # as typed, for its chip (and to take it out of the query)

    @property
    def words(self) -> tuple[str, ...]:
        """The words the options require (a choice that holds the word being typed waits for it)."""
        return tuple(word for option in self.options for word in option.all_words)


@dataclass(frozen=True)
class Query:
    """A parsed query as every channel receives it.

    `prefix` is the last word when the user is still typing it (no trailing space);
    channels may treat it as a prefix. `terms` holds every word to rank by (the words of
    required phrases included), prefix included; `text` is those words as written.
    """

    raw: str
    text: str
    terms: tuple[str, ...]
    prefix: str | None
    phrases: tuple[str, ...] = ()
    excluded_words: tuple[str, ...] = ()
    excluded_phrases: tuple[str, ...] = ()
    # Words joined by OR: each group holds the alternatives of one choice.
    alternatives: tuple[tuple[str, ...], ...] = ()
    filters: tuple[QueryFilter, ...] = ()
    # OR between parts that are not all plain words (filters, phrases, groups): one of each.
    choices: tuple[Choice, ...] = ()
    # How the query was read where that is not plain words ("unbalanced quote: read as words").
    readings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to search for (no words, filters, phrases, exclusions or choices)."""
        return not self.terms and not self.only_filters

    @property
    def only_filters(self) -> bool:
        """Filters and no words: the matching notes are listed, most recent first. An exclusion
        alone (`-draft`) lists the notes without it, as a negated filter (`-path:Archive`) does."""
        return not self.terms and bool(
            self.filters or self.phrases or self.choices or self.excluded_words or self.excluded_phrases
        )

    @property
    def has_syntax(self) -> bool:
        """Whether the query used any operator (filters, phrases, exclusions, OR)."""
        return bool(
            self.filters or self.phrases or self.excluded_words or self.excluded_phrases or self.alternatives
            or self.choices
        )  # fmt: skip


def settled_text(query: Query) -> str:
    """The query without a short fragment still being typed: two or three letters embed as noise.

    While the last word is that short the embedding stays that of the words before it,
    which the query cache already holds; from four letters on the word counts (a
    finished last word is usually that long, and the user may stop typing there). The
    vector channel uses this only where the fragment is read as no whole word
    (`engine.query.plan.embedded_text`).
    """
    if not query.prefix or len(query.prefix) >= SETTLED_LETTERS:
        return query.text
    words = query.text.split()
    return " ".join(words[:-1])


SETTLED_LETTERS = 4


def parse_query(
    raw: str, *, as_you_type: bool = True, today: dt.date | None = None, lexicon: Lexicon = ENGLISH
) -> Query:
    """Parse what the user typed; long input is cut to MAX_QUERY_CHARS. Never raises.

    Plain time words ("last week", "in March") filter by date in a short query (at most
    MAX_WORDS_WITH_TIME other words); in a longer question they stay words.
    """
    clean = " ".join(_UNUSABLE.sub(" ", raw[: MAX_QUERY_CHARS * 2]).split())[:MAX_QUERY_CHARS]
    readings: list[str] = []
    filters: list[QueryFilter] = []
    phrases: list[str] = []
    excluded_phrases: list[str] = []
    choices: list[Choice] = []
    rest = clean
    if " OR " in rest or "(" in rest:
        rest = _take_choices(rest, choices, readings, today, lexicon)
    if ":" in rest or "[" in rest:
        rest = _take_operators(rest, filters, readings)
    if '"' in rest:
        rest = _take_phrases(rest, phrases, excluded_phrases, readings)
    if lexicon.time_words or lexicon.months:
        rest = _take_time_words(rest, filters, readings, lexicon, today or dt.date.today())
    excluded_words: list[str] = []
    if "-" in rest:

        def exclude(m: re.Match[str]) -> str:
            word = m.group(1).strip("'’-.").lower()
            if word:
                excluded_words.append(word)
            return " "

        rest = _EXCLUDED.sub(exclude, rest)
    # Still typing: the last thing typed is a word of the free text (not a filter or a quote).
    # A quote opening a phrase not closed yet does not end the word after it: in `"wixj`
    # the word is still being typed (else each keystroke read it as a typo of a whole word).
    tail = (clean.split()[-1] if clean else "").removeprefix('"')
    free_tail = bool(tail) and rest.split()[-1:] == [tail]
    alternatives: list[tuple[str, ...]] = []
    if "OR" in rest:
        rest = _take_alternatives(rest, alternatives)
    text = " ".join(rest.split())
    words = [m.group(0).strip("'’-").lower() for m in _WORD.finditer(text)]
    terms = tuple(w for w in words if w)
    still_typing = (
        as_you_type and bool(terms) and free_tail and not raw[-1].isspace() and raw.rstrip()[-1:].isalnum()
    )
    prefix = terms[-1] if still_typing else None
    if phrases:
        # The phrases' words rank too; they go first, so a typed prefix stays the last term.
        seen = set(terms)
        phrase_terms = [
            w for phrase in phrases for w in (m.group(0).strip("'’-").lower() for m in _WORD.finditer(phrase)) if w
        ]
        terms = (*dict.fromkeys(w for w in phrase_terms if w not in seen), *terms)
        text = " ".join(x for x in (*phrases, text) if x)
    return Query(
        raw=raw,
        text=text,
        terms=terms,
        prefix=prefix,
        phrases=tuple(phrases),
        excluded_words=tuple(dict.fromkeys(excluded_words)),
        excluded_phrases=tuple(excluded_phrases),
        alternatives=tuple(alternatives),
        filters=tuple(filters),
        choices=tuple(choices),
        readings=tuple(dict.fromkeys(readings)),
    )


def _take_choices(
    text: str, choices: list[Choice], readings: list[str], today: dt.date | None, lexicon: Lexicon
) -> str:
    """Read `P OR Q …` between parts that are not all plain words, and parenthesised groups,
    into choices; what is left (and the words of each part, which still rank) is returned.

    A chain of plain words (`sync OR merge`) is left to `_take_alternatives`, and a group
    outside any chain (`meeting (work OR meetup)`) is read without its parentheses, as
    Obsidian reads them; `-(a b)` keeps out the notes that hold all of it.
    """
    parts = _parts(text)
    out: list[str] = []
    i = 0
    while i < len(parts):
        chain = [parts[i]]
        while i + 2 < len(parts) and parts[i + 1] == "OR" and parts[i + 2] != "OR":
            chain.append(parts[i + 2])
            i += 2
        i += 1
        if len(chain) == 1:
            part = chain[0]
            if _is_group(part) and part.startswith("-"):
                choices.append(Choice((_condition(part, readings, today, lexicon),), part))
            elif _is_group(part):
                out.append(part[1:-1])
            else:
                out.append(part)
            continue
        if all(_plain_word(part) for part in chain):
            out.append(" OR ".join(chain))
            continue
        options = tuple(_condition(part, readings, today, lexicon) for part in chain)
        choices.append(Choice(options, " OR ".join(chain)))
        # Their words still rank, as an OR of words does; filters and exclusions do not.
        out.extend(word for option in options if not option.negated for word in (*option.phrases, *option.all_words))
    return " ".join(out)


def _condition(part: str, readings: list[str], today: dt.date | None, lexicon: Lexicon) -> Condition:
    """One side of an OR: the part (a group's parts) read as a query, every word of it required."""
    negated = part.startswith("-(") and _is_group(part)
    inner = part[2:-1] if negated else part[1:-1] if _is_group(part) else part
    sub = parse_query(inner, as_you_type=False, today=today or dt.date.today(), lexicon=lexicon)
    readings.extend(sub.readings)
    word_choices = tuple(
        Choice(tuple(Condition(words=(word,)) for word in group), " OR ".join(group)) for group in sub.alternatives
    )
    in_choices = {word for group in sub.alternatives for word in group}
    phrase_words = {w for phrase in sub.phrases for w in (m.group(0).strip("'’-").lower() for m in _WORD.finditer(phrase))}
    # A stop word has no index term: required, it would keep no note.
    skipped = in_choices | phrase_words | set(lexicon.stop_words)
    words = tuple(w for w in sub.terms if w not in skipped)
    return Condition(
        filters=sub.filters,
        words=words,
        phrases=sub.phrases,
        excluded_words=sub.excluded_words,
        excluded_phrases=sub.excluded_phrases,
        choices=(*sub.choices, *word_choices),
        negated=negated,
    )


def _is_group(part: str) -> bool:
    return part.startswith(("(", "-(")) and part.endswith(")") and len(part) > (3 if part[0] == "-" else 2)


def _plain_word(part: str) -> bool:
    """A part that is a word as typed: no exclusion, quote, bracket, group or known operator."""
    if part[:1] in ('-', '"', "[", "("):
        return False
    key = part.split(":", 1)[0].lower() if ":" in part else ""
    return key not in _OPERATORS


def _parts(text: str) -> list[str]:
    """The query's top-level parts, left to right: `"a phrase"`, `[prop:x y]`, `key:"a value"`,
    a balanced `( … )` group, or a run of non-blanks; each may start with `-`.

    An unclosed quote, bracket or parenthesis ends at the next blank, as a word does.
    Linear: the parentheses are paired in one pass first.
    """
    closes = _paired_parentheses(text)
    parts: list[str] = []
    at, end = 0, len(text)
    while at < end:
        if text[at] == " ":
            at += 1
            continue
        start = at
        body = at + 1 if text[at] == "-" and at + 1 < end else at
        opener = text[body]
        stop = -1
        if opener == '"':
            close = text.find('"', body + 1)
            stop = close + 1 if close >= 0 else -1
        elif opener == "[" and not text.startswith("[[", body):
            close = text.find("]", body + 1)
            stop = close + 1 if close >= 0 else -1
        elif opener == "(":
            stop = closes.get(body, -2) + 1
        if stop <= 0:
            stop = text.find(" ", body)
            stop = end if stop < 0 else stop
            quoted = text.find(':"', body, stop)
            if quoted >= 0:  # key:"a value with blanks"
                close = text.find('"', quoted + 2)
                if close >= 0:
                    stop = max(stop, close + 1)
        parts.append(text[start:stop])
        at = stop
    return parts


def _paired_parentheses(text: str) -> dict[int, int]:
    """Each `(` that is closed, with the index of its `)`; parentheses inside quotes are text."""
    pairs: dict[int, int] = {}
    open_at: list[int] = []
    quoted = False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            open_at.append(index)
        elif char == ")" and open_at:
            pairs[open_at.pop()] = index
    return pairs


def _take_operators(text: str, filters: list[QueryFilter], readings: list[str]) -> str:
    """Pull `key:value` and `[prop:value]` filters out of `text`; unknown keys stay words."""

    def operator(m: re.Match[str]) -> str:
        negated, key, quoted, plain = m.group(1), m.group(2).lower(), m.group(3), m.group(4)
        kind = _OPERATORS.get(key)
        if kind is None:
            # `foo:` or `foo:bar` is no filter Cairn knows (a URL's `https://` is no operator).
            note = f"unknown operator {key}: read as words"
            if not (plain or "").startswith("/") and note not in readings:
                readings.append(note)
            return m.group(0)
        value = (quoted if quoted is not None else plain or "").strip()
        if not value and not kind.startswith("task"):
            readings.append(f"{key}: without a value: ignored")
            return " "
        written = m.group(0)
        if kind == "date":
            date = _iso(value)
            if date is None:
                readings.append(f"{key}:{value} is not a date (YYYY-MM-DD): ignored")
                return " "
            start, end = _after(date) if key == "after" else _before(date)
            if start is not None and end is not None:
                readings.append(f"{key}:{value}: no date is {key} it, so no note is")
            filters.append(QueryFilter("date", value, negated=bool(negated), start=start, end=end, written=written))
            return " "
        if kind == "tag":
            value = value.lstrip("#")
        filters.append(QueryFilter(kind, value, negated=bool(negated), written=written))
        return " "

    def prop(m: re.Match[str]) -> str:
        negated, name = m.group(1), m.group(2).strip()
        value = m.group(3) if m.group(3) is not None else m.group(4)
        if not name:
            return m.group(0)
        wanted = value.strip() if value is not None else None
        filters.append(QueryFilter("prop", name, wanted or None, negated=bool(negated), written=m.group(0)))
        return " "

    if "[" in text and "[[" not in text:
        text = _PROPERTY.sub(prop, text)
    if ":" in text:
        text = _OPERATOR.sub(operator, text)
    return text


def _take_phrases(text: str, phrases: list[str], excluded: list[str], readings: list[str]) -> str:
    """Pull `"phrase"` and `-"phrase"` out of `text`; a quote without its pair is read as a word break.

    In a long question (more than MAX_WORDS_WITH_PHRASE words outside the quotes) a
    quoted phrase stays words; an excluded one is excluded all the same.
    """
    long_question = len(_WORD.findall(_PHRASE.sub(" ", text))) > MAX_WORDS_WITH_PHRASE
    as_words: list[str] = []
    wordless: list[str] = []

    def phrase(m: re.Match[str]) -> str:
        inner = " ".join(m.group(2).split())
        if not inner:
            return " "
        if not any(c.isalnum() for c in inner):
            # Nothing of it is indexed, so only reading every note could tell: not at a keystroke.
            wordless.append(inner)
        elif m.group(1):
            if inner not in excluded:
                excluded.append(inner)
        elif long_question:
            as_words.append(inner)
            return f" {inner} "
        elif inner not in phrases:
            phrases.append(inner)
        return " "

    text = _PHRASE.sub(phrase, text)
    if wordless:
        shown = list(dict.fromkeys(wordless))
        quoted = ", ".join(f"“{words}”" for words in shown[:_SHOWN_WORDLESS])
        if len(shown) > _SHOWN_WORDLESS:
            quoted += f" and {len(shown) - _SHOWN_WORDLESS} more"
        readings.append(f"{quoted} has no letter or digit to search for: ignored")
    if as_words:
        quoted = ", ".join(f"“{words}”" for words in as_words)
        readings.append(f"{quoted} read as words, not an exact phrase: the query is a long question")
    if '"' in text:
        readings.append("unbalanced quote: read as words")
        text = text.replace('"', " ")
    return text


def _take_alternatives(text: str, alternatives: list[tuple[str, ...]]) -> str:
    """Read `a OR b OR c` as one choice among the words around each OR (the words stay in the text)."""
    tokens = text.split()
    group: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "OR" and out and i + 1 < len(tokens):
            if not group:
                group.append(out[-1].lower())
            group.append(tokens[i + 1].lower())
            out.append(tokens[i + 1])
            i += 2
            continue
        if group:
            alternatives.append(tuple(group))
            group = []
        if token != "OR":
            out.append(token)
        i += 1
    if group:
        alternatives.append(tuple(group))
    return " ".join(out)


def _take_time_words(
    text: str, filters: list[QueryFilter], readings: list[str], lexicon: Lexicon, today: dt.date
) -> str:
    """Pull "last week", "yesterday('s)", "in March [2025]" out of a short query as a date filter."""
    lowered = text.lower()
    names = sorted(lexicon.time_words, key=len, reverse=True)
    found: tuple[int, int, dt.date, dt.date] | None = None
    for name in names:
        m = re.search(rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)", lowered)
        if m:
            unit, offset = lexicon.time_words[name]
            period = _period(unit, offset, today)
            if period is None:
                readings.append(f"“{text[m.start() : m.end()]}” read as words: it falls outside the calendar")
                return text
            found = (m.start(), m.end(), *period)
            break
    if found is None and lexicon.months and lexicon.month_preposition:
        months = "|".join(lexicon.months)
        m = re.search(rf"(?<!\w){re.escape(lexicon.month_preposition)}\s+({months})(?:\s+(\d{{4}}))?(?!\w)", lowered)
        if m:
            month = lexicon.months.index(m.group(1)) + 1
            year = int(m.group(2)) if m.group(2) else (today.year if month <= today.month else today.year - 1)
            span = _month(year, month)
            if span is None:
                readings.append(f"“{text[m.start() : m.end()]}” read as words: year {m.group(2) or year} is not in the calendar")
                return text
            found = (m.start(), m.end(), *span)
    if found is None:
        return text
    at, end_at, start, end = found
    written = text[at:end_at]
    other_words = len(_WORD.findall(text[:at] + " " + text[end_at:]))
    if other_words > MAX_WORDS_WITH_TIME:
        readings.append(f"“{written}” read as words, not a date: the query is a long question")
        return text
    filters.append(QueryFilter("date", written, start=start, end=end, written=written))
    return text[:at] + " " + text[end_at:]


def _period(unit: str, offset: int, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The day, week (Monday to Sunday), month or year `offset` periods from today's; None
    when that leaves the calendar (years 1 to 9999), where `datetime` cannot count."""
    try:
        if unit == "day":
            day = today + dt.timedelta(days=offset)
            return day, day
        if unit == "week":
            monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=offset)
            return monday, monday + dt.timedelta(days=6)
    except OverflowError:
        return None
    if unit == "month":
        months = today.year * 12 + today.month - 1 + offset
        return _month(months // 12, months % 12 + 1)
    year = today.year + offset
    if not dt.MINYEAR <= year <= dt.MAXYEAR:
        return None
    return dt.date(year, 1, 1), dt.date(year, 12, 31)


def _month(year: int, month: int) -> tuple[dt.date, dt.date] | None:
    """The first and last day of a month; None for a year outside the calendar (0000, 10000)."""
    if not dt.MINYEAR <= year <= dt.MAXYEAR:
        return None
    return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])


def _after(date: dt.date) -> tuple[dt.date | None, dt.date | None]:
    """The days after `date` as (start, end); the calendar's last day has none (start > end)."""
    if date == dt.date.max:
        return dt.date.max, dt.date.max - dt.timedelta(days=1)
    return date + dt.timedelta(days=1), None


def _before(date: dt.date) -> tuple[dt.date | None, dt.date | None]:
    """The days before `date` as (start, end); the calendar's first day has none (start > end)."""
    if date == dt.date.min:
        return dt.date.min + dt.timedelta(days=1), dt.date.min
    return None, date - dt.timedelta(days=1)


def _iso(value: str) -> dt.date | None:
    if not _ISO_DATE.match(value):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def query_without(raw: str, written: str) -> str:
    """`raw` with its last occurrence of `written` (a filter, phrase or exclusion) taken out."""
    at = raw.rfind(written) if written else -1
    if at < 0:
        return raw
    return " ".join((raw[:at] + " " + raw[at + len(written) :]).split())
