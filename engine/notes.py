"""Note files: read for editing, save, create, rename with link updates, trash, copies.

The only code that changes files in the vault. Every write is atomic (a temp file,
fsync, rename) and checked against the sha256 of the bytes the editor loaded, under
a lock held by every process that saves through Cairn, so two saves of the same
version never both succeed. A note keeps its encoding, byte-order mark and line
endings: an editor gets LF text, and saving puts every unchanged line's ending back.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import datetime
import difflib
import errno
import fcntl
import hashlib
import json
import logging
import os
import posixpath
import re
import secrets
import sqlite3
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.errors import (
    CairnError,
    EncodingMismatch,
    IndexLocked,
    NoteExists,
    NoteNotEditable,
    NoteNotFound,
    NoteNotSaved,
    SaveConflict,
    UnsafePath,
)
from engine.folding import path_form
from engine.names import brief, has_hidden_control, printable_path
from engine.records import (
    Heading,
    LinkingNote,
    LinkUpdate,
    NoteSection,
    NoteText,
    NoteView,
    ReindexReport,
    RenameResult,
    SaveResult,
    SkippedFile,
    TextFormat,
    VaultEntry,
)
from engine.vault import (
    SAVE_TEMP,
    DecodedNote,
    LinkResolver,
    NoteUnreadable,
    decode_note,
    link_spans,
    read_note_bytes,
    scan_vault,
)
from engine.vault.files import file_kind
from engine.vault.parse import parse_note
from engine.vault.sections import note_section

if TYPE_CHECKING:
    from engine.catalog import Catalog
    from engine.config import EngineConfig

log = logging.getLogger("cairn.engine")

NAME_MAX_BYTES = 255
TEMP_PREFIX = ".cairn-save-"
TEMP_SUFFIX = ".tmp"
# The copy of a hard-linked note's old bytes kept while it is rewritten in place; never
# removed as a stale temp: after a crash mid-write it is what the note held.
LINKED_BACKUP_PREFIX = ".cairn-linked-backup-"
# A save's temp file lives for milliseconds; one older than this was left by a killed process.
STALE_TEMP_S = 600.0
# Lines in the changed middle of a note above which line endings are matched by position only.

# Characters Obsidian refuses in names, control characters (a line break, ESC, the C1 range)
# and the invisible marks that reorder text around them (U+202E shows "a\u202eb.md" as
# "a" then "b.md" reversed): a name holding them would be skipped by the scan, or show as another.
_UNSAFE_NAME = re.compile(r'[\\:*?"<>|#^\[\]\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]')
_LINE_ENDS = re.compile(r"\r\n?|\n")
# In-process half of the save lock (the other half is a flock on the note's folder).
_STRIPES = tuple(threading.Lock() for _ in range(64))


def content_sha(data: bytes) -> str:
    """The sha256 the save protocol compares: of a file's bytes exactly as on disk."""
    return hashlib.sha256(data).hexdigest()


def file_sha(path: Path) -> str | None:
    """sha256 of a file's bytes, or None if it does not exist."""
    try:
        return content_sha(path.read_bytes())
    except FileNotFoundError:
        return None


# ---------------------------------------------------------------------------
# Text in, bytes out
# ---------------------------------------------------------------------------


def read_text(path: str, target: Path, max_bytes: int) -> NoteText:
    """A note as an editor gets it; a missing file is an empty new note (sha None).

    Raises:
        NoteNotEditable: the file cannot be read as text (binary, too large, unreadable),
            so editing it could not write it back intact.
    """
    try:
        data = read_note_bytes(target, max_bytes)
    except NoteUnreadable as exc:
        if exc.reason == "vanished before it could be read":
            return NoteText(path, "", None)
        raise NoteNotEditable(f"{path}: {exc.reason}") from exc
    try:
        decoded = decode_note(data)
    except NoteUnreadable as exc:
        raise NoteNotEditable(f"{path}: {exc.reason}") from exc
    return NoteText(path, decoded.text, content_sha(data), decoded.format, decoded.warnings)


def encode_text(text: str, fmt: TextFormat, original: str | None = None) -> bytes:
    """The bytes of `text` stored as `fmt`, each unchanged line keeping its ending in `original`.

    `text` may use any line endings (it is read as LF text); `original` is the note's
    decoded text before the edit, with its own line endings, when there is one.

    Raises:
        EncodingMismatch: `text` has a character the note's encoding cannot store.
        NoteNotSaved: `text` has half a character (a lone surrogate), which no encoding stores.
    """
    lines = _LINE_ENDS.split(text)
    if original is None:
        ending_of = [fmt.newline] * (len(lines) - 1)
    else:
        ending_of = _restored_endings(original, lines, fmt.newline)
        for index in range(len(ending_of) - 1):
            # A CR, then an empty line that ends in LF, would read back as one CRLF: a line
            # lost. The empty line takes the CR's ending too (its own line was edited).
            if ending_of[index] == "\r" and not lines[index + 1] and ending_of[index + 1] == "\n":
                ending_of[index + 1] = "\r"
    parts: list[str] = []
    for index, line in enumerate(lines):
        parts.append(line)
        if index < len(ending_of):
            parts.append(ending_of[index])
    joined = "".join(parts)
    try:
        payload = fmt.bom + joined.encode(fmt.codec)
    except UnicodeEncodeError as exc:
        bad = joined[exc.start]
        line_number = len(_LINE_ENDS.findall(joined, 0, exc.start)) + 1
        if 0xD800 <= ord(bad) <= 0xDFFF:
            # Half of a character (a lone surrogate): no encoding holds it, UTF-8 included.
            raise NoteNotSaved(
                f"the text holds U+{ord(bad):04X} on line {line_number}, half of a character that no "
                "encoding can store; nothing was written. Remove it and save again."
            ) from exc
        raise EncodingMismatch(
            f"this note is stored as {fmt.label}, which cannot hold “{bad}” (U+{ord(bad):04X}, line {line_number}); "
            "nothing was written. Remove the character, or save the note as UTF-8."
        ) from exc
    _check_reads_back(payload, "\n".join(lines), fmt)
    return payload


