"""Full and incremental (re)indexing: catalog first, then full text and graph, then embeddings."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import multiprocessing
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engine.backlog import EmbedOrder, EmbedRate, Preferred, eta_seconds
from engine.catalog import Catalog, embedding_text
from engine.channels.base import Channel, VectorIndex
from engine.chunking import CHUNKER_VERSION, chunk_note
from engine.config import EngineConfig
from engine.embedder import Embedder, Vectors, parallel_batches_of
from engine.entities import TITLED, extract_capitalized_words, in_other_language, read_names
from engine.folding import entity_key
from engine.lexicon import lexicon_for
from engine.notes import remove_stale_temps
from engine.records import Chunk, NoteInfo, ParsedNote, Progress, ReindexReport, SkippedFile
from engine.vault import (
    LinkResolver,
    NoteUnreadable,
    VaultFile,
    look_up_note,
    parse_note,
    read_note,
    scan_vault,
)
from engine.vault.parse import PARSE_VERSION

log = logging.getLogger("cairn.indexer")

ProgressFn = Callable[[Progress], None]
_CATALOG_BATCH = 400
_EMBED_COMMIT_EVERY = 64
# Below this many notes to parse, worker start-up (~1 s to import the parser) costs more than it saves.
_PARALLEL_PARSE_MIN = 1500
_PARSE_MAX_WORKERS = 4
_PARSE_CHUNKSIZE = 64
# Up to this many changed notes, check one by one whether titles or aliases changed.
_SMALL_UPDATE = 50
# Note facts (properties, tasks, date) for query filters; a new version re-reads every note.
FACTS_VERSION = 1
_MAX_TASKS = 500
_TASK_CHARS = 300
# The catalog meta key of the measured embedding rate.
_RATE_KEY = "embed_rate"
# The backlog waits between batches until no search was typed for this long (at most _TYPING_MAX_WAIT_S).
_TYPING_QUIET_S = 0.4
_TYPING_MAX_WAIT_S = 5.0

# (path, mtime, size, text, sha, read warnings) of a note read but not parsed yet.
_Unparsed = tuple[str, float, int, str, str, tuple[str, ...]]


@dataclass
class _Pending:
    """A note read and parsed, waiting to be written to the catalog."""

    info: NoteInfo
    body: str
    body_line_offset: int
    chunks: list[tuple[Chunk, str]]
    links: tuple[object, ...]
    mentions: list[tuple[int, str, int]]  # chunk ordinal, name as written, evidence
    facts: str = "{}"


@dataclass
class _Work:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    warnings: list[SkippedFile] = field(default_factory=list)


class Indexer:
    """Brings the catalog and the three channels in step with the files on disk."""

    def __init__(
        self,
        vault: Path,
        catalog: Catalog,
        *,
        fulltext: Channel,
        graph: Channel,
        vectors: VectorIndex,
        embedder: Embedder | None,
        config: EngineConfig,
        on_catalog_change: Callable[[], None] = lambda: None,
        on_notes_change: Callable[[], None] = lambda: None,
    ) -> None:
        self._vault = vault
        self._catalog = catalog
        self._fulltext = fulltext
        self._graph = graph
        self._vectors = vectors
        self._embedder = embedder
        self._config = config
        self._on_catalog_change = on_catalog_change  # names (paths, titles, aliases) changed
        self._on_notes_change = on_notes_change  # notes changed, their names the same
        self._stop = threading.Event()
        self._resolver: LinkResolver | None = None
        self._resolver_generation = -1  # the catalog generation the cached resolver saw last
        # The backlog being embedded now (None when idle), its pace per model, the notes
        # the user opened (embedded first) and when a search was last typed.
        self.embedding: EmbedOrder | None = None
        self._rates: dict[str, EmbedRate] = {}
        self._preferred = Preferred()
        self._typing_at = 0.0

    def request_stop(self) -> None:
        """Ask a running embedding phase to stop after its current batch."""
        self._stop.set()

    def reindex(
        self,
        paths: Iterable[str] | None = None,
        *,
        full: bool = False,
        progress: ProgressFn | None = None,
        embed: bool = True,
    ) -> ReindexReport:
        """Index what changed (by content hash); `paths` limits the work to those files."""
        self._stop.clear()
        report = progress or (lambda _p: None)
        timings: dict[str, float] = {}
        work = _Work()

        started = time.perf_counter()
        report(Progress("scan", 0, 0))
        files, attachments, scan_skipped, candidates = self._files(paths)
        work.skipped.extend(scan_skipped)
        report(Progress("scan", len(files), len(files)))  # every phase ends at its total
        timings["scan"] = _since(started)

        started = time.perf_counter()
        # A save's reindex reads its own notes' states, not every note's (50k rows at 50k notes).
        known = self._catalog.file_states(None if paths is None else candidates)
        layout = _chunk_layout(self._config)
        if paths is None and known and not full and self._catalog.get_meta("chunking") != layout:
            # The notes were cut into chunks with other settings (or by an older version):
            # cut every note again. Texts that come out the same keep their embeddings.
            log.info("chunking changed to %s (version, words/overlap): every note is re-chunked", layout)
            full = True
        if paths is None and known and not full and self._catalog.get_meta("parsing") != str(PARSE_VERSION):
            # The parser now yields more (links' properties): every note is parsed again.
            log.info("parsing changed to version %s: every note is parsed again", PARSE_VERSION)
            full = True
        to_prepare: list[_Unparsed] = []
        touched: list[tuple[str, float, int]] = []
        seen: set[str] = set()
        report(Progress("read", 0, len(files)))
        for done, vf in enumerate(files, start=1):
            if done % 500 == 0 or done == len(files):
                report(Progress("read", done, len(files), vf.path))
            seen.add(vf.path)
            state = known.get(vf.path)
            if state and not full and state.mtime == vf.mtime and state.size == vf.size:
                work.unchanged += 1
                continue
            try:
                text, read_warnings = read_note(vf.abs_path, self._config.max_file_bytes)
            except NoteUnreadable as exc:
                work.skipped.append(SkippedFile(vf.path, exc.reason))
                continue
            sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            if state and state.sha == sha and not full:
                touched.append((vf.path, vf.mtime, vf.size))
                work.unchanged += 1
                continue
            to_prepare.append((vf.path, vf.mtime, vf.size, text, sha, read_warnings))
            (work.updated if state else work.added).append(vf.path)
        pending = self._prepare_all(to_prepare, report)
        for item in pending:
            work.warnings.extend(SkippedFile(item.info.path, w) for w in item.info.warnings)
        gone = [p for p in candidates if p in known and p not in seen]
        work.removed.extend(gone)
        timings["parse"] = _since(started)

        started = time.perf_counter()
        report(Progress("catalog", 0, len(pending) + len(gone)))
        if self._catalog.generation != self._resolver_generation:
            self._resolver = None  # another process wrote the catalog since
        names_changed = self._names_changed(pending, gone, known, rescanned=attachments is not None)
        self._write_catalog(pending, touched, gone, work, replace_skipped=paths is None)
        if attachments is not None:
            self._catalog.set_meta("attachments", json.dumps(attachments))
        if paths is None:
            self._catalog.set_meta("chunking", layout)
            self._catalog.set_meta("parsing", str(PARSE_VERSION))
        changed_paths = [p.info.path for p in pending]
        if changed_paths or gone:
            self._resolve_links(changed_paths, titles_changed=names_changed)
            if names_changed:
                self._on_catalog_change()
            else:
                self._on_notes_change()
        self._resolver_generation = self._catalog.generation
        report(Progress("catalog", len(pending) + len(gone), len(pending) + len(gone)))
        timings["catalog"] = _since(started)

        # The count each phase shows is the notes it goes through: all of them when it
        # rebuilds, the changed and removed ones when it updates.
        changed_count = len(changed_paths) + len(gone)

        def all_notes() -> int:
            return len(seen) if paths is None else int(self._catalog.counts()["notes"])

        started = time.perf_counter()
        rebuild = full or bool(changed_paths and self._fulltext.count() == 0)
        fulltext_total = all_notes() if rebuild else changed_count
        report(Progress("fulltext", 0, fulltext_total))
        if rebuild:
            self._fulltext.rebuild(self._catalog)  # a first build: add, never update
        elif changed_paths or gone:
            self._fulltext.update(self._catalog, changed_paths, gone)
        report(Progress("fulltext", fulltext_total, fulltext_total))
        timings["fulltext"] = _since(started)

        started = time.perf_counter()
        rebuild = full or bool((changed_paths or gone) and names_changed)
        graph_total = all_notes() if rebuild else changed_count
        report(Progress("graph", 0, graph_total))
        if rebuild:
            # Links in untouched notes may now resolve elsewhere: only a rebuild sees that.
            self._graph.rebuild(self._catalog)
        elif changed_paths or gone:
            self._graph.update(self._catalog, changed_paths, gone)
        report(Progress("graph", graph_total, graph_total))
        timings["graph"] = _since(started)

        embedded = 0
        if embed and self._embedder is not None:
            started = time.perf_counter()
            # A watcher's small update embeds only its own notes; the backlog is embed_pending's.
            embedded = self.embed_pending(report, paths=None if paths is None else changed_paths, edit=paths is not None)
            timings["embed"] = _since(started)
        started = time.perf_counter()
        if paths is None or changed_paths or gone:  # a save that changed nothing has no vectors to move
            report(Progress("vectors", 0, changed_count))
            self._vectors.update(self._catalog, changed_paths, gone)
            self._vectors.save()
            report(Progress("vectors", changed_count, changed_count))
        timings["vectors"] = _since(started)

        return ReindexReport(
            added=tuple(work.added),
            updated=tuple(work.updated),
            removed=tuple(work.removed),
            unchanged=work.unchanged,
            skipped=tuple(sorted(work.skipped, key=lambda s: s.path)),
            warnings=tuple(work.warnings),
            embedded_chunks=embedded,
            timings=timings,
        )

    # -- phases -------------------------------------------------------------------
    def _files(
        self, paths: Iterable[str] | None
    ) -> tuple[list[VaultFile], list[str] | None, list[SkippedFile], Collection[str]]:
        """Files to look at, attachments (None if not rescanned), skipped, and removal candidates."""
        if paths is None:
            scan = scan_vault(self._vault, self._config.excludes)
            if scan.leftovers:
                remove_stale_temps(scan.leftovers)
            known = self._catalog.file_states()
            return list(scan.notes), list(scan.attachments), list(scan.skipped), known.keys()
        files: list[VaultFile] = []
        skipped: list[SkippedFile] = []
        wanted = sorted(set(paths))
        for rel in wanted:
            found = look_up_note(self._vault, rel, self._config.excludes)
            if isinstance(found, VaultFile):
                files.append(found)
            elif found is not None:
                skipped.append(found)
        return files, None, skipped, wanted

    def _prepare_all(self, items: list[_Unparsed], report: ProgressFn) -> list[_Pending]:
        """Parse, chunk and extract names; big batches use every core (parsing is pure Python)."""
        chunking = self._config.chunking
        total = len(items)
        out: list[_Pending] = []
        workers = min(os.cpu_count() or 1, _PARSE_MAX_WORKERS)
        if total < _PARALLEL_PARSE_MIN or workers < 2:
            language = self._config.language
            results: Iterable[_Pending] = (
                _prepare(item, chunking.max_words, chunking.overlap_words, language) for item in items
            )
            pool = None
        else:
            # spawn, not fork: the engine may be running threads (searches, embedding).
            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            results = pool.map(
                functools.partial(
                    _prepare,
                    max_words=chunking.max_words,
                    overlap_words=chunking.overlap_words,
                    language=self._config.language,
                ),
                items,
                chunksize=_PARSE_CHUNKSIZE,
            )
        try:
            for done, pending in enumerate(results, start=1):
                out.append(pending)
                if done % 200 == 0 or done == total:
                    report(Progress("parse", done, total, pending.info.path))
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        return out

    def _write_catalog(
        self,
        pending: list[_Pending],
        touched: list[tuple[str, float, int]],
        gone: list[str],
        work: _Work,
        *,
        replace_skipped: bool,
    ) -> None:
        """Write in batches: a kill loses at most one batch, which the next run redoes."""
        catalog = self._catalog
        for start in range(0, max(len(pending), 1), _CATALOG_BATCH):
            batch = pending[start : start + _CATALOG_BATCH]
            with catalog.transaction() as conn:
                for item in batch:
                    catalog.upsert_note(
                        conn,
                        info=item.info,
                        body=item.body,
                        body_line_offset=item.body_line_offset,
                        chunks=item.chunks,
                        links=item.links,  # type: ignore[arg-type]
                        mentions=item.mentions,
                        facts=item.facts,
                    )
                if start == 0:
                    for path, mtime, size in touched:
                        catalog.touch_note(conn, path, mtime, size)
                    catalog.delete_notes(conn, gone)
                    if replace_skipped:
                        catalog.replace_skipped(conn, work.skipped)
                if batch or (start == 0 and gone):
                    catalog.bump_generation(conn)  # the notes' content changed: derived indexes lag

    def _names_changed(
        self, pending: list[_Pending], gone: list[str], known: Collection[str], *, rescanned: bool
    ) -> bool:
        """Whether paths, titles or aliases changed, i.e. other notes' links may resolve differently."""
        if rescanned or gone or len(pending) > _SMALL_UPDATE:
            return True
        for item in pending:
            if item.info.path not in known:
                return True
            before = self._catalog.note_info(item.info.path)
            if before is None or (before.title, before.aliases) != (item.info.title, item.info.aliases):
                return True
        return False

    def _resolve_links(self, changed: list[str], *, titles_changed: bool) -> None:
        """Resolve link targets Obsidian-style; only rows whose answer changed are written.

        When no path, title or alias changed, only the changed notes' (freshly inserted,
        unresolved) links need resolving, with the resolver kept from last time.
        """
        resolver = self._resolver
        if titles_changed or resolver is None:
            resolver = self._resolver = self._new_resolver()
        rows = self._catalog.link_targets(None if titles_changed else changed)
        current = self._catalog.link_resolutions() if titles_changed else {}
        updates: list[tuple[str | None, int]] = []
        for rowid, source, target in rows:
            resolved = resolver.resolve(target, source)
            if current.get(rowid) != resolved:
                updates.append((resolved, rowid))
        if updates:
            with self._catalog.transaction() as conn:
                self._catalog.set_resolutions(conn, updates)

    def prepare_for_edits(self) -> None:
        """Build now what the first save would otherwise build on its own time: the link
        resolver from every note's names (0.8 s at 50k notes), the graph's writable parts
        (0.4 s) and the parser, whose first note imports markdown-it and PyYAML (0.1 s).
        The caller holds the writer's turn. A resolver built here is dropped by the next
        reindex as usual if another process writes the catalog first."""
        generation = self._catalog.generation
        if self._resolver is None or self._resolver_generation != generation:
            self._resolver = self._new_resolver()
            self._resolver_generation = generation
        prepare_graph = getattr(self._graph, "prepare_for_edits", None)  # a graph that keeps parts
        if callable(prepare_graph):
            prepare_graph()
        parse_note("prepared.md", "---\ntags: [x]\n---\n# Prepared\n\nA [[link]].\n")

    def _new_resolver(self) -> LinkResolver:
        """A link resolver over every note's names and the vault's attachments, as the catalog has them."""
        attachments = json.loads(self._catalog.get_meta("attachments") or "[]")
        return LinkResolver(self._catalog.note_names(), attachments)

    def resolve_all_links(self) -> None:
        """Resolve every link in the catalog again (after a run stopped between writing notes and resolving them)."""
        self._resolver = None
        self._resolve_links([], titles_changed=True)
        self._resolver_generation = self._catalog.generation

    def embed_pending(
        self,
        report: ProgressFn,
        paths: Collection[str] | None = None,
        should_yield: Callable[[], bool] | None = None,
        *,
        edit: bool = False,
    ) -> int:
        """Embed every chunk text without a cached vector: notes the user opened first, then
        the most recently changed notes, then the rest (engine/backlog.py).

        Vectors go to the catalog cache in small transactions and into the live
        vector index as they come, so search improves while this runs and a kill
        keeps what was done. `paths` limits the work to those notes' chunks. An embedder
        that runs several batches at once (`parallel_batches`: one per core, each on one
        thread) is kept that many batches busy; their vectors are stored in the order the
        batches were taken.
        """
        embedder = self._embedder
        if embedder is None:
            return 0
        if paths is not None and not paths:
            return 0
        backlog = self._catalog.embedding_backlog(embedder.model_id, paths)
        if not backlog:
            return 0
        runs = parallel_batches_of(embedder)
        # A backlog smaller than a batch per core (an edit's few chunks) is split among the
        # cores: one batch would run on one thread while the others wait.
        batch_size = min(self._config.vectors.batch_size, max(1, -(-len(backlog) // runs)))
        order = EmbedOrder(backlog, batch_size)
        rate = self._embed_rate(embedder.model_id)
        buffer: list[tuple[str, npt.NDArray[np.float32]]] = []
        done = 0
        seen_preferred = -1

        def flush() -> None:
            if not buffer:
                return
            self._catalog.store_embeddings(embedder.model_id, buffer)
            sha_set = {sha for sha, _ in buffer}
            vectors = dict(buffer)
            ids = self._catalog.chunk_ids_for_shas(sha_set)
            self._vectors.add_vectors(((cid, vectors[sha]) for cid, sha in ids), recent=edit)
            buffer.clear()

        self._vectors.refresh_owners(self._catalog, paths)
        self.embedding = order
        report(Progress("embed", 0, len(backlog), eta_s=eta_seconds(order.remaining_chars, rate.chars_per_s), order="newest"))
        pool = ThreadPoolExecutor(max_workers=runs, thread_name_prefix="cairn-embed") if runs > 1 else None
        running: deque[tuple[list[int], Future[Vectors]]] = deque()
        last = time.perf_counter()
        paused = 0.0  # time left to a search being typed since the last batch finished

        def take() -> bool:
            """Start the next batch (on the pool, or here when there is none); False when none is left."""
            nonlocal seen_preferred, paused
            seen_preferred, opened = self._preferred.since(seen_preferred)
            order.prefer(opened)
            if not edit:
                waited = time.perf_counter()
                self._wait_while_typing()
                paused += time.perf_counter() - waited
            batch = order.next_batch()
            if not batch:
                return False
            texts = [backlog[i].text for i in batch]
            future: Future[Vectors]
            if pool is None:
                future = Future()
                future.set_result(embedder.embed(texts))
            else:
                future = pool.submit(embedder.embed, texts)
            running.append((batch, future))
            return True

        try:
            more = True
            while True:
                while more and len(running) < runs and not (
                    self._stop.is_set() or (should_yield is not None and should_yield())
                ):
                    more = take()
                if not running:
                    break
                batch, future = running.popleft()
                rows = future.result()
                buffer.extend((backlog[i].sha, row) for i, row in zip(batch, rows, strict=True))
                if len(buffer) >= _EMBED_COMMIT_EVERY:
                    flush()
                now = time.perf_counter()
                # Wall time between finished batches, pauses for typing left out: the rate
                # the backlog drains at while it runs.
                rate.add(sum(len(backlog[i].text) for i in batch), max(0.0, now - last - paused))
                last, paused = now, 0.0
                done += len(batch)
                eta = eta_seconds(order.remaining_chars, rate.chars_per_s)
                report(Progress("embed", done, len(backlog), eta_s=eta, order=order.place.order))
                if self._stop.is_set() or (should_yield is not None and should_yield()):
                    more = False  # finish what is running, start nothing new
            flush()
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            self.embedding = None
            self._store_rate(embedder.model_id, rate)
        return done

    # -- the embedding backlog's order and pace ----------------------------------------
    def prefer(self, path: str) -> None:
        """The user opened `path`: embed its chunks before the rest of the backlog."""
        self._preferred.add(path)

    def note_typing(self) -> None:
        """Someone is typing a search: the backlog waits for a pause between its batches."""
        self._typing_at = time.monotonic()

    def embed_rate(self, model_id: str) -> float | None:
        """Characters per second this machine embeds at (this run's, or the last one's)."""
        return self._embed_rate(model_id).chars_per_s

    def _embed_rate(self, model_id: str) -> EmbedRate:
        rate = self._rates.get(model_id)
        if rate is None:
            rate = self._rates[model_id] = EmbedRate(_stored_rate(self._catalog.get_meta(_RATE_KEY), model_id))
        return rate

    def _store_rate(self, model_id: str, rate: EmbedRate) -> None:
        """Remember the rate for the ETA of later runs and of other processes (`engine status`)."""
        measured = rate.chars_per_s
        if not measured:
            return
        try:
            self._catalog.set_meta(_RATE_KEY, json.dumps({"model": model_id, "chars_per_s": round(measured, 1)}))
        except (OSError, sqlite3.Error) as exc:
            log.debug("could not store the embedding rate: %s", exc)

    def _wait_while_typing(self) -> None:
        """Leave the cores to a search being typed: a keystroke costs milliseconds, a batch
        of embeddings a tenth of a second of both cores. Never waits longer than a few seconds."""
        deadline = time.monotonic() + _TYPING_MAX_WAIT_S
        while not self._stop.is_set():
            now = time.monotonic()
            if now - self._typing_at >= _TYPING_QUIET_S or now >= deadline:
                return
            time.sleep(_TYPING_QUIET_S / 4)


def _prepare(item: _Unparsed, max_words: int, overlap_words: int, language: str = "en") -> _Pending:
    """One note read from disk → catalog rows (a module function so worker processes can run it)."""
    path, mtime, size, text, sha, read_warnings = item
    lexicon = lexicon_for(language)
    note = parse_note(path, text)
    chunks = chunk_note(note, max_words, overlap_words)
    mentions: list[tuple[int, str, int]] = []
    foreign = in_other_language(note.body, lexicon)  # for a paragraph too short to say its language
    for chunk in chunks:
        names = read_names(chunk.text, lexicon, foreign=foreign)
        mentions.extend((chunk.ordinal, name, evidence) for name, evidence in names)
        # Single capitalised words become edges only where they are a note's title (graph).
        named = {entity_key(name) for name, _evidence in names}
        mentions.extend(
            (chunk.ordinal, word, TITLED)
            for word in extract_capitalized_words(chunk.text, lexicon)
            if word.casefold() not in named
        )
    info = NoteInfo(
        path=path,
        title=note.title,
        aliases=note.aliases,
        tags=note.tags,
        mtime=mtime,
        size=size,
        sha=sha,
        headings=note.headings,
        warnings=(*read_warnings, *note.warnings),
    )
    return _Pending(
        info=info,
        body=note.body,
        body_line_offset=note.body_line_offset,
        # The cache key is the text the model sees (title and headings included), so a
        # retitled note is re-embedded and an unchanged one never is.
        chunks=[(c, _text_sha(embedding_text(note.title, c.heading_path, c.text))) for c in chunks],
        links=note.links,
        mentions=mentions,
        facts=note_facts_json(note),
    )


def note_facts_json(note: ParsedNote) -> str:
    """What query filters read of a note beyond its tags: properties, tasks and its date, as JSON."""
    properties: dict[str, list[str]] = {}
    for key, value in note.frontmatter:
        properties.setdefault(key.casefold(), []).append(value)
    return json.dumps(
        {
            "props": properties,
            "tasks": [[int(task.done), task.text[:_TASK_CHARS]] for task in note.tasks[:_MAX_TASKS]],
            "date": note.date,
        },
        ensure_ascii=False,
    )


def _stored_rate(stored: str | None, model_id: str) -> float | None:
    """The embedding rate an earlier run stored for this model (None if none or another model's)."""
    if not stored:
        return None
    try:
        value = json.loads(stored)
        if value.get("model") == model_id and float(value["chars_per_s"]) > 0:
            return float(value["chars_per_s"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def _chunk_layout(config: EngineConfig) -> str:
    """How the catalog's chunks were cut (chunker version and settings), as stored in its meta table."""
    # The facts version is part of it: a note parsed before facts were kept has none yet.
    return f"v{CHUNKER_VERSION} {config.chunking.max_words}/{config.chunking.overlap_words} facts{FACTS_VERSION}"


def _text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)
