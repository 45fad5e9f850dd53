"""Find notes in a vault, read them safely, parse them Obsidian-style and resolve links."""

from __future__ import annotations

import bisect
import codecs
import datetime as _dt
import errno
import fnmatch
import gc
import os
import posixpath
import re
import stat
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

import yaml
from markdown_it import MarkdownIt

from engine.errors import CairnError, VaultNotFound
from engine.names import name_problem, printable_path
from engine.records import Heading, Link, ParsedNote, SkippedFile, TextFormat

__all__ = [
    "LinkResolver",
    "LinkSpan",
    "NoteUnreadable",
    "ScanResult",
    "VaultFile",
    "decode_note",
    "link_spans",
    "parse_note",
    "read_note",
    "read_note_bytes",
    "scan_vault",
]

# ---------------------------------------------------------------------------
# Scanning
# ---------------------------------------------------------------------------

_ALWAYS_SKIPPED_DIRS = frozenset({".obsidian", ".cairn", ".git", ".trash"})
# A save's temp file: `.cairn-save-<hex>.tmp`, or `.<Note>.md.<8 chars>.tmp` from older versions.
SAVE_TEMP = re.compile(r"\.cairn-save-[0-9a-f]+\.tmp|\..+\.md\.[a-z0-9_]{8}\.tmp", re.IGNORECASE)


class NoteUnreadable(CairnError):
    """A note file could not be read as text; `reason` says why in a few words."""

    title = "Note could not be read"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class VaultFile:
    """A Markdown note found on disk: vault-relative POSIX path, absolute path, size, mtime."""

    path: str
    abs_path: Path
    size: int
    mtime: float


@dataclass(frozen=True)
class ScanResult:
    """What a vault scan found: notes, other files (attachments) and files it skipped."""

    notes: tuple[VaultFile, ...]
    attachments: tuple[str, ...]
    skipped: tuple[SkippedFile, ...]
    # Temp files an interrupted save left behind (absolute paths; engine/notes.py names them).
    leftovers: tuple[str, ...] = ()


def _is_note_name(name: str) -> bool:
    return name.lower().endswith(".md")


