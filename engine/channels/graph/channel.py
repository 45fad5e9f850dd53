"""The entity-graph channel: builds and patches the graph (build), searches it (walk), keeps it (store)."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from engine.catalog import Catalog
from engine.channels.base import ChannelAnswer, ChannelContext
from engine.channels.graph import store, walk
from engine.channels.graph.build import (
    INCREMENTAL_SHARE,
    Build,
    NoteRows,
    Part,
    key_entries,
    name_marks,
    note_part,
    note_rows,
)
from engine.channels.graph.view import GraphView
from engine.config import GraphConfig
from engine.entities import EntityDictionary, EntityMatch
from engine.folding import entity_key
from engine.lexicon import Lexicon
from engine.lexicon.en import ENGLISH
from engine.query import QueryPlan
from engine.query.words import QUERY_WORD, relation_keys
from engine.records import ChannelName, Neighbor, NoteInfo, Relation

log = logging.getLogger("cairn.graph")


class GraphChannel:
    """Notes ranked by weighted, hop-decayed proximity to the entities a query names."""

    name: ChannelName = "graph"

    def __init__(self, config: GraphConfig, path: Path | None = None, lexicon: Lexicon = ENGLISH) -> None:
        self._config = config
        self._path = path
        self._lexicon = lexicon
        self._generation = -1  # the catalog generation the graph reflects
        self._saved_generation = -1  # the generation written to `path`
        self._rebuilt = False  # whether the last change was a rebuild (worth saving at once)
        self.origin = "empty"  # "saved" (loaded from `path`) or "built" (from the catalog)
        self._lock = threading.RLock()
        self._build_lock = threading.Lock()
        self._build: Build | None = None
        # A saved graph's notes' parts, read when the first edit needs them (None when built here).
        self._writer_part: tuple[store.WriterPart, store.Searchable] | None = None
        self._snapshot: walk.Snapshot | None = None
        self._note_count = 0
        self._relation_names = relation_names(lexicon)
        self._implied = {relation.name: frozenset(relation.implies) for relation in lexicon.relations}

    # -- building -------------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> None:
        """Build every note's part from catalog rows in bulk and sum them into the graph."""
        with self._build_lock:
            self._rebuild(catalog)

    def _part(
        self, catalog: Catalog, info: NoteInfo, rows: NoteRows, build: Build, notes: Collection[str], marks: dict[str, int]
    ) -> Part:
        config = self._config
        return note_part(
            info,
            rows,
            functools.partial(catalog.note_body, info.path),
            build.name_to_note,
            notes,
            config.min_name_len,
            config.title_words,
            self._lexicon,
            build.known,
            marks,
        )

    def _rebuild(self, catalog: Catalog) -> None:
        """Build from scratch (the caller holds the build lock)."""
        infos = catalog.note_infos()
        build = Build(infos, self._lexicon)
        notes = {info.path for info in infos}
        rows = note_rows(catalog, None)
        # Which phrases are names is read from the whole vault before any note's part.
        marks = {info.path: name_marks((rows.get(info.path) or NoteRows()).mentions, self._config.min_name_len) for info in infos}
        build.count_names(({}, note_marks) for note_marks in marks.values())
        for info in infos:
            part = self._part(catalog, info, rows.get(info.path) or NoteRows(), build, notes, marks[info.path])
            build.parts[info.path] = part
            build.apply(info.path, part, 1, set(), set())
        for path, part in build.parts.items():
            for other in (*part.contexts, *part.typed):
                build.set_context(f"note:{path}", other)
        build.contexts.fold()
        build.parts.pack()
        build.settle_all()
        vertices = [build.vertex_record(key) for key in build.keys]
        index = {key: i for i, key in enumerate(build.keys) if key.startswith("note:") or build.surfaces.get(key)}
        self._build = build
        self._writer_part = None
        searchable = store.searchable_of(build, vertices, index, EntityDictionary(build.entries()))
        self._publish(walk.NeighborCache(build.graph(), vertices, build.lists), searchable)
        self._generation = catalog.generation
        self._rebuilt = True
        self.origin = "built"

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Subtract the changed notes' old parts and add their new ones; rebuild when names move.

        A note added, removed or renamed (title or aliases) changes which note every
        mention in the vault names, and many changed notes are cheaper in bulk.
        """
        with self._build_lock:
            if (self._build is not None or self._writer_part is not None) and not changed and not removed:
                self._generation = catalog.generation
                return
            build = self._writer_build()
            if build is None or removed or len(changed) > max(1.0, INCREMENTAL_SHARE * len(build.parts)):
                self._rebuild(catalog)
                return
            infos = [catalog.note_info(path) for path in dict.fromkeys(changed)]
            known = [info for info in infos if info is not None and info.path in build.parts]
            names_before = [(part.title, part.aliases) for part in (build.parts[info.path] for info in known)]
            if len(known) < len(infos) or names_before != [(info.title, info.aliases) for info in known]:
                self._rebuild(catalog)
                return
            if not self._patch(catalog, build, known):
                self._rebuild(catalog)
                return
            self._generation = catalog.generation
            self._rebuilt = False

    def _patch(self, catalog: Catalog, build: Build, infos: list[NoteInfo]) -> bool:
        """Replace some notes' parts in the sums and publish the patched graph; False (nothing
        published) when so many notes read a name anew that a rebuild is cheaper."""
        rows = note_rows(catalog, [info.path for info in infos])
        min_name_len = self._config.min_name_len
        marks = {info.path: name_marks((rows.get(info.path) or NoteRows()).mentions, min_name_len) for info in infos}
        changed = build.count_names((build.parts[path].marks, note_marks) for path, note_marks in marks.items())
        if changed:
            # A phrase the vault now takes for a name (or no longer does): the other notes
            # that write it as a title or at a sentence's start name it anew.
            others = _writing_weakly(catalog, changed) - marks.keys()
            if len(infos) + len(others) > max(1.0, INCREMENTAL_SHARE * len(build.parts)):
                return False
            for path in sorted(others):
                info = catalog.note_info(path)
                if info is not None and path in build.parts:
                    infos.append(info)
                    marks[path] = build.parts[path].marks
            rows.update(note_rows(catalog, others))
        edges: set[tuple[int, int]] = set()
        names: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        spellings_before: dict[str, frozenset[str]] = {}
        links_changed = people_changed = False
        for info in infos:
            part = self._part(catalog, info, rows.get(info.path) or NoteRows(), build, build.parts, marks[info.path])
            old = build.parts[info.path]
            for key, _surface in (*old.surfaces, *part.surfaces):
                spellings_before.setdefault(key, frozenset(build.surfaces.get(key, ())))
            build.apply(info.path, old, -1, edges, names)
            build.parts[info.path] = part
            build.apply(info.path, part, 1, edges, names)
            me = f"note:{info.path}"
            pairs.update((me, other) for other in (*old.contexts, *part.contexts, *old.typed, *part.typed))
            links_changed = links_changed or old.link_dirs != part.link_dirs
            people_changed = people_changed or old.person != part.person
        # Searches hold the published lists and contexts: change copies.
        build.lists = build.lists.copy()
        build.settle(edges)
        if pairs:
            build.contexts = build.contexts.copy()
            build.named = dict(build.named)
            for a, b in pairs:
                build.set_context(a, b)
            build.contexts.settle()
        build.parts.pack()
        with self._lock:
            snapshot = self._snapshot
        vertices = list(snapshot.vertices) if snapshot else []
        vertices.extend(build.vertex_record(key) for key in build.keys[len(vertices) :])
        index = dict(snapshot.index) if snapshot else {}
        dictionary = snapshot.dictionary if snapshot else EntityDictionary([])
        for key in names:
            vertices[build.ids[key]] = build.vertex_record(key)
            if build.surfaces.get(key):
                index[key] = build.ids[key]
            else:
                index.pop(key, None)
                build.surfaces.pop(key, None)
        removed: list[tuple[str, str]] = []
        added: list[tuple[str, str]] = []
        for key, before in sorted(spellings_before.items()):
            after = frozenset(build.surfaces.get(key, ()))
            if after != before:
                removed.extend(key_entries(key, before))
                added.extend(key_entries(key, after))
        if removed or added:
            dictionary = dictionary.updated(added, removed)  # a new name: no full rebuild
        touched = {v for edge in edges for v in edge}
        tops = snapshot.cache.tops if snapshot else {}
        kept = {v: top for v, top in tuple(tops.items()) if v not in touched}
        searchable = store.searchable_of(build, vertices, index, dictionary)
        if snapshot is not None:
            cache = walk.after_edit(snapshot.cache, vertices, build.lists, build.graph)
        else:
            cache = walk.NeighborCache(build.graph(), vertices, build.lists)
        self._publish(cache, searchable, links=links_changed, people=people_changed, tops=kept)
        return True

    def _publish(
        self,
        cache: walk.NeighborCache,
        sums: store.Searchable,
        *,
        links: bool = True,
        people: bool = True,
        tops: dict[int, list[tuple[int, float, int]]] | None = None,
    ) -> None:
        """Swap in a built graph; the link and people sums are copied only if they changed."""
        cache.tops = tops or {}
        before = self._snapshot
        link_dirs = set(sums.link_dirs) if links or before is None else before.link_dirs
        linked = _linked_vertices(link_dirs) if links or before is None else before.linked
        snapshot = walk.Snapshot(
            cache=cache,
            index=sums.index,
            dictionary=sums.dictionary,
            link_dirs=link_dirs,
            contexts=sums.contexts,
            named=sums.named,
            linked=linked,
            people=frozenset(sums.people) if people or before is None else before.people,
        )
        with self._lock:
            self._snapshot = snapshot
            self._note_count = sums.note_count

    # -- searching ------------------------------------------------------------------
    def entity_matches(self, text: str) -> Sequence[EntityMatch]:
        """The vault's entities named in `text` (the query planner's recognizer)."""
        with self._lock:
            snapshot = self._snapshot
        if snapshot is None:
            return []
        return snapshot.dictionary.recognize(text, lexicon=self._lexicon)

    def recognize(self, text: str) -> list[tuple[str, tuple[str, ...]]]:
        """Entities named in `text`: (surface, entity keys)."""
        return [(m.surface, m.entity_ids) for m in self.entity_matches(text)]

    def search(self, query: QueryPlan, limit: int) -> ChannelAnswer:
        """Expand 1-2 hops from the entities the plan names; rank notes by decayed proximity."""
        with self._lock:
            snapshot = self._snapshot
        if snapshot is None or query.is_empty:
            return ChannelAnswer(hits=())
        # A filter: the walk reaches what it reaches; only the candidates are answers.
        return walk.search(
            snapshot, query, limit, self._config, self._relation_names, self._implied, allowed=query.candidates
        )

    def prepare(self) -> None:
        """Nothing to build ahead: the snapshot is made when the graph changes."""

    def relation(self, a: str, b: str) -> Relation | None:
        """The relation the vault names between the notes at paths `a` and `b`, subject first, if any."""
        with self._lock:
            snapshot = self._snapshot
        if snapshot is None:
            return None
        va, vb = snapshot.index.get(f"note:{a}"), snapshot.index.get(f"note:{b}")
        if va is None or vb is None:
            return None
        found = walk.path_relations(snapshot, (va, vb))
        return found[0] if found else None

    def view(self) -> GraphView | None:
        """The graph as it is now, for reading entities, walks and edges (None before it is built)."""
        with self._build_lock:
            build = self._writer_build()  # the notes' parts: read from the saved graph at the first need
        with self._lock:
            snapshot = self._snapshot
        if snapshot is None or build is None:
            return None
        return GraphView(snapshot, build.parts, self._config)

    def chunk_entities(self, chunks: Sequence[tuple[str, int]]) -> list[tuple[str, ...]]:
        """The entity keys each (note path, chunk ordinal) names or links, in written order."""
        with self._build_lock:
            build = self._writer_build()  # the notes' parts: read from the saved graph at the first need
            if build is None:
                return [() for _chunk in chunks]
            parts = build.parts
            paths = dict.fromkeys(path for path, _ordinal in chunks if path in parts)
            wanted = {path: parts[path].chunk_entities for path in paths}  # each note's part read once
            return [wanted[path].get(ordinal, ()) if path in wanted else () for path, ordinal in chunks]

    def neighbors(self, path: str, limit: int = 20) -> list[Neighbor]:
        """A note's strongest neighbors in the graph."""
        with self._lock:
            snapshot = self._snapshot
        return [] if snapshot is None else walk.neighbors(snapshot, path, limit, self._config)

    # -- lifecycle ------------------------------------------------------------------
    def sync(self, catalog: Catalog, *, lagging: bool, writable: bool) -> str:
        """Nothing to redo: `open` already loaded the saved graph only if it was current, else rebuilt it."""
        return ""

    def reload(self, catalog: Catalog) -> None:
        """Load the graph another process saved for the catalog as it is now (or rebuild it)."""
        self.open(catalog)

    def entity_count(self) -> int:
        """Vertices in the graph (a name no note mentions any more is not counted)."""
        with self._lock:
            return len(self._snapshot.index) if self._snapshot else 0

    def open(self, catalog: Catalog) -> str:
        """Load the saved graph if it reflects the catalog as it is now, else build it.

        Returns:
            Why a saved graph could not be used, when it was damaged ("" otherwise:
            a missing or out-of-date file is simply rebuilt).
        """
        with self._build_lock:
            problem = ""
            try:
                if self._load(catalog.generation):
                    return ""
            except Exception as exc:  # a damaged pickle raises assorted errors
                problem = f"saved graph unreadable ({type(exc).__name__}: {exc}); rebuilt from the catalog"
            self._rebuild(catalog)
            return problem

    def _load(self, generation: int) -> bool:
        """Publish the saved graph if its stamp matches; False when absent or stale."""
        if self._path is None:
            return False
        saved = store.load(self._path, self._stamp(generation))
        if saved is None:
            return False
        searchable, rest = saved
        import igraph

        self._build = None
        self._writer_part = (rest, searchable)
        self._snapshot = None
        graph = igraph.Graph(n=searchable.vertex_count, edges=searchable.lists.pairs(), directed=False)
        self._publish(walk.NeighborCache(graph, searchable.vertices, searchable.lists), searchable)
        self._generation = self._saved_generation = generation
        self._rebuilt = False
        self.origin = "saved"
        return True

    def _writer_build(self) -> Build | None:
        """The notes' parts and sums an edit patches: built here, or read now from the saved
        graph this one was opened from (None when there is neither: the caller rebuilds)."""
        if self._build is None and self._writer_part is not None:
            part, searchable = self._writer_part
            self._writer_part = None
            try:
                self._build = store.load_writer(part, searchable)
            except Exception as exc:  # a damaged pickle raises assorted errors; a rebuild follows
                log.warning("saved graph unreadable (%s: %s); rebuilding it from the catalog", type(exc).__name__, exc)
                self._build = None
        return self._build

    def prepare_for_edits(self) -> None:
        """Read the notes' parts and sums that the first edit patches, ahead of it."""
        with self._build_lock:
            self._writer_build()

    def _stamp(self, generation: int) -> dict[str, object]:
        return {
            "format": store.SAVED_FORMAT,
            "generation": generation,
            "config": repr(self._config),
            "language": self._lexicon.language,
            "words": self._lexicon.fingerprint,
        }

    def save(self, *, only_rebuilt: bool = False) -> None:
        """Write the graph next to the index (atomically) if it changed since it was written.

        Args:
            only_rebuilt: write only if the last change was a full rebuild; an
                incremental update is cheap to redo and is saved at close.
        """
        with self._build_lock:
            build = self._build
            if self._path is None or build is None or self._generation == self._saved_generation:
                return
            if only_rebuilt and not self._rebuilt:
                return
            with self._lock:
                snapshot = self._snapshot
            if snapshot is None:
                return
            store.save(self._path, self._stamp(self._generation), (build, snapshot.vertices, snapshot.index, snapshot.dictionary))
            self._saved_generation = self._generation

    def count(self) -> int:
        """Notes in the graph."""
        with self._lock:
            return self._note_count

    def close(self) -> None:
        """Drop the graph."""
        with self._lock:
            self._snapshot = None
            self._build = None
            self._writer_part = None