def _check_reads_back(payload: bytes, text: str, fmt: TextFormat) -> None:
    """Refuse bytes that would not read back as `text` (LF text): a save never writes what
    the next read would show differently, or not at all.

    Raises:
        NoteNotSaved: the bytes would read as a binary file.
        EncodingMismatch: they would read back as other characters (cp1252 text that is
            also valid UTF-8, say); saving as UTF-8 keeps them.
    """
    utf8 = fmt.codec == "utf-8" and not fmt.bom
    try:
        back = decode_note(payload)
    except NoteUnreadable as exc:
        if not utf8:  # UTF-16 without a mark whose text no longer looks like UTF-16, say
            raise EncodingMismatch(
                f"stored as {fmt.label}, this text would read back as a binary file; nothing was written. "
                "Save the note as UTF-8."
            ) from exc
        raise NoteNotSaved(
            "the text would be stored as a file that reads as binary (a NUL character, or mostly control "
            "characters, near its start); nothing was written. Remove them and save again."
        ) from exc
    if back.text != text:
        at = next((k for k, (a, b) in enumerate(zip(back.text, text, strict=False)) if a != b), min(len(back.text), len(text)))
        line_number = text.count("\n", 0, at) + 1
        if not utf8:
            raise EncodingMismatch(
                f"stored as {fmt.label}, this text would read back as other characters (from line "
                f"{line_number}: it reads as {back.format.label}); nothing was written. Save the note as UTF-8."
            )
        raise NoteNotSaved(
            f"this text would read back differently from line {line_number} (a byte-order mark at its start, "
            "say); nothing was written. Remove the character there and save again."
        )


def _split_with_endings(text: str) -> tuple[list[str], list[str]]:
    """Lines of `text` and the ending after each (the last line has none)."""
    lines: list[str] = []
    endings: list[str] = []
    last = 0
    for m in _LINE_ENDS.finditer(text):
        lines.append(text[last : m.start()])
        endings.append(m.group())
        last = m.end()
    lines.append(text[last:])
    return lines, endings


def _restored_endings(original: str, new_lines: Sequence[str], default: str) -> list[str]:
    """The ending for each of `new_lines` but the last: the original line's where it survived.

    Lines are matched by a common prefix and suffix, then the middle by `_matched_lines`
    (never worse than O(n log n): a save is never slow because of its text); an edited
    line in place keeps its ending; an inserted line gets the note's usual ending.
    """
    old_lines, old_endings = _split_with_endings(original)
    wanted = len(new_lines) - 1
    out: list[str] = [default] * wanted

    def take(new_index: int, old_index: int) -> None:
        if new_index < wanted and old_index < len(old_endings):
            out[new_index] = old_endings[old_index]

    n_old, n_new = len(old_lines), len(new_lines)
    head = 0
    while head < n_old and head < n_new and old_lines[head] == new_lines[head]:
        take(head, head)
        head += 1
    tail = 0
    while tail < n_old - head and tail < n_new - head and old_lines[n_old - 1 - tail] == new_lines[n_new - 1 - tail]:
        take(n_new - 1 - tail, n_old - 1 - tail)
        tail += 1
    old_mid = old_lines[head : n_old - tail]
    new_mid = new_lines[head : n_new - tail]
    if not old_mid or not new_mid or all(ending == default for ending in old_endings):
        return out  # nothing to match, or every line ends the same way whatever matches
    for old_index, new_index in _matched_lines(old_mid, new_mid):
        take(head + new_index, head + old_index)
    return out


# A line diff (difflib) is at its best on few lines and cubic at worst: it matches the middle
# of a small note, and the stretches between a long note's anchors when they are short.
_DIFF_LINES = 400
_GAP_DIFF_LINES = 100


