"""Console conventions every command shares (`engine`, `cairn`): exit codes, safe output.

Front ends that are console scripts (`cairn`) import this module, not the `engine`
command, so that the two agree on what an error exits with.
"""

from __future__ import annotations

import enum
import io
import os
import sys
from collections.abc import Callable

from engine.errors import (
    CairnError,
    ConfigError,
    IndexCorrupt,
    IndexLocked,
    NoteNotFound,
    UnsafePath,
    VaultNotFound,
)

__all__ = ["EXIT_HELP", "Exit", "exit_code", "run_console"]


class Exit(enum.IntEnum):
    """The engine command's exit codes."""

    OK = 0
    ERROR = 1
    USAGE = 2
    VAULT_NOT_FOUND = 3
    INDEX_LOCKED = 4
    INDEX_CORRUPT = 5
    QUALITY_BELOW_FLOOR = 6
    NOTE_NOT_FOUND = 7
    OUTPUT_CLOSED = 141



EXIT_HELP = """exit codes:
  0    success
  1    unexpected error
  2    usage error (bad arguments, bad configuration, a path outside the vault)
  3    the vault folder does not exist
  4    another process is writing the index
  5    the index is damaged beyond automatic repair
  6    eval: a metric fell below a --min-* floor
  7    no note has the name given (search --why NOTE); the nearest names are listed
  141  the output was closed early (`engine search ... | head -1`), as for SIGPIPE
"""


def run_console(body: Callable[[], int]) -> int:
    """Run a console script's body with output that is always valid UTF-8 and a quiet end on a closed pipe.

    A name or query that is not valid UTF-8 reaches Python as lone surrogates; printed,
    they would be invalid UTF-8 (or an encoding error), so they are written escaped.
    When the reader of stdout goes away (`| head -1`), the command stops without a
    traceback, with the exit code a SIGPIPE gives in a shell.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        try:
            return body()
        finally:
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
    except BrokenPipeError:
        # Point the process's own streams at /dev/null, so that what is left in their
        # buffers does not fail again when the interpreter flushes them at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream, original in ((sys.stdout, sys.__stdout__), (sys.stderr, sys.__stderr__)):
            if stream is original and stream is not None:
                try:
                    os.dup2(devnull, stream.fileno())
                except (OSError, ValueError):
                    continue  # no file descriptor behind it: nothing to flush there at exit
        os.close(devnull)
        return int(Exit.OUTPUT_CLOSED)



def exit_code(exc: CairnError) -> int:
    """The documented exit code for an engine error (shared by every console script)."""
    for kind, code in (
        (VaultNotFound, Exit.VAULT_NOT_FOUND),
        (IndexLocked, Exit.INDEX_LOCKED),
        (IndexCorrupt, Exit.INDEX_CORRUPT),
        (ConfigError, Exit.USAGE),
        (UnsafePath, Exit.USAGE),
        (NoteNotFound, Exit.NOTE_NOT_FOUND),
    ):
        if isinstance(exc, kind):
            return int(code)
    return int(Exit.ERROR)
