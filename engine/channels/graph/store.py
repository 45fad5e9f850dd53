"""The saved graph: every note's part and the searchable graph, pickled next to the index.

A saved graph is loaded only when its stamp (format, catalog generation, graph settings)
matches, and a restricted unpickler accepts only the graph's own classes, so a planted
file cannot run code.
"""

from __future__ import annotations

import gc
import os
import pickle
from pathlib import Path
from typing import Any

from engine.channels.graph.build import Build, Vertex
from engine.entities import EntityDictionary

__all__ = ["SAVED_FORMAT", "Saved", "load", "save"]

SAVED_FORMAT = 11
_SAVED_CLASSES = frozenset(
    {
        ("engine.channels.graph.build", "Build"),
        ("engine.channels.graph.build", "Part"),
        ("engine.channels.graph.build", "Vertex"),
        ("engine.entities", "EntityDictionary"),
    }
)

# What is saved: the build (parts and sums), the vertices, the key index and the dictionary.
Saved = tuple[Build, list[Vertex], dict[str, int], EntityDictionary]


class _SavedGraphUnpickler(pickle.Unpickler):
    """Loads the graph's own classes and plain containers, never anything that runs code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAVED_CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} does not belong in a saved graph")


def load(path: Path, stamp: dict[str, object]) -> Saved | None:
    """The saved graph at `path` if its stamp is `stamp`; None when absent or stale.

    Raises:
        Exception: the file is damaged (pickle raises assorted errors) or of another shape.
    """
    if not path.is_file():
        return None
    with path.open("rb") as f:
        if _SavedGraphUnpickler(f).load() != stamp:
            return None
        collecting = gc.isenabled()
        gc.disable()  # millions of small containers: the collector would triple the load time
        try:
            saved = _SavedGraphUnpickler(f).load()
        finally:
            if collecting:
                gc.enable()
    build, vertices, index, dictionary = saved
    if not (isinstance(build, Build) and isinstance(dictionary, EntityDictionary)):
        raise pickle.UnpicklingError("saved graph has an unexpected shape")
    return build, vertices, index, dictionary


def save(path: Path, stamp: dict[str, object], payload: Saved) -> None:
    """Write the graph atomically (a temp file, fsync, rename)."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as f:
            pickle.dump(stamp, f, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
