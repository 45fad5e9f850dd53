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
import datetime
import difflib
import errno
import fcntl
import hashlib
import os
import posixpath
import re
import secrets
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EncodingMismatch, NoteExists, NoteNotEditable, NoteNotSaved, UnsafePath
from engine.names import has_hidden_control, one_form, printable_path
from engine.records import NoteText, TextFormat
from engine.vault import SAVE_TEMP, NoteUnreadable, decode_note, link_spans, read_note_bytes

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
    key = one_form(name)
    try:
        with os.scandir(target.parent) as entries:
            for entry in entries:
                if entry.name != name and not entry.name.isascii() and one_form(entry.name) == key:
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
