"""The embedding backlog's order and pace: notes the user opened first, then the most
recently changed notes, then the rest; and the measured rate that gives an honest ETA."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.catalog import BacklogText

# Texts cut into length-sorted batches together: padding stays small (within a window,
# neighbours in length share a batch) while the order across windows stays by recency.
_WINDOW = 256
# The rate is measured over the most recent batches: what the machine does now.
_RATE_WINDOW_S = 60.0
# Until this much was measured in this run, the rate stored by an earlier run stands.
_RATE_MIN_S = 2.0
# Opened notes remembered for the next run (and the one running).
_PREFERRED_MAX = 64


@dataclass(frozen=True)
class BacklogPlace:
    """Where the backlog is: serving opened notes first, or at notes changed at `mtime`."""

    order: str  # "opened" or "newest"
    mtime: float | None = None


class EmbedOrder:
    """Hands out batches of backlog texts: preferred notes first, then newest first."""

    def __init__(self, texts: Sequence[BacklogText], batch_size: int, *, window: int | None = None) -> None:
        self._texts = texts
        self._batch_size = max(1, batch_size)
        self._window = max(self._batch_size, _WINDOW if window is None else window)
        self._by_path: dict[str, list[int]] = {}
        for index, text in enumerate(texts):
            self._by_path.setdefault(text.path, []).append(index)
        self._order = sorted(range(len(texts)), key=lambda i: (-texts[i].mtime, texts[i].path))
        self._next = 0
        self._done = bytearray(len(texts))
        self._front: deque[int] = deque()
        self._queue: deque[int] = deque()
        self.remaining = len(texts)
        self.remaining_chars = sum(len(t.text) for t in texts)
        self.place = BacklogPlace("newest", texts[self._order[0]].mtime if texts else None)

    def prefer(self, paths: Iterable[str]) -> None:
        """Embed these notes' remaining texts next (most recently preferred first)."""
        for path in paths:  # oldest first: the note opened last ends up in front
            waiting = [i for i in self._by_path.get(path, ()) if not self._done[i]]
            # extendleft reverses: longest first here is shortest first in the queue.
            self._front.extendleft(sorted(waiting, key=lambda i: -len(self._texts[i].text)))

    def next_batch(self) -> list[int]:
        """The next batch's text indices (empty when the backlog is done); they count as done."""
        batch = self._take(self._front)
        if batch:
            self.place = BacklogPlace("opened")
        else:
            if not self._queue:
                self._fill()
            batch = self._take(self._queue)
            if batch:
                self.place = BacklogPlace("newest", max(self._texts[i].mtime for i in batch))
        for index in batch:
            self._done[index] = 1
            self.remaining -= 1
            self.remaining_chars -= len(self._texts[index].text)
        return batch

    def _take(self, source: deque[int]) -> list[int]:
        batch: list[int] = []
        while source and len(batch) < self._batch_size:
            index = source.popleft()
            if not self._done[index] and index not in batch:
                batch.append(index)
        return batch

    def _fill(self) -> None:
        window: list[int] = []
        while self._next < len(self._order) and len(window) < self._window:
            index = self._order[self._next]
            self._next += 1
            if not self._done[index]:
                window.append(index)
        self._queue.extend(sorted(window, key=lambda i: len(self._texts[i].text)))


class EmbedRate:
    """Characters embedded per second over the last minute of work (pauses not counted)."""

    def __init__(self, previous: float | None = None) -> None:
        self._previous = previous
        self._samples: deque[tuple[float, int, float]] = deque()  # (when, chars, seconds)
        self._lock = threading.Lock()

    def add(self, chars: int, seconds: float) -> None:
        """One batch's characters and the wall time its embedding and storing took."""
        now = time.monotonic()
        with self._lock:
            self._samples.append((now, chars, seconds))
            while self._samples and now - self._samples[0][0] > _RATE_WINDOW_S:
                self._samples.popleft()

    @property
    def chars_per_s(self) -> float | None:
        """The measured rate, or the earlier run's until enough of this one was seen."""
        with self._lock:
            seconds = sum(s for _, _, s in self._samples)
            chars = sum(c for _, c, _ in self._samples)
        if seconds >= _RATE_MIN_S or (seconds > 0 and self._previous is None):
            return chars / seconds
        return self._previous


class Preferred:
    """Notes the user opened, newest last, for the embedding backlog to take first."""

    def __init__(self) -> None:
        self._paths: deque[str] = deque(maxlen=_PREFERRED_MAX)
        self._version = 0
        self._lock = threading.Lock()

    def add(self, path: str) -> None:
        """The user opened `path`."""
        with self._lock:
            if self._paths and self._paths[-1] == path:
                return
            self._paths.append(path)
            self._version += 1

    def since(self, version: int) -> tuple[int, list[str]]:
        """The current version and every remembered path when it changed since `version`."""
        with self._lock:
            if version == self._version:
                return version, []
            return self._version, list(self._paths)


def eta_seconds(remaining_chars: int, chars_per_s: float | None) -> float | None:
    """How long the rest will take at the measured rate (None before anything was measured)."""
    if remaining_chars <= 0:
        return 0.0
    if not chars_per_s or chars_per_s <= 0:
        return None
    return remaining_chars / chars_per_s
