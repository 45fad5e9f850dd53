"""The Engine façade: the only thing front ends call."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import gc
import json
import logging
import math
import os
import posixpath
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from engine import context as context_module
from engine import notes, unnamed
from engine.backlog import eta_seconds
from engine.channels.graph.view import EntityInfo
from engine.config import GRAPH_SEEDINGS, MAX_GRAPH_WEIGHT, EngineConfig
from engine.context import DEFAULT_DEPTH, DEFAULT_MAX_TOKENS
from engine.embedder import Embedder
from engine.embedders import load_embedder
from engine.entities import normalize
from engine.errors import (
    CairnError,
    ConfigError,
    IndexClosed,
    IndexLocked,
    ModelUnavailable,
    NoteExists,
    NoteNotFound,
    NoteNotSaved,
    SaveConflict,
    UnsafePath,
    VaultNotFound,
)
from engine.indexer import Indexer, ProgressFn
from engine.indexes import Indexes
from engine.lexicon import lexicon_for
from engine.localgraph import local_graph
from engine.names import brief
from engine.pickers import choose_notes
from engine.query import QueryPlan
from engine.records import (
    Backlink,
    Canvas,
    ChannelName,
    ChannelStatus,
    ContextBundle,
    EmbeddingBacklog,
    GraphSeeding,
    Heading,
    IndexStatus,
    LinkCompletion,
    LinkedNote,
    LinkingNote,
    LinkUpdate,
    LocalGraph,
    Neighbor,
    NoteChoice,
    NoteSection,
    NoteText,
    NoteView,
    ReindexReport,
    RenameResult,
    SaveResult,
    SearchResults,
    SkippedFile,
    TagCount,
    TextFormat,
    VaultEntry,
    WhyReport,
)
from engine.search import Searcher, channel_depth
from engine.search.ranking import STAGE_NAMES
from engine.search.why import explain_rank
from engine.serve import AnswerServer
from engine.storage import (
    WriterLock,
    check_index_dir,
    describe_holder,
    dir_size,
    index_writes,
    resolve_index_dir,
)
from engine.usage import ChannelUsage
from engine.vault import (
    DecodedNote,
    LinkResolver,
    NoteUnreadable,
    complete,
    decode_note,
    scan_vault,
)
from engine.vault.files import file_kind, is_icon, obsidian_uri, read_canvas
from engine.vault.links import blank_links
from engine.vault.parse import describing_property, parse_note
from engine.vault.plain import plain_text
from engine.vault.sections import note_section
from engine.watch import (
    DEFAULT_DEBOUNCE_MS,
    DEFAULT_STEP_MS,
    BatchFn,
    VaultWatcher,
    pending_changes,
    run_watch,
)

__all__ = ["Embedder", "Engine", "Watcher"]

log = logging.getLogger("cairn.engine")

Watcher = VaultWatcher
"""What `Engine.watcher` hands out: `start()`, `stop()`, `running`, `error`."""

_USE_DEFAULT = object()
_FULLTEXT_ONLY: tuple[ChannelName, ...] = ("fulltext",)
_REFRESH_EVERY_S = 1.0
# Longer titles and aliases are not looked for as unlinked mentions.
_MAX_MENTION_CHARS = 200
# A backlink shows its line, and a longer line this much of it around the link.
_CONTEXT_CHARS = 300


def _line_context(line: str, near: str) -> str:
    """A note line as a backlink shows it: stripped, and cut around `near` when it is long.

    A line of thousands of links would otherwise be copied whole into every backlink
    it holds, and shown whole in each of them.
    """
    line = line.strip()
    if len(line) <= _CONTEXT_CHARS:
        return line
    at = max(0, line.find(near))
    start = max(0, min(at - _CONTEXT_CHARS // 3, len(line) - _CONTEXT_CHARS))
    end = start + _CONTEXT_CHARS
    return ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")


class Engine:
    """Opens (or creates) a vault's index; searches, reindexes and reads notes.

    Thread-safe for concurrent `search` calls; one reindex at a time.
    """

    def __init__(
        self,
        vault: Path,
        index_dir: Path,
        config: EngineConfig,
        embedder: Embedder | None,
        model_problem: str,
    ) -> None:
        self.vault = vault
        self.index_dir = index_dir
        self.config = config
        self.repairs: list[str] = []
        self._lexicon = lexicon_for(config.language)
        self._embedder = embedder
        self._model_problem = model_problem
        self._reindex_lock = threading.Lock()
        self._turn = threading.Condition()
        self._waiting_writers = 0
        self._prepare_tables = False  # set by prepare_for_typing: rebuild them after each change
        # One background pass at a time; changes made during it ask for one more pass
        # (saves in a row each started a pass, all of them beside the keystrokes).
        self._prepare_state = threading.Lock()
        self._preparing = False
        self._prepare_thread: threading.Thread | None = None
        # The vault's names read for completion and link resolution, with the catalog state they are of.
        self._names: tuple[tuple[int, str], complete.Names] | None = None
        self._resolver: tuple[complete.Names, LinkResolver] | None = None
        self._prepare_again = False
        # Set when a reindex stopped half-way (a full disk): the catalog may hold notes
        # that the derived indexes and the link table do not reflect yet.
        self._derived_lag = False
        self._rescan_due = False  # set when the index was recreated under this process
        self._closed = False
        self._lock = WriterLock(index_dir / "writer.lock")
        self._answers: AnswerServer | None = None
        self._usage = ChannelUsage(index_dir) if config.search.count_channels else None
        with index_writes():  # `open` builds an engine inside _long_lived_heap
            self._open_all()
        if self._catalog_replaced and self._can_repair:
            # The notes are still on disk: rebuild the lexical index now; embedding
            # comes with the next reindex (cached vectors were salvaged where possible).
            self.reindex(embed=False)

    def _open_all(self, *, keep_writer: bool = False) -> None:
        """Open the index's parts, check that they are this vault's, and build the search on them.

        Repairs write to the index, so only a process that can take the writer lock makes
        them; while another process writes, this one just reads. `keep_writer`: stay the
        writer afterwards (a watcher that held the index before it was reopened).

        Raises:
            ConfigError: the index was built for another vault.
        """
        self._can_repair = self._lock.try_acquire()
        try:
            if self._can_repair:
                notes.remove_stale_temps(notes.stale_temps_in(self._temp_dir))
            self._open_indexes()
            try:
                self._indexes.claim(self.vault)
            except ConfigError:
                self._indexes.close()
                raise
            self._start(self.vault, self.config, self._embedder)
        finally:
            if self._can_repair and not keep_writer:
                self._lock.release()
        self._identity = self._index_identity()

    def _index_identity(self) -> tuple[int, int] | None:
        """Which catalog file the index's name holds now (device, inode), None when there is none."""
        try:
            found = (self.index_dir / "catalog.sqlite").stat()
        except OSError:
            return None
        return (found.st_dev, found.st_ino)

    def _reopen_if_replaced(self, *, recreate: bool) -> bool:
        """Open the index again when its folder or catalog is no longer the one this process opened.

        The index folder deleted (or moved, or rebuilt by another process) under a running
        process leaves it holding files nobody else sees: its writes would go nowhere and
        another process could take the writer lock on a new file beside it. `recreate`: a
        writer's turn, which recreates a removed index (the next reindex fills it from the
        vault); a reader only follows a catalog another process put in its place.
        """
        now = self._index_identity()
        if now == self._identity or (now is None and not recreate):
            return False
        held = self._lock.held_here
        old_indexes, old_searcher, old_catalog = self._indexes, self._searcher, self._catalog
        self._stop_preparing()
        self._lock.release()  # the lock on a file no other process can open any more
        log.warning("the index at %s was removed or replaced while open; opening it again", self.index_dir)
        # A file or a foreign folder put where the index was is refused as at open (ConfigError).
        check_index_dir(self.vault, self.index_dir, self.config.excludes)
        with index_writes():
            self.index_dir.mkdir(parents=True, exist_ok=True)
            self._lock = WriterLock(self.index_dir / "writer.lock")
            self._open_all(keep_writer=held)
        removed = now is None
        if removed and self._can_repair:
            # Embedding is the slow part: the vectors cached in the catalog this process
            # still holds open come across, so rebuilding re-embeds nothing.
            for model_id, rows in old_catalog.cached_embeddings():
                self._catalog.store_embeddings(model_id, rows)
        old_searcher.close()
        old_indexes.close()
        if removed:
            self.repairs.append("the index folder was removed while in use; rebuilt from the notes")
        self._rescan_due = self._rescan_due or removed
        return True

    def index_replaced(self) -> bool:
        """Whether the index folder or its catalog is no longer the one this process opened
        (deleted, or rebuilt by another process); the next reindex opens it again."""
        return self._index_identity() != self._identity

    def _start(self, vault: Path, config: EngineConfig, embedder: Embedder | None) -> None:
        self._searcher = Searcher(
            self._catalog,
            self._indexes.channels,
            config,
            stem=self._fulltext.analyze,
            term_weights=self._fulltext.term_weights,
            recognize=self._graph.entity_matches,
            notes_with=self._fulltext.notes_with,
            correct=self._fulltext.corrections if config.fulltext.typo_correction else None,
            finish=self._fulltext.word_being_typed,
            lexicon=self._lexicon,
            chunk_entities=self._graph.chunk_entities,
            fuzzy=self._fulltext.fuzzy_search,
            relation=self._graph.relation,
            embedded_chunks=lambda: self._vectors.chunk_count(),
        )
        self._indexer = Indexer(
            vault,
            self._catalog,
            fulltext=self._fulltext,
            graph=self._graph,
            vectors=self._vectors,
            embedder=embedder,
            config=config,
            on_catalog_change=self._catalog_changed,
            on_notes_change=self._notes_changed,
        )
        self._seen_state = self._indexes.state()
        self._last_refresh_check = time.monotonic()

    def prepare_for_typing(self, *, wait: bool = False) -> None:
        """Build, in the background, the tables that the first keystrokes would otherwise
        build (the facts that filters read, the flat scan's titles: ~0.3 s at 10k notes),
        and each note's runs of four characters, which spare a quoted phrase reading the
        notes that cannot say it (~0.45 s more at 10k), now and again after every change
        of the catalog. For front ends that stay open; a one-shot search does not need
        it. `wait` builds them before returning."""
        self._prepare_tables = True
        prepare_queries = getattr(self._embedder, "prepare_queries", None)
        if callable(prepare_queries):
            prepare_queries()  # the model's query session, in the background
        if wait:
            self._searcher.prepare()
            self._prepare_names()
        else:
            self._prepare_in_background()

    def prepare_for_edits(self) -> None:
        """Build now what the first save would otherwise build (the link resolver, the
        graph's writable parts, the parser: 1.2 s of the first save at 50k notes). For the
        index's writer when it stays open; the watcher calls it when it becomes the writer."""
        with self._writer_turn():
            try:
                self._indexer.prepare_for_edits()
            except Exception:  # the save builds them itself; this is only ahead of time
                log.debug("preparing for edits failed", exc_info=True)

    def _catalog_changed(self) -> None:
        self._searcher.refresh_titles()
        if self._prepare_tables:
            self._prepare_in_background()

    def _notes_changed(self) -> None:
        self._searcher.refresh_facts()
        if self._prepare_tables:
            self._prepare_in_background()

    def _prepare_in_background(self) -> None:
        with self._prepare_state:
            if self._closed:
                return
            if self._preparing:
                self._prepare_again = True
                return
            self._preparing = True
            self._prepare_thread = threading.Thread(target=self._prepare_passes, name="prepare-search", daemon=True)
            self._prepare_thread.start()

    def _prepare_passes(self) -> None:
        """Prepare the search tables, then once more if anything changed meanwhile (one
        pass for all the changes that came during the last)."""
        while True:
            try:
                self._searcher.prepare()
                self._prepare_names()
            except Exception:  # the search path builds them itself; this is only ahead of time
                log.debug("preparing the search tables failed", exc_info=True)
            with self._prepare_state:
                if not self._prepare_again or self._closed:
                    self._preparing = False
                    return
                self._prepare_again = False

    def _stop_preparing(self) -> None:
        """Stop the background preparation and wait for it: it reads the channels that
        closing frees, and nothing says that is safe. It stops at its next step: a table,
        a channel or a batch of notes."""
        self._searcher.stop_preparing()
        with self._prepare_state:
            thread = self._prepare_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _open_indexes(self) -> None:
        self._indexes = Indexes(
            self.index_dir,
            self.config,
            self._embedder,
            self._lexicon,
            writable=self._can_repair,
            writer=lambda: self.writer,
        )
        self.repairs.extend(self._indexes.repairs)
        self._catalog_replaced = self._indexes.catalog_replaced
        self._catalog = self._indexes.catalog
        self._fulltext = self._indexes.fulltext
        self._vectors = self._indexes.vectors
        self._graph = self._indexes.graph

    # -- opening --------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        vault: str | Path,
        config: EngineConfig | None = None,
        *,
        index_dir: str | Path | None = None,
        embedder: Embedder | object | None = _USE_DEFAULT,
    ) -> Engine:
        """Open or create the index of `vault`; never embeds anything.

        Args:
            vault: the vault folder.
            config: engine settings (defaults when None).
            index_dir: where the index lives (default `<vault>/.cairn`).
            embedder: an embedder to use instead of the configured model (`[vectors] model`); None
                turns the vector channel off.

        Raises:
            VaultNotFound: `vault` is not a directory.
            ConfigError: `index_dir` is the vault, holds it, is one of its note folders, or holds
                files that are not an index.
        """
        with _long_lived_heap():
            return cls._open(vault, config, index_dir, embedder)

    @classmethod
    def _open(
        cls, vault: str | Path, config: EngineConfig | None, index_dir: str | Path | None, embedder: Embedder | object | None
    ) -> Engine:
        root = Path(vault).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f"{root} does not exist or is not a folder")
        root = root.resolve()
        cfg = config or EngineConfig()
        directory = resolve_index_dir(root, Path(index_dir).expanduser() if index_dir else None)
        check_index_dir(root, directory, cfg.excludes)
        directory.mkdir(parents=True, exist_ok=True)
        problem = ""
        chosen: Embedder | None
        if embedder is _USE_DEFAULT:
            chosen = None
            if cfg.embed:
                try:
                    chosen = load_embedder(cfg.vectors.model, query_cache_size=cfg.vectors.query_cache_size)
                except ModelUnavailable as exc:
                    problem = str(exc)
            else:
                problem = "embedding disabled in the configuration"
        else:
            chosen = embedder  # type: ignore[assignment]
            if chosen is None:
                problem = "no embedder configured"
        return cls(root, directory, cfg, chosen, problem)

    def refresh(self) -> bool:
        """Pick up what another process wrote to the index; True if anything changed.

        Cheap when nothing changed (one catalog read and a few stats); skipped while
        this process is reindexing, which keeps its own views current.
        """
        self._last_refresh_check = time.monotonic()
        if self._closed or not self._reindex_lock.acquire(blocking=False):
            return False
        try:
            return self._reopen_if_replaced(recreate=False) or self._catch_up()
        finally:
            self._reindex_lock.release()

    def _catch_up(self) -> bool:
        """Reload the in-memory views if the index changed on disk since this process looked."""
        state = self._indexes.state()
        if state == self._seen_state:
            return False
        self._indexes.reload()
        self._catalog_changed()
        self._seen_state = state  # only now: a refresh that failed half-way is tried again
        return True

    def pending(self) -> tuple[str, ...]:
        """Notes added, changed or deleted on disk since they were indexed (by mtime and size)."""
        return pending_changes(self.vault, self._catalog.file_states(), self._catalog.skipped(), self.config.excludes)

    def watcher(
        self, on_batch: BatchFn | None = None, *, debounce_ms: int = DEFAULT_DEBOUNCE_MS, step_ms: int = DEFAULT_STEP_MS
    ) -> VaultWatcher:
        """A watcher that keeps this index in step with the vault from a background thread.

        Call `start()` and `stop()` on it; `on_batch` is called (from the watcher's
        thread) after every burst of changes it absorbed, or failed to.
        """
        return VaultWatcher(self, on_batch, debounce_ms=debounce_ms, step_ms=step_ms)

    def watch(
        self,
        stop: threading.Event,
        on_batch: BatchFn | None = None,
        *,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        step_ms: int = DEFAULT_STEP_MS,
        require_writer: bool = False,
    ) -> None:
        """Keep the index in step with the vault on this thread until `stop` is set (`engine watch`).

        Raises:
            IndexLocked: `require_writer` and another process writes the index.
        """
        run_watch(self, stop, on_batch, debounce_ms=debounce_ms, step_ms=step_ms, require_writer=require_writer)

    def hold_writer(self) -> bool:
        """Become the index's writer until `release_writer()`; False if another process is."""
        return self._lock.try_acquire()

    def acquire_writer(self) -> None:
        """Become the index's writer until `release_writer()`.

        Raises:
            IndexLocked: another process writes the index.
        """
        self._lock.acquire()

    def release_writer(self) -> None:
        """Stop being the index's writer."""
        self._lock.release()

    def close(self) -> None:
        """Release the index (closing twice is harmless).

        A reindex running on another thread (a front end's first index) is asked to stop
        after its current batch and waited for: what it writes is committed before the
        catalog and channels close under it. A reindex asked for afterwards raises IndexClosed.
        """
        if self._closed:
            return
        self._closed = True
        answers = getattr(self, "_answers", None)
        if answers is not None:
            answers.close()  # before the channels it searches go
        usage = getattr(self, "_usage", None)
        if usage is not None:
            usage.write()
        self._indexer.request_stop()
        self._stop_preparing()
        with self._reindex_lock:
            self._close_indexes()

    def _close_indexes(self) -> None:
        self._searcher.close()
        # The search side's memory (the vector index above all) goes before the graph is
        # pickled for its save, so that the two never add up at the end of a session.
        self._indexes.close(keep=("graph",))
        try:
            writer = self._lock.try_acquire()
        except OSError:  # the index folder is gone: there is nothing to save into
            writer = False
        if writer:  # only the writer saves
            try:
                self._graph.save()  # incremental updates since the last save
            except OSError as exc:
                log.warning("could not save the graph: %s", exc)
        self._indexes.close(vouch=writer)
        self._lock.release()

    def answer_locally(self) -> bool:
        """Answer `engine search`, `context` and `status` for this index from this process, over
        a socket in the index folder only its owner can use (engine/serve.py), until `close`.

        For front ends that keep the index open (the TUI, the web view, `engine watch`, the MCP
        server): the command then answers in milliseconds instead of opening the index itself.

        Returns:
            False when another process answers for this index already, or no local socket
            can be made here (the command then opens the index itself, as without this).
        """
        if self._answers is not None:
            return self._answers.serving
        from engine.answers import answer_request

        self._answers = AnswerServer(self.index_dir, lambda question: answer_request(self, question))
        return self._answers.start()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing -------------------------------------------------------------------
    def reindex(
        self,
        paths: Iterable[str] | None = None,
        *,
        full: bool = False,
        progress: ProgressFn | None = None,
        embed: bool = True,
    ) -> ReindexReport:
        """Bring the index up to date with the vault.

        Args:
            paths: vault-relative paths that changed (None scans the whole vault).
            full: re-read and re-index every note even if unchanged.
            progress: called with Progress records (phase, done, total).
            embed: also embed new chunk texts (the slow phase).

        Returns:
            What was added, updated, removed and skipped, with timings per phase.

        Raises:
            IndexLocked: another process is writing this index.
            IndexWriteFailed: the disk is full or the index is read-only; nothing is
                lost, and the next reindex catches up with what this one could not write.
        """
        with self._writer_turn(), self._lock.held(), index_writes():
            recreated, self._rescan_due = self._rescan_due, False
            if recreated:
                paths = None  # the index was recreated empty: the whole vault goes into it
            backlog = embed and paths is None and self._embedder is not None
            self._catch_up()  # another process may have written since this one last looked
            # This process's own failure, or another writer's: killed after its catalog
            # batch and before its commit, it left the channels behind the catalog.
            if self._derived_lag or self._indexes.lagging():
                self._catch_up_derived()
            try:
                report = self._indexer.reindex(paths, full=full, progress=progress, embed=embed and not backlog)
                self._commit_generations()
            except BaseException:
                self._derived_lag = True
                self._rescan_due = recreated
                raise
        if paths is None:
            gc.freeze()  # a full pass may have rebuilt the graph: out of the collector's scans (_long_lived_heap)
        if self._prepare_tables:
            self._prepare_in_background()  # the channels' filter tables, now that all of them changed
        if not backlog:
            return report
        started = time.perf_counter()
        embedded = self._embed_in_turns(progress or (lambda _p: None))
        timings = {**report.timings, "embed": round(time.perf_counter() - started, 3)}
        return dataclasses.replace(report, embedded_chunks=embedded, timings=timings)

    def _embed_in_turns(self, progress: ProgressFn) -> int:
        """Embed the backlog in turns, stepping aside whenever a save or watcher update waits.

        A first index of a big vault embeds for minutes; an edit saved meanwhile must
        not wait for all of it. Between two batches, if another thread wants to write,
        this loop lets it go first and then carries on.
        """
        total = 0
        while True:
            try:
                with self._writer_turn(), self._lock.held(), index_writes():
                    done = self._indexer.embed_pending(progress, should_yield=self._writers_waiting)
                    if done:
                        self._vectors.save()
                        self._commit_generations()
            except IndexLocked:
                return total  # another process took over writing; it embeds the rest
            except IndexClosed:
                return total  # the engine closed meanwhile: what was embedded is committed
            total += done
            if not self._writers_waiting():
                return total
            with self._turn:
                self._turn.wait_for(lambda: self._waiting_writers == 0, timeout=30)

    @contextlib.contextmanager
    def _writer_turn(self) -> Iterator[None]:
        """Hold the in-process writer lock, counted as waiting while blocked on it."""
        with self._turn:
            self._waiting_writers += 1
        try:
            self._reindex_lock.acquire()
        finally:
            with self._turn:
                self._waiting_writers -= 1
                self._turn.notify_all()
        try:
            if self._closed:
                raise IndexClosed("the engine was closed; nothing was indexed")
            self._reopen_if_replaced(recreate=True)
            yield
        finally:
            self._reindex_lock.release()

    def _catch_up_derived(self) -> None:
        """Bring links, full text, vectors and graph back in step with the catalog after a reindex failed half-way.

        The catalog is written in batches before anything derived from it: notes a failed
        run committed look unchanged to the next scan, so only a comparison with the
        catalog finds them (as the repair at open does after a kill).
        """
        self._indexer.resolve_all_links()
        self._indexes.sync(writer=True)  # only called holding the writer lock
        self._graph.open(self._catalog)  # rebuilt unless the saved graph matches the catalog
        self._catalog_changed()
        self._derived_lag = False

    def _writers_waiting(self) -> bool:
        return self._waiting_writers > 0

    def _commit_generations(self) -> None:
        """Record that the derived indexes reflect the catalog as it is now."""
        self._indexes.commit()
        self._seen_state = self._indexes.state()


    def embed_pending(self, progress: ProgressFn | None = None, *, paths: Collection[str] | None = None) -> int:
        """Embed chunks that have no vector yet (what `reindex(embed=False)` left); `paths` limits to those notes."""
        with self._writer_turn(), self._lock.held(), index_writes():
            self._catch_up()
            done = self._indexer.embed_pending(progress or (lambda _p: None), paths=paths)
            self._vectors.save()
            self._seen_state = self._indexes.state()
            return done

    def stop(self) -> None:
        """Ask a running reindex to stop embedding after the current batch."""
        self._indexer.request_stop()

    # -- searching -------------------------------------------------------------------
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
        if time.monotonic() - self._last_refresh_check >= _REFRESH_EVERY_S:
            try:
                self.refresh()
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
            self._indexer.note_typing()  # the embedding backlog leaves the cores to the keystrokes
        results = self._searcher.search(
            query,
            limit=limit,
            channels=channels,
            as_you_type=as_you_type,
            graph_weight=graph_weight,
            max_hops=max_hops,
            seeding=graph_seeding,
            stages_off=stages_off,
        )
        if ("vectors" in results.channels and self._embedder is None) or stale:
            channels_status = dict(results.channels)
            if stale:
                for name, st in channels_status.items():
                    if st.status == "ok":
                        channels_status[name] = ChannelStatus("degraded", st.ms, stale)
            if "vectors" in channels_status and self._embedder is None:
                channels_status["vectors"] = ChannelStatus("unavailable", 0.0, self._model_problem)
            results = dataclasses.replace(results, channels=channels_status)
        # A question naming what no note holds has no confident answer (engine/unnamed.py).
        counter = self.token_counter()
        results = unnamed.applied(results, self.term_weights, counter if counter.exact else None)
        if self._usage is not None and not as_you_type and not stages_off:
            self._usage.count(results)  # which channels placed hits in the first five (counts only)
        return results

    def channel_usage(self) -> dict[str, Any]:
        """How often each channel placed notes in searches' first five, and notes only it found (engine/usage.py)."""
        return self._usage.totals() if self._usage is not None else {"off": True, **ChannelUsage(self.index_dir).totals()}

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
        path = self.find_note(note)
        if path is None:
            nearest = tuple((choice.path, choice.title) for choice in self.note_choices(note, limit=5))
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
        titles = {p: title for p, title, _aliases in self._catalog.note_names()}
        wanted = [c for c in ("fulltext", "vectors", "graph") if channels is None or c in channels]
        fusion = self._searcher.fusion_config(graph_weight)
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
            catalog=self._catalog,
            view=self._graph.view(),
            counter=counter,
            describe=self._describe,
            lexicon=self._lexicon,
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
            described = describing_property(self.read_note(entity.path).text, self._lexicon)
        except (CairnError, OSError):
            described = ""
        if described:
            return described
        body = self._catalog.note_body(entity.path)
        return context_module.first_sentence(body.text) if body else ""

    def find_note(self, name: str) -> str | None:
        """The note a path, title or alias names (case and accents aside), or None."""
        name = name.strip()
        if not name:
            return None
        names = self._catalog.note_names()
        paths = {row.path for row in names}
        for candidate in (name, f"{name}.md"):
            if candidate in paths:
                return candidate
        key = normalize(name.removesuffix(".md"))
        for row in names:
            stem = posixpath.basename(row.path).removesuffix(".md")
            if key in (normalize(row.title), normalize(stem), normalize(row.path.removesuffix(".md"))):
                return row.path
        for row in names:
            if any(normalize(alias) == key for alias in row.aliases):
                return row.path
        return None

    def nearest_notes(self, name: str, *, limit: int = 5) -> list[tuple[str, str]]:
        """(path, title) of the notes whose title, alias or path is closest to `name`, closest first."""
        names = self._catalog.note_names()
        choices: dict[str, str] = {}
        for row in names:
            for written in (row.title, *row.aliases, row.path.removesuffix(".md")):
                choices.setdefault(normalize(written), row.path)
        key = normalize(name.removesuffix(".md"))
        close = difflib.get_close_matches(key, list(choices), n=limit * 3, cutoff=0.5)
        close += [k for k in choices if key and key in k and k not in close]
        titles = {row.path: row.title for row in names}
        out = list(dict.fromkeys(choices[k] for k in close))[:limit]
        return [(p, titles[p]) for p in out]

    def note_choices(self, text: str, *, limit: int = 8) -> list[NoteChoice]:
        """The notes a note picker offers for `text`, best first: titles and aliases matched as the
        quick switcher matches them (whole, from the start, a word's start, anywhere, the letters
        in order), then the nearest spellings, so that a picker never comes back empty-handed
        for a typo.

        Args:
            text: what was typed (case and accents aside); empty: no choices.
            limit: how many choices at most.
        """
        return choose_notes(self._catalog.note_names(), text, limit=limit)

    def plan(self, query: str, *, as_you_type: bool = True) -> QueryPlan:
        """What the engine reads from a query: words, stems, the typed prefix, named entities,
        the asked kind and relation question (engine/query/plan.py)."""
        return self._searcher.plan(query, as_you_type=as_you_type)

    # -- notes -----------------------------------------------------------------------
    def _not_indexed(self, path: str) -> NoteNotFound:
        """The error for a note the index lacks, saying why when the last reindex skipped its file
        (too large, binary, unreadable …): a note list shows every note file, skipped ones too."""
        reason = next((skipped.reason for skipped in self._catalog.skipped() if skipped.path == path), "")
        return NoteNotFound(f"{path} (not indexed: {reason})" if reason else path)

    def resolve_path(self, path: str) -> Path:
        """The absolute file of a vault-relative path, refusing anything outside the vault.

        Raises:
            UnsafePath: the path escapes the vault (.., absolute, symlink out).
        """
        if not path or path.startswith(("/", "\\")) or "\x00" in path:
            raise UnsafePath(f"not a vault path: {path!r}")
        try:
            candidate = (self.vault / path).resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop, a name too long …
            raise UnsafePath(f"{path!r} cannot be resolved: {exc}") from exc
        if not candidate.is_relative_to(self.vault):
            raise UnsafePath(f"{path!r} points outside the vault")
        return candidate

    def _entry_path(self, path: str) -> Path:
        """The directory entry of a vault path, a symlink itself rather than what it points to:
        moving or trashing a note that is a link moves the link (checked like `resolve_path`)."""
        self.resolve_path(path)
        try:
            folder = (self.vault / path).parent.resolve()
        except (RuntimeError, OSError) as exc:
            raise UnsafePath(f"{path!r} cannot be resolved: {exc}") from exc
        entry = folder / posixpath.basename(path.replace("\\", "/"))
        if not entry.is_relative_to(self.vault) or entry == self.vault:
            raise UnsafePath(f"{path!r} points outside the vault")
        return entry

    def note(self, path: str) -> NoteView:
        """A note's catalog record, current text on disk and resolved links.

        Raises:
            NoteNotFound: the note is not indexed.
        """
        info = self._catalog.note_info(path)
        if info is None:
            raise self._not_indexed(path)
        self._indexer.prefer(path)  # the notes a user reads get their vectors first
        body = self._catalog.note_body(path)
        text = self._current_text(path)
        links = tuple((row.link, row.resolved) for row in self._catalog.links_from(path))
        same = tuple(p for p in self._catalog.paths_titled(info.title) if p != path)
        return NoteView(
            info=info, text=text, body_line_offset=body.line_offset if body else 0, links=links, same_title=same
        )

    def _current_text(self, path: str) -> str:
        """A note's text on disk now (LF), else as it was indexed."""
        try:
            return self.read_note(path).text
        except (CairnError, OSError):
            body = self._catalog.note_body(path)
            return "\n" * body.line_offset + body.text if body else ""

    def section(self, path: str, *, heading: str | None = None, block: str | None = None) -> NoteSection | None:
        """A part of a note as an embed shows it: the body, the section under `heading`, or block `block`.

        The text is the note's on disk now, cut at a line when long (`truncated`); `line`
        is where it starts, which is where a heading or block link opens the note.

        Returns:
            The section, or None when the note is not indexed or has no such heading or block.
        """
        info = self._catalog.note_info(path)
        if info is None:
            return None
        links = tuple((row.link, row.resolved) for row in self._catalog.links_from(path))
        return note_section(path, info.title, self._current_text(path), heading=heading, block=block, links=links)

    def embed_section(
        self, source_path: str, target: str, *, heading: str | None = None, block: str | None = None
    ) -> NoteSection | None:
        """What `![[target#heading]]` (or `#^block`) written in `source_path` shows: its target resolved like a link.

        Returns:
            The section, or None when the target is no indexed note or has no such part.
        """
        path = self._link_path(source_path, target)
        if path is None or not path.lower().endswith(".md"):
            return None
        return self.section(path, heading=heading, block=block)

    def resolve_link(self, source_path: str, target: str) -> str | None:
        """Where a link target written in `source_path` points (a vault path), as Obsidian resolves it; None: nowhere."""
        return self._link_path(source_path, target)

    def _link_path(self, source_path: str, target: str) -> str | None:
        """Where a link target written in a note points, as the indexer resolved it (or would)."""
        if not target.strip():
            return source_path
        key = target.strip().casefold()
        for row in self._catalog.links_from(source_path):
            if row.link.target.strip().casefold() == key:
                return row.resolved
        # Not a link the index read in this note (it was edited since): resolve it now.
        return self._link_resolver().resolve(target, source_path)

    def _link_resolver(self) -> LinkResolver:
        names = self._name_lookup()
        resolver = self._resolver
        if resolver is None or resolver[0] is not names:
            resolver = self._resolver = (names, LinkResolver(names.notes, names.attachments))
        return resolver[1]

    def _prepare_names(self) -> None:
        """What the first `[[` typed would otherwise build (~0.3 s at 10k notes): the names folded
        for completion and the resolver its headings and blocks follow links with."""
        self._name_lookup().prepare()
        self._link_resolver()

    def _name_lookup(self) -> complete.Names:
        """The vault's note names and attachments, for completion and resolution: read (and folded)
        again only after the catalog changed, as each keystroke of a link asks for them."""
        attachments_meta = self._catalog.get_meta("attachments") or "[]"
        state = (self._catalog.generation, attachments_meta)
        cached = self._names
        if cached is not None and cached[0] == state:
            return cached[1]
        names = complete.Names(self._catalog.note_names(), tuple(json.loads(attachments_meta)))
        self._names = (state, names)
        return names

    def term_weights(self, terms: Sequence[str]) -> dict[str, float]:
        """The full-text idf of index terms (stemmed words), as fusion weighs keyword coverage."""
        return self._fulltext.term_weights(terms)

    def notes(self) -> list[tuple[str, str]]:
        """(path, title) of every indexed note, sorted by path."""
        return [(path, title) for path, title, _aliases in self._catalog.note_names()]

    def note_files(self) -> list[tuple[str, str]]:
        """(path, title) of every note in the vault, indexed or not yet, sorted by path.

        A note the index does not hold yet (a first index is still reading the vault)
        is titled by its file name; the scan costs a walk of the vault's folders.
        """
        indexed = dict(self.notes())
        try:
            found = scan_vault(self.vault, self.config.excludes).notes
        except CairnError:
            found = ()
        for file in found:
            indexed.setdefault(file.path, posixpath.splitext(posixpath.basename(file.path))[0])
        return sorted(indexed.items())

    def vault_files(self) -> list[VaultEntry]:
        """Every note (titled, indexed or not yet) and every attachment of the vault, sorted by path."""
        indexed = dict(self.notes())
        try:
            scan = scan_vault(self.vault, self.config.excludes)
            found, attachments = scan.notes, scan.attachments
        except CairnError:
            found, attachments = (), tuple(json.loads(self._catalog.get_meta("attachments") or "[]"))
        for file in found:
            indexed.setdefault(file.path, posixpath.splitext(posixpath.basename(file.path))[0])
        entries = [VaultEntry(path, title) for path, title in indexed.items()]
        entries.extend(VaultEntry(path, posixpath.basename(path), file_kind(path)) for path in attachments)
        return sorted(entries, key=lambda entry: entry.path)

    def complete_link(self, typed: str, *, source: str | None = None, limit: int = complete.DEFAULT_LIMIT) -> list[LinkCompletion]:
        """The ways to finish a `[[` link whose text so far is `typed`, best first (engine/vault/complete.py).

        Args:
            typed: what follows `[[` up to the cursor: `atl`, `Atlas#ris`, `Atlas#^b1`, `#Set` (this note).
            source: the note being edited: links resolve from it, and `#…` alone completes its headings.
            limit: at most this many.
        """
        names = self._name_lookup()
        return complete.complete_link(
            typed,
            names,
            source=source,
            resolve=lambda target: self._link_path(source or "", target),
            note_text=self._current_text,
            headings=self.outline,
            limit=limit,
        )

    def outline(self, path: str) -> list[Heading]:
        """A note's headings as it is on disk now (level, text, line), in order: what an outline lists."""
        return list(parse_note(path, self._current_text(path)).headings)

    def tags(self) -> list[TagCount]:
        """Every tag of the vault with how many notes carry it (a nested tag counts for its parents too), by name."""
        counts: dict[str, int] = {}
        for info in self._catalog.note_infos():
            carried: set[str] = set()
            for tag in info.tags:
                parts = tag.split("/")
                carried.update("/".join(parts[: depth + 1]) for depth in range(len(parts)))
            for tag in carried:
                counts[tag] = counts.get(tag, 0) + 1
        return [TagCount(tag, count) for tag, count in sorted(counts.items(), key=lambda item: item[0].casefold())]

    def obsidian_uri(self, path: str) -> str | None:
        """The `obsidian://open?vault=…&file=…` URI of a vault file, or None when the vault has no `.obsidian/`."""
        return obsidian_uri(self.vault, path)

    def canvas(self, path: str) -> Canvas:
        """An Obsidian canvas as its cards and arrows (file cards resolved like links from the canvas).

        Raises:
            UnsafePath: the path is outside the vault.
        """
        target = self.resolve_path(path)
        try:
            data = target.read_bytes() if target.stat().st_size <= self.config.max_file_bytes else b""
        except OSError as exc:
            return Canvas(path, problem=f"cannot be read: {exc.strerror or exc}")
        if not data:
            return Canvas(path, problem="the canvas is empty or too large to show")
        return read_canvas(path, data, lambda written: self._link_path(path, written))

    def local_graph(self, path: str) -> LocalGraph:
        """The note, the notes it links to and from, and its graph neighbours, laid out for drawing.

        Raises:
            NoteNotFound: the note is not indexed.
        """
        info = self._catalog.note_info(path)
        if info is None:
            raise NoteNotFound(path)
        links = [(n.path, n.title) for n in self.outgoing_links(path) if n.path.lower().endswith(".md")]
        backlinks = list({b.path: (b.path, b.title) for b in self.backlinks(path)}.values())

        def links_from(source: str) -> list[str]:
            return [row.resolved for row in self._catalog.links_from(source) if row.resolved]

        return local_graph(path, info.title, links, backlinks, self.neighbors(path, limit=20), links_from)

    def recent_notes(self, limit: int = 10) -> list[tuple[str, str]]:
        """(path, title) of the notes changed last (by modification time as indexed), newest first."""
        infos = sorted(self._catalog.note_infos(), key=lambda info: (-info.mtime, info.path))
        return [(info.path, info.title) for info in infos[:limit]]

    def outgoing_links(self, path: str) -> list[LinkedNote]:
        """The notes and files `path` links to, each once, titled, with the first line that links (as text)."""
        out: list[LinkedNote] = []
        seen: set[str] = set()
        lines: list[str] | None = None
        for row in self._catalog.links_from(path):
            target = row.resolved
            if target is None or target == path or target in seen:
                continue
            if row.link.embed and is_icon(row.link.heading):
                continue  # an inline icon is a glyph of the text, not something the note links to
            seen.add(target)
            if lines is None:
                lines = self._current_text(path).split("\n")
            info = self._catalog.note_info(target)
            title = info.title if info is not None else posixpath.basename(target)
            line = lines[row.link.line - 1] if 0 < row.link.line <= len(lines) else ""
            out.append(LinkedNote(target, title, row.link.line, _line_context(plain_text(line), title)))
        return out

    def backlinks(self, path: str) -> list[Backlink]:
        """Notes linking to `path`, each with the linking line."""
        out: list[Backlink] = []
        cache: dict[str, list[str]] = {}
        titles: dict[str, str] = {}
        # One context per linking line: a line of thousands of links is cut once, not per link.
        contexts: dict[tuple[str, int], str] = {}
        for row in self._catalog.links_to(path):
            if row.source == path:
                continue
            if row.source not in cache:
                body = self._catalog.note_body(row.source)
                cache[row.source] = body.text.split("\n") if body else []
                offset = body.line_offset if body else 0
                cache[row.source] = [""] * offset + cache[row.source]
                info = self._catalog.note_info(row.source)
                titles[row.source] = info.title if info else row.source
            lines = cache[row.source]
            key = (row.source, row.link.line)
            context = contexts.get(key)
            if context is None:
                line = lines[row.link.line - 1] if 0 < row.link.line <= len(lines) else ""
                context = contexts[key] = _line_context(plain_text(line), row.link.display or row.link.target)
            out.append(Backlink(row.source, titles[row.source], row.link.line, context))
        return out

    def related(self, path: str, *, limit: int = 10) -> SearchResults:
        """Hybrid "more like this": the note's title and opening text as a query."""
        info = self._catalog.note_info(path)
        if info is None:
            raise self._not_indexed(path)
        chunks = self._catalog.chunks_for(path)
        opening = " ".join(c.chunk.text for c in chunks[:1])[:400]
        results = self.search(f"{info.title} {opening}", limit=limit + 1, as_you_type=False)
        hits = tuple(h for h in results.hits if h.path != path)[:limit]
        return dataclasses.replace(results, hits=hits)

    def unlinked_mentions(self, path: str, *, limit: int = 50) -> list[Backlink]:
        """Notes that name this note (title or alias, as whole words) without linking to it."""
        info = self._catalog.note_info(path)
        if info is None:
            raise self._not_indexed(path)
        linking = {row.source for row in self._catalog.links_to(path)}
        # A name longer than a line of prose is never written as a mention, and the
        # case-blind pattern compares each name at every word start of every line.
        names = [n for n in (info.title, *info.aliases) if 3 <= len(n) <= _MAX_MENTION_CHARS]
        if not names:
            return []
        pattern = re.compile(
            r"(?<!\w)(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?!\w)",
            re.IGNORECASE,
        )
        candidates: dict[str, str] = {}
        for name in names:
            results = self._searcher.search(name, limit=limit, channels=_FULLTEXT_ONLY, as_you_type=False)
            for hit in results.hits:
                candidates.setdefault(hit.path, hit.title)
        out: list[Backlink] = []
        for source, title in candidates.items():
            if source == path or source in linking:
                continue
            body = self._catalog.note_body(source)
            if body is None:
                continue
            for number, line in enumerate(body.text.split("\n"), start=body.line_offset + 1):
                found = pattern.search(blank_links(line))
                if found:
                    out.append(Backlink(source, title, number, _line_context(plain_text(line), found.group())))
                    break
        return sorted(out, key=lambda b: b.path)[:limit]

    def neighbors(self, path: str, *, limit: int = 20) -> list[Neighbor]:
        """The note's strongest entity-graph neighbors."""
        return self._graph.neighbors(path, limit)

    # -- note files (engine/notes.py does the writing) --------------------------------
    def read_note(self, path: str) -> NoteText:
        """A note's text for editing: LF newlines, decoded as the indexer reads it, with its sha.

        A path with no file yet reads as an empty note whose sha is None.

        Raises:
            UnsafePath: the path is outside the vault.
            NoteNotEditable: the file cannot be edited as text (binary, too large, unreadable).
        """
        text = notes.read_text(path, self.resolve_path(path), self.config.max_file_bytes)
        self._indexer.prefer(path)  # a note being edited gets its vectors first
        return text

    def save_note(self, path: str, text: str, *, expected_sha: str | None, as_utf8: bool = False) -> SaveResult:
        """Write a note atomically, keeping its encoding and line endings, then reindex it.

        Args:
            path: vault-relative path of a `.md` note.
            text: the full new content (any line endings; each unchanged line keeps its own).
            expected_sha: the sha of the bytes the editor loaded (`NoteText.sha`), or
                None to create a note that must not exist yet. Compared and replaced
                under one lock shared by every process that saves through Cairn.
            as_utf8: store the note as UTF-8 from now on (when its own encoding
                cannot hold the new text).

        Returns:
            The new sha and whether the index took the note in (with warnings when
            not: another process holds the index, the note is too large, the index's
            disk is full …). The note is saved either way.

        Raises:
            SaveConflict: the file changed on disk since it was loaded (or exists, for a create).
            NoteNotSaved: nothing was written (full disk, read-only vault, encoding …).
            UnsafePath: the path is outside the vault or not a Markdown note.
        """
        target = self._note_target(path)
        with notes.save_lock(target, create_folder=expected_sha is None):
            current = _current_bytes(target)
            current_sha = notes.content_sha(current) if current is not None else None
            if expected_sha is None and current is None and (twin := notes.twin_name(target)):
                raise SaveConflict(f"{path} already exists, as {twin!r} (the same name in another Unicode form)")
            if current_sha != expected_sha:
                if expected_sha is None:
                    raise SaveConflict(f"{path} already exists", current_sha)
                what = "was deleted" if current is None else "changed on disk"
                raise SaveConflict(f"{path} {what} since it was opened", current_sha)
            stored = _decoded(path, current)
            fmt = stored.format if stored else TextFormat()
            if as_utf8:
                fmt = dataclasses.replace(fmt, codec="utf-8", bom=b"")
            payload = notes.encode_text(text, fmt, stored.original if stored else None)
            if payload != current:
                notes.write_bytes(target, payload, temp_dir=self._temp_dir)
        return self._indexed(path, notes.content_sha(payload))

    def create_note(self, folder: str, title: str, text: str | None = None) -> SaveResult:
        """Create a note named `title` in `folder` (a title with '/' is a vault path).

        The file name is the title with the characters Obsidian refuses replaced, cut to
        the file system's 255 bytes; `text` defaults to a `# title` heading.

        Raises:
            NoteExists: a note is already there.
            NoteNotSaved: nothing was written.
        """
        path = notes.note_path(folder, title)
        body = f"# {title.strip()}\n\n" if text is None else text
        try:
            return self.save_note(path, body, expected_sha=None)
        except SaveConflict as exc:
            raise NoteExists(str(exc)) from exc

    def rename_note(self, old: str, name: str) -> RenameResult:
        """Move note `old` to `name` (same folder unless `name` is a vault path) and reindex both.

        Returns:
            The new path and the notes whose links name `old` by its path (pass the
            result to `update_links` to retarget them, once the user agrees); a link that
            reaches the note by an alias or its title does so after the move too, and is
            left alone.

        Raises:
            NoteNotFound: there is no file at `old`.
            NoteExists: something is already at the new path.
            NoteNotSaved: the move failed.
        """
        new = notes.note_path(posixpath.dirname(old), name)
        source = self._entry_path(old)
        target = self._note_target(new)
        if not source.is_file():
            raise NoteNotFound(old)
        # Only links that reach the note by its path (as Obsidian resolves them) name the
        # old path; a link by an alias or the title still reaches the note after the move.
        attachments = json.loads(self._catalog.get_meta("attachments") or "[]")
        by_path = LinkResolver(((p, "", ()) for p, _title, _aliases in self._catalog.note_names()), attachments)
        targets: dict[str, set[str]] = {}
        counts: dict[str, int] = {}
        for row in self._catalog.links_to(old):
            if by_path.resolve(row.link.target, row.source) != old:
                continue
            targets.setdefault(row.source, set()).add(row.link.target)
            counts[row.source] = counts.get(row.source, 0) + 1
        with notes.save_locks(source, target, create_folder=True):  # a save creating the new path waits
            twin = notes.twin_name(target)
            if twin is not None and (target.parent / twin) != source:
                raise NoteExists(f"{target.name} already exists, as {twin!r} (the same name in another Unicode form)")
            notes.move_file(source, target)
        save = self._indexed(new, notes.file_sha(target) or "", also=(old,))
        linking = tuple(
            LinkingNote(new if source_path == old else source_path, tuple(sorted(found)), counts[source_path])
            for source_path, found in sorted(targets.items())
        )
        return RenameResult(old, new, linking, save)

    def update_links(self, renamed: RenameResult) -> LinkUpdate:
        """Point the links to a renamed note at its new path: in every linking note, or in none.

        Links are found with the indexer's grammar (nothing inside code changes); each
        note keeps its encoding and line endings. If any note cannot be updated (it
        changed meanwhile, cannot be read, cannot hold the text, the disk is full),
        nothing is left changed and `untouched` says which and why.
        """
        names = [p for p, _title, _aliases in self._catalog.note_names()]
        retarget = notes.Retarget(renamed.old, renamed.new, _wikilink_name(renamed.new, names))
        planned: list[tuple[str, Path, bytes, bytes, int]] = []  # path, file, before, after, links
        refused: list[SkippedFile] = []
        for linking in renamed.linking:
            try:
                target = self.resolve_path(linking.path)
                before = _current_bytes(target)
                if before is None:
                    raise NoteNotFound(f"{linking.path} is gone")
                stored = _decoded(linking.path, before)
                assert stored is not None
                wanted = frozenset(t.strip().casefold() for t in linking.targets)
                changed_text, links = notes.retarget_text(stored.text, linking.path, wanted, retarget)
                if links:
                    after = notes.encode_text(changed_text, stored.format, stored.original)
                    planned.append((linking.path, target, before, after, links))
            except (CairnError, OSError) as exc:
                refused.append(SkippedFile(linking.path, _problem(exc)))
        if refused:
            return LinkUpdate(renamed.new, untouched=tuple(refused))
        written: list[tuple[Path, bytes, bytes]] = []
        for path, target, before, after, _links in planned:
            try:
                with notes.save_lock(target):
                    if _current_bytes(target) != before:
                        raise SaveConflict(f"{path} changed on disk during the update")
                    notes.write_bytes(target, after, temp_dir=self._temp_dir)
                written.append((target, before, after))
            except CairnError as exc:
                failed = [SkippedFile(path, _problem(exc))]
                failed.extend(self._restore(written))
                return LinkUpdate(renamed.new, untouched=tuple(failed))
        changed = tuple(p for p, *_ in planned)
        self._indexed(renamed.new, "", also=changed)
        return LinkUpdate(renamed.new, sum(p[4] for p in planned), changed)

    def _restore(self, written: list[tuple[Path, bytes, bytes]]) -> list[SkippedFile]:
        """Put back the notes an update already wrote; those that changed again are named."""
        problems: list[SkippedFile] = []
        for target, before, after in reversed(written):
            relative = target.relative_to(self.vault).as_posix()
            try:
                with notes.save_lock(target):
                    if _current_bytes(target) != after:
                        raise SaveConflict("changed on disk again; left as it is")
                    notes.write_bytes(target, before, temp_dir=self._temp_dir)
            except CairnError as exc:
                problems.append(SkippedFile(relative, f"updated and could not be put back: {exc}"))
        return problems

    def trash_note(self, path: str) -> str:
        """Move a note to the vault's `.trash/` folder (as Obsidian does), never overwriting; drop it from the index.

        Returns:
            The vault path it now has under `.trash/`.
        """
        source = self._entry_path(path)
        if not source.is_file():
            raise NoteNotFound(path)
        with notes.save_lock(source):
            moved = notes.trash_path(path, lambda p: os.path.lexists(self.vault / p))
            notes.move_file(source, self.vault / moved)
        self._indexed(path, "")
        return moved

    def conflict_copy_path(self, path: str) -> str:
        """A free sibling path to save a conflicting edit in: `Note (conflict 2026-03-04 101500).md`."""
        return notes.conflict_copy_path(path, lambda p: os.path.lexists(self.vault / p))

    @property
    def _temp_dir(self) -> Path:
        return self.index_dir / "tmp"

    def _note_target(self, path: str) -> Path:
        if not path.lower().endswith(".md"):
            raise UnsafePath(f"only Markdown notes (.md) can be written: {path}")
        target = self.resolve_path(path)
        if target.is_dir():
            raise UnsafePath(f"{brief(path)} is a folder, not a note")
        for folder in target.parents:
            if folder == self.vault:
                break
            if folder.exists() and not folder.is_dir():
                # A note used as a folder ("A.md/b.md"): no write could succeed, and it is
                # the path that is wrong, not the disk.
                where = folder.relative_to(self.vault).as_posix()
                raise UnsafePath(f"{brief(where)} is a file, not a folder: no note can go inside it")
        return target

    def _indexed(self, path: str, sha: str, *, also: Sequence[str] = ()) -> SaveResult:
        """Reindex what a file operation changed; the file is written whatever the index says."""
        paths = list(dict.fromkeys((path, *also)))
        try:
            report = self.reindex(paths)
        except IndexLocked as exc:
            # Saved; the process that holds the index (e.g. `engine watch`) indexes it.
            return SaveResult(path, sha, False, (f"saved; not indexed here: {exc}",))
        except (CairnError, OSError, sqlite3.Error) as exc:
            log.warning("saved %s but could not index it: %s", path, exc)
            return SaveResult(path, sha, False, (f"saved, but the index could not be updated: {_problem(exc)}",))
        skipped = [s for s in report.skipped if s.path in paths]
        warnings = tuple(f"saved, but not indexed: {s.reason}" for s in skipped)
        return SaveResult(path, sha, not skipped, warnings, report)

    # -- status ----------------------------------------------------------------------
    def status(self) -> IndexStatus:
        """Counts, what is embedded, skipped files, model and size."""
        counts = self._catalog.counts()
        model_id = self._embedder.model_id if self._embedder else ""
        embedded = self._catalog.embedded_chunk_count(model_id) if model_id else 0
        if self._embedder is None:
            vectors = ChannelStatus("unavailable", 0.0, self._model_problem)
        elif embedded < counts["chunks"]:
            vectors = ChannelStatus("degraded", 0.0, f"{embedded}/{counts['chunks']} chunks embedded")
        else:
            vectors = ChannelStatus("ok", 0.0)
        last = self._catalog.get_meta("last_update")
        backlog = self._backlog(model_id) if model_id and embedded < counts["chunks"] else None
        return IndexStatus(
            vault=str(self.vault),
            index_dir=str(self.index_dir),
            notes=counts["notes"],
            chunks=counts["chunks"],
            links=counts["links"],
            dangling_links=counts["dangling_links"],
            embedded_chunks=embedded,
            entities=self._graph.entity_count(),
            skipped=self._catalog.skipped(),
            model=model_id or "none",
            vectors=vectors,
            index_bytes=dir_size(self.index_dir),
            last_update=float(last) if last else None,
            channel_counts={
                "fulltext": self._fulltext.count(),
                "vectors": self._vectors.count(),
                "graph": self._graph.count(),
            },
            backlog=backlog,
            structure=self._searcher.structure_text(),
        )

    def _backlog(self, model_id: str) -> EmbeddingBacklog:
        """What is left to embed and how long it will take at the rate measured here."""
        rate = self._indexer.embed_rate(model_id)
        running = self._indexer.embedding
        if running is not None:
            place = running.place
            return EmbeddingBacklog(
                texts=running.remaining,
                chars=running.remaining_chars,
                chars_per_s=rate,
                eta_s=eta_seconds(running.remaining_chars, rate),
                running=True,
                order=place.order,
                at_mtime=place.mtime,
            )
        texts, chars = self._catalog.backlog_size(model_id)
        return EmbeddingBacklog(texts=texts, chars=chars, chars_per_s=rate, eta_s=eta_seconds(chars, rate))

    def token_counter(self) -> context_module.TokenCounter:
        """Counts tokens as `context` counts them: the embedder's tokenizer, or about four characters a token."""
        return context_module.TokenCounter(self._embedder, self._embedder.model_id if self._embedder else "")

    @property
    def has_model(self) -> bool:
        """Whether this engine has an embedding model (the vector channel can answer)."""
        return self._embedder is not None

    @property
    def writer(self) -> str | None:
        """Who holds the writer lock right now (None when nobody does)."""
        holder = self._lock.holder()
        if holder is None:
            return None
        return describe_holder(holder)


