"""Answers at once: a process that holds a vault's index open answers `engine search`,
`context` and `status` for the command line over a local (Unix) socket in the index folder.

Only the user who owns the index may ask. Three checks say so, each enough alone:
- the socket is created 0600 inside a private 0700 folder, then linked into the index
  folder, so no other user can connect to it at any moment of its life;
- the server reads the peer's credentials of every connection (SO_PEERCRED) and hangs up
  on any uid but its own;
- the asking command connects only to a socket that is a socket, owned by its own uid,
  with no permission for group or others, and checks the server's uid the same way (a
  socket planted by another user is refused, and said so).

A socket left by a killed process refuses connections: the command sees that, ignores
it, and answers by itself; the next server to start replaces it. Two servers starting
at once race for the name with link(2), which only one wins.

Messages are JSON, each preceded by its length (4 bytes, big-endian), one question and
one answer per connection. Standard library only: the command asks before it imports
anything heavy.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import stat
import struct
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

__all__ = ["SOCKET_NAME", "AnswerServer", "Asked", "ask", "check_socket", "socket_path"]



def _logger() -> logging.Logger:
    """The server's log (logging is imported by the side that serves, never by the command that asks)."""
    import logging

    return logging.getLogger("cairn.serve")

SOCKET_NAME = "answers.sock"
# The most a question may hold; answers are not limited (a search's JSON at 200 hits).
_MAX_QUESTION = 1 << 20
_MAX_ANSWER = 256 << 20
# The most questions answered at once; more wait in the listen backlog.
_WORKERS = 4
# How long a connection may take to send its question.
_READ_TIMEOUT_S = 10.0
# How long the command waits to connect, and then for its answer (a busy server on two
# cores shared with an embedding backlog can take seconds; the command alone would too).
_CONNECT_TIMEOUT_S = 1.0
_ANSWER_TIMEOUT_S = 120.0
# sun_path holds 108 bytes on Linux, 104 on macOS.
_MAX_SUN_PATH = 100
_HEADER = struct.Struct(">I")


class SocketRefused(Exception):
    """A socket the command must not talk to: not a socket, another user's, or open to others."""


def socket_path(index_dir: Path) -> Path:
    """Where the answering socket of the index in `index_dir` lives."""
    return index_dir / SOCKET_NAME


def check_socket(path: Path, *, uid: int | None = None) -> None:
    """Refuse a socket file that is not a socket owned by `uid` (default: this process's)
    with no permission for group or others.

    Raises:
        FileNotFoundError: there is none.
        SocketRefused: there is one, and it must not be used (the message says why).
    """
    own = os.getuid() if uid is None else uid
    info = path.lstat()
    if not stat.S_ISSOCK(info.st_mode):
        raise SocketRefused(f"{path} is not a socket")
    if info.st_uid != own:
        raise SocketRefused(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        raise SocketRefused(f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):o})")


def _peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None where the OS does not say)."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return None
    creds = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


