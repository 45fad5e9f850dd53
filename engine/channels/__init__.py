"""The search channels (full text, vectors, graph) and what they share."""

from __future__ import annotations

import sys
import types
from typing import Any


def _import_whoosh_without_its_web_client() -> None:
    """Import Whoosh's compatibility module without importing urllib.request.

    `whoosh.compat` imports `urlretrieve` from urllib.request, which pulls in http.client,
    ssl and email: 30-60 ms of every process's start, for a CLI search that should answer
    within a second. Nothing the engine runs of Whoosh downloads anything. So while
    Whoosh is imported, the name is bound to a function that imports the real one if it
    is ever called; then urllib.request is left for anyone to import as usual.
    """
    if "whoosh.compat" in sys.modules or "urllib.request" in sys.modules:
        return
    stand_in = types.ModuleType("urllib.request")

    def urlretrieve(*args: Any, **kwargs: Any) -> Any:
        from urllib.request import urlretrieve as real  # the stand-in is gone by then

        return real(*args, **kwargs)

    stand_in.urlretrieve = urlretrieve  # type: ignore[attr-defined]
    sys.modules["urllib.request"] = stand_in
    try:
        import whoosh.compat  # noqa: F401
    finally:
        if sys.modules.get("urllib.request") is stand_in:
            del sys.modules["urllib.request"]


_import_whoosh_without_its_web_client()
