"""Parsing a note Obsidian-style: frontmatter, title, aliases, tags, headings and links, with code masked."""

from __future__ import annotations

import bisect
import dataclasses
import datetime as _dt
import html
import html.entities
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from engine.lexicon import Lexicon
from engine.records import Heading, Link, ParsedNote, Task
from engine.vault.fields import frontmatter_keys, inline_fields, key_at
from engine.vault.links import (
    WIKILINK,
    LineIndex,
    LinkSpan,
    collector_paused,
    find_links,
    link_matches,
)
from engine.vault.read import _normalize_newlines

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_FM_OPEN = re.compile(r"---[ \t]*(?:\n|$)")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)

# Bumped when parsing yields something new for the catalog (links' properties: 2; names
# with initials and names joined by a connector in a long run: 3; a title read from its
# heading as it renders, "&amp;" as "&": 4; names and links matched in one Unicode form, so
# a link typed in NFC reaches a note named in NFD: 5; no name opened by a sentence's verb,
# adverb or function word, nor a job title nor the plural of initials, an identifier inside
# a name a name of its own too, a quoted bold key `> **Owner:** [[X]]` a link's property: 6;
# each name stored with what its writing says of it, as running text, a sentence's start or a
# title: 7): a full scan then parses every note again.
PARSE_VERSION = 7

