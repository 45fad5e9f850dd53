"""A small thread-safe LRU of query embeddings (as-you-type repeats the same prefixes)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


class QueryCache:
    """Query text → its embedding, the least recently used dropped past `size`."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._rows: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str, compute: Callable[[str], Vector]) -> Vector:
        """The cached row of `text`, computed (outside the lock) when absent."""
        with self._lock:
            found = self._rows.get(text)
            if found is not None:
                self._rows.move_to_end(text)
                return found
        vector = compute(text)
        with self._lock:
            self._rows[text] = vector
            while len(self._rows) > self._size:
                self._rows.popitem(last=False)
        return vector
