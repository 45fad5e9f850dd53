"""Which channels earn their place over real use: counts only, kept in the index folder.

After each search that is not a keystroke's (`as_you_type` false), every channel that put
evidence on one of the first five notes counts one search and its notes there, and a note
only that channel found counts as its own (unique). The query is never kept. The counts
are written to `channel_usage.json` now and then and when the engine closes (a lost
increment between two processes costs a count, never the index). `[search] count_channels
= false` turns it off.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from engine.records import SearchResults

__all__ = ["CHANNELS", "FILE", "TOP", "ChannelUsage"]

log = logging.getLogger(__name__)

FILE = "channel_usage.json"
CHANNELS = ("fulltext", "vectors", "graph")
TOP = 5
# Counted searches between two writes of the file.
_WRITE_EVERY = 20


def _empty() -> dict[str, Any]:
    zero = dict.fromkeys(CHANNELS, 0)
    return {
        "searches": 0,
        "searches_placing": dict(zero),
        "hits_placed": dict(zero),
        "unique_hits": dict(zero),
    }


class ChannelUsage:
    """The counts of one index folder, added to in memory and written now and then."""

    def __init__(self, index_dir: Path) -> None:
        self._path = index_dir / FILE
        self._lock = threading.Lock()
        self._added = _empty()
        self._unwritten = 0

    def count(self, results: SearchResults) -> None:
        """Add one search's first five notes to the counts."""
        top = results.hits[:TOP]
        if not top:
            return
        with self._lock:
            added = self._added
            added["searches"] += 1
            placing: set[str] = set()
            for hit in top:
                found: list[str] = [name for name in hit.channels if name in CHANNELS]
                placing.update(found)
                for name in found:
                    added["hits_placed"][name] += 1
                if len(found) == 1:
                    added["unique_hits"][found[0]] += 1
            for name in placing:
                added["searches_placing"][name] += 1
            self._unwritten += 1
            due = self._unwritten >= _WRITE_EVERY
        if due:
            self.write()

    def totals(self) -> dict[str, Any]:
        """What the file holds plus what this process counted and has not written."""
        with self._lock:
            return _sum(self._read(), self._added)

    def write(self) -> None:
        """Add what was counted to the file (atomically replaced); a failure keeps the counts for the next try."""
        with self._lock:
            if not self._added["searches"]:
                return
            merged = _sum(self._read(), self._added)
            temporary = self._path.with_name(f".{FILE}.{os.getpid()}.tmp")
            try:
                temporary.write_text(json.dumps(merged, indent=1), encoding="utf-8")
                os.replace(temporary, self._path)
            except OSError:
                log.debug("could not write the channel counts", exc_info=True)
                return
            self._added = _empty()
            self._unwritten = 0

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return _empty()
        return _sum(_empty(), data) if isinstance(data, dict) else _empty()


def _sum(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two sets of counts added; anything in `b` that is not a count is left out."""
    out = _empty()
    for source in (a, b):
        searches = source.get("searches")
        if isinstance(searches, int) and not isinstance(searches, bool):
            out["searches"] += searches
        for key in ("searches_placing", "hits_placed", "unique_hits"):
            table = source.get(key)
            if not isinstance(table, dict):
                continue
            for name in CHANNELS:
                value = table.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    out[key][name] += value
    return out