_INLINE_TAG = re.compile(r"(?<!\S)#([\w/\-]+)")
_TAG_SPLIT = re.compile(r"[,\s]+")
_BACKTICKS = re.compile(r"`+")
# CommonMark's entity and numeric character references ("&amp;", "&#39;", "&#x2014;"), not
# after a backslash (which makes them text), outside code spans.
_ENTITY = re.compile(r"(?<!\\)&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


@cache
def _block_parser() -> MarkdownIt:
    """The block parser, made at the first note parsed: a search never parses one, and
    markdown-it and PyYAML take a tenth of a second to import (a CLI search's cold start)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    # Only block structure is needed (fences, code blocks, ATX headings, paragraph ranges);
    # skipping inline parsing makes this several times faster on big notes. Setext headings,
    # HTML blocks and reference definitions only change how text is grouped, never whether
    # it is code, yet they rescan every paragraph line; without them parsing is ~3x faster.
    md.disable(["inline", "text_join", "lheading", "html_block", "reference"], ignoreInvalid=True)
    return md



def _block_structure(body: str, line_count: int) -> tuple[bytearray, list[tuple[int, int]], list[int]]:
    """Which lines of a body are code, its inline segments' line ranges, and its ATX heading lines."""
    code_lines = bytearray(line_count)
    segments: list[tuple[int, int]] = []
    headings: list[int] = []
    for tok in _block_parser().parse(body):
        if tok.map is None:
            continue
        start, end = tok.map
        if tok.type in ("fence", "code_block"):
            code_lines[start : min(end, line_count)] = b"\x01" * max(0, min(end, line_count) - start)
        elif tok.type == "inline":
            segments.append((start, end))
        elif tok.type == "heading_open" and tok.markup.startswith("#"):
            headings.append(start)
    return code_lines, segments, headings


@dataclass
class _Frontmatter:
    data: dict[str, Any]
    body_start: int
    body_line_offset: int
    raw: str
    raw_first_line: int
    warnings: list[str]


def _split_frontmatter(text: str) -> _Frontmatter:
    """Find a leading YAML block and parse it; malformed YAML yields a warning, never an error."""
    empty = _Frontmatter({}, 0, 0, "", 0, [])
    if not _FM_OPEN.match(text):
        return empty
    first_nl = text.find("\n")
    if first_nl < 0:
        return empty
    close = _FM_CLOSE.search(text, first_nl + 1)
    if close is None:
        # No closing fence: Obsidian does not treat the block as frontmatter either.
        return empty
    raw = text[first_nl + 1 : close.start()]
    end_nl = text.find("\n", close.end())
    body_start = len(text) if end_nl < 0 else end_nl + 1
    body_line_offset = text.count("\n", 0, close.start()) + 1
    fm = _Frontmatter({}, body_start, body_line_offset, raw, 2, [])
    import yaml  # at the first frontmatter read: a search parses none

    try:
        # CSafeLoader or SafeLoader (PyYAML built without libyaml), never the unsafe full loader.
        loaded = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if raw.strip() else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = (exc.problem or exc.context or type(exc).__name__).strip()
        where = f" at line {mark.line + 2}" if mark is not None else ""
        fm.warnings.append(f"malformed frontmatter: {reason}{where}")
        return fm
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        # e.g. `date: 2023-02-30` raises ValueError inside PyYAML's timestamp constructor.
        fm.warnings.append(f"malformed frontmatter: {_short(str(exc)) or type(exc).__name__}")
        return fm
    if loaded is None:
        return fm
    if not isinstance(loaded, dict):
        fm.warnings.append(
            f"frontmatter is not a key-value mapping (got {type(loaded).__name__}); ignored"
        )
        return fm
    fm.data = {str(k): v for k, v in loaded.items()}
    return fm


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SCALARS = (str, int, float, bool, _dt.date, _dt.datetime)


def _fm_get(data: dict[str, Any], *keys: str) -> list[Any]:
    """Values of the given keys, matched case-insensitively, in key order."""
    wanted = {k.casefold() for k in keys}
    return [v for k, v in data.items() if k.casefold() in wanted]


def _as_items(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value if isinstance(v, _SCALARS) and not isinstance(v, bool)]
    if isinstance(value, _SCALARS) and not isinstance(value, bool):
        return [str(value)]
    return []


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen[key] = item
    return tuple(seen.values())


def _fm_aliases(data: dict[str, Any]) -> tuple[str, ...]:
    out: list[str] = []
    for value in _fm_get(data, "aliases", "alias"):
        if isinstance(value, str):
            out.extend(part.strip() for part in value.split(","))
        else:
            out.extend(item.strip() for item in _as_items(value))
    return _dedupe(out)


def _clean_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip()


def _fm_tags(data: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for value in _fm_get(data, "tags", "tag"):
        for item in _as_items(value):
            out.extend(_clean_tag(t) for t in _TAG_SPLIT.split(item))
    return [t for t in out if t]


def _fm_pairs(data: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """(property, value) pairs: one per scalar, one per scalar of a list ([prop:value] searches them)."""
    pairs: list[tuple[str, str]] = []
    for key, value in data.items():
        if value is None:
            pairs.append((str(key), ""))
        elif isinstance(value, _SCALARS):
            pairs.append((str(key), str(value)))
        elif isinstance(value, list):
            items = [str(item) for item in value if isinstance(item, _SCALARS)]
            if items:
                pairs.extend((str(key), item) for item in items)
            else:
                pairs.append((str(key), ""))
    return tuple(pairs)


# `- [ ] text`, `* [x] text`, `1. [ ] text`, in a quote or a list of any depth.
_TASK = re.compile(r"^[ \t>]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[([ xX])\](?:[ \t]+(.*))?$")
_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_DATE_PROPERTIES = ("date", "created", "day", "created_at")


def _tasks(masked: str, first_line: int) -> tuple[Task, ...]:
    """Task items outside code (`masked` has code blanked), with their file lines."""
    if "[" not in masked:
        return ()
    found: list[Task] = []
    for number, line in enumerate(masked.split("\n"), start=first_line):
        if "[" in line:
            m = _TASK.match(line)
            if m:
                found.append(Task(m.group(1) != " ", (m.group(2) or "").strip(), number))
    return tuple(found)


def _note_date(path: str, data: dict[str, Any]) -> str:
    """The day a note is about: a valid date in its file name, else in its frontmatter ("" if none)."""
    m = _DATE_IN_NAME.search(PurePosixPath(path).stem)
    if m and _valid_date(m.group(0)):
        return m.group(0)
    for key in _DATE_PROPERTIES:
        for value in _fm_get(data, key):
            text = value.isoformat()[:10] if isinstance(value, (_dt.date, _dt.datetime)) else str(value)[:10]
            if _valid_date(text):
                return text
    return ""


def _valid_date(text: str) -> bool:
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _valid_inline_tag(tag: str) -> bool:
    # Obsidian: a tag needs at least one character that is not a number (#1984 is no tag).
    return any(not (c.isdigit() or c in "-/") for c in tag)


@collector_paused()
def _mask_code(body: str) -> tuple[str, list[tuple[int, str]]]:
    """Blank out code (fences, indented code, inline code) keeping offsets; also return ATX headings.

    Headings are (0-based body line, text).
    """
    lines = body.split("\n")
    code_lines, segments, heading_lines = _block_structure(body, len(lines))
    # Heading text is the inline content right after heading_open; fetch it from the line.
    headings = [(ln, _atx_text(lines[ln])) for ln in heading_lines if ln < len(lines)]
    headings = [(ln, t) for ln, t in headings if t]

    masked = list(lines)
    for i in range(len(lines)):
        if code_lines[i]:
            masked[i] = " " * len(lines[i])
    covered = bytearray(len(lines))
    for start, end in segments:
        end = min(end, len(lines))
        for i in range(start, end):
            covered[i] = 1
        _mask_code_spans(masked, start, end)
    for i in range(len(lines)):
        if not covered[i] and not code_lines[i] and "`" in masked[i]:
            _mask_code_spans(masked, i, i + 1)
    return "\n".join(masked), headings


_ATX = re.compile(r"^[ \t>]*(?:[-*+][ \t]+|\d{1,9}[.)][ \t]+)*(#{1,6})(?:[ \t]+|$)(.*)$")


def _atx_text(line: str) -> str:
    m = _ATX.match(line)
    if m is None:
        return ""
    return _plain_heading(_without_closing_hashes(m.group(2)).strip())


def _without_closing_hashes(text: str) -> str:
    """Heading text without its optional closing `#` sequence (`## Title ##` → `Title`)."""
    # String operations, not a `(?:^|[ \t]+)#+[ \t]*$` regex: that one is retried at
    # every blank of a run of spaces, which is quadratic on a heading padded with them.
    text = text.rstrip()
    bare = text.rstrip("#")
    if len(bare) < len(text) and (not bare or bare[-1] in " \t"):
        return bare
    return text


def _atx_level(line: str) -> int:
    m = _ATX.match(line)
    return len(m.group(1)) if m else 0


def _rendered(text: str) -> str:
    """A heading's text as it renders: its character references as the characters they
    stand for ("Simon &amp; Simon" → "Simon & Simon"), except in code spans."""
    if "&" not in text:
        return text
    # Between backticks is code (a run of several read as that many: linear, and near enough).
    parts = text.split("`")
    out = "`".join(part if i % 2 else _ENTITY.sub(_character, part) for i, part in enumerate(parts))
    return out.strip() or text


def _character(reference: re.Match[str]) -> str:
    """The character a reference stands for; a name HTML does not know stays as written."""
    written = reference.group()
    if written[1] == "#":
        return html.unescape(written)
    return html.entities.html5.get(written[1:], written)


def _plain_heading(text: str) -> str:
    # Wikilinks in headings show their display text (or target) in Obsidian's outline.
    def repl(m: re.Match[str]) -> str:
        inner = m.group(2).replace("\\|", "|")
        target, _, display = inner.partition("|")
        return (display or target).strip()

    return WIKILINK.sub(repl, text)


def _mask_code_spans(lines: list[str], start: int, end: int) -> None:
    """Blank CommonMark code spans in lines[start:end] (which may span lines) in place."""
    if not any("`" in lines[i] for i in range(start, end)):
        return
    text = "\n".join(lines[start:end])
    chars: list[str] | None = None
    runs = list(_BACKTICKS.finditer(text))
    by_len: dict[int, list[int]] = {}
    for idx, run in enumerate(runs):
        by_len.setdefault(len(run.group()), []).append(idx)
    # Parsing goes left to right: a wikilink that opens before a backtick wins over it
    # (Obsidian's own docs link `[[#`move`|move]]`), while `[[x]]` in backticks is code.
    wikis = [m.span() for m in WIKILINK.finditer(text)] if "[[" in text else []
    wiki_pos = 0
    code_end = 0
    idx = 0
    while idx < len(runs):
        run = runs[idx]
        while wiki_pos < len(wikis) and (
            wikis[wiki_pos][1] <= run.start() or wikis[wiki_pos][0] < code_end
        ):
            wiki_pos += 1
        if wiki_pos < len(wikis) and wikis[wiki_pos][0] < run.start() < wikis[wiki_pos][1]:
            idx += 1
            continue
        # A backslash-escaped backtick cannot open a code span.
        if run.start() > 0 and _escaped(text, run.start()):
            idx += 1
            continue
        n = len(run.group())
        candidates = by_len[n]
        pos = bisect.bisect_right(candidates, idx)
        if pos >= len(candidates):
            idx += 1
            continue
        closer = runs[candidates[pos]]
        if chars is None:
            chars = list(text)
        for j in range(run.start(), closer.end()):
            if chars[j] != "\n":
                chars[j] = " "
        code_end = closer.end()
        idx = candidates[pos] + 1
    if chars is not None:
        lines[start:end] = "".join(chars).split("\n")


def _escaped(text: str, pos: int) -> bool:
    count = 0
    pos -= 1
    while pos >= 0 and text[pos] == "\\":
        count += 1
        pos -= 1
    return count % 2 == 1


def code_masked(text: str) -> tuple[str, int]:
    """A note's LF text with its body's code blanked (same length, same lines), and where the body starts.

    Where to look for Markdown that code never holds (comments, block ids); the
    frontmatter is left as it is.
    """
    fm = _split_frontmatter(text)
    masked, _headings = _mask_code(text[fm.body_start :])
    return text[: fm.body_start] + masked, fm.body_start


def link_spans(text: str) -> list[LinkSpan]:
    """Every link in a note's LF text (frontmatter included), found as the indexer finds them.

    Nothing inside code is a link. Offsets are into `text`; `target_start:target_end`
    is the target as written (`Note`, `folder/Note.md`, `Old%20Note.md`), without the
    heading or block part, the display text or the brackets.
    """
    fm = _split_frontmatter(text)
    body = text[fm.body_start :]
    masked, _headings = _mask_code(body)
    spans: list[LinkSpan] = []
    if fm.raw and fm.data and "[[" in fm.raw:
        raw_start = text.find("\n") + 1
        fm_matches, _ = link_matches(fm.raw, LineIndex(fm.raw), fm.raw_first_line)
        spans.extend(_link_span(m, link, raw_start) for m, link in fm_matches if link.kind == "wikilink")
    body_matches, _ = link_matches(masked, LineIndex(masked), fm.body_line_offset + 1)
    spans.extend(_link_span(m, link, fm.body_start) for m, link in body_matches)
    return spans


def _link_span(m: re.Match[str], link: Link, offset: int) -> LinkSpan:
    if link.kind == "wikilink":
        start = m.start(2)
        inner = m.group(2)
        pipe = inner.find("|")
        written = inner if pipe < 0 else inner[:pipe]
        if pipe >= 0 and written.endswith("\\"):
            written = written[:-1]
    else:
        start = m.start(3)
        written = m.group(3)
        if written.startswith("<"):
            start += 1
            written = written[1:-1] if written.endswith(">") else written[1:]
    written = written.partition("#")[0]
    lead = len(written) - len(written.lstrip())
    target = written.strip()
    return LinkSpan(link, offset + m.start(), offset + m.end(), offset + start + lead, offset + start + lead + len(target))





def _with_fields(masked: str, index: LineIndex, found: list[tuple[re.Match[str], Link]]) -> list[Link]:
    """The body's links, each with the inline field (`works_at:: [[Acme]]`, `> **Owner:** [[Priya]]`) it is the value of."""
    if "::" not in masked and ">" not in masked:
        return [link for _, link in found]
    starts = index.starts
    fields_of: dict[int, Callable[[int], str | None]] = {}  # by 0-based line: each line is read once
    out: list[Link] = []
    for match, link in found:
        line = index.line_of(match.start())
        fields = fields_of.get(line)
        if fields is None:
            end = starts[line + 1] - 1 if line + 1 < len(starts) else len(masked)
            fields = fields_of[line] = key_at(inline_fields(masked[starts[line] : end]))
        key = fields(match.start() - starts[line])
        out.append(dataclasses.replace(link, property=key) if key else link)
    return out


def describing_property(text: str, lexicon: Lexicon) -> str:
    """The first frontmatter property of a note's text that describes it (`description:`,
    `summary:`, the lexicon's names), on one line; "" when there is none."""
    fm = _split_frontmatter(_normalize_newlines(text.removeprefix("\ufeff")))
    for value in _fm_get(fm.data, *lexicon.description_properties):
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            line = " ".join(str(value).split())
            if line:
                return line
    return ""


def parse_note(path: str, text: str) -> ParsedNote:
    """Parse one note's text: frontmatter, title, aliases, tags, headings and links."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = _normalize_newlines(text)
    fm = _split_frontmatter(text)
    body = text[fm.body_start :]
    offset = fm.body_line_offset
    warnings = list(fm.warnings)

    masked, raw_headings = _mask_code(body)
    body_lines = body.split("\n")
    headings = tuple(
        Heading(_atx_level(body_lines[ln]), htext, offset + ln + 1) for ln, htext in raw_headings
    )
    index = LineIndex(masked)
    found, tag_text = link_matches(masked, index, offset + 1)
    links = _with_fields(masked, index, found)

    if fm.raw and fm.data and "[[" in fm.raw:
        # Obsidian also counts wikilinks in properties (`related: "[[Note]]"`); each keeps
        # the name of its property.
        fm_index = LineIndex(fm.raw)
        fm_links, _ = find_links(fm.raw, fm_index, fm.raw_first_line)
        property_at = key_at(frontmatter_keys(fm.raw, fm.raw_first_line))
        links = [
            dataclasses.replace(lk, property=property_at(lk.line)) for lk in fm_links if lk.kind == "wikilink"
        ] + links

    tags = list(_fm_tags(fm.data))
    if "#" in tag_text:
        for m in _INLINE_TAG.finditer(tag_text):
            tag = m.group(1).rstrip("/")
            if tag and _valid_inline_tag(tag):
                tags.append(tag)

    title = ""
    for value in _fm_get(fm.data, "title"):
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            title = str(value).strip()
            if title:
                break
    if not title:
        title = _rendered(next((h.text for h in headings if h.level == 1), ""))
    if not title:
        title = PurePosixPath(path).stem or path

    return ParsedNote(
        path=path,
        title=title,
        aliases=_fm_aliases(fm.data),
        tags=_dedupe(tags),
        headings=headings,
        links=tuple(links),
        body=body,
        body_line_offset=offset,
        frontmatter=_fm_pairs(fm.data),
        warnings=tuple(warnings),
        tasks=_tasks(masked, offset + 1),
        date=_note_date(path, fm.data),
    )

