"""Reading a note file safely: bounded, never blocking, decoded as UTF-8, UTF-16/32 or cp1252 with its format kept."""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from engine.errors import CairnError
from engine.records import TextFormat


class NoteUnreadable(CairnError):
    """A note file could not be read as text; `reason` says why in a few words."""

    title = "Note could not be read"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason



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