def _within(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


class _Excluder:
    """Matches vault-relative paths against the user's exclude globs."""

    def __init__(self, globs: tuple[str, ...]) -> None:
        patterns: list[str] = []
        for raw in globs:
            pat = raw.strip().replace("\\", "/").lstrip("/")
            if not pat:
                continue
            patterns.append(pat)
            # `**/x` should also match `x` at the vault root, as in gitignore.
            while pat.startswith("**/"):
                pat = pat[3:]
                patterns.append(pat)
        self._patterns = tuple(dict.fromkeys(patterns))

    def __call__(self, rel: str, is_dir: bool) -> bool:
        if not self._patterns:
            return False
        # A directory also matches as `dir/` so that `Archive/**` and `Archive/` prune it.
        candidates = (rel, rel + "/") if is_dir else (rel,)
        for pat in self._patterns:
            bare = pat.rstrip("/")
            for cand in candidates:
                if fnmatch.fnmatchcase(cand, pat):
                    return True
            if is_dir and bare != pat and fnmatch.fnmatchcase(rel, bare):
                return True
        return False


def scan_vault(root: Path, excludes: tuple[str, ...] = ()) -> ScanResult:
    """Walk the vault iteratively and list its notes, attachments and skipped files."""
    try:
        root_real = os.path.realpath(root)
        if not os.path.isdir(root_real):
            raise VaultNotFound(f"not a directory: {root}")
    except OSError as exc:
        raise VaultNotFound(f"{root}: {exc.strerror or exc}") from exc

    excluded = _Excluder(excludes)
    notes: dict[str, VaultFile] = {}
    attachments: set[str] = set()
    skipped: dict[str, str] = {}
    leftovers: list[str] = []
    # Real directories already walked, mapped to the vault path they were walked as.
    visited: dict[str, str] = {root_real: ""}
    # Plain directories are walked first and symlinked ones afterwards, so that a
    # folder reachable both ways is listed under its real path, deterministically.
    plain: list[tuple[str, str]] = [(root_real, "")]
    linked: deque[tuple[str, str, str]] = deque()  # (link abs path, rel path, real target)

    def unusable(rel: str, name: str, *, folder: bool) -> bool:
        problem = name_problem(name, folder=folder)
        if problem:
            skipped[rel] = problem
        return bool(problem)

    def walk(abs_dir: str, rel_dir: str) -> None:
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except FileNotFoundError:
            skipped[rel_dir or "."] = "vanished during scan"
            return
        except PermissionError:
            skipped[rel_dir or "."] = "permission denied"
            return
        except OSError as exc:
            skipped[rel_dir or "."] = f"cannot list folder: {exc.strerror or exc}"
            return
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name.startswith("."):
                # Obsidian hides dot-files and dot-folders (.obsidian, .git, .trash, ...).
                if name.endswith(".tmp") and SAVE_TEMP.match(name):
                    leftovers.append(entry.path)
                continue
            try:
                is_link = entry.is_symlink()
                if is_link:
                    _visit_symlink(entry.path, rel)
                    continue
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                skipped[rel] = "vanished during scan"
                continue
            except PermissionError:
                skipped[rel] = "permission denied"
                continue
            except OSError as exc:
                skipped[rel] = f"cannot stat: {exc.strerror or exc}"
                continue
            if stat.S_ISDIR(st.st_mode):
                if excluded(rel, True) or unusable(rel, name, folder=True):
                    continue
                real = os.path.realpath(entry.path)
                if real in visited:
                    skipped[rel] = "symlink loop"
                    continue
                visited[real] = rel
                plain.append((entry.path, rel))
            else:
                _add_file(entry.path, rel, st)

    def _add_file(abs_path: str, rel: str, st: os.stat_result) -> None:
        if excluded(rel, False) or unusable(rel, rel.rsplit("/", 1)[-1], folder=False):
            return
        if not stat.S_ISREG(st.st_mode):
            skipped[rel] = "not a regular file"
            return
        if _is_note_name(rel):
            notes[rel] = VaultFile(rel, Path(abs_path), st.st_size, st.st_mtime)
        else:
            attachments.add(rel)

    def _visit_symlink(abs_path: str, rel: str) -> None:
        name = rel.rsplit("/", 1)[-1]
        if name_problem(name, folder=False):
            if not excluded(rel, False) and not excluded(rel, True):
                unusable(rel, name, folder=os.path.isdir(abs_path))
            return
        real = os.path.realpath(abs_path)
        if not _within(real, root_real):
            if not excluded(rel, False) and not excluded(rel, True):
                skipped[rel] = "symlink points outside the vault"
            return
        real_rel = os.path.relpath(real, root_real).replace(os.sep, "/")
        if real_rel != "." and (
            any(part.startswith(".") for part in real_rel.split("/"))
            or excluded(real_rel, os.path.isdir(real))
        ):
            # Following it would smuggle hidden or excluded files back into the index.
            skipped[rel] = "symlink into a hidden or excluded folder"
            return
        try:
            st = os.stat(abs_path)
        except FileNotFoundError:
            if not excluded(rel, False):
                skipped[rel] = "broken symlink"
            return
        except PermissionError:
            skipped[rel] = "permission denied"
            return
        except OSError as exc:
            # ELOOP: a chain of links pointing at each other.
            skipped[rel] = (
                "symlink loop" if exc.errno == errno.ELOOP else f"cannot stat: {exc.strerror}"
            )
            return
        if stat.S_ISDIR(st.st_mode):
            if not excluded(rel, True):
                linked.append((abs_path, rel, real))
        else:
            _add_file(abs_path, rel, st)

    while plain or linked:
        while plain:
            abs_dir, rel_dir = plain.pop()
            walk(abs_dir, rel_dir)
        if linked:
            abs_path, rel, real = linked.popleft()
            if real in visited:
                seen_as = visited[real]
                is_ancestor = seen_as == "" or rel == seen_as or rel.startswith(seen_as + "/")
                skipped[rel] = (
                    "symlink loop"
                    if is_ancestor
                    else f"symlink to a folder already scanned ({seen_as})"
                )
                continue
            visited[real] = rel
            plain.append((abs_path, rel))

    return ScanResult(
        notes=tuple(notes[p] for p in sorted(notes)),
        attachments=tuple(sorted(attachments)),
        skipped=tuple(SkippedFile(printable_path(p), skipped[p]) for p in sorted(skipped)),
        leftovers=tuple(sorted(leftovers)),
    )


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

_SNIFF_BYTES = 8192
# Control bytes that legitimately occur in text: \t \n \f \r, \b and ESC are rare but harmless.
_TEXT_CONTROLS = b"\t\n\f\r\b\x1b"
_CONTROL_BYTES = bytes(b for b in range(32) if b not in _TEXT_CONTROLS) + b"\x7f"


def _normalize_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_note(abs_path: Path, max_bytes: int) -> tuple[str, tuple[str, ...]]:
    """Read a note as text with LF newlines, returning (text, warnings) or raising NoteUnreadable."""
    decoded = decode_note(read_note_bytes(abs_path, max_bytes))
    return decoded.text, decoded.warnings


def read_note_bytes(abs_path: Path, max_bytes: int) -> bytes:
    """A note file's bytes, refusing what is not a regular file or is larger than `max_bytes`."""
    try:
        # O_NONBLOCK so that a FIFO named `x.md` cannot hang the indexer.
        fd = os.open(abs_path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as exc:
        raise NoteUnreadable("vanished before it could be read") from exc
    except PermissionError as exc:
        raise NoteUnreadable("permission denied") from exc
    except IsADirectoryError as exc:
        raise NoteUnreadable("not a regular file") from exc
    except OSError as exc:
        raise NoteUnreadable(os_reason(exc, "cannot open")) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NoteUnreadable("not a regular file")
        if st.st_size > max_bytes:
            raise NoteUnreadable(f"too large: {st.st_size} bytes > {max_bytes}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            # One byte past the limit tells us the file grew since fstat.
            data = fh.read(max_bytes + 1)
    except PermissionError as exc:
        raise NoteUnreadable("permission denied") from exc
    except IsADirectoryError as exc:
        raise NoteUnreadable("not a regular file") from exc
    except OSError as exc:
        raise NoteUnreadable(os_reason(exc, "cannot read")) from exc
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise NoteUnreadable(f"too large: more than {max_bytes} bytes (grew while reading)")
    return data


def os_reason(exc: OSError, doing: str) -> str:
    """A few words for an OSError: `permission denied`, `symlink loop`, `cannot read: I/O error`."""
    if isinstance(exc, FileNotFoundError):
        return "vanished before it could be read"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    return f"{doing}: {exc.strerror or exc}"


@dataclass(frozen=True)
class DecodedNote:
    """A note's bytes as text with LF newlines, how they were stored, and what reading noticed."""

    text: str
    format: TextFormat
    warnings: tuple[str, ...]
    original: str  # the decoded text with its own line endings, to write them back


# Longest byte-order marks first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_NEWLINES = re.compile(r"\r\n?|\n")


def decode_note(data: bytes) -> DecodedNote:
    """Decode a note's bytes the way the indexer and the editors read them.

    UTF-8 (with or without BOM), UTF-16 and UTF-32 with a BOM, UTF-16 without one,
    else cp1252 (latin-1 for the five bytes cp1252 leaves undefined); every one of
    these decodes and re-encodes to the same bytes. Binary data raises NoteUnreadable.
    """
    text, codec, bom, warnings = _decode(data)
    return DecodedNote(_normalize_newlines(text), TextFormat(codec, bom, _dominant_newline(text)), warnings, text)


def _dominant_newline(text: str) -> str:
    if "\r" not in text:
        return "\n"
    counts = {"\n": 0, "\r\n": 0, "\r": 0}
    for m in _NEWLINES.finditer(text):
        counts[m.group()] += 1
    return max(counts, key=lambda k: (counts[k], k == "\n"))


def _decode(data: bytes) -> tuple[str, str, bytes, tuple[str, ...]]:
    """(text, codec, BOM, warnings) of a note's bytes."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(codec)
            except UnicodeDecodeError as exc:
                if codec == "utf-8":
                    break  # a UTF-8 mark on text that is not UTF-8: read it as the rest is
                raise NoteUnreadable("binary file, not Markdown") from exc
            if codec == "utf-8":
                return text, codec, bom, ()
            _refuse_binary_text(text)
            family = codec[:6].upper()
            return text, codec, bom, (f"{family} file; read as {family}",)
    sample = data[:_SNIFF_BYTES]
    if b"\x00" in sample:
        utf16 = _bomless_utf16(sample)
        if utf16 is not None:
            try:
                text = data.decode(utf16)
            except UnicodeDecodeError as exc:
                raise NoteUnreadable("binary file, not Markdown") from exc
            _refuse_binary_text(text)
            return text, utf16, b"", ("UTF-16 file without a byte-order mark; read as UTF-16",)
        raise NoteUnreadable("binary file, not Markdown")
    if sample:
        controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
        if controls > 0.30 * len(sample):
            raise NoteUnreadable("binary file, not Markdown")
    try:
        return data.decode("utf-8"), "utf-8", b"", ()
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "cp1252", b"", ("not valid UTF-8; read as cp1252",)
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1", b"", ("not valid UTF-8; read as latin-1",)


def _refuse_binary_text(text: str) -> None:
    """Raise NoteUnreadable when decoded text is mostly control characters (binary data)."""
    sample = text[:_SNIFF_BYTES]
    controls = sum(1 for c in sample if (ord(c) < 32 and c not in "\t\n\f\r\b\x1b") or c == "\x7f")
    if "\x00" in sample or controls > 0.30 * max(1, len(sample)):
        raise NoteUnreadable("binary file, not Markdown")


def _bomless_utf16(sample: bytes) -> str | None:
    """`utf-16-le`/`-be` when NUL bytes sit on one side of every pair, as in mostly-ASCII UTF-16."""
    even = sample[0::2]
    odd = sample[1::2]
    pairs = min(len(even), len(odd))
    if pairs < 2:
        return None
    zero_even = even.count(0)
    zero_odd = odd.count(0)
    if zero_odd >= 0.5 * pairs and zero_even == 0:
        return "utf-16-le"
    if zero_even >= 0.5 * pairs and zero_odd == 0:
        return "utf-16-be"
    return None


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

_FM_OPEN = re.compile(r"---[ \t]*(?:\n|$)")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_LINK_TITLE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\))"
# The blanks around a destination are possessive, and a title with no destination is its
# own branch: with `\s*`, `\s+` and `\s*` in a row, `[x](` before a long run of blanks
# would try every way of sharing the run out (quadratic per bracket). Matches are the same.
_MD_LINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"  # [text], one level of nested brackets
    r"\((?:\s*+(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"  # (dest or <dest>
    rf"(?:\s++{_LINK_TITLE})?|\s++{_LINK_TITLE})\s*+\)"  # optional "title", or only one)
)
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# A bare URL's scheme starts at the first letter of its run of scheme characters. The
# lookbehind lets a scan start only where such a run begins (its leading digits and
# `+.-` are skipped possessively, outside the URL group). Retrying at every letter of a
# long word before a URL would be quadratic. Spans come from `_bare_url_spans`.
_BARE_URL = re.compile(
    r"(?<![A-Za-z0-9+.\-])[0-9+.\-]*+(?P<url>[A-Za-z][A-Za-z0-9+.\-]*+://\S+)|(?P<www>www\.\S+)"
)
_INLINE_TAG = re.compile(r"(?<!\S)#([\w/\-]+)")
_TAG_SPLIT = re.compile(r"[,\s]+")
_BACKTICKS = re.compile(r"`+")


def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark")
    # Only block structure is needed (fences, code blocks, ATX headings, paragraph ranges);
    # skipping inline parsing makes this several times faster on big notes. Setext headings,
    # HTML blocks and reference definitions only change how text is grouped, never whether
    # it is code, yet they rescan every paragraph line; without them parsing is ~3x faster.
    md.disable(["inline", "text_join", "lheading", "html_block", "reference"], ignoreInvalid=True)
    return md


_MD = _block_parser()


def _block_structure(body: str, line_count: int) -> tuple[bytearray, list[tuple[int, int]], list[int]]:
    """Which lines of a body are code, its inline segments' line ranges, and its ATX heading lines."""
    code_lines = bytearray(line_count)
    segments: list[tuple[int, int]] = []
    headings: list[int] = []
    for tok in _MD.parse(body):
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


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for a block (and restored as it was found)."""
    # The parser's objects (markdown-it tokens, links, spans) hold no reference cycles,
    # yet every collection walks all the live ones again as they pile up: with it
    # running, a 1 MB note of headings was masked at 2.6 ms per KB, 2.4 times the 16 KB
    # rate, and links were found 1.6 times slower per KB; paused, both are flat.
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()

try:
    _YamlLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _YamlLoader = yaml.SafeLoader


def _load_yaml(text: str) -> Any:
    # _YamlLoader is CSafeLoader or SafeLoader, never the unsafe full loader.
    return yaml.load(text, Loader=_YamlLoader)


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
    try:
        loaded = _load_yaml(raw) if raw.strip() else None
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
    pairs: list[tuple[str, str]] = []
    for key, value in data.items():
        if value is None:
            pairs.append((key, ""))
        elif isinstance(value, _SCALARS):
            pairs.append((key, str(value)))
    return tuple(pairs)


def _valid_inline_tag(tag: str) -> bool:
    # Obsidian: a tag needs at least one character that is not a number (#1984 is no tag).
    return any(not (c.isdigit() or c in "-/") for c in tag)


@_collector_paused()
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


def _plain_heading(text: str) -> str:
    # Wikilinks in headings show their display text (or target) in Obsidian's outline.
    def repl(m: re.Match[str]) -> str:
        inner = m.group(2).replace("\\|", "|")
        target, _, display = inner.partition("|")
        return (display or target).strip()

    return _WIKILINK.sub(repl, text)


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
    wikis = [m.span() for m in _WIKILINK.finditer(text)] if "[[" in text else []
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


def _wikilink(m: re.Match[str], line: int) -> Link | None:
    inner = m.group(2)
    pipe = inner.find("|")
    display: str | None = None
    if pipe >= 0:
        target_part = inner[:pipe]
        if target_part.endswith("\\"):
            # `[[Note\|shown]]` inside a table: the backslash only protects the table cell.
            target_part = target_part[:-1]
        display = inner[pipe + 1 :].strip() or None
    else:
        target_part = inner
    target, heading, block = _split_fragment(target_part)
    target = _strip_md(target.strip())
    if not target and heading is None and block is None:
        return None
    return Link(target, display, heading, block, bool(m.group(1)), line, "wikilink")


def _split_fragment(target: str) -> tuple[str, str | None, str | None]:
    head, sep, frag = target.partition("#")
    if not sep:
        return head, None, None
    frag = frag.strip()
    if frag.startswith("^"):
        return head, None, frag[1:].strip() or None
    return head, frag or None, None


def _strip_md(target: str) -> str:
    return target[:-3] if target.lower().endswith(".md") else target


def _markdown_link(m: re.Match[str], line: int) -> Link | None:
    dest = (m.group(3) or "").strip()  # None: a title and no destination
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1].strip()
    if not dest or _URL_SCHEME.match(dest) or dest.startswith("//"):
        return None
    raw_target, sep, frag = dest.partition("#")
    target = _strip_md(_unquote(raw_target).strip())
    heading: str | None = None
    block: str | None = None
    if sep:
        frag = _unquote(frag).strip()
        if frag.startswith("^"):
            block = frag[1:] or None
        else:
            heading = frag or None
    if not target and heading is None and block is None:
        return None
    display = m.group(2).strip() or None
    return Link(target, display, heading, block, bool(m.group(1)), line, "markdown")


def _unquote(text: str) -> str:
    return unquote(text) if "%" in text else text


class _LineIndex:
    """Maps character offsets to 0-based line numbers by bisecting line starts."""

    def __init__(self, text: str) -> None:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(" " * (end - start))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _bare_url_spans(text: str) -> Iterable[tuple[int, int]]:
    """Spans of bare URLs (`scheme://...`, `www....`) in text, left to right."""
    for m in _BARE_URL.finditer(text):
        yield m.span("url") if m.group("url") is not None else m.span("www")


@_collector_paused()
def _find_links(masked: str, index: _LineIndex, first_line: int) -> tuple[list[Link], str]:
    """Links in already code-masked text, and the text with links and URLs blanked (for tags)."""
    found, rest = _link_matches(masked, index, first_line)
    return [link for _, link in found], rest


def _link_matches(masked: str, index: _LineIndex, first_line: int) -> tuple[list[tuple[re.Match[str], Link]], str]:
    """(match, link) of every link in code-masked text in text order, and the text with links and URLs blanked."""
    found: list[tuple[re.Match[str], Link]] = []
    wiki_spans: list[tuple[int, int]] = []
    if "[[" in masked:
        for m in _WIKILINK.finditer(masked):
            wiki_spans.append(m.span())
            link = _wikilink(m, first_line + index.line_of(m.start()))
            if link is not None:
                found.append((m, link))
    rest = _blank(masked, wiki_spans) if wiki_spans else masked
    md_spans: list[tuple[int, int]] = []
    if "](" in rest:
        for m in _MD_LINK.finditer(rest):
            md_spans.append(m.span())
            link = _markdown_link(m, first_line + index.line_of(m.start()))
            if link is not None:
                found.append((m, link))
    if md_spans:
        rest = _blank(rest, md_spans)
    if "://" in rest or "www." in rest:
        rest = _blank(rest, _bare_url_spans(rest))
    found.sort(key=lambda item: item[0].start())
    return found, rest


@dataclass(frozen=True)
class LinkSpan:
    """Where a link sits in a note's text: the whole link, and the part that names its target."""

    link: Link
    start: int
    end: int
    target_start: int
    target_end: int


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
        fm_matches, _ = _link_matches(fm.raw, _LineIndex(fm.raw), fm.raw_first_line)
        spans.extend(_link_span(m, link, raw_start) for m, link in fm_matches if link.kind == "wikilink")
    body_matches, _ = _link_matches(masked, _LineIndex(masked), fm.body_line_offset + 1)
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
    index = _LineIndex(masked)
    links, tag_text = _find_links(masked, index, offset + 1)

    if fm.raw and fm.data and "[[" in fm.raw:
        # Obsidian also counts wikilinks in properties (`related: "[[Note]]"`).
        fm_index = _LineIndex(fm.raw)
        fm_links, _ = _find_links(fm.raw, fm_index, fm.raw_first_line)
        links = [lk for lk in fm_links if lk.kind == "wikilink"] + links

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
        title = next((h.text for h in headings if h.level == 1), "")
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
    )


# ---------------------------------------------------------------------------
# Link resolution
# ---------------------------------------------------------------------------


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


class LinkResolver:
    """Resolves link targets to note or attachment paths the way Obsidian does."""

    def __init__(
        self,
        notes: Iterable[tuple[str, str, tuple[str, ...]]],
        attachments: Iterable[str] = (),
    ) -> None:
        # Every path suffix on a `/` boundary (without `.md` for notes) maps to the files
        # ending that way, so `Note`, `folder/Note` and `a/folder/Note` are all one lookup.
        self._suffix: dict[str, list[str]] = {}
        self._exact: dict[str, str] = {}
        self._names: dict[str, list[str]] = {}
        for path, title, aliases in notes:
            stem = path[:-3] if path.lower().endswith(".md") else path
            self._index_path(stem.casefold(), path)
            self._exact.setdefault(path.casefold(), path)
            for name in (*aliases, title):
                key = name.strip().casefold()
                if key:
                    bucket = self._names.setdefault(key, [])
                    if path not in bucket:
                        bucket.append(path)
        for path in attachments:
            self._index_path(path.casefold(), path)
            self._exact.setdefault(path.casefold(), path)
        # Ambiguous names are pre-ordered (shortest path, then alphabetical) so that only
        # the same-folder preference needs looking at per call.
        for table in (self._suffix, self._names):
            for paths in table.values():
                if len(paths) > 1:
                    paths.sort(key=lambda p: (len(p), p))
        self._by_folder: dict[tuple[str, str], str] = {}
        for key, paths in self._suffix.items():
            if len(paths) > 1:
                for p in paths:
                    self._by_folder.setdefault((key, _folder(p).casefold()), p)

    def _index_path(self, key: str, path: str) -> None:
        parts = key.split("/")
        for i in range(len(parts)):
            suffix = "/".join(parts[i:])
            bucket = self._suffix.setdefault(suffix, [])
            if not bucket or bucket[-1] != path:
                bucket.append(path)

    def _pick(self, key: str, paths: list[str], source_folder: str) -> str:
        if len(paths) == 1:
            return paths[0]
        if "/" in key:
            # A path written out in full beats a longer path that merely ends the same way.
            exact = self._exact.get(key + ".md") or self._exact.get(key)
            if exact is not None and exact in paths:
                return exact
        same = self._by_folder.get((key, source_folder))
        if same is not None:
            return same
        return paths[0]

    def resolve(self, target: str, source_path: str) -> str | None:
        """The vault path a link target points to, or None if it dangles."""
        target = target.strip().replace("\\", "/")
        if not target:
            return source_path
        source_folder = _folder(source_path).casefold()
        key = target.casefold()
        if key.endswith(".md"):
            key = key[:-3]
        if key.startswith(("./", "../")) or "/./" in key or "/../" in key:
            # Markdown-style relative links: try relative to the source note first.
            joined = posixpath.normpath(posixpath.join(source_folder, key))
            hit = self._exact.get(joined + ".md") or self._exact.get(joined)
            if hit is not None:
                return hit
            key = posixpath.normpath(key)
            while key.startswith("../"):
                key = key[3:]
            key = key.removeprefix("./")
        if key.startswith("/"):
            key = key.lstrip("/")
            hit = self._exact.get(key + ".md") or self._exact.get(key)
            if hit is not None:
                return hit
        paths = self._suffix.get(key)
        if paths:
            return self._pick(key, paths, source_folder)
        names = self._names.get(key) or self._names.get(target.strip().casefold())
        if names:
            for p in names:
                if _folder(p).casefold() == source_folder:
                    return p
            return names[0]
        return None
