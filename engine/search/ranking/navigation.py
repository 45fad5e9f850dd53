"""The navigation stage: a query that names a note gets that note first.

Typing a note's title or an alias is how people open a note they know (a navigational
query): the note comes first, whatever the channels rank. So does a title typed with a
slip the query was read through ("grph view" read as "graph view": *Graph view*), since
the chips already say the query was read so. While the last word is still being typed,
the few notes whose title the query begins come right after ("tile pa": *Tile Pack*); a
shorter or commoner beginning says little about which note is meant.

An identifier is as exact as a title: a file name, a path, a URL, an e-mail address or a
CamelCase word (`FeatureCollection`, `notes/sync.md`) the graph knows and only a few notes
write. Those notes come right after the titles, whatever else the query says ("find the
notes about the FeatureCollection refactor"): a longer question dilutes the name's share
of the query, yet the note that writes it is what was asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from engine.channels.base import reading_of
from engine.channels.graph.walk import GraphReading
from engine.entities import identifier_like
from engine.folding import entity_key
from engine.records import StageRecord
from engine.search.ranking.base import StageContext

__all__ = ["NavigationRecord", "NavigationStage"]

# A query's beginning of a title is read as that title from this many letters on.
_TYPED_TITLE_MIN_CHARS = 3


@dataclass(frozen=True)
class NavigationRecord(StageRecord):
    """The stage's record, with which floors are exact titles, aliases or titles being typed."""

    exact: tuple[str, ...] = ()
    alias: tuple[str, ...] = ()
    typed: tuple[str, ...] = ()
    identified: tuple[str, ...] = ()


def read_through(text: str, corrections: Sequence[tuple[str, str]]) -> str:
    """`text` with each word read as a typo written as the word it was read as, in one pass."""
    if not corrections:
        return text
    meant = {typed.casefold(): word for typed, word in corrections}
    return _WORD.sub(lambda m: meant.get(m.group().casefold(), m.group()), text)


_WORD = re.compile(r"\w+")
# How the graph's walk says a note was reached from a name it writes.
MENTIONED = "mentions"



class NavigationStage:
    """Exact title and alias matches first, then the titles the words being typed begin."""

    name: ClassVar[str] = "navigation"

    def enabled(self, context: StageContext) -> bool:
        return context.fusion.navigation.enabled

    def weigh(self, context: StageContext) -> NavigationRecord:
        plan = context.plan
        vault = context.vault
        key = entity_key(plan.text)
        exact = tuple(vault.titled(key))
        alias = tuple(path for path in vault.aliased(key) if path not in exact)
        if not exact and not alias and plan.corrections:
            read = entity_key(read_through(plan.text, plan.corrections))
            if read != key:
                exact = tuple(vault.titled(read))
                alias = tuple(path for path in vault.aliased(read) if path not in exact)
        identified, names = self._identified(context, {*exact, *alias})
        typed = self._typed_titles(context, key, {*exact, *alias, *identified})
        said = []
        if exact or alias:
            said.append("the query names " + ", ".join(vault.title_of(path) for path in (*exact, *alias)[:3]))
        if identified:
            said.append(
                f"{', '.join(names)} is written in "
                + ", ".join(vault.title_of(path) for path in identified)
            )
        if typed:
            said.append("the words being typed begin " + ", ".join(vault.title_of(path) for path in typed))
        return NavigationRecord(
            self.name,
            floors=(*exact, *alias, *identified, *typed),
            said=tuple(said),
            exact=exact,
            alias=alias,
            typed=typed,
            identified=identified,
            floor_channels=dict.fromkeys(identified, "graph"),  # the graph read who writes the identifier
        )

    @staticmethod
    def _identified(context: StageContext, taken: set[str]) -> tuple[tuple[str, ...], list[str]]:
        """The few notes that write an identifier the query contains, and those identifiers.

        The graph's walk reaches a note that writes a name one step from it, by a mention
        (its trail is the name, then the note); an identifier more notes write than the
        setting allows names no note in particular.
        """
        most = context.fusion.navigation.identifier_notes
        graph = context.answers.get("graph")
        if most <= 0 or graph is None or not graph.hits:
            return (), []
        found: list[str] = []
        names: list[str] = []
        for name in reading_of(graph, GraphReading).recognized:
            if not identifier_like(name):
                continue
            writers = [
                hit.path
                for hit in graph.hits
                if len(hit.graph_path) == 2 and hit.graph_path[0] == name and hit.graph_relation == MENTIONED
            ]
            if not writers or len(writers) > most:
                continue
            names.append(name)
            found.extend(path for path in writers if path not in taken and path not in found)
        return tuple(found[:most]), names

    @staticmethod
    def _typed_titles(context: StageContext, key: str, taken: set[str]) -> tuple[str, ...]:
        plan = context.plan
        most = context.fusion.navigation.typed_titles
        if plan.prefix is None or plan.has_syntax or most <= 0 or len(key) < _TYPED_TITLE_MIN_CHARS:
            return ()
        found = context.vault.starting_with(key, most + 1)
        if len(found) > most:
            return ()
        return tuple(path for path in found if path not in taken)
