"""Opening a vault file with the system's own handler (a PDF viewer, a music player)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def open_with_system(target: Path) -> bool:
    """Open `target` with the program the system associates with it; False when there is none."""
    if sys.platform == "win32":  # pragma: no cover - not the platform the tests run on
        os.startfile(target)  # type: ignore[attr-defined]
        return True
    opener = shutil.which("open" if sys.platform == "darwin" else "xdg-open")
    if opener is None:
        return False
    # Detached, its output dropped: the handler outlives this call and must not write on the TUI.
    subprocess.Popen(
        [opener, str(target)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    return True