def _writing_weakly(catalog: Catalog, keys: Collection[str]) -> set[str]:
    """The notes that write any of these name keys, or a phrase holding one, other than inside
    running text (in a heading, a title, at a sentence's start): one pass over the mentions."""
    padded = [f" {key} " for key in keys]
    # Each distinct surface is folded once (a vault writes the same phrase in many notes).
    surfaces = [s for s in catalog.surfaces_not_written() if any(key in f" {entity_key(s)} " for key in padded)]
    return catalog.writing_not_written(surfaces) if surfaces else set()


def relation_names(lexicon: Lexicon) -> dict[str, frozenset[str]]:
    """The lexicon's named relations with the word keys a query asking for each would hold ("atten")."""
    out: dict[str, frozenset[str]] = {}
    for relation in lexicon.relations:
        words = [w.casefold() for phrase in (relation.name, *relation.active, *relation.subject_roles) for w in QUERY_WORD.findall(phrase)]
        out[relation.name] = frozenset(relation_keys(words, lexicon))
    return out


def open_channel(context: ChannelContext) -> tuple[GraphChannel, str]:
    """The graph channel: the saved graph next to the index if it reflects the catalog, else built from it."""
    channel = GraphChannel(context.config.graph, context.index_dir / "graph.pickle", context.lexicon)
    return channel, channel.open(context.catalog)


def _linked_vertices(link_dirs: Collection[int]) -> frozenset[int]:
    """Every vertex on either side of a written link (`link_code`s), decoded in numpy: a
    Python loop over the 48,000 links of a 10k-note vault took a tenth of the graph's load."""
    codes = np.fromiter(link_dirs, dtype=np.int64, count=len(link_dirs))
    # Not np.union1d: its np.unique imports numpy.ma, 17 ms of a cold start.
    return frozenset(np.concatenate((codes >> 32, codes & 0xFFFFFFFF)).tolist())
