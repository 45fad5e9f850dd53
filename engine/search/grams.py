"""Which notes may hold a quoted phrase: each note's runs of four characters, kept as bits.

A phrase is looked for in what a note shows (`filters.phrase_key`). Full text narrows a
phrase only by its indexed words: `"have out"` reads every note with "out", 3,700 of a
10k vault, to find the 29 that say it. Every run of four characters of the phrase (after
folding, blanks collapsed: "have", "ave ", "ve o", "e ou", " out") is also a run of what
a note holding it shows, so a note that lacks one cannot hold it.

Each note's runs are hashed into 8,192 bits (1 KB a note). A note's bits are set for every
run it has and perhaps others' (a collision), never missing one: a note left out never
holds the phrase, a note kept is read and decides (`PhraseMatcher`). In a synthetic 10k
vault a note sets 15% of its bits on average (28% at the 90th percentile), and `"have
out"` keeps 375 of the 3,737 notes with "out".

The table is built from the catalog beside the other search tables (`Searcher.prepare`);
after a change only the notes whose text changed are read again. Until it is rebuilt, a
phrase reads every note its words narrow to, as without the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import numpy.typing as npt

from engine.catalog import Catalog
from engine.entities import displayed_text
from engine.folding import fold_case

__all__ = ["PhraseGrams"]

GRAM = 4
BITS = 8192  # a power of two
_SHIFT = 32 - (BITS.bit_length() - 1)
# Odd multipliers, one per position of a run (a multiplicative hash of each character).
_MULTIPLIERS = np.array([0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F], dtype=np.uint32)
_BATCH = 128  # notes read and hashed at a time (a batch holds BITS bytes a note while hashed)
_COPIED = 4096  # rows copied from the last table at a time


_LAST_SPACE = 0x3000  # no code point after it is a blank (a test reads them all)


def _spaces() -> npt.NDArray[np.bool_]:
    """Which code points are blanks (`str.isspace`, as `\\s` and `str.split` read them),
    up to U+3000, the last; one more entry, False, stands for every code point after it."""
    table = np.zeros(_LAST_SPACE + 2, dtype=bool)
    table[[code for code in range(_LAST_SPACE + 1) if chr(code).isspace()]] = True
    return table


_SPACE_TABLE = _spaces()


def _hashes(codes: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """The bit of each run of GRAM characters of `codes`, by where the run starts."""
    count = len(codes) - GRAM + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint32)
    mixed = codes[:count] * _MULTIPLIERS[0]
    for offset in range(1, GRAM):
        mixed ^= codes[offset : offset + count] * _MULTIPLIERS[offset]
    return mixed >> np.uint32(_SHIFT)  # type: ignore[no-any-return]


def _rows(keys: list[str]) -> npt.NDArray[np.uint8]:
    """Each text's runs as a row of BITS bits, packed, read for all of them at once: the
    texts as phrases are compared, but for their blanks (each run of them is made one
    space here)."""
    # One array of code points for them all, a NUL after each; a run starting in a text
    # and reaching into the next sets a bit of the first (a bit too many, never too few).
    codes = np.frombuffer("\0".join(keys).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    owner = np.repeat(np.arange(len(keys)), [len(key) + 1 for key in keys])[: len(codes)]
    blank = _SPACE_TABLE[np.minimum(codes, _LAST_SPACE + 1)]
    repeated = np.zeros(len(codes), dtype=bool)
    repeated[1:] = blank[1:] & blank[:-1]
    codes = np.where(blank, np.uint32(32), codes)[~repeated].astype(np.uint32)
    owner = owner[~repeated]
    hashes = _hashes(codes)
    flat = np.zeros(len(keys) * BITS, dtype=bool)
    flat[owner[: len(hashes)] * BITS + hashes] = True
    return np.packbits(flat.reshape(len(keys), BITS), axis=1)


class PhraseGrams:
    """Every note's runs of four characters as a row of bits (see the module)."""

    def __init__(self, shas: Mapping[str, str], rows: npt.NDArray[np.uint8]) -> None:
        self._shas = dict(shas)  # path → the sha of the text its row was made from
        self._row_of = {path: i for i, path in enumerate(self._shas)}
        self._rows = rows
        self._unread: set[str] = set()  # notes gone from the catalog before their text was read

    @classmethod
    def build(
        cls, catalog: Catalog, previous: PhraseGrams | None = None, stop: Callable[[], bool] = lambda: False
    ) -> PhraseGrams | None:
        """The table of the catalog's notes; rows of `previous` whose note is unchanged are
        kept. None if `stop()` says so between two batches of notes.

        When the notes are the ones `previous` holds (an edit, not a note added or deleted),
        `previous` itself is updated: a second table would double its memory while built
        (50 MB at 50k notes). A search still reading it is one that began before the
        change, and reads the notes' text after it anyway.
        """
        shas = {path: state.sha for path, state in catalog.file_states().items()}
        kept: list[str] = []
        changed: list[str] = []
        for path, sha in shas.items():
            unchanged = previous is not None and previous._shas.get(path) == sha and path not in previous._unread
            (kept if unchanged else changed).append(path)
        if previous is not None and previous._shas.keys() == shas.keys():
            table = previous
        else:
            table = cls(shas, np.zeros((len(shas), BITS // 8), dtype=np.uint8))
            if previous is not None:
                for start in range(0, len(kept), _COPIED):
                    some = kept[start : start + _COPIED]
                    table._rows[[table._row_of[path] for path in some]] = previous._rows[[previous._row_of[path] for path in some]]
        for start in range(0, len(changed), _BATCH):
            if stop():
                return None
            batch = changed[start : start + _BATCH]
            read = list(catalog.note_texts(batch))
            table._fill(read)
            table._unread.difference_update(batch)
            table._unread.update(set(batch).difference(path for path, _text in read))
            table._shas.update((path, shas[path]) for path in batch)
        return table

    @classmethod
    def of_texts(cls, notes: Mapping[str, str]) -> PhraseGrams:
        """The table of some (path → text) notes, read together."""
        table = cls(dict.fromkeys(notes, ""), np.zeros((len(notes), BITS // 8), dtype=np.uint8))
        table._fill(list(notes.items()))
        return table

    def _fill(self, notes: list[tuple[str, str]]) -> None:
        if notes:
            keys = [fold_case(displayed_text(text)) for _path, text in notes]
            self._rows[[self._row_of[path] for path, _text in notes]] = _rows(keys)

    def __len__(self) -> int:
        return len(self._shas)

    @property
    def nbytes(self) -> int:
        return int(self._rows.nbytes)

    def may_hold(self, phrase_key: str, notes: Iterable[str]) -> set[str]:
        """The notes among `notes` that may show `phrase_key` (a `phrase_key` of the query):
        all but those proven not to. Notes the table has not read are kept."""
        notes = set(notes)
        wanted = _rows([phrase_key])[0]
        columns = np.flatnonzero(wanted)
        if not len(columns):
            return notes  # shorter than a run: nothing to tell
        known = [path for path in notes if path in self._row_of and path not in self._unread]
        if not known:
            return notes
        index = np.fromiter((self._row_of[path] for path in known), dtype=np.intp, count=len(known))
        block = self._rows[np.ix_(index, columns)]
        holds = np.all((block & wanted[columns]) == wanted[columns], axis=1)
        lacking = {path for path, ok in zip(known, holds.tolist(), strict=True) if not ok}
        return notes - lacking