def _diffed_lines(old: Sequence[str], new: Sequence[str]) -> Iterator[tuple[int, int]]:
    """Pairs (old index, new index) from a line diff: equal lines, and replaced ones in place."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for k in range(min(i2 - i1, j2 - j1)):
                yield i1 + k, j1 + k


def _matched_lines(old: Sequence[str], new: Sequence[str]) -> Iterator[tuple[int, int]]:
    """Pairs (old index, new index) of lines taken to be the same line, in order.

    A line diff for a small middle. Beyond it, patience matching, never worse than
    O(n log n) plus bounded diffs: the lines that occur once on each side are anchors (the
    longest run of them in the same order); between two anchors, a short stretch is
    diffed, and in a long one equal lines at either end match and the rest pair by
    position (an edited line in place).
    """
    if len(old) + len(new) <= _DIFF_LINES:
        yield from _diffed_lines(old, new)
        return
    old_count = Counter(old)
    new_count = Counter(new)
    new_at = {line: j for j, line in enumerate(new) if new_count[line] == 1}
    pairs = [(i, new_at[line]) for i, line in enumerate(old) if old_count[line] == 1 and line in new_at]
    start_old = start_new = 0
    for anchor_old, anchor_new in [*_in_order(pairs), (len(old), len(new))]:
        gap_old, gap_new = anchor_old - start_old, anchor_new - start_new
        if 0 < gap_old + gap_new <= _GAP_DIFF_LINES:
            for i, j in _diffed_lines(old[start_old:anchor_old], new[start_new:anchor_new]):
                yield start_old + i, start_new + j
            if anchor_old < len(old):
                yield anchor_old, anchor_new
            start_old, start_new = anchor_old + 1, anchor_new + 1
            continue
        lead = 0
        while lead < min(gap_old, gap_new) and old[start_old + lead] == new[start_new + lead]:
            lead += 1
        trail = 0
        while trail < min(gap_old, gap_new) - lead and old[anchor_old - 1 - trail] == new[anchor_new - 1 - trail]:
            trail += 1
        for k in range(min(gap_old, gap_new) - trail):
            yield start_old + k, start_new + k
        for k in range(trail, 0, -1):
            yield anchor_old - k, anchor_new - k
        if anchor_old < len(old):
            yield anchor_old, anchor_new
        start_old, start_new = anchor_old + 1, anchor_new + 1


def _in_order(pairs: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of `pairs` (sorted by their first) whose seconds increase too."""
    tails: list[int] = []  # tails[k]: index in pairs of the smallest end of a run of length k + 1
    before: list[int] = [-1] * len(pairs)
    ends: list[int] = []
    for index, (_old, new_index) in enumerate(pairs):
        k = bisect.bisect_left(ends, new_index)
        before[index] = tails[k - 1] if k else -1
        if k == len(ends):
            ends.append(new_index)
            tails.append(index)
        else:
            ends[k] = new_index
            tails[k] = index
    run: list[tuple[int, int]] = []
    index = tails[-1] if tails else -1
    while index >= 0:
        run.append(pairs[index])
        index = before[index]
    return run[::-1]


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def save_lock(target: Path, *, create_folder: bool = False) -> Iterator[None]:
    """Hold the lock every Cairn process takes to compare and replace a note in `target`'s folder.

    A flock on the folder (folders are never replaced by a save, so every process
    locks the same inode), plus a thread lock for this process's own threads.
    `create_folder` makes a missing folder first, so that two creates in a new
    folder lock it too.
    """
    with save_locks(target, create_folder=create_folder):
        yield


@contextlib.contextmanager
def save_locks(*targets: Path, create_folder: bool = False) -> Iterator[None]:
    """`save_lock` for every target at once: a move holds its source's folder and its target's.

    Every thread lock is taken before any folder lock, each kind in one order, so two
    moves in opposite directions, or a move and a save, never wait on each other in a ring.
    """
    stripes = sorted({hash(str(target)) % len(_STRIPES) for target in targets})
    folders = {target.parent: target for target in reversed(targets)}
    with contextlib.ExitStack() as held:
        for index in stripes:
            held.enter_context(_STRIPES[index])
        for folder in sorted(folders, key=str):
            if create_folder:
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise NoteNotSaved(_write_problem(exc, folders[folder])) from exc
            try:
                fd = os.open(folder, os.O_RDONLY)
            except OSError:
                continue  # the folder does not exist: there is no note in it to race for
            held.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        # A note with hard links is one file under several names, maybe in other folders,
        # whose locks a save through another name does not take: lock the file itself too.
        for fd in _hard_linked_files(targets):
            held.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield


def _hard_linked_files(targets: Sequence[Path]) -> list[int]:
    """Open descriptors of the targets that are regular files with more than one name, in inode order."""
    found: dict[tuple[int, int], int] = {}
    for target in targets:
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2 or key in found:
            os.close(fd)
            continue
        found[key] = fd
    return [found[key] for key in sorted(found)]


