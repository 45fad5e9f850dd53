"""Finding a vault's notes: an iterative walk that skips hidden, excluded, looping and unnameable entries."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from engine.errors import VaultNotFound
from engine.names import name_problem, path_problem, printable_path
from engine.records import SkippedFile

_ALWAYS_SKIPPED_DIRS = frozenset({".obsidian", ".cairn", ".git", ".trash"})
# A save's temp file: `.cairn-save-<hex>.tmp`. (The first versions named theirs `.<Note>.md.<8
# chars>.tmp`, which other programs' files match too: those are left alone.)
SAVE_TEMP = re.compile(r"\.cairn-save-[0-9a-f]+\.tmp", re.IGNORECASE)


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


def _left_out(excluded: _Excluder, rel: str, *, folder: bool) -> bool:
    """Whether the excludes leave out `rel` (a folder or a file) or a folder above it."""
    parts = rel.split("/")
    above = any(excluded("/".join(parts[:depth]), True) for depth in range(1, len(parts)))
    return above or excluded(rel, folder)


def folder_excluded(rel: str, excludes: tuple[str, ...]) -> bool:
    """Whether the scan leaves out the vault folder `rel` (or a folder above it) by the user's excludes."""
    return _left_out(_Excluder(excludes), rel, folder=True)


def look_up_note(root: Path, rel: str, excludes: tuple[str, ...] = ()) -> VaultFile | SkippedFile | None:
    """One vault path judged as `scan_vault` judges it: the note, why it is skipped, or None
    when it is no note to index (gone, hidden, excluded, not Markdown).

    A path the watcher or a caller names is held to the scan's rules, so that a symlink
    out of the vault (or into a hidden or excluded folder) is never read through it.
    """
    problem = path_problem(rel)
    if problem:
        return SkippedFile(printable_path(rel), problem)
    parts = rel.split("/")
    excluded = _Excluder(excludes)
    if not _is_note_name(rel) or any(part.startswith(".") or not part for part in parts) or _left_out(excluded, rel, folder=False):
        return None
    root_real = os.path.realpath(root)
    abs_path = os.path.join(root, *parts)
    try:
        real = os.path.realpath(abs_path, strict=True)
        st = os.stat(abs_path)
    except FileNotFoundError:
        return None
    except PermissionError:
        return SkippedFile(printable_path(rel), "permission denied")
    except OSError as exc:
        reason = "symlink loop" if exc.errno == errno.ELOOP else f"cannot stat: {exc.strerror or exc}"
        return SkippedFile(printable_path(rel), reason)
    if not _within(real, root_real):
        return SkippedFile(printable_path(rel), "symlink points outside the vault")
    real_rel = os.path.relpath(real, root_real).replace(os.sep, "/")
    if any(part.startswith(".") for part in real_rel.split("/")) or _left_out(excluded, real_rel, folder=False):
        return SkippedFile(printable_path(rel), "symlink into a hidden or excluded folder")
    if not stat.S_ISREG(st.st_mode):
        return SkippedFile(printable_path(rel), "not a regular file")
    return VaultFile(rel, Path(abs_path), st.st_size, st.st_mtime)


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

