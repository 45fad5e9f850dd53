"""The façade's questions: search, why a note ranks where it does, context for a question, related notes.

What every caller gets whatever the front end: the knobs checked, the index's changes
picked up before a search, and the statuses that say when the index lags or has no model.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from engine import context as context_module
from engine import unnamed
from engine.channels.graph.view import EntityInfo
from engine.config import GRAPH_SEEDINGS, MAX_GRAPH_WEIGHT
from engine.context import DEFAULT_DEPTH, DEFAULT_MAX_TOKENS
from engine.errors import CairnError, ConfigError, NoteNotFound
from engine.names import brief
from engine.query import QueryPlan
from engine.records import (
    ChannelName,
    ChannelStatus,
    ContextBundle,
    GraphSeeding,
    SearchResults,
    WhyReport,
)
from engine.search import channel_depth
from engine.search.ranking import STAGE_NAMES
from engine.search.why import explain_rank
from engine.usage import ChannelUsage
from engine.vault.parse import describing_property

if TYPE_CHECKING:
    from engine.links import Links
    from engine.notes import NoteFiles
    from engine.session import IndexSession

log = logging.getLogger("cairn.engine")

# A search picks up what another process wrote at most this often.
_REFRESH_EVERY_S = 1.0


class Questions:
    """Searches over the open index, for every front end alike."""

    def __init__(self, index: IndexSession, notes: NoteFiles, links: Links) -> None:
        self._index = index
        self._notes = notes
        self._links = links

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        channels: Collection[ChannelName] | None = None,
        as_you_type: bool = True,
        graph_weight: float | None = None,
        max_hops: int | None = None,
        graph_seeding: GraphSeeding | None = None,
        stages_off: Collection[str] = (),
    ) -> SearchResults:
        """Hybrid search with per-channel evidence.

        Args:
            query: what the user typed; the last word counts as a prefix while
                `as_you_type` and no space follows it.
            limit: maximum hits.
            channels: restrict to some channels (default all three).
            as_you_type: treat the last word as a prefix.
            graph_weight: the graph's weight in fusion for this search (default: configured).
            max_hops: how far the graph walks for this search (default: configured; 0 keeps
                the entities the query names).
            graph_seeding: where the graph walk starts for this search: "query" (the entities
                the query names), "chunks" (those the text channels' top chunks name) or "both".
            stages_off: ranking stages to switch off for this search (`engine eval --ablate`;
                `STAGE_NAMES` lists them).

        Returns:
            Fused hits with evidence, per-channel status and timings, entities. A hybrid
            search that finds fewer than `limit` notes ends with `flat_scan` hits.

        Raises:
            ConfigError: `graph_seeding` is not one of the three, `graph_weight` is not a
                number from 0 to `MAX_GRAPH_WEIGHT`, or `max_hops` is negative.
        """
        stale = ""
        if time.monotonic() - self._index.last_refresh_check >= _REFRESH_EVERY_S:
            try:
                self._index.refresh()
            except Exception as exc:  # the views loaded before still answer; the next search retries
                log.debug("could not pick up changes to the index", exc_info=True)  # said in the statuses
                stale = f"showing the index as it was before: {type(exc).__name__}: {exc}"
        if graph_seeding is not None and graph_seeding not in GRAPH_SEEDINGS:
            raise ConfigError(f"graph seeding {graph_seeding!r} is not one of {', '.join(GRAPH_SEEDINGS)}")
        # What the command line and the web API refuse, for every caller (an MCP client too):
        # a negative or NaN weight would drop the graph silently, an infinite one every score.
        if graph_weight is not None and not (math.isfinite(graph_weight) and 0 <= graph_weight <= MAX_GRAPH_WEIGHT):
            raise ConfigError(f"graph weight {graph_weight!r} is not a number from 0 to {MAX_GRAPH_WEIGHT:g}")
        if max_hops is not None and max_hops < 0:
            raise ConfigError(f"max hops {max_hops!r} is not a number of at least 0")
        unknown = sorted(set(stages_off) - set(STAGE_NAMES))
        if unknown:
            raise ConfigError(f"no ranking stage named {', '.join(map(repr, unknown))} (known: {', '.join(STAGE_NAMES)})")
        if as_you_type:
            self._index.indexer.note_typing()  # the embedding backlog leaves the cores to the keystrokes
        results = self._index.searcher.search(
            query,
            limit=limit,
            channels=channels,
            as_you_type=as_you_type,
            graph_weight=graph_weight,
            max_hops=max_hops,
            seeding=graph_seeding,
            stages_off=stages_off,
        )
        if ("vectors" in results.channels and self._index.embedder is None) or stale:
            channels_status = dict(results.channels)
            if stale:
                for name, st in channels_status.items():
                    if st.status == "ok":
                        channels_status[name] = ChannelStatus("degraded", st.ms, stale)
            if "vectors" in channels_status and self._index.embedder is None:
                channels_status["vectors"] = ChannelStatus("unavailable", 0.0, self._index.model_problem)
            results = dataclasses.replace(results, channels=channels_status)
        # A question naming what no note holds has no confident answer (engine/unnamed.py).
        counter = self.token_counter()
        results = unnamed.applied(results, self.term_weights, counter if counter.exact else None)
        usage = self._index.usage
        if usage is not None and not as_you_type and not stages_off:
            usage.count(results)  # which channels placed hits in the first five (counts only)
        return results

    def token_counter(self) -> context_module.TokenCounter:
        """Counts tokens as `context` counts them: the embedder's tokenizer, or about four characters a token."""
        embedder = self._index.embedder
        return context_module.TokenCounter(embedder, embedder.model_id if embedder else "")

    def channel_usage(self) -> dict[str, Any]:
        """How often each channel placed notes in searches' first five, and notes only it found (engine/usage.py)."""
        usage = self._index.usage
        return usage.totals() if usage is not None else {"off": True, **ChannelUsage(self._index.index_dir).totals()}

    def why(
        self,
        query: str,
        note: str,
        *,
        limit: int = 10,
        channels: Collection[ChannelName] | None = None,
        graph_weight: float | None = None,
        max_hops: int | None = None,
        graph_seeding: GraphSeeding | None = None,
        as_you_type: bool = False,
    ) -> WhyReport:
        """Why `note` is where it is in a search's results, or not in them ("why isn't this note here?").

        Args:
            query: the search, as `search` takes it (with the same knobs).
            note: a vault path, or a note's title or alias.
            limit: how many results the search shows.

        Returns:
            The note's fused rank and score, each channel's rank, score, fusion factor and
            vote, and the rules or cuts that placed it.

        Raises:
            NoteNotFound: no note has that path, title or alias (the message names the nearest).
        """
        path = self._links.find_note(note)
        if path is None:
            nearest = tuple((choice.path, choice.title) for choice in self._links.note_choices(note, limit=5))
            raise NoteNotFound(_not_found(note, nearest), name=note, nearest=nearest)
        limit = max(1, limit)
        results = self.search(
            query,
            limit=limit,
            channels=channels,
            as_you_type=as_you_type,
            graph_weight=graph_weight,
            max_hops=max_hops,
            graph_seeding=graph_seeding,
        )
        titles = {p: title for p, title, _aliases in self._index.catalog.note_names()}
        wanted = [c for c in ("fulltext", "vectors", "graph") if channels is None or c in channels]
        fusion = self._index.searcher.fusion_config(graph_weight)
        return explain_rank(
            results, path, titles.get(path, path), fusion, limit, titles, channel_depth(limit, fusion, wanted)  # type: ignore[arg-type]
        )

    def context(
        self,
        question: str,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_source_tokens: int | None = None,
        max_entity_tokens: int | None = None,
        depth: int = DEFAULT_DEPTH,
        top_k: int | None = None,
        render: context_module.Render | None = None,
    ) -> ContextBundle:
        """What a question needs from the vault: top chunks, the entities they lead to, and how those relate.

        Args:
            question: what is asked, in words.
            max_tokens: the whole budget in tokens (the embedder's tokenizer counts them;
                without a model, about four characters a token, and the result says so).
            max_source_tokens: the sources' budget (default 60% of the whole).
            max_entity_tokens: the entities' budget (default 20%); relationships get the rest.
            depth: hops of the walk over entity–entity edges (0: only the chunks' own entities).
            top_k: the most sources (default: as many as the budget holds, of the top 20).
            render: the form the context will be printed in (`engine.present.context_json_text`,
                `context_text`); given, everything it prints fits `max_tokens`.

        Returns:
            Sources (chunk id, note, heading, text), entities (name, kind, description,
            rank), relationships (source, target, named relation, sentence, weight, rank),
            counts, budgets and tokens used. Sources come from notes with confident
            evidence only (`confident` says how many; none: the notes say so).

        Raises:
            ConfigError: `max_tokens` is below 1, another budget or `depth` is negative (what
                `engine context` refuses, refused for every caller), `top_k` is below 1, or
                `max_tokens` cannot hold the printed frame of an empty context.
        """
        if max_tokens < 1:
            raise ConfigError(f"max_tokens {max_tokens} is not a budget of at least 1 token")
        for name, budget in (("max_source_tokens", max_source_tokens), ("max_entity_tokens", max_entity_tokens)):
            if budget is not None and budget < 0:
                raise ConfigError(f"{name} {budget} is not a budget of at least 0 tokens")
        if depth < 0:
            raise ConfigError(f"depth {depth} is not a number of hops of at least 0")
        results = self.search(question, limit=context_module.SOURCE_CANDIDATES, as_you_type=False)
        plan = self.plan(question, as_you_type=False)
        counter = self.token_counter()
        return context_module.assemble(
            question,
            results=results,
            plan=plan,
            catalog=self._index.catalog,
            view=self._index.graph.view(),
            counter=counter,
            describe=self._describe,
            lexicon=self._index.lexicon,
            max_tokens=max_tokens,
            max_source_tokens=max_source_tokens,
            max_entity_tokens=max_entity_tokens,
            depth=depth,
            top_k=top_k,
            render=render,
        )

    def _describe(self, entity: EntityInfo) -> str:
        """One line about an entity: a note's description property or first sentence; a tag's or name's reach."""
        if entity.kind == "tag":
            return f"tag on {entity.degree} notes"
        if entity.kind != "note" or entity.path is None:
            return f"named in {entity.degree} notes"
        try:
            described = describing_property(self._notes.read_note(entity.path).text, self._index.lexicon)
        except (CairnError, OSError):
            described = ""
        if described:
            return described
        body = self._index.catalog.note_body(entity.path)
        return context_module.first_sentence(body.text) if body else ""

    def plan(self, query: str, *, as_you_type: bool = True) -> QueryPlan:
        """What the engine reads from a query: words, stems, the typed prefix, named entities,
        the asked kind and relation question (engine/query/plan.py)."""
        return self._index.searcher.plan(query, as_you_type=as_you_type)

    def term_weights(self, terms: Sequence[str]) -> dict[str, float]:
        """The full-text idf of index terms (stemmed words), as fusion weighs keyword coverage."""
        return self._index.fulltext.term_weights(terms)

    def related(self, path: str, *, limit: int = 10) -> SearchResults:
        """Hybrid "more like this": the note's title and opening text as a query."""
        info = self._index.catalog.note_info(path)
        if info is None:
            raise self._notes.not_indexed(path)
        chunks = self._index.catalog.chunks_for(path)
        opening = " ".join(c.chunk.text for c in chunks[:1])[:400]
        results = self.search(f"{info.title} {opening}", limit=limit + 1, as_you_type=False)
        hits = tuple(h for h in results.hits if h.path != path)[:limit]
        return dataclasses.replace(results, hits=hits)


def _not_found(name: str, nearest: Sequence[tuple[str, str]]) -> str:
    """"No note X" with the nearest titles, for a note named that does not exist (a long name cut)."""
    if not nearest:
        return f"no note named {brief(name)!r}"
    return f"no note named {brief(name)!r}; nearest: " + "; ".join(f"{title} ({path})" for path, title in nearest)

