"""The folders stage: priors the user sets on where notes live (`[search] folder_boosts`).

An archived copy of a note should rank below the live one; a folder of reference notes
may deserve more. Every channel's vote for a note under a boosted folder counts the
folder's factor, the deepest listed folder holding the note deciding; the floors of the
navigation stage are not affected (a note named by its title is still the note meant).
"""

from __future__ import annotations

from typing import ClassVar

from engine.folding import path_form
from engine.records import StageRecord
from engine.search.ranking.base import StageContext

__all__ = ["FoldersStage", "folder_factor", "keyed_boosts"]


def _folder_key(folder: str) -> str:
    """A folder as the boosts compare it: one Unicode form, case folded, no slashes at the ends."""
    return path_form(folder).strip("/").casefold()


def keyed_boosts(boosts: dict[str, float]) -> dict[str, float]:
    """The boosts by folder as `folder_factor` looks them up."""
    return {_folder_key(folder): float(factor) for folder, factor in boosts.items()}


def folder_factor(path: str, keyed: dict[str, float]) -> float:
    """The factor of the deepest boosted folder holding `path` (1 when none holds it);
    `keyed` as `keyed_boosts` gives it."""
    if not keyed:
        return 1.0
    parts = _folder_key(path).split("/")[:-1]
    for depth in range(len(parts), 0, -1):
        factor = keyed.get("/".join(parts[:depth]))
        if factor is not None:
            return float(factor)
    return 1.0


class FoldersStage:
    """Every channel's vote × the boost of the folder the note is in."""

    name: ClassVar[str] = "folders"

    def enabled(self, context: StageContext) -> bool:
        return bool(context.config.search.folder_boosts)

    def weigh(self, context: StageContext) -> StageRecord:
        boosts = context.config.search.folder_boosts
        keyed = keyed_boosts(boosts)
        factors: dict[str, dict[str, float]] = {}
        touched = 0
        for channel, ranked in context.lists.items():
            scale: dict[str, float] = {}
            for path in ranked:
                factor = folder_factor(path, keyed)
                if factor != 1.0:
                    scale[path] = factor
            if scale:
                factors[channel] = scale
                touched = max(touched, len(scale))
        said = (f"folder priors weigh {touched} note(s): " + ", ".join(f"{k} × {v:g}" for k, v in boosts.items()),) if touched else ()
        return StageRecord(self.name, factors=factors, said=said)
