"""The TUI never loads the search libraries: it only talks to the Engine façade."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("whoosh", "faiss", "igraph", "onnxruntime", "sqlite3")


def test_importing_the_tui_loads_no_search_library() -> None:
    code = (
        "import sys, ui.app, ui.screens.main, ui.screens.search, ui.screens.editor, app.wiring, app.main\n"
        f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
