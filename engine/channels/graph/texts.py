"""Strings keyed by a pair's code, packed: the link contexts a search reads (most of a million at 50,000 notes)."""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterator

__all__ = ["PairTexts"]

# Changes held beside the packed pairs before `settle` folds them in: an edit changes a
# few pairs, and a fold is a pass over all of them.
_FOLD_AFTER = 4096


class PairTexts:
    """A mapping of pair codes to strings, as a sorted array of codes and one joined string.

    At 50,000 notes a dict of the 764,000 link contexts took 136 MB; packed, they take
    49 MB and are saved as three flat values. The pairs set or removed since the last fold
    are held beside the packed ones (None where removed), and that is all `copy` copies:
    a search reads the mapping it was given while an edit changes a copy.
    """

    __slots__ = ("_changed", "_codes", "_ends", "_text")

    def __init__(self) -> None:
        self._codes = array("q")  # sorted
        self._ends = array("q")  # where each code's string ends in `_text`
        self._text = ""
        self._changed: dict[int, str | None] = {}

    def get(self, code: int) -> str | None:
        """The string of a pair, if it has one."""
        changed = self._changed
        if changed and code in changed:
            return changed[code]
        at = self._at(code)
        return None if at < 0 else self._text[self._ends[at - 1] if at else 0 : self._ends[at]]

    def _at(self, code: int) -> int:
        """Where `code` is among the packed pairs, or -1."""
        codes = self._codes
        at = bisect_left(codes, code)
        return at if at < len(codes) and codes[at] == code else -1

    def __setitem__(self, code: int, text: str) -> None:
        self._changed[code] = text

    def discard(self, code: int) -> None:
        """Remove a pair's string, if it has one."""
        if self._changed.get(code) is not None or self._at(code) >= 0:
            self._changed[code] = None
        else:
            self._changed.pop(code, None)

    def __len__(self) -> int:
        count = len(self._codes)
        for code, text in self._changed.items():
            packed = self._at(code) >= 0
            count += (text is not None) - packed
        return count

    def __bool__(self) -> bool:
        return len(self) > 0 if self._changed else bool(self._codes)

    def items(self) -> Iterator[tuple[int, str]]:
        """Every pair's code and string, by code."""
        changed = self._changed
        if not changed:
            return self._packed()
        kept = ((code, text) for code, text in self._packed() if code not in changed)
        now = sorted((code, text) for code, text in changed.items() if text is not None)
        return heapq.merge(kept, now)

    def _packed(self) -> Iterator[tuple[int, str]]:
        text, start = self._text, 0
        for code, end in zip(self._codes, self._ends, strict=True):
            yield code, text[start:end]
            start = end

    def copy(self) -> PairTexts:
        """A copy sharing the packed pairs (never changed in place), with its own changes."""
        out = PairTexts()
        out._codes, out._ends, out._text, out._changed = self._codes, self._ends, self._text, dict(self._changed)
        return out

    def settle(self) -> None:
        """Fold the changes in once there are enough of them to be worth a pass."""
        if len(self._changed) > max(_FOLD_AFTER, len(self._codes) // 8):
            self.fold()

    def fold(self) -> None:
        """Pack the changed pairs in with the others (never on a mapping a search reads)."""
        if self._changed:
            self._codes, self._ends, self._text = self._folded()
            self._changed = {}

    def _folded(self) -> tuple[array[int], array[int], str]:
        if not self._changed:
            return self._codes, self._ends, self._text
        codes, ends = array("q"), array("q")
        pieces: list[str] = []
        length = 0
        for code, text in self.items():
            codes.append(code)
            pieces.append(text)
            length += len(text)
            ends.append(length)
        return codes, ends, "".join(pieces)

    def __getstate__(self) -> tuple[bytes, bytes, str]:
        codes, ends, text = self._folded()  # saving may run beside searches: nothing changes here
        return codes.tobytes(), ends.tobytes(), text

    def __setstate__(self, state: tuple[bytes, bytes, str]) -> None:
        raw_codes, raw_ends, self._text = state
        self._codes, self._ends, self._changed = array("q"), array("q"), {}
        self._codes.frombytes(raw_codes)
        self._ends.frombytes(raw_ends)
        if len(self._codes) != len(self._ends) or (self._ends and self._ends[-1] != len(self._text)):
            raise ValueError("packed pair texts of unequal lengths")
