"""Ranking after the channels: a pipeline of named stages, each adding evidence to the fusion.

The search reads the query (engine/query/), runs the channels, then every stage in
`STAGES` order, each a small module with its own config section and its own record in
the search's trace; weighted RRF fuses the channels' lists with the stages' evidence
(engine/search/fusion.py), and the evidence labels say where confident evidence ends.

    structure   the structure pack: kinds and relations of a vault that files them
    coverage    a full-text hit counts as far as it matched the query's words
    confidence  a vector hit counts as far as its cosine is high; the channel as far as it covers the vault
    names       the graph counts as far as the query's names are what it asks about
    folders     the user's priors on folders (`[search] folder_boosts`)
    navigation  a query naming a note by title or alias gets it first

`engine eval --ablate` measures each stage switched off beside the plain RRF row.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from engine.records import StageRecord
from engine.search.ranking.base import Stage, StageContext, VaultView
from engine.search.ranking.confidence import ConfidenceStage
from engine.search.ranking.coverage import CoverageStage
from engine.search.ranking.folders import FoldersStage
from engine.search.ranking.names import NamesStage
from engine.search.ranking.navigation import NavigationStage
from engine.search.ranking.structure import StructureStage

__all__ = ["STAGES", "STAGE_NAMES", "Stage", "StageContext", "VaultView", "run_stages"]

log = logging.getLogger("cairn.search")

# The order matters where a stage reads what an earlier one put in a list: the structure
# pack's kind hop joins the graph's list before the names stage weighs the graph's votes.
STAGES: tuple[Stage, ...] = (
    StructureStage(),
    CoverageStage(),
    ConfidenceStage(),
    NamesStage(),
    FoldersStage(),
    NavigationStage(),
)
STAGE_NAMES: tuple[str, ...] = tuple(stage.name for stage in STAGES)


def run_stages(context: StageContext, off: Collection[str] = ()) -> tuple[StageRecord, ...]:
    """Every enabled stage's record for one search, in order; `off` names stages to skip.

    A stage that fails adds nothing and says why in its record: a ranking rule never
    fails a search.
    """
    for stage in STAGES:
        if stage.name in off:
            continue
        try:
            if not stage.enabled(context):
                continue
            record = stage.weigh(context)
        except Exception as exc:  # a broken rule degrades the ranking, never the search
            log.debug("the %s stage failed", stage.name, exc_info=True)
            record = StageRecord(stage.name, said=(f"failed: {type(exc).__name__}: {exc}",))
        context.records.append(record)
        context.put_first(record)
    return tuple(context.records)
