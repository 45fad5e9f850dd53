"""Where the index lives, its manifest, and the one-writer lock."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import socket
import sqlite3
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import ConfigError, IndexCorrupt, IndexLocked, IndexWriteFailed

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger("cairn.storage")

# 2: full-text documents carry their folder names with the tags; 3: accents folded;
# 4: one analyzer by script (compounds whole and by parts, CJK pairs, Snowball stems).
MANIFEST_VERSION = 4
INDEX_DIR_NAME = ".cairn"


_LARGEST_ID = 2**63 - 1  # what SQLite, FAISS and numpy hold as a whole number


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is not a finite number")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number an index file holds")


def load_index_json(text: str) -> Any:
    """The JSON of one of the index's own files, or ValueError whatever the bytes are.

    Only Cairn writes these files, so anything else in them is damage: `NaN`, `Infinity`
    and numbers too large for a float (`1e400`) are refused, and nesting too deep for the
    parser (100,000 `[`) is a ValueError rather than a RecursionError.
    """
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


def whole_number(value: object, what: str) -> int:
    """`value` as a whole number from 0 to 2**63 - 1, or ValueError (a bool, float or
    26-digit number read from a damaged file is no count or id)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _LARGEST_ID:
        raise ValueError(f"{what} is not a whole number from 0 to 2**63-1: {str(value)[:40]}")
    return value


def whole_numbers(value: object, what: str) -> list[int]:
    """A JSON list of whole numbers (ids), or ValueError."""
    if not isinstance(value, list):
        raise ValueError(f"{what} is not a list")
    return [whole_number(item, what) for item in value]


def resolve_index_dir(vault: Path, override: Path | None = None) -> Path:
    """The index directory: an explicit one, `CAIRN_INDEX_DIR`, `<vault>/.cairn`, or the cache dir.

    A read-only vault gets its index under the user cache dir, keyed by the vault's path.
    """
    if override is not None:
        return override
    env = os.environ.get("CAIRN_INDEX_DIR")
    if env:
        return Path(env)
    default = vault / INDEX_DIR_NAME
    if default.is_dir() and os.access(default, os.W_OK):
        return default
    if not default.exists() and os.access(vault, os.W_OK):
        return default
    from platformdirs import user_cache_dir

    key = hashlib.sha1(str(vault.resolve()).encode()).hexdigest()[:12]
    return Path(user_cache_dir("cairn")) / f"{vault.name}-{key}"


# Files only a Cairn index holds: a folder with one of them is an index, of this or an earlier
# version. (`manifest.json` is a common name: it counts only when it reads as Cairn's.)
_INDEX_MARKERS = ("catalog.sqlite", "vectors.faiss", "graph.pickle", "writer.lock")