@contextlib.contextmanager
def _long_lived_heap() -> Iterator[None]:
    """Open the index without cyclic collections, then take what it loaded out of their scans.

    The graph, its per-note contributions, the title tables and the caches are a few
    million objects that live as long as the index. Collections triggered while they
    were being loaded each walked everything loaded so far (a 10k-note index opened in
    0.70 s, 0.44 s without them); a full collection walking them later stalled a search
    for 0.3-0.4 s. Frozen objects are still freed by reference counting when a rebuild
    replaces them (they hold no reference cycles).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def _current_bytes(target: Path) -> bytes | None:
    """The bytes of a note file now, or None when there is none; never blocks on a FIFO."""
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NoteNotSaved(f"{target.name} cannot be read: {exc.strerror or exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NoteNotSaved(f"{target.name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        raise NoteNotSaved(f"{target.name} cannot be read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def _decoded(path: str, data: bytes | None) -> DecodedNote | None:
    """A note's bytes decoded as the indexer reads them (None for no file)."""
    if data is None:
        return None
    try:
        return decode_note(data)
    except NoteUnreadable as exc:
        raise NoteNotSaved(f"{path} is not a text note ({exc.reason}); it was left as it is") from exc


def _wikilink_name(path: str, note_paths: Sequence[str]) -> str:
    """What a wikilink to `path` writes: its name, or its path when another note has that name."""
    without = path[:-3] if path.lower().endswith(".md") else path
    stem = posixpath.basename(without)
    same = [p for p in note_paths if posixpath.basename(p[:-3] if p.lower().endswith(".md") else p).casefold() == stem.casefold()]
    return stem if all(p == path for p in same) else without


def _not_found(name: str, nearest: Sequence[tuple[str, str]]) -> str:
    """"No note X" with the nearest titles, for a note named that does not exist (a long name cut)."""
    if not nearest:
        return f"no note named {brief(name)!r}"
    return f"no note named {brief(name)!r}; nearest: " + "; ".join(f"{title} ({path})" for path, title in nearest)


def _problem(exc: BaseException) -> str:
    """An error's message with its title, for reports."""
    title = getattr(exc, "title", "")
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{title}: {exc}" if title else str(exc)
