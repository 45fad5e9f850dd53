"""Whoosh's storage with its segment files read from a memory map in place, never copied.

Whoosh 2.7 maps a compound segment file and then opens each file inside it (postings,
term index, lengths, stored fields) as a `BytesIO` over the map, which copies it: at
50,000 notes that is 120 MB on the heap beside the 130 MB of map pages the copy touched.
Here each inner file reads from the map directly, so a search process holds the pages it
reads (which the kernel can drop and read again) and no copy. Whoosh's own storage is
used for everything else, writing included.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile

__all__ = ["MappedStorage", "Region"]

# Whoosh 2.7's compound segment files.
_COMPOUND_SUFFIX = ".seg"


class Region(StructFile):  # type: ignore[misc]
    """A read-only file over part of a memory map: a read copies only the bytes it returns.

    It is its own file object (Whoosh's readers call `read`, `seek` and `get` on it, and
    unpickle from it), so a read is one Python call, as a `BytesIO` read was.
    """

    def __init__(self, source: mmap.mmap, offset: int, length: int, name: str | None) -> None:
        super().__init__(self, name=name)
        self._map = source
        self._start = offset
        self._end = offset + length
        self._pos = offset

    def read(self, size: int | None = -1) -> bytes:
        start = self._pos
        end = self._end if size is None or size < 0 else min(self._end, start + size)
        self._pos = max(start, end)
        return self._map[start:end]

    def readline(self, size: int | None = -1) -> bytes:
        start = self._pos
        newline = self._map.find(b"\n", start, self._end)
        end = self._end if newline < 0 else newline + 1
        if size is not None and size >= 0:
            end = min(end, start + size)
        self._pos = end
        return self._map[start:end]

    def seek(self, position: int, whence: int = os.SEEK_SET) -> int:
        base = self._start if whence == os.SEEK_SET else self._pos if whence == os.SEEK_CUR else self._end
        self._pos = min(max(self._start, base + position), self._end)
        return self._pos - self._start

    def tell(self) -> int:
        return self._pos - self._start

    def get(self, position: int, length: int) -> bytes:
        start = self._start + position
        return self._map[start : min(start + length, self._end)]

    @property
    def source(self) -> mmap.mmap:
        """The whole map: read it by slicing (a slice copies; an exported buffer would keep
        the map from closing)."""
        return self._map

    def absolute(self, position: int) -> int:
        """Where a position of this file lies in the map."""
        return self._start + position

    def subset(self, position: int, length: int, name: str | None = None) -> StructFile:
        return Region(self._map, self._start + position, length, name or self._name)

    def close(self) -> None:
        """The map belongs to the segment file: closing an inner file leaves it open."""
        self.is_closed = True


class _MappedFile(Region):
    """A whole segment file as a memory map; its inner files are regions of it."""

    def __init__(self, path: str, name: str) -> None:
        with open(path, "rb") as handle:
            if not os.fstat(handle.fileno()).st_size:  # cannot be mapped; Whoosh never writes one
                raise OSError(f"segment file {name} is empty")
            source = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        super().__init__(source, 0, len(source), name)

    def close(self) -> None:
        # Regions read the map by slicing (no exported buffers), so it can always close;
        # Whoosh closes a segment's file only when nothing reads its inner files any more.
        self.is_closed = True
        self._map.close()


class MappedStorage(FileStorage):  # type: ignore[misc]
    """A Whoosh file storage whose compound segments are read through a memory map, in place."""

    # Whoosh then asks the segment file for its inner files (`subset`) instead of
    # mapping and copying them itself.
    supports_mmap = False

    def __init__(self, path: str) -> None:
        super().__init__(path, supports_mmap=False)

    def open_file(self, name: str, **kwargs: Any) -> StructFile:
        if name.endswith(_COMPOUND_SUFFIX) and not kwargs:
            return _MappedFile(self._fpath(name), name)
        return super().open_file(name, **kwargs)