def _is_index(folder: Path) -> bool:
    if any((folder / name).exists() for name in _INDEX_MARKERS):
        return True
    manifest = folder / "manifest.json"
    try:
        if not manifest.is_file() or manifest.stat().st_size > 1 << 20:
            return False
        data = load_index_json(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "version" in data and "generations" in data


def check_index_dir(vault: Path, directory: Path, excludes: tuple[str, ...] = ()) -> None:
    """Refuse an index folder that would put the vault's own files at risk.

    The index rebuilds its parts by deleting their folders, so it may live only in a folder
    that is new, empty (hidden files such as `.gitignore` aside) or already an index, never
    the vault itself, a folder holding the vault, or one of the vault's visible folders that
    the configuration does not exclude (whose notes it would be scanning).

    Raises:
        ConfigError: the folder is not safe for an index; the message says why.
        IndexCorrupt: one of the index's own names holds the wrong kind of thing.
    """
    where = directory.expanduser().resolve()
    root = vault.resolve()
    if where == root or where in root.parents:
        raise ConfigError(f"the index folder {directory} holds the vault {vault}; choose a folder of its own")
    if (
        where.is_relative_to(root)
        and not any(part.startswith(".") for part in where.relative_to(root).parts)
        and not _excluded_folder(where.relative_to(root).as_posix(), excludes)
    ):
        raise ConfigError(
            f"the index folder {directory} is one of the vault's note folders; "
            "inside a vault it must be a hidden folder, like .cairn"
        )
    if where.is_dir() and not _is_index(where):
        with os.scandir(where) as entries:
            if any(not entry.name.startswith(".") for entry in entries):
                raise ConfigError(
                    f"the index folder {directory} holds files that are not a Cairn index; "
                    "choose a new or empty folder"
                )
    elif where.exists() and not where.is_dir():
        raise ConfigError(f"the index folder {directory} is a file, not a folder")
    _check_index_entries(where)


def _excluded_folder(relative: str, excludes: tuple[str, ...]) -> bool:
    """Whether the vault's scan leaves out the folder `relative` or one above it."""
    if not excludes:
        return False
    from engine.vault.scan import folder_excluded

    return folder_excluded(relative, excludes)


# What the index keeps under each name: a file, or a folder.
_INDEX_FILES = (
    "manifest.json",
    "catalog.sqlite",
    "catalog.sqlite.checked",
    "writer.lock",
    "graph.pickle",
    "vectors.faiss",
    "vectors.delta.npz",
    "vectors.strays.json",
    "vectors.tombstones.json",
)
_INDEX_FOLDERS = ("fulltext", "tmp")


def _check_index_entries(folder: Path) -> None:
    """Refuse an index whose own names hold the wrong kind of thing (a folder named
    manifest.json, a FIFO named writer.lock): reading them would fail, or wait forever."""
    for names, wanted, kind in ((_INDEX_FILES, stat.S_ISREG, "file"), (_INDEX_FOLDERS, stat.S_ISDIR, "folder")):
        for name in names:
            try:
                mode = (folder / name).stat().st_mode
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise IndexCorrupt(f"{folder / name} cannot be read: {exc.strerror or exc}") from exc
            if not wanted(mode):
                raise IndexCorrupt(
                    f"{folder / name} is not the {kind} Cairn keeps there; move it away and the index "
                    "is rebuilt from the vault"
                )


_FULL = "the disk is full"
_READ_ONLY = "the index folder is read-only"
_OS_WRITE_ERRORS = {
    errno.ENOSPC: _FULL,
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: _READ_ONLY,
}
# How SQLite (its messages) and FAISS (strerror in its RuntimeError) say the same.
_WRITE_MESSAGES = {
    "database or disk is full": _FULL,
    "disk is full": _FULL,
    "no space left on device": _FULL,
    "disk quota exceeded": "the disk quota is exceeded",
    "attempt to write a readonly database": _READ_ONLY,
    "read-only file system": _READ_ONLY,
    "disk i/o error": "the disk reported an I/O error",
}


def write_failure(exc: BaseException) -> IndexWriteFailed | None:
    """The IndexWriteFailed an exception from writing the index amounts to (None if it is something else)."""
    if isinstance(exc, OSError) and exc.errno in _OS_WRITE_ERRORS:
        where = f" ({exc.filename})" if exc.filename else ""
        return IndexWriteFailed(f"{_OS_WRITE_ERRORS[exc.errno]}{where}: {exc.strerror or exc}")
    if isinstance(exc, (sqlite3.OperationalError, RuntimeError)):
        text = str(exc).lower()
        for needle, meaning in _WRITE_MESSAGES.items():
            if needle in text:
                return IndexWriteFailed(f"{meaning}: {exc}")
    return None


@contextlib.contextmanager
def index_writes() -> Iterator[None]:
    """Raise IndexWriteFailed for a full disk or a read-only index, as every front end can show it.

    SQLite, Whoosh and FAISS each report a full disk their own way (an OperationalError,
    an OSError, a RuntimeError); anything else passes through unchanged.
    """
    try:
        yield
    except (OSError, sqlite3.Error, RuntimeError) as exc:
        failure = write_failure(exc)
        if failure is None:
            raise
        raise failure from exc


@dataclass
class Manifest:
    """What the derived indexes reflect: schema, model, catalog generation per channel."""

    version: int = MANIFEST_VERSION
    model_id: str = ""
    generations: dict[str, int] = field(default_factory=dict)
    rebuild_derived: bool = False

    @classmethod
    def load(cls, path: Path) -> tuple[Manifest, str]:
        """Read a manifest; returns (manifest, problem) where problem is '' if it was fine."""
        if not path.exists():
            return cls(), ""
        try:
            data: Any = load_index_json(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("generations", {}), dict):
                raise ValueError("not a manifest")
            model_id = data.get("model_id", "")
            if not isinstance(model_id, str):
                raise ValueError("model_id is not text")
            manifest = cls(
                version=whole_number(data["version"], "version"),
                model_id=model_id,
                generations={str(k): whole_number(v, k) for k, v in dict(data.get("generations", {})).items()},
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return cls(), f"manifest unreadable ({str(exc)[:200]}); derived indexes will be checked"
        if manifest.version != MANIFEST_VERSION:
            problem = f"index format {manifest.version} is not {MANIFEST_VERSION}; derived indexes rebuilt from the catalog"
            return cls(rebuild_derived=True), problem
        return manifest, ""

    def save(self, path: Path) -> None:
        """Write atomically: a temp file, fsync, rename."""
        tmp = path.with_suffix(".json.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            payload = {"version": self.version, "model_id": self.model_id, "generations": self.generations}
            json.dump(payload, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) the writer lock."""

    pid: int
    host: str
    command: str
    since: float


class WriterLock:
    """An advisory exclusive lock: one process writes an index at a time.

    The kernel drops a flock when its holder dies, so a lock left by a killed
    process is never stale; the file's content only says who holds it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held_here(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def holder(self) -> LockHolder | None:
        """The live holder, or None when nobody holds the lock."""
        if self._fd is not None:
            return _read_holder(self.path)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(self.path) or LockHolder(0, "?", "?", 0.0)
        finally:
            os.close(fd)
        return None

    def acquire(self) -> None:
        """Take the lock or raise IndexLocked naming the holder."""
        if not self.try_acquire():
            raise IndexLocked(f"the index is being written by {describe_holder(_read_holder(self.path))}")

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False when another holder has it."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": process_label(), "since": time.time()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except OSError as exc:
            # The flock is the lock; its content only names the holder in messages. A full
            # disk must not keep a process from opening (and searching) the index.
            log.warning("could not record the writer in %s: %s", self.path, exc)
        self._fd = fd
        return True

    def release(self) -> None:
        """Drop the lock."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for a block (re-entrant within one process)."""
        if self._fd is not None:
            yield
            return
        self.acquire()
        try:
            yield
        finally:
            self.release()


def describe_holder(holder: LockHolder | None) -> str:
    """`pid 123 (engine watch)`, plus the host when it is another machine."""
    if holder is None:
        return "another process"
    where = "" if holder.host == socket.gethostname() else f" on {holder.host}"
    return f"pid {holder.pid} ({holder.command}){where}"


def process_label(argv: list[str] | None = None) -> str:
    """A short name for this process: `engine watch`, `cairn`, `pytest`."""
    args = sys.argv if argv is None else argv
    if not args:
        return "python"
    program = os.path.basename(args[0]) or "python"
    if program == "__main__.py":
        program = os.path.basename(os.path.dirname(args[0])) or "python"
    if program.endswith(".py"):
        program = program[:-3]
    if program in ("engine", "cairn") and len(args) > 1 and args[1].isalpha():
        return f"{program} {args[1]}"
    return program


def _read_holder(path: Path) -> LockHolder | None:
    try:
        data = load_index_json(path.read_text(encoding="utf-8") or "null")
        if not isinstance(data, dict):
            return None
        since = data.get("since", 0.0)
        return LockHolder(
            whole_number(data.get("pid", 0), "pid"),
            str(data.get("host", "?"))[:200],
            str(data.get("command", "?"))[:200],
            float(since) if isinstance(since, (int, float)) and not isinstance(since, bool) else 0.0,
        )
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def dir_size(path: Path) -> int:
    """Total bytes of the files under `path`."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(root) / name).stat().st_size
    return total


def salvage_embeddings(damaged_catalog: Path) -> Iterator[tuple[str, list[tuple[str, npt.NDArray[np.float32]]]]]:
    """Cached embeddings still readable in a damaged catalog, as (model id, rows) batches.

    Embedding is the slow part of indexing, so a catalog moved aside gives back what
    it can; a file too damaged to read yields nothing.
    """
    import sqlite3

    import numpy as np

    try:
        conn = sqlite3.connect(f"file:{damaged_catalog}?mode=ro", uri=True)
    except sqlite3.Error:
        return
    batch: dict[str, list[tuple[str, npt.NDArray[np.float32]]]] = {}
    try:
        cursor = conn.execute("SELECT model_id, text_sha, vector FROM embeddings")
        while True:
            rows = cursor.fetchmany(512)
            if not rows:
                break
            for model_id, sha, blob in rows:
                if isinstance(blob, bytes) and len(blob) % 4 == 0:
                    batch.setdefault(str(model_id), []).append((str(sha), np.frombuffer(blob, dtype=np.float32)))
            for model_id, found in batch.items():
                yield model_id, found
            batch = {}
    except sqlite3.Error:
        for model_id, found in batch.items():
            yield model_id, found
    finally:
        conn.close()
