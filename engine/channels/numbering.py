"""Note paths numbered by a channel, and a query filter's candidates as a mask over them."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from collections.abc import Set as AbstractSet

import numpy as np
import numpy.typing as npt


class PathNumbers:
    """The numbers a channel gives note paths (document numbers, note ordinals).

    `mask` turns a filter's candidate paths into a boolean array over the numbers. A
    filter that keeps most of the vault (an exclusion, a wide date range) is read from
    the few notes it leaves out: the set difference runs in C, while a loop over tens of
    thousands of kept paths on every keystroke would not.
    """

    def __init__(self, numbers: Mapping[str, int], size: int) -> None:
        self._numbers = numbers
        self._paths = frozenset(numbers)
        self._every = np.fromiter(numbers.values(), dtype=np.int64, count=len(numbers))
        self.size = size

    def mask(self, paths: Collection[str]) -> npt.NDArray[np.bool_]:
        """True at the number of every path in `paths` that has one."""
        numbers = self._numbers
        mask = np.zeros(self.size, dtype=bool)
        if isinstance(paths, AbstractSet) and 2 * len(paths) > len(numbers):
            mask[self._every] = True
            left_out = self._paths - paths
            mask[np.fromiter((numbers[p] for p in left_out), dtype=np.int64, count=len(left_out))] = False
        else:
            mask[np.fromiter((numbers[p] for p in paths if p in numbers), dtype=np.int64)] = True
        return mask
