"""The saved graph: every note's part and the searchable graph, pickled next to the index.

A saved graph is loaded only when its stamp (format, catalog generation, graph settings)
matches, and a restricted unpickler accepts only the graph's own classes, so a planted
file cannot run code. The part a search reads comes first and is all an open loads; the
notes' parts, which only an edit needs (two thirds of the file), are read at the first edit.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from engine.channels.graph.build import Build, NamedEdge, Vertex
from engine.channels.graph.sums import EdgeLists
from engine.channels.graph.texts import PairTexts
from engine.entities import EntityDictionary

__all__ = ["SAVED_FORMAT", "Saved", "Searchable", "WriterPart", "load", "load_writer", "save", "searchable_of"]

SAVED_FORMAT = 20  # 20: a dictionary key is as wide as its tokens (paths, URLs)
_SAVED_CLASSES = frozenset(
    {
        ("engine.channels.graph.build", "Build"),
        ("engine.channels.graph.build", "Parts"),
        ("engine.channels.graph.sums", "EdgeSums"),
        ("engine.channels.graph.sums", "EdgeLists"),
        ("engine.channels.graph.texts", "PairTexts"),
        ("engine.channels.graph.build", "Vertex"),
        ("engine.entities", "EntityDictionary"),
    }
)

# What is saved: the build (parts and sums), the vertices, the key index and the dictionary.
Saved = tuple[Build, list[Vertex], dict[str, int], EntityDictionary]
# The Build's fields a search reads; saved apart from the rest, which only an edit needs.
_SEARCHED = ("lists", "link_dirs", "contexts", "named", "people")


@dataclass(frozen=True)
class Searchable:
    """The part of a saved graph a search reads: the summed edges and their attributes, the
    linked pairs, their contexts and named relations, the people, the vertices, their index and the dictionary."""

    lists: EdgeLists
    link_dirs: set[int]
    contexts: PairTexts
    named: dict[int, NamedEdge]
    people: set[str]
    note_count: int
    vertex_count: int
    vertices: list[Vertex]
    index: dict[str, int]
    dictionary: EntityDictionary


@dataclass(frozen=True)
class WriterPart:
    """Where the rest of a saved graph (every note's part and the sums an edit patches) is,
    to be read when the first edit needs it."""

    path: Path
    stamp: dict[str, object]
    offset: int
    length: int


def searchable_of(build: Build, vertices: list[Vertex], index: dict[str, int], dictionary: EntityDictionary) -> Searchable:
    """The searchable part of a built graph (sharing its lists)."""
    return Searchable(
        build.lists, build.link_dirs, build.contexts, build.named, build.people,
        len(build.parts), len(build.keys), vertices, index, dictionary,
    )


class _SavedGraphUnpickler(pickle.Unpickler):
    """Loads the graph's own classes and plain containers, never anything that runs code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAVED_CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} does not belong in a saved graph")


def _unpickled(handle: BinaryIO) -> Any:
    collecting = gc.isenabled()
    gc.disable()  # millions of small containers: the collector would triple the load time
    try:
        return _SavedGraphUnpickler(handle).load()
    finally:
        if collecting:
            gc.enable()


def load(path: Path, stamp: dict[str, object]) -> tuple[Searchable, WriterPart] | None:
    """The searchable part of the saved graph at `path` if its stamp is `stamp`, and where
    the rest is; None when absent or stale.

    Raises:
        Exception: the file is damaged (pickle raises assorted errors) or of another shape.
    """
    if not path.is_file():
        return None
    with path.open("rb") as f:
        if _SavedGraphUnpickler(f).load() != stamp:
            return None
        fields = _unpickled(f)
        if not (isinstance(fields, tuple) and len(fields) == 11):
            raise pickle.UnpicklingError("saved graph has an unexpected shape")
        *searched, length = fields
        searchable = Searchable(*searched)
        offset = f.tell()
    if not isinstance(searchable.dictionary, EntityDictionary) or path.stat().st_size != offset + length:
        raise pickle.UnpicklingError("saved graph is cut short or has an unexpected shape")
    return searchable, WriterPart(path, stamp, offset, length)


def load_writer(part: WriterPart, searchable: Searchable) -> Build | None:
    """The rest of the graph an edit needs, joined to the searchable part loaded before; None
    when the file was replaced since (another process saved a newer graph).

    Raises:
        Exception: the file is damaged.
    """
    with part.path.open("rb") as f:
        if _SavedGraphUnpickler(f).load() != part.stamp:
            return None
        f.seek(part.offset)
        build = _unpickled(f)
    if not isinstance(build, Build):
        raise pickle.UnpicklingError("saved graph has an unexpected shape")
    for name in _SEARCHED:
        setattr(build, name, getattr(searchable, name))
    return build


def save(path: Path, stamp: dict[str, object], payload: Saved) -> None:
    """Write the graph atomically (a temp file, fsync, rename): the stamp, the searchable
    part, then the rest (so a search can start before the rest is read)."""
    build, vertices, index, dictionary = payload
    build.parts.pack()
    searchable = searchable_of(build, vertices, index, dictionary)
    rest = copy.copy(build)  # the searched fields are saved once, in the searchable part
    for name in _SEARCHED:
        setattr(rest, name, None)
    # The rest's length goes before it; counted by pickling it once into nothing, so that
    # its pickle (177 MB at 50k notes) is never held in memory, only streamed to the file.
    counter = _ByteCount()
    pickle.dump(rest, counter, protocol=pickle.HIGHEST_PROTOCOL)
    fields = (*(getattr(searchable, f.name) for f in dataclasses.fields(Searchable)), counter.count)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as f:
            pickle.dump(stamp, f, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(fields, f, protocol=pickle.HIGHEST_PROTOCOL)
            start = f.tell()
            pickle.dump(rest, f, protocol=pickle.HIGHEST_PROTOCOL)
            if f.tell() - start != counter.count:  # never seen: the caller keeps the file it had
                raise OSError("the graph pickled to two different lengths; not saved")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


class _ByteCount:
    """A write-only file that keeps nothing but how many bytes were written to it."""

    def __init__(self) -> None:
        self.count = 0

    def write(self, data: bytes | memoryview) -> int:
        size = memoryview(data).nbytes
        self.count += size
        return size
