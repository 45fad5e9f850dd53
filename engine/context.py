"""Context assembly: what a question needs from the vault, with no model to answer it.

The hybrid search's top chunks (not whole notes) are the Sources; the entities those
chunks name or link (through the graph's chunk → entity edges), and those a breadth-first
walk over entity–entity edges reaches from them within `depth` hops, are the Entities;
the edges between those entities, with the relation the vault names and the sentence
that links them, are the Relationships. Each section is cut to its token budget, counted
with the embedder's tokenizer (or, without a model, about four characters a token); given
the form it is printed in, the whole printed context (headers, ids and counts too) is cut
to the whole budget. Only notes with confident evidence give sources: a question nothing
answers gets none, and says so. It degrades: no entities → sources only; no edges →
sources and entities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.catalog import Catalog, StoredChunk
from engine.channels.graph.build import Sentences
from engine.channels.graph.channel import relation_names
from engine.channels.graph.view import EdgeInfo, EntityInfo, GraphView, Reached
from engine.entities import displayed_text
from engine.errors import ConfigError
from engine.lexicon import Lexicon
from engine.query import QueryPlan
from engine.records import (
    ContextBundle,
    ContextCounts,
    ContextEntity,
    ContextRelationship,
    ContextSource,
    Hit,
    SearchResults,
)
from engine.search.evidence import best_chunk, fence_before, readable

__all__ = ["DEFAULT_MAX_TOKENS", "Render", "TokenCounter", "assemble"]

# The form a context is printed in (JSON, text): the whole budget bounds what it prints.
Render = Callable[[ContextBundle], str]

DEFAULT_MAX_TOKENS = 4000
DEFAULT_DEPTH = 2
# Shares of the whole budget when a section's own is not given (relationships get the rest).
_SOURCE_SHARE, _ENTITY_SHARE = 0.6, 0.2
# How many of the search's notes offer a chunk, and how many entities and edges are weighed.
SOURCE_CANDIDATES = 20
_MAX_ENTITIES = 60
_MAX_RELATIONSHIPS = 80
# A note's tags count as its chunks' entities, below what the chunk itself names.
_TAG_WEIGHT = 0.5
_DESCRIPTION_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# The most characters of a relationship's sentence shown, around the place it names the other.
_SENTENCE_CHARS = 240
# A printed context drops its last items until it fits; each try re-counts all of it.
_MAX_FITS = 400
# Without a tokenizer, a token is about this many characters of English text.
APPROX_CHARS_PER_TOKEN = 4


class TokenCounter:
    """Counts tokens with the embedder's tokenizer, or approximates them without one."""

    def __init__(self, embedder: object | None, model_id: str = "") -> None:
        counts = getattr(embedder, "text_tokens", None)
        self._count: Callable[[Sequence[str]], list[int]] | None = counts if callable(counts) else None
        if self._count is not None:
            self.description = f"{model_id or 'the embedding model'} word pieces (the embedder's tokenizer)"
        else:
            self.description = (
                f"approximate: 1 token per {APPROX_CHARS_PER_TOKEN} characters "
                "(no tokenizer: the embedding model is not loaded)"
            )

    @property
    def exact(self) -> bool:
        """Whether a tokenizer counts (not the four-characters estimate)."""
        return self._count is not None

    def __call__(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        if self._count is not None:
            return self._count(texts)
        return [math.ceil(len(text) / APPROX_CHARS_PER_TOKEN) for text in texts]


@dataclass(frozen=True)
class Budgets:
    """Token budgets: the whole, and the sources' and entities' (relationships get what is left)."""

    total: int
    sources: int
    entities: int

    @classmethod
    def of(cls, total: int, sources: int | None, entities: int | None) -> Budgets:
        total = max(0, total)
        source_budget = min(total, max(0, sources if sources is not None else int(total * _SOURCE_SHARE)))
        entity_budget = min(total - source_budget, max(0, entities if entities is not None else int(total * _ENTITY_SHARE)))
        return cls(total, source_budget, entity_budget)


def _fit(
    texts: Sequence[str], budget: int, counter: TokenCounter, costs: Sequence[int] | None = None, most: int | None = None
) -> tuple[list[int], list[int], int]:
    """Which texts fit the budget taken in order (a text that does not fit is left out and
    the next ones still tried), every text's token count, and how much of the budget the
    kept ones take. `costs`, when given, are what each takes of the budget (its tokens as
    printed, ids and marks too) in place of its count, and are the counts returned; `most`
    caps how many are kept."""
    counts = list(costs) if costs is not None else counter(texts)
    kept: list[int] = []
    used = 0
    for at, cost in enumerate(counts):
        if most is not None and len(kept) >= most:
            break
        if used + cost <= budget:
            kept.append(at)
            used += cost
    return kept, counts, used


def source_line(source: ContextSource) -> str:
    """The text a source is counted as (and shown as): its place, then its text."""
    heading = f" > {source.heading}" if source.heading else ""
    return f"[{source.id}] {source.title}{heading} (line {source.line})\n{source.text}"


def entity_line(entity: ContextEntity) -> str:
    """The text an entity is counted as: name, kind and description."""
    return f"{entity.name} ({entity.kind}): {entity.description}".rstrip(": ")


def relationship_line(relationship: ContextRelationship) -> str:
    """The text a relationship is counted as: the named relation or the kind of edge, and the sentence."""
    how = relationship.relation or relationship.evidence
    said = f": {relationship.sentence}" if relationship.sentence else ""
    return f"{relationship.source} —{how}→ {relationship.target}{said}"


def assemble(
    question: str,
    *,
    results: SearchResults,
    plan: QueryPlan,
    catalog: Catalog,
    view: GraphView | None,
    counter: TokenCounter,
    describe: Callable[[EntityInfo], str],
    lexicon: Lexicon,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_source_tokens: int | None = None,
    max_entity_tokens: int | None = None,
    depth: int = DEFAULT_DEPTH,
    top_k: int | None = None,
    render: Render | None = None,
) -> ContextBundle:
    """The context of one question from its hybrid search (see the module docstring).

    Args:
        question: what was asked.
        results: the hybrid search of the question (its top hits offer the chunks).
        plan: the question's plan (its words choose each note's chunk; its relation words
            steer the walk).
        catalog: where chunks, links and note bodies are read.
        view: the graph as it is now (None: no entities).
        counter: counts tokens.
        describe: one line about an entity.
        lexicon: how the notes' sentences are split.
        max_tokens: the whole budget; `max_source_tokens` and `max_entity_tokens` the
            sources' and entities' (default 60% and 20% of it); relationships get the rest.
        depth: hops of the walk from the chunks' entities (0: only those entities).
        top_k: the most sources (default: as many as fit, of the top 20 confident notes).
        render: the form the context is printed in; given, all of the printed text fits
            `max_tokens` (the sections share what the headers and counts leave).

    Raises:
        ConfigError: a budget is negative, `top_k` below 1, or `max_tokens` cannot hold
            even the printed frame of an empty context.
    """
    if max_tokens < 0 or (max_source_tokens or 0) < 0 or (max_entity_tokens or 0) < 0:
        raise ConfigError("a token budget cannot be negative")
    if top_k is not None and top_k < 1:
        raise ConfigError(f"top_k must be at least 1, not {top_k}")
    finish = _Finish(question, counter, max(0, depth), results, render, max_tokens)
    content = max_tokens - finish.frame() if render is not None else max_tokens
    budgets = Budgets.of(content, max_source_tokens, max_entity_tokens)
    notes: list[str] = []
    ordinals: dict[int, int] = {}
    confident = max(0, min(results.confident, len(results.hits)))
    if not confident:
        notes.append("no confident match: no note's evidence clears the floor, so no sources are given")
    candidates = _source_candidates(results.hits[: min(confident, SOURCE_CANDIDATES)], plan, catalog, ordinals)
    kept, counts, _ = _fit(
        [source_line(s) for s in candidates], budgets.sources, counter, finish.costs(sources=candidates), top_k
    )
    sources = tuple(replace(candidates[at], rank=rank, tokens=counts[at]) for rank, at in enumerate(kept, start=1))
    used = {"sources": sum(s.tokens for s in sources)}
    left_out = {"sources": len(candidates) - len(sources)}
    graph_status = results.channels.get("graph")
    if not sources:
        return finish(sources, (), (), budgets, used, left_out, notes, 0)
    if view is None or (graph_status is not None and graph_status.status == "unavailable"):
        notes.append("no entities: the graph is not available" + (f" ({graph_status.message})" if graph_status and graph_status.message else ""))
        return finish(sources, (), (), budgets, used, left_out, notes, 0)

    reached = _entities(sources, ordinals, view, depth, plan.relation.keys)
    ranked_keys = sorted(reached, key=lambda key: (-reached[key].score, reached[key].hop, key))[:_MAX_ENTITIES]
    infos = {key: info for key in ranked_keys if (info := view.entity(key)) is not None}
    entity_candidates = [
        ContextEntity(
            name=info.label,
            kind=_kind(info),
            path=info.path,
            description=describe(info),
            rank=0,
            hop=reached[key].hop,
            score=reached[key].score,
            tokens=0,
        )
        for key, info in infos.items()
    ]
    kept, counts, _ = _fit(
        [entity_line(e) for e in entity_candidates], budgets.entities, counter, finish.costs(entities=entity_candidates)
    )
    keys = list(infos)
    kept_keys = [keys[at] for at in kept]
    entities = tuple(replace(entity_candidates[at], rank=rank, tokens=counts[at]) for rank, at in enumerate(kept, start=1))
    used["entities"] = sum(e.tokens for e in entities)
    left_out["entities"] = len(reached) - len(entities)
    if not entities:
        notes.append("no entities: the sources name none the graph knows; sources only")
        return finish(sources, (), (), budgets, used, left_out, notes, 0)

    neighbours = sum(1 for e in entities if e.hop > 0)
    asked = frozenset(name for name, keys in relation_names(lexicon).items() if keys & plan.relation.keys)
    edge_candidates = _relationships(kept_keys, reached, view, catalog, lexicon, asked)
    remaining = max(0, budgets.total - used["sources"] - used["entities"])
    kept, counts, _ = _fit(
        [relationship_line(r) for r in edge_candidates], remaining, counter, finish.costs(relationships=edge_candidates)
    )
    relationships = tuple(
        replace(edge_candidates[at], rank=rank, tokens=counts[at]) for rank, at in enumerate(kept, start=1)
    )
    used["relationships"] = sum(r.tokens for r in relationships)
    left_out["relationships"] = len(edge_candidates) - len(relationships)
    if not edge_candidates:
        notes.append("no edges between the entities: sources and entities only")
    return finish(sources, entities, relationships, budgets, used, left_out, notes, neighbours)


@dataclass(frozen=True)
class _Finish:
    """Makes the bundle of a question's context and, given the form it is printed in, fits all of it to the whole budget."""

    question: str
    counter: TokenCounter
    depth: int
    results: SearchResults
    render: Render | None
    max_tokens: int

    def frame(self) -> int:
        """The tokens the printed context takes with nothing in it (its headers, counts and notes).

        Raises:
            ConfigError: the whole budget cannot hold them.
        """
        assert self.render is not None
        empty = self._bundle((), (), (), Budgets(0, 0, 0), {}, {}, ["no confident match"], 0)
        printed = self.counter([self.render(empty)])[0]
        if printed > self.max_tokens:
            raise ConfigError(
                f"a budget of {self.max_tokens} tokens cannot hold the context's frame: its headers and counts "
                f"alone print as {printed} tokens"
            )
        return printed

    def costs(
        self,
        sources: Sequence[ContextSource] = (),
        entities: Sequence[ContextEntity] = (),
        relationships: Sequence[ContextRelationship] = (),
    ) -> list[int] | None:
        """What each item (of one section) adds to the printed context: the tokens of a context
        holding it alone, less those of an empty one; None without a form to print in."""
        if self.render is None:
            return None
        nothing = Budgets(0, 0, 0)
        alone = [self._bundle((), (), (), nothing, {}, {}, [], 0)]
        alone += [self._bundle((item,), (), (), nothing, {}, {}, [], 0) for item in sources]
        alone += [self._bundle((), (item,), (), nothing, {}, {}, [], 0) for item in entities]
        alone += [self._bundle((), (), (item,), nothing, {}, {}, [], 0) for item in relationships]
        empty, *printed = self.counter([self.render(bundle) for bundle in alone])
        return [max(0, count - empty) for count in printed]

    def __call__(
        self,
        sources: Sequence[ContextSource],
        entities: Sequence[ContextEntity],
        relationships: Sequence[ContextRelationship],
        budgets: Budgets,
        used: dict[str, int],
        left_out: dict[str, int],
        notes: list[str],
        neighbours: int,
    ) -> ContextBundle:
        bundle = self._bundle(sources, entities, relationships, budgets, used, left_out, notes, neighbours)
        return bundle if self.render is None else self._fitted(bundle, budgets)

    def _bundle(
        self,
        sources: Sequence[ContextSource],
        entities: Sequence[ContextEntity],
        relationships: Sequence[ContextRelationship],
        budgets: Budgets,
        used: dict[str, int],
        left_out: dict[str, int],
        notes: list[str],
        neighbours: int,
        printed: int | None = None,
    ) -> ContextBundle:
        used = {"sources": used.get("sources", 0), "entities": used.get("entities", 0), "relationships": used.get("relationships", 0)}
        used["total"] = sum(used.values())
        if printed is not None:
            used["printed"] = printed
        return ContextBundle(
            question=self.question,
            sources=tuple(sources),
            entities=tuple(entities),
            relationships=tuple(relationships),
            counts=ContextCounts(
                chunks=len(sources),
                entities=len(entities),
                relationships=len(relationships),
                neighbours=neighbours,
                left_out={k: max(0, v) for k, v in left_out.items()},
            ),
            budgets={
                "total": self.max_tokens,
                "sources": budgets.sources,
                "entities": budgets.entities,
                "relationships": max(0, budgets.total - used["sources"] - used["entities"]),
            },
            used=used,
            tokenizer=self.counter.description,
            depth=self.depth,
            notes=tuple(notes),
            channels=dict(self.results.channels),
            confident=max(0, min(self.results.confident, len(self.results.hits))),
        )

    def _fitted(self, bundle: ContextBundle, budgets: Budgets) -> ContextBundle:
        """The bundle less its last items (relationships, then entities, then sources) until
        all of it, printed, counts at most the whole budget; it says how many tokens it prints
        (at most one or two more where no number prints as its own count).

        Raises:
            ConfigError: even with nothing in it the printed context does not fit.
        """
        assert self.render is not None
        sources, entities, relationships = list(bundle.sources), list(bundle.entities), list(bundle.relationships)
        left_out = dict(bundle.counts.left_out)
        printed = 0
        for _ in range(_MAX_FITS):
            used = {"sources": sum(s.tokens for s in sources), "entities": sum(e.tokens for e in entities),
                    "relationships": sum(r.tokens for r in relationships)}
            neighbours = sum(1 for e in entities if e.hop > 0)
            fitted = self._bundle(sources, entities, relationships, budgets, used, left_out, list(bundle.notes), neighbours, printed)
            count = self.counter([self.render(fitted)])[0]
            if count <= self.max_tokens and printed and count <= printed:
                # The count printed is the count, or (where no number counts itself, "679" a
                # token and "680" two) the least one above it.
                return fitted
            if count <= self.max_tokens:
                printed = count  # the count is printed too: once more, with it in
                continue
            excess = count - self.max_tokens
            dropped = 0
            for items, section in ((relationships, "relationships"), (entities, "entities"), (sources, "sources")):
                while items and dropped < excess:
                    dropped += items.pop().tokens + 1
                    left_out[section] = left_out.get(section, 0) + 1
            if not dropped:
                break
        raise ConfigError(
            f"a budget of {self.max_tokens} tokens cannot hold this context's frame: its headers, counts and notes "
            f"alone print as more"
        )


def _source_candidates(
    hits: Sequence[Hit], plan: QueryPlan, catalog: Catalog, ordinals: dict[int, int]
) -> list[ContextSource]:
    """Each hit's best chunk (the vector channel's, else the one holding most query words);
    `ordinals` receives each chosen chunk's ordinal by its id."""
    chunks_of = catalog.chunks_of_notes([hit.path for hit in hits])
    out: list[ContextSource] = []
    for hit in hits:
        chunks = chunks_of.get(hit.path, [])
        if not chunks:
            continue
        vectors = hit.channels.get("vectors")
        chosen: StoredChunk = best_chunk(chunks, list(plan.hint_terms), vectors.chunk_id if vectors else None, plan.phrases)
        ordinals[chosen.id] = chosen.chunk.ordinal
        out.append(
            ContextSource(
                id=chosen.id,
                path=hit.path,
                title=hit.title,
                heading=" > ".join(chosen.chunk.heading_path),
                text=readable(chosen.chunk.text, fence_before(chunks, chosen)).strip(),
                line=chosen.chunk.line_start,
                rank=0,
                tokens=0,
            )
        )
    return out


def _entities(
    sources: Sequence[ContextSource],
    ordinals: Mapping[int, int],
    view: GraphView,
    depth: int,
    relation_keys: frozenset[str],
) -> dict[str, Reached]:
    """The sources' entities (weighted by the sources' ranks) and what a walk reaches from them.

    `ordinals` maps each source's chunk id to its ordinal in its note.
    """
    seeds: dict[str, float] = {}
    for source in sources:
        weight = 1.0 / source.rank
        for key in view.chunk_entities(source.path, ordinals.get(source.id, -1)):
            seeds[key] = seeds.get(key, 0.0) + weight
        for key in view.note_tags(source.path):
            seeds[key] = seeds.get(key, 0.0) + _TAG_WEIGHT * weight
    if not seeds:
        return {}
    return view.walk(seeds, depth, relation_keys)


def _kind(info: EntityInfo) -> str:
    if info.kind == "note":
        return "person" if info.person else "note"
    return info.kind


def _relationships(
    keys: Sequence[str],
    reached: Mapping[str, Reached],
    view: GraphView,
    catalog: Catalog,
    lexicon: Lexicon,
    asked: frozenset[str] = frozenset(),
) -> list[ContextRelationship]:
    """The edges between the kept entities: the walk's own steps, then the entities' other edges.

    A relation the question asks about comes first, then nearer edges before farther ones,
    and at one distance a relation the vault names before a mere link, mention or co-occurrence.
    """
    kept = set(keys)
    pairs: dict[tuple[str, str], int] = {}
    for key in keys:
        path = reached[key].path
        if len(path) >= 2 and path[-2] in kept:
            pairs.setdefault((path[-2], path[-1]), reached[key].hop)
    for a, b in view.edges_among(keys):
        if (a, b) not in pairs and (b, a) not in pairs:
            pairs[(a, b)] = max(reached[a].hop, reached[b].hop)
    edges: list[tuple[tuple[str, str], int, EdgeInfo]] = []
    for pair, hop in pairs.items():
        info = view.edge(*pair)
        if info is not None:
            edges.append((pair, hop, info))
    def order(item: tuple[tuple[str, str], int, EdgeInfo]) -> tuple[bool, int, bool, float, tuple[str, str]]:
        (pair, hop, info) = item
        named = info.relation.relation if info.relation is not None else None
        return (named not in asked, hop, named is None, -info.weight, pair)

    edges.sort(key=order)
    out: list[ContextRelationship] = []
    for (a, b), hop, info in edges[:_MAX_RELATIONSHIPS]:
        a_label, b_label = view.labels([a, b])
        source, target = a_label, b_label
        relation = None
        if info.relation is not None:
            relation = info.relation.relation
            source, target = info.relation.source, info.relation.target
        out.append(
            ContextRelationship(
                source=source,
                target=target,
                relation=relation,
                evidence=info.evidence,
                sentence=_linking_sentence(a, b, info, catalog, lexicon, view),
                weight=info.weight,
                rank=0,
                hop=hop,
                tokens=0,
            )
        )
    return out


def _linking_sentence(a: str, b: str, info: EdgeInfo, catalog: Catalog, lexicon: Lexicon, view: GraphView) -> str:
    """The sentence one of two notes links (or names) the other in, as a reader sees it, trimmed around the link."""
    if info.evidence not in ("links", "mentions"):
        return ""
    for me, other in ((a, b), (b, a)):
        if not me.startswith("note:"):
            continue
        path = me[5:]
        body = catalog.note_body(path)
        if body is None:
            continue
        sentences = Sentences(body.text, body.line_offset, lexicon)
        sentence = ""
        if other.startswith("note:"):
            target = other[5:]
            link = next((row for row in catalog.resolved_links_of([path]) if row.target == target), None)
            if link is not None:
                sentence = sentences.text_of_link(link.line, link.written)
        shown = view.labels([other])[0]
        if not sentence:
            sentence = sentences.text_of_mention(shown)
        if sentence:
            return trimmed_sentence(sentence, shown)
    return ""


def trimmed_sentence(sentence: str, around: str, limit: int = _SENTENCE_CHARS) -> str:
    """A sentence as a reader sees it (no link brackets, emphasis or list marks), on one line,
    cut at whole words to about `limit` characters around the first place `around` is."""
    text = " ".join(readable(sentence).split())
    if len(text) <= limit:
        return text
    at = max(0, text.find(around))
    start = max(0, min(at - limit // 3, len(text) - limit))
    end = start + limit
    if start > 0:
        space = text.find(" ", start, end)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start > 0 else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def first_sentence(body: str) -> str:
    """A note body's first sentence of prose (headings, quotes, tables, embeds and code skipped), one line."""
    fenced = False
    for raw in body.split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line or line.startswith(("#", ">", "|", "![[", "---", "<")):
            continue
        text = " ".join(displayed_text(line.lstrip("-*+ ")).split())
        if not text:
            continue
        sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
        return sentence if len(sentence) <= _DESCRIPTION_CHARS else sentence[: _DESCRIPTION_CHARS - 1].rstrip() + "…"
    return ""