def write_bytes(target: Path, data: bytes, *, temp_dir: Path | None = None) -> None:
    """Replace `target` with `data` atomically: temp file, fsync, rename, fsync the folder.

    A new file gets the mode the umask gives (0644 under 022), an existing one keeps
    its own. The temp file goes to `temp_dir` when that is on the same file system
    (a killed save then leaves nothing in the user's folders), else next to `target`
    under a short hidden name (a note name of 255 bytes still fits).

    A note with hard links (several names for one file) is written in place instead, as
    editors do: a rename would give this name a new file and leave the other names with
    the old text (`_write_in_place`).

    Raises:
        NoteNotSaved: the disk is full, the folder is read-only, the name is too long …
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            found = os.lstat(target)
            mode: int | None = stat.S_IMODE(found.st_mode)
        except FileNotFoundError:
            mode = None
        else:
            if stat.S_ISREG(found.st_mode) and found.st_nlink > 1:
                _write_in_place(target, data, temp_dir)
                return
        folder = _temp_folder(target.parent, temp_dir)
        tmp = folder / f"{TEMP_PREFIX}{secrets.token_hex(6)}{TEMP_SUFFIX}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise NoteNotSaved(_write_problem(exc, target)) from exc
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise NoteNotSaved(_write_problem(exc, target)) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(target.parent)


def _write_in_place(target: Path, data: bytes, temp_dir: Path | None) -> None:
    """Rewrite a hard-linked note in place, keeping its file (and so every name it has).

    Not atomic, so it is made safe another way: the old bytes are first copied (and
    fsynced) to a backup beside the index's temp files, the room for the new bytes is
    reserved before any byte is overwritten (a full disk fails before the note changes),
    and a write that fails half-way puts the old bytes back. The backup goes once the
    new bytes are on disk; a crash in between leaves it, named `.cairn-linked-backup-…`.
    """
    fd = os.open(target, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    try:
        old = _read_all(fd)
        backup = _temp_folder(target.parent, temp_dir) / f"{LINKED_BACKUP_PREFIX}{secrets.token_hex(6)}{TEMP_SUFFIX}"
        _write_new_file(backup, old)
        if len(data) > len(old):
            _reserve(fd, len(data), len(old))
        try:
            _overwrite(fd, data)
        except OSError:
            try:
                _overwrite(fd, old)
            except OSError as again:
                raise NoteNotSaved(
                    f"{target.name} was half written and could not be put back: its old text is in {backup}"
                ) from again
            with contextlib.suppress(OSError):
                backup.unlink()
            raise
        with contextlib.suppress(OSError):
            backup.unlink()
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_new_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _overwrite(fd, data)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    os.close(fd)


def _reserve(fd: int, size: int, old_size: int) -> None:
    """Make room for `size` bytes before the note is touched: a full disk fails here."""
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            return  # the file system cannot reserve: the write itself finds out, and undoes
        with contextlib.suppress(OSError):
            os.ftruncate(fd, old_size)
        raise


def _overwrite(fd: int, data: bytes) -> None:
    """`data` as the whole content of the open file, synced."""
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _temp_folder(folder: Path, temp_dir: Path | None) -> Path:
    if temp_dir is None:
        return folder
    try:
        temp_dir.mkdir(parents=True, exist_ok=True)
        if temp_dir.stat().st_dev == folder.stat().st_dev and os.access(temp_dir, os.W_OK):
            return temp_dir
    except OSError:
        pass
    return folder


def _fsync_folder(folder: Path) -> None:
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the rename itself is done
    finally:
        os.close(dir_fd)


def _write_problem(exc: OSError, target: Path) -> str:
    """What went wrong writing a note, in words a user can act on; nothing was written."""
    name = target.name
    if exc.errno == errno.ENOSPC or exc.errno == errno.EDQUOT:
        return f"the disk is full: {name} was not saved (the file on disk is unchanged)"
    if exc.errno == errno.EROFS:
        return f"the vault is on a read-only file system: {name} was not saved"
    if isinstance(exc, PermissionError):
        return f"no permission to write in {target.parent}: {name} was not saved"
    if exc.errno == errno.ENAMETOOLONG:
        return f"the name is too long for the file system ({len(os.fsencode(name))} bytes, at most {NAME_MAX_BYTES})"
    if exc.errno == errno.ELOOP:
        return f"{name} is a symlink loop"
    if isinstance(exc, IsADirectoryError):
        return f"{name} is a folder"
    if isinstance(exc, NotADirectoryError):
        return f"a part of the path to {name} is a file, not a folder"
    return f"{name} was not saved: {exc.strerror or exc}"


def remove_stale_temps(paths: Sequence[str | Path], *, now: float | None = None) -> int:
    """Delete the save temp files among `paths` older than STALE_TEMP_S (left by a killed save)."""
    removed = 0
    moment = time.time() if now is None else now
    for path in paths:
        name = os.path.basename(path)
        if not SAVE_TEMP.fullmatch(name):
            continue
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and moment - st.st_mtime > STALE_TEMP_S:
                os.unlink(path)
                removed += 1
        except OSError:
            continue
    return removed


def stale_temps_in(folder: Path) -> list[Path]:
    """The save temp files in one folder (the index's temp folder)."""
    try:
        return [Path(e.path) for e in os.scandir(folder) if SAVE_TEMP.fullmatch(e.name)]
    except OSError:
        return []


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------


def note_path(folder: str, name: str) -> str:
    """The vault path for a note named `name` in `folder` (a name with '/' is a vault path).

    Characters Obsidian refuses in names become '-', and a name too long for the file
    system is shortened on a character boundary (the note's heading keeps it whole).

    Raises:
        UnsafePath: no name is left, or the path is hidden (a part starts with '.').
    """
    for text, what in ((folder, "folder"), (name, "name")):
        if any(0xD800 <= ord(char) <= 0xDFFF for char in text):
            raise UnsafePath(f"the {what} “{printable_path(text)}” is not valid Unicode (a byte that is not UTF-8)")
    if has_hidden_control(folder):
        # A folder is named as it is (it may exist); one named so is never scanned.
        raise UnsafePath(
            f"the folder “{printable_path(folder)}” holds a control character or a mark that reorders text"
        )
    for part in folder.split("/"):
        if len(part.encode("utf-8")) > NAME_MAX_BYTES:
            raise UnsafePath(
                f"the folder name {part[:40]!r}… is too long for the file system "
                f"({len(part.encode('utf-8'))} bytes, at most {NAME_MAX_BYTES})"
            )
    cleaned = _UNSAFE_NAME.sub("-", name.strip()).strip("/ ")
    if cleaned.lower().endswith(".md"):
        cleaned = cleaned[:-3]
    parts = [part.strip() for part in cleaned.split("/") if part.strip() and part.strip() not in (".", "..")]
    if not parts:
        raise UnsafePath(f"not a note name: {name!r}")
    parts = [_fit_name(part, "") for part in parts[:-1]] + [_fit_name(parts[-1], ".md")]
    relative = "/".join(parts)
    if "/" in name:
        path = posixpath.normpath(relative)
    else:
        path = posixpath.join(folder, relative) if folder else relative
    if any(part in ("", ".", "..") for part in path.split("/")) or path.startswith("/"):
        raise UnsafePath(f"not a path inside the vault: {path!r}")
    if any(part.startswith(".") for part in path.split("/")):
        # Hidden folders are other tools' (.obsidian, .git) or the vault's own (.trash, .cairn),
        # and a hidden note is never listed: a note written there could not be opened again.
        raise UnsafePath(f"a note cannot be hidden or go in a hidden folder: {path!r}")
    return path


def _fit_name(stem: str, extension: str) -> str:
    """`stem + extension`, the stem cut on a character boundary to fit NAME_MAX_BYTES."""
    room = NAME_MAX_BYTES - len(extension.encode("utf-8"))
    encoded = stem.encode("utf-8")
    if len(encoded) > room:
        stem = encoded[:room].decode("utf-8", errors="ignore").rstrip()
    return stem + extension


def conflict_copy_path(path: str, exists: Callable[[str], bool], *, now: datetime.datetime | None = None) -> str:
    """A free sibling path to save a copy in: `Note (conflict 2026-03-04 101500).md`."""
    folder, _, name = path.rpartition("/")
    stem, dot, extension = name.rpartition(".")
    if not dot:
        stem, extension = name, "md"
    stamp = (now or datetime.datetime.now()).strftime("%Y-%m-%d %H%M%S")
    number = 1
    while True:
        tag = f" (conflict {stamp}{'' if number == 1 else f' {number}'})"
        room = NAME_MAX_BYTES - len(f"{tag}.{extension}".encode())
        short = stem.encode("utf-8")[:room].decode("utf-8", errors="ignore")
        candidate = f"{short}{tag}.{extension}"
        candidate = f"{folder}/{candidate}" if folder else candidate
        if not exists(candidate):
            return candidate
        number += 1


def trash_path(path: str, exists: Callable[[str], bool]) -> str:
    """A free path under `.trash/` for `path`: `.trash/a/Note.md`, then `.trash/a/Note (1).md` …

    A name that has no room for the number is cut on a character boundary to make room.
    """
    folder, _, name = path.rpartition("/")
    stem, extension = posixpath.splitext(name)
    prefix = f".trash/{folder}/" if folder else ".trash/"
    candidate = prefix + name
    number = 1
    while exists(candidate):
        tag = f" ({number}){extension}"
        short = stem.encode("utf-8")[: NAME_MAX_BYTES - len(tag.encode("utf-8"))].decode("utf-8", errors="ignore")
        candidate = f"{prefix}{short}{tag}"
        number += 1
    return candidate


def twin_name(target: Path) -> str | None:
    """The name of another file in `target`'s folder that is `target`'s name in another Unicode
    form ("Café" written as "Cafe" and a combining accent, as macOS writes names): the same
    note to a reader and to links, so a create or rename must not add it beside the first."""
    name = target.name
    if name.isascii():
        return None
    key = path_form(name)
    try:
        with os.scandir(target.parent) as entries:
            for entry in entries:
                if entry.name != name and not entry.name.isascii() and path_form(entry.name) == key:
                    return entry.name
    except OSError:
        return None
    return None


def move_file(source: Path, target: Path) -> None:
    """Move a file without ever replacing one that is already at `target`.

    A hard link fails if the target exists, atomically; on file systems without
    hard links the check and the rename are one step apart. A rename that only
    changes letter case (`note.md` to `Note.md`) is allowed on any file system.

    Raises:
        NoteExists: something is already at `target`.
        NoteNotSaved: the move failed (permissions, disk, name length …).
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if _same_file(source, target):
            os.rename(source, target)
            return
        if source.is_symlink() and source.parent != target.parent:
            _move_link(source, target)
            _fsync_folder(target.parent)
            _fsync_folder(source.parent)
            return
        try:
            os.link(source, target, follow_symlinks=False)
        except FileExistsError as exc:
            raise NoteExists(f"{target.name} already exists") from exc
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOTSUP):
                raise
            if os.path.lexists(target):
                raise NoteExists(f"{target.name} already exists") from exc
            os.rename(source, target)
        else:
            os.unlink(source)
    except NoteExists:
        raise
    except OSError as exc:
        raise NoteNotSaved(_write_problem(exc, target)) from exc
    _fsync_folder(target.parent)
    if source.parent != target.parent:
        _fsync_folder(source.parent)


def _same_file(a: Path, b: Path) -> bool:
    """Whether `a` and `b` are one directory entry (a case-only rename): symlinks are not
    followed, so a link and the note it points to are two entries."""
    try:
        first, second = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _move_link(source: Path, target: Path) -> None:
    """Move the symlink `source` to `target`, pointing where it pointed: a relative link is
    written again relative to its new folder. Never replaces anything at `target`."""
    pointed = os.readlink(source)
    if not os.path.isabs(pointed):
        pointed = os.path.relpath(os.path.normpath(os.path.join(source.parent, pointed)), target.parent)
    try:
        os.symlink(pointed, target)
    except FileExistsError as exc:
        raise NoteExists(f"{target.name} already exists") from exc
    os.unlink(source)


# ---------------------------------------------------------------------------
# Retargeting links after a rename
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Retarget:
    """How links to a renamed note are rewritten: its old and new path, and how to write the new name."""

    old: str
    new: str
    new_name: str  # what a wikilink writes: the stem, or the path when the stem is ambiguous

    def wikilink_target(self, written: str) -> str:
        """The new target for a wikilink that wrote `written` (a path stays a path, `.md` stays)."""
        without = self.new[:-3] if self.new.lower().endswith(".md") else self.new
        name = without if "/" in written else self.new_name
        return name + written[-3:] if written.lower().endswith(".md") else name

    def markdown_target(self, source: str) -> str:
        """The new relative destination of a Markdown link in note `source` (URL-encoded)."""
        from urllib.parse import quote

        relative = posixpath.relpath(self.new, posixpath.dirname(source) or ".")
        return quote(relative)


def retarget_text(text: str, source: str, targets: frozenset[str], retarget: Retarget) -> tuple[str, int]:
    """`text` (LF) with every link whose target (casefolded) is in `targets` pointed at the new note.

    Links are found with the indexer's own grammar, so nothing inside code changes;
    the heading or block part and the display text are kept.
    """
    pieces: list[str] = []
    last = 0
    changed = 0
    for span in link_spans(text):
        if span.link.target.strip().casefold() not in targets:
            continue
        if span.link.kind == "wikilink":
            replacement = retarget.wikilink_target(text[span.target_start : span.target_end])
        else:
            replacement = retarget.markdown_target(source)
        pieces.append(text[last : span.target_start])
        pieces.append(replacement)
        last = span.target_end
        changed += 1
    if not changed:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), changed


# ---------------------------------------------------------------------------
# Note transactions on an open index
# ---------------------------------------------------------------------------


class OpenIndex(Protocol):
    """What note transactions need of the open index (engine/session.py): its catalog, and a
    reindex of what they changed."""

    @property
    def vault(self) -> Path: ...

    @property
    def config(self) -> EngineConfig: ...

    @property
    def temp_dir(self) -> Path: ...

    @property
    def catalog(self) -> Catalog: ...

    def prefer(self, path: str) -> None: ...

    def reindex(self, paths: Iterable[str] | None = None) -> ReindexReport: ...


class NoteFiles:
    """A vault's note files as the façade reads and changes them: paths checked against the
    vault, saves compared with what the editor loaded, creates, renames whose link updates
    are all written or none, the trash; each change reindexed after it is on disk.
    """

    def __init__(self, index: OpenIndex) -> None:
        self._index = index

    def not_indexed(self, path: str) -> NoteNotFound:
        """The error for a note the index lacks, saying why when the last reindex skipped its file
        (too large, binary, unreadable …): a note list shows every note file, skipped ones too."""
        reason = next((skipped.reason for skipped in self._index.catalog.skipped() if skipped.path == path), "")
        return NoteNotFound(f"{path} (not indexed: {reason})" if reason else path)

    def resolve_path(self, path: str) -> Path:
        """The absolute file of a vault-relative path, refusing anything outside the vault.

        Raises:
            UnsafePath: the path escapes the vault (.., absolute, symlink out).
        """
        if not path or path.startswith(("/", "\\")) or "\x00" in path:
            raise UnsafePath(f"not a vault path: {path!r}")
        try:
            candidate = (self._index.vault / path).resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop, a name too long …
            raise UnsafePath(f"{path!r} cannot be resolved: {exc}") from exc
        if not candidate.is_relative_to(self._index.vault):
            raise UnsafePath(f"{path!r} points outside the vault")
        return candidate

    def _entry_path(self, path: str) -> Path:
        """The directory entry of a vault path, a symlink itself rather than what it points to:
        moving or trashing a note that is a link moves the link (checked like `resolve_path`)."""
        self.resolve_path(path)
        try:
            folder = (self._index.vault / path).parent.resolve()
        except (RuntimeError, OSError) as exc:
            raise UnsafePath(f"{path!r} cannot be resolved: {exc}") from exc
        entry = folder / posixpath.basename(path.replace("\\", "/"))
        if not entry.is_relative_to(self._index.vault) or entry == self._index.vault:
            raise UnsafePath(f"{path!r} points outside the vault")
        return entry

    def note(self, path: str) -> NoteView:
        """A note's catalog record, current text on disk and resolved links.

        Raises:
            NoteNotFound: the note is not indexed.
        """
        info = self._index.catalog.note_info(path)
        if info is None:
            raise self.not_indexed(path)
        self._index.prefer(path)  # the notes a user reads get their vectors first
        body = self._index.catalog.note_body(path)
        text = self.current_text(path)
        links = tuple((row.link, row.resolved) for row in self._index.catalog.links_from(path))
        same = tuple(p for p in self._index.catalog.paths_titled(info.title) if p != path)
        return NoteView(
            info=info, text=text, body_line_offset=body.line_offset if body else 0, links=links, same_title=same
        )

    def current_text(self, path: str) -> str:
        """A note's text on disk now (LF), else as it was indexed."""
        try:
            return self.read_note(path).text
        except (CairnError, OSError):
            body = self._index.catalog.note_body(path)
            return "\n" * body.line_offset + body.text if body else ""

    def section(self, path: str, *, heading: str | None = None, block: str | None = None) -> NoteSection | None:
        """A part of a note as an embed shows it: the body, the section under `heading`, or block `block`.

        The text is the note's on disk now, cut at a line when long (`truncated`); `line`
        is where it starts, which is where a heading or block link opens the note.

        Returns:
            The section, or None when the note is not indexed or has no such heading or block.
        """
        info = self._index.catalog.note_info(path)
        if info is None:
            return None
        links = tuple((row.link, row.resolved) for row in self._index.catalog.links_from(path))
        return note_section(path, info.title, self.current_text(path), heading=heading, block=block, links=links)


    def notes(self) -> list[tuple[str, str]]:
        """(path, title) of every indexed note, sorted by path."""
        return [(path, title) for path, title, _aliases in self._index.catalog.note_names()]

    def note_files(self) -> list[tuple[str, str]]:
        """(path, title) of every note in the vault, indexed or not yet, sorted by path.

        A note the index does not hold yet (a first index is still reading the vault)
        is titled by its file name; the scan costs a walk of the vault's folders.
        """
        indexed = dict(self.notes())
        try:
            found = scan_vault(self._index.vault, self._index.config.excludes).notes
        except CairnError:
            found = ()
        for file in found:
            indexed.setdefault(file.path, posixpath.splitext(posixpath.basename(file.path))[0])
        return sorted(indexed.items())

    def vault_files(self) -> list[VaultEntry]:
        """Every note (titled, indexed or not yet) and every attachment of the vault, sorted by path."""
        indexed = dict(self.notes())
        try:
            scan = scan_vault(self._index.vault, self._index.config.excludes)
            found, attachments = scan.notes, scan.attachments
        except CairnError:
            found, attachments = (), tuple(json.loads(self._index.catalog.get_meta("attachments") or "[]"))
        for file in found:
            indexed.setdefault(file.path, posixpath.splitext(posixpath.basename(file.path))[0])
        entries = [VaultEntry(path, title) for path, title in indexed.items()]
        entries.extend(VaultEntry(path, posixpath.basename(path), file_kind(path)) for path in attachments)
        return sorted(entries, key=lambda entry: entry.path)

    def outline(self, path: str) -> list[Heading]:
        """A note's headings as it is on disk now (level, text, line), in order: what an outline lists."""
        return list(parse_note(path, self.current_text(path)).headings)

    def read_note(self, path: str) -> NoteText:
        """A note's text for editing: LF newlines, decoded as the indexer reads it, with its sha.

        A path with no file yet reads as an empty note whose sha is None.

        Raises:
            UnsafePath: the path is outside the vault.
            NoteNotEditable: the file cannot be edited as text (binary, too large, unreadable).
        """
        text = read_text(path, self.resolve_path(path), self._index.config.max_file_bytes)
        self._index.prefer(path)  # a note being edited gets its vectors first
        return text

    def save_note(self, path: str, text: str, *, expected_sha: str | None, as_utf8: bool = False) -> SaveResult:
        """Write a note atomically, keeping its encoding and line endings, then reindex it.

        Args:
            path: vault-relative path of a `.md` note.
            text: the full new content (any line endings; each unchanged line keeps its own).
            expected_sha: the sha of the bytes the editor loaded (`NoteText.sha`), or
                None to create a note that must not exist yet. Compared and replaced
                under one lock shared by every process that saves through Cairn.
            as_utf8: store the note as UTF-8 from now on (when its own encoding
                cannot hold the new text).

        Returns:
            The new sha and whether the index took the note in (with warnings when
            not: another process holds the index, the note is too large, the index's
            disk is full …). The note is saved either way.

        Raises:
            SaveConflict: the file changed on disk since it was loaded (or exists, for a create).
            NoteNotSaved: nothing was written (full disk, read-only vault, encoding …).
            UnsafePath: the path is outside the vault or not a Markdown note.
        """
        target = self._note_target(path)
        with save_lock(target, create_folder=expected_sha is None):
            current = current_bytes(target)
            current_sha = content_sha(current) if current is not None else None
            if expected_sha is None and current is None and (twin := twin_name(target)):
                raise SaveConflict(f"{path} already exists, as {twin!r} (the same name in another Unicode form)")
            if current_sha != expected_sha:
                if expected_sha is None:
                    raise SaveConflict(f"{path} already exists", current_sha)
                what = "was deleted" if current is None else "changed on disk"
                raise SaveConflict(f"{path} {what} since it was opened", current_sha)
            stored = decoded(path, current)
            fmt = stored.format if stored else TextFormat()
            if as_utf8:
                fmt = dataclasses.replace(fmt, codec="utf-8", bom=b"")
            payload = encode_text(text, fmt, stored.original if stored else None)
            if payload != current:
                write_bytes(target, payload, temp_dir=self._index.temp_dir)
        return self._reindexed(path, content_sha(payload))

    def create_note(self, folder: str, title: str, text: str | None = None) -> SaveResult:
        """Create a note named `title` in `folder` (a title with '/' is a vault path).

        The file name is the title with the characters Obsidian refuses replaced, cut to
        the file system's 255 bytes; `text` defaults to a `# title` heading.

        Raises:
            NoteExists: a note is already there.
            NoteNotSaved: nothing was written.
        """
        path = note_path(folder, title)
        body = f"# {title.strip()}\n\n" if text is None else text
        try:
            return self.save_note(path, body, expected_sha=None)
        except SaveConflict as exc:
            raise NoteExists(str(exc)) from exc

    def rename_note(self, old: str, name: str) -> RenameResult:
        """Move note `old` to `name` (same folder unless `name` is a vault path) and reindex both.

        Returns:
            The new path and the notes whose links name `old` by its path (pass the
            result to `update_links` to retarget them, once the user agrees); a link that
            reaches the note by an alias or its title does so after the move too, and is
            left alone.

        Raises:
            NoteNotFound: there is no file at `old`.
            NoteExists: something is already at the new path.
            NoteNotSaved: the move failed.
        """
        new = note_path(posixpath.dirname(old), name)
        source = self._entry_path(old)
        target = self._note_target(new)
        if not source.is_file():
            raise NoteNotFound(old)
        # Only links that reach the note by its path (as Obsidian resolves them) name the
        # old path; a link by an alias or the title still reaches the note after the move.
        attachments = json.loads(self._index.catalog.get_meta("attachments") or "[]")
        by_path = LinkResolver(((p, "", ()) for p, _title, _aliases in self._index.catalog.note_names()), attachments)
        targets: dict[str, set[str]] = {}
        counts: dict[str, int] = {}
        for row in self._index.catalog.links_to(old):
            if by_path.resolve(row.link.target, row.source) != old:
                continue
            targets.setdefault(row.source, set()).add(row.link.target)
            counts[row.source] = counts.get(row.source, 0) + 1
        with save_locks(source, target, create_folder=True):  # a save creating the new path waits
            twin = twin_name(target)
            if twin is not None and (target.parent / twin) != source:
                raise NoteExists(f"{target.name} already exists, as {twin!r} (the same name in another Unicode form)")
            move_file(source, target)
        save = self._reindexed(new, file_sha(target) or "", also=(old,))
        linking = tuple(
            LinkingNote(new if source_path == old else source_path, tuple(sorted(found)), counts[source_path])
            for source_path, found in sorted(targets.items())
        )
        return RenameResult(old, new, linking, save)

    def update_links(self, renamed: RenameResult) -> LinkUpdate:
        """Point the links to a renamed note at its new path: in every linking note, or in none.

        Links are found with the indexer's grammar (nothing inside code changes); each
        note keeps its encoding and line endings. If any note cannot be updated (it
        changed meanwhile, cannot be read, cannot hold the text, the disk is full),
        nothing is left changed and `untouched` says which and why.
        """
        names = [p for p, _title, _aliases in self._index.catalog.note_names()]
        retarget = Retarget(renamed.old, renamed.new, wikilink_name(renamed.new, names))
        planned: list[tuple[str, Path, bytes, bytes, int]] = []  # path, file, before, after, links
        refused: list[SkippedFile] = []
        for linking in renamed.linking:
            try:
                target = self.resolve_path(linking.path)
                before = current_bytes(target)
                if before is None:
                    raise NoteNotFound(f"{linking.path} is gone")
                stored = decoded(linking.path, before)
                assert stored is not None
                wanted = frozenset(t.strip().casefold() for t in linking.targets)
                changed_text, links = retarget_text(stored.text, linking.path, wanted, retarget)
                if links:
                    after = encode_text(changed_text, stored.format, stored.original)
                    planned.append((linking.path, target, before, after, links))
            except (CairnError, OSError) as exc:
                refused.append(SkippedFile(linking.path, problem(exc)))
        if refused:
            return LinkUpdate(renamed.new, untouched=tuple(refused))
        written: list[tuple[Path, bytes, bytes]] = []
        for path, target, before, after, _links in planned:
            try:
                with save_lock(target):
                    if current_bytes(target) != before:
                        raise SaveConflict(f"{path} changed on disk during the update")
                    write_bytes(target, after, temp_dir=self._index.temp_dir)
                written.append((target, before, after))
            except CairnError as exc:
                failed = [SkippedFile(path, problem(exc))]
                failed.extend(self._restore(written))
                return LinkUpdate(renamed.new, untouched=tuple(failed))
        changed = tuple(p for p, *_ in planned)
        self._reindexed(renamed.new, "", also=changed)
        return LinkUpdate(renamed.new, sum(p[4] for p in planned), changed)

    def _restore(self, written: list[tuple[Path, bytes, bytes]]) -> list[SkippedFile]:
        """Put back the notes an update already wrote; those that changed again are named."""
        problems: list[SkippedFile] = []
        for target, before, after in reversed(written):
            relative = target.relative_to(self._index.vault).as_posix()
            try:
                with save_lock(target):
                    if current_bytes(target) != after:
                        raise SaveConflict("changed on disk again; left as it is")
                    write_bytes(target, before, temp_dir=self._index.temp_dir)
            except CairnError as exc:
                problems.append(SkippedFile(relative, f"updated and could not be put back: {exc}"))
        return problems

    def trash_note(self, path: str) -> str:
        """Move a note to the vault's `.trash/` folder (as Obsidian does), never overwriting; drop it from the index.

        Returns:
            The vault path it now has under `.trash/`.
        """
        source = self._entry_path(path)
        if not source.is_file():
            raise NoteNotFound(path)
        with save_lock(source):
            moved = trash_path(path, lambda p: os.path.lexists(self._index.vault / p))
            move_file(source, self._index.vault / moved)
        self._reindexed(path, "")
        return moved

    def conflict_copy_path(self, path: str) -> str:
        """A free sibling path to save a conflicting edit in: `Note (conflict 2026-03-04 101500).md`."""
        return conflict_copy_path(path, lambda p: os.path.lexists(self._index.vault / p))

    def _note_target(self, path: str) -> Path:
        if not path.lower().endswith(".md"):
            raise UnsafePath(f"only Markdown notes (.md) can be written: {path}")
        target = self.resolve_path(path)
        if target.is_dir():
            raise UnsafePath(f"{brief(path)} is a folder, not a note")
        for folder in target.parents:
            if folder == self._index.vault:
                break
            if folder.exists() and not folder.is_dir():
                # A note used as a folder ("A.md/b.md"): no write could succeed, and it is
                # the path that is wrong, not the disk.
                where = folder.relative_to(self._index.vault).as_posix()
                raise UnsafePath(f"{brief(where)} is a file, not a folder: no note can go inside it")
        return target

    def _reindexed(self, path: str, sha: str, *, also: Sequence[str] = ()) -> SaveResult:
        """Reindex what a file operation changed; the file is written whatever the index says."""
        paths = list(dict.fromkeys((path, *also)))
        try:
            report = self._index.reindex(paths)
        except IndexLocked as exc:
            # Saved; the process that holds the index (e.g. `engine watch`) indexes it.
            return SaveResult(path, sha, False, (f"saved; not indexed here: {exc}",))
        except (CairnError, OSError, sqlite3.Error) as exc:
            log.warning("saved %s but could not index it: %s", path, exc)
            return SaveResult(path, sha, False, (f"saved, but the index could not be updated: {problem(exc)}",))
        skipped = [s for s in report.skipped if s.path in paths]
        warnings = tuple(f"saved, but not indexed: {s.reason}" for s in skipped)
        return SaveResult(path, sha, not skipped, warnings, report)


def current_bytes(target: Path) -> bytes | None:
    """The bytes of a note file now, or None when there is none; never blocks on a FIFO."""
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NoteNotSaved(f"{target.name} cannot be read: {exc.strerror or exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NoteNotSaved(f"{target.name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        raise NoteNotSaved(f"{target.name} cannot be read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def decoded(path: str, data: bytes | None) -> DecodedNote | None:
    """A note's bytes decoded as the indexer reads them (None for no file)."""
    if data is None:
        return None
    try:
        return decode_note(data)
    except NoteUnreadable as exc:
        raise NoteNotSaved(f"{path} is not a text note ({exc.reason}); it was left as it is") from exc


def wikilink_name(path: str, note_paths: Sequence[str]) -> str:
    """What a wikilink to `path` writes: its name, or its path when another note has that name."""
    without = path[:-3] if path.lower().endswith(".md") else path
    stem = posixpath.basename(without)
    same = [p for p in note_paths if posixpath.basename(p[:-3] if p.lower().endswith(".md") else p).casefold() == stem.casefold()]
    return stem if all(p == path for p in same) else without



def problem(exc: BaseException) -> str:
    """An error's message with its title, for reports."""
    title = getattr(exc, "title", "")
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{title}: {exc}" if title else str(exc)