@contextlib.contextmanager
def _address(path: Path) -> Iterator[str]:
    """A name for `path` that fits in sun_path: itself, or the same file through a handle
    on its folder (/proc/self/fd/N/name) when the path is too long."""
    if len(os.fsencode(str(path))) <= _MAX_SUN_PATH:
        yield str(path)
        return
    if not os.path.isdir("/proc/self/fd"):
        raise OSError(errno.ENAMETOOLONG, "the index folder's path is too long for a local socket", str(path))
    fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def _send(conn: socket.socket, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
    conn.sendall(_HEADER.pack(len(data)) + data)


def _receive(conn: socket.socket, limit: int) -> Any:
    header = _read_exactly(conn, _HEADER.size)
    (size,) = _HEADER.unpack(header)
    if size > limit:
        raise ValueError(f"a message of {size} bytes (at most {limit})")
    return json.loads(_read_exactly(conn, size).decode("utf-8", "surrogatepass"))


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = conn.recv(min(left, 1 << 16))
        if not chunk:
            raise ConnectionError("the other end hung up")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- the command's side ---------------------------------------------------------------------
@dataclass(frozen=True)
class Asked:
    """What asking a running Cairn gave: its answer (None: answer alone) and, when a socket was
    refused or declined, why (for a note on stderr; empty when nobody was there to ask)."""

    answer: dict[str, Any] | None
    note: str = ""
    refused: bool = False


def ask(index_dir: Path, question: dict[str, Any], *, timeout: float = _ANSWER_TIMEOUT_S) -> Asked:
    """Ask the process that holds the index in `index_dir` open; never raises."""
    path = socket_path(index_dir)
    try:
        check_socket(path)
    except FileNotFoundError:
        return Asked(None)
    except SocketRefused as exc:
        return Asked(None, f"ignored {exc}", refused=True)
    except OSError:
        return Asked(None)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(_CONNECT_TIMEOUT_S)
        try:
            with _address(path) as address:
                conn.connect(address)
        except OSError:
            return Asked(None)  # a stale socket (its process was killed), or gone meanwhile
        server_uid = _peer_uid(conn)
        if server_uid is not None and server_uid != os.getuid():
            return Asked(None, f"ignored {path}: it is served by another user (uid {server_uid})", refused=True)
        conn.settimeout(timeout)
        try:
            _send(conn, question)
            reply = _receive(conn, _MAX_ANSWER)
        except (OSError, ValueError):
            return Asked(None)
    finally:
        conn.close()
    if not isinstance(reply, dict):
        return Asked(None)
    if "declined" in reply:
        return Asked(None, str(reply["declined"]))
    if not (isinstance(reply.get("stdout"), str) and isinstance(reply.get("stderr"), str) and isinstance(reply.get("code"), int)):
        return Asked(None)
    return Asked(reply)


# -- the server's side ----------------------------------------------------------------------
class AnswerServer:
    """Answers questions on the index folder's socket in a background thread until closed.

    `handle` turns a question (JSON) into an answer (JSON); it runs in one of a few worker
    threads and may take as long as a search takes.
    """

    def __init__(self, index_dir: Path, handle: Callable[[object], dict[str, Any]]) -> None:
        self.path = socket_path(index_dir)
        self._handle = handle
        self._listener: socket.socket | None = None
        self._inode: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._slots = threading.BoundedSemaphore(_WORKERS)
        self.answered = 0  # questions answered (declined ones included): for status and tests

    @property
    def serving(self) -> bool:
        """Whether this server holds the socket and answers on it."""
        return self._listener is not None and not self._closed.is_set()

    def start(self) -> bool:
        """Take the socket and start answering; False when another live process answers for
        this index already, or the socket cannot be made here (the reason is logged)."""
        try:
            listener = self._claim()
        except OSError as exc:
            _logger().info("not answering on %s: %s", self.path, exc)
            return False
        if listener is None:
            return False
        self._listener = listener
        self._thread = threading.Thread(target=self._accept_loop, name="cairn-answers", daemon=True)
        self._thread.start()
        return True

    def _claim(self) -> socket.socket | None:
        if self._alive():
            return None  # another process answers for this index
        self._remove_stale()
        private = Path(tempfile.mkdtemp(prefix=".answers-", dir=self.path.parent))  # 0700
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            made = private / "s"
            with _address(made) as address:
                listener.bind(address)
            os.chmod(made, 0o600)
            listener.listen(16)
            try:
                os.link(made, self.path)
            except FileExistsError:
                listener.close()
                return None  # another process took the name first
            info = self.path.lstat()
            self._inode = (info.st_dev, info.st_ino)
            return listener
        except BaseException:
            listener.close()
            raise
        finally:
            shutil.rmtree(private, ignore_errors=True)

    def _alive(self) -> bool:
        """Whether a live process answers on the socket now."""
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(_CONNECT_TIMEOUT_S)
        try:
            check_socket(self.path)
            with _address(self.path) as address:
                probe.connect(address)
            return True
        except (OSError, SocketRefused):
            return False
        finally:
            probe.close()

    def _remove_stale(self) -> None:
        """Remove what is at the socket's name and answers nobody (a killed process's socket)."""
        with contextlib.suppress(FileNotFoundError):
            info = self.path.lstat()
            if stat.S_ISDIR(info.st_mode):
                raise OSError(errno.EISDIR, "a folder has the socket's name", str(self.path))
            self.path.unlink()

    def _accept_loop(self) -> None:
        listener = self._listener
        assert listener is not None
        while not self._closed.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                if self._closed.is_set():
                    return
                continue
            if _peer_uid(conn) not in (None, os.getuid()):
                conn.close()  # another user: not a word
                continue
            self._slots.acquire()
            threading.Thread(target=self._answer, args=(conn,), name="cairn-answer", daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(_READ_TIMEOUT_S)
            question = _receive(conn, _MAX_QUESTION)
            conn.settimeout(None)
            try:
                reply = self._handle(question)
            except Exception as exc:  # the command answers alone; the error is this process's to log
                _logger().warning("could not answer a question on %s", self.path, exc_info=True)
                reply = {"declined": f"the answering process failed: {type(exc).__name__}"}
            _send(conn, reply)
            self.answered += 1
        except (OSError, ValueError):
            _logger().debug("a question on %s went unanswered", self.path, exc_info=True)
        finally:
            conn.close()
            self._slots.release()

    def close(self) -> None:
        """Stop answering and remove the socket (if it is still this server's)."""
        if self._closed.is_set():
            return
        self._closed.set()
        listener = self._listener
        if listener is None:
            return
        with contextlib.suppress(OSError):
            info = self.path.lstat()
            if (info.st_dev, info.st_ino) == self._inode:
                self.path.unlink()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
