"""An open index: its parts, the writer's turn, reindexing, background preparation and status.

The façade (engine/api.py) hands everything about the index's life here: opening and
checking its parts, taking turns to write (saves step in between the batches of a long
embedding), following another process that writes or replaces the index, preparing the
search tables in the background, and reporting what the index holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from engine import notes
from engine.backlog import eta_seconds
from engine.config import EngineConfig
from engine.embedder import Embedder
from engine.errors import ConfigError, IndexClosed, IndexLocked
from engine.indexer import Indexer, ProgressFn
from engine.indexes import Indexes
from engine.lexicon import lexicon_for
from engine.records import ChannelStatus, EmbeddingBacklog, IndexStatus, ReindexReport
from engine.search import Searcher
from engine.serve import AnswerServer
from engine.storage import WriterLock, check_index_dir, describe_holder, dir_size, index_writes
from engine.usage import ChannelUsage
from engine.vault import LinkResolver, complete
from engine.watch import pending_changes

log = logging.getLogger("cairn.engine")


class IndexSession:
    """A vault's index opened by this process: the parts, who writes, and what runs in the background.

    Thread-safe for concurrent searches; one reindex at a time.
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
        self.lexicon = lexicon_for(config.language)
        self.embedder = embedder
        self.model_problem = model_problem
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
        # Which channels placed hits in searches' first five, counts only (engine/usage.py).
        self.usage = ChannelUsage(index_dir) if config.search.count_channels else None
        with index_writes():  # `open` builds an engine inside long_lived_heap
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
                notes.remove_stale_temps(notes.stale_temps_in(self.temp_dir))
            self._open_indexes()
            try:
                self.indexes.claim(self.vault)
            except ConfigError:
                self.indexes.close()
                raise
            self._start(self.vault, self.config, self.embedder)
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
        old_indexes, old_searcher, old_catalog = self.indexes, self.searcher, self.catalog
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
                self.catalog.store_embeddings(model_id, rows)
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
        self.searcher = Searcher(
            self.catalog,
            self.indexes.channels,
            config,
            lexicon=self.lexicon,
            text=self.fulltext,
            names=self.graph,
            vectors=self.vectors,
        )
        self.indexer = Indexer(
            vault,
            self.catalog,
            fulltext=self.fulltext,
            graph=self.graph,
            vectors=self.vectors,
            embedder=embedder,
            config=config,
            on_catalog_change=self._catalog_changed,
            on_notes_change=self._notes_changed,
        )
        self._seen_state = self.indexes.state()
        self.last_refresh_check = time.monotonic()

    def prepare_for_typing(self, *, wait: bool = False) -> None:
        """Build, in the background, the tables that the first keystrokes would otherwise
        build (the facts that filters read, the flat scan's titles: ~0.3 s at 10k notes),
        and each note's runs of four characters, which spare a quoted phrase reading the
        notes that cannot say it (~0.45 s more at 10k), now and again after every change
        of the catalog. For front ends that stay open; a one-shot search does not need
        it. `wait` builds them before returning."""
        self._prepare_tables = True
        prepare_queries = getattr(self.embedder, "prepare_queries", None)
        if callable(prepare_queries):
            prepare_queries()  # the model's query session, in the background
        if wait:
            self.searcher.prepare()
            self._prepare_names()
        else:
            self.prepare_in_background()

    def prepare_for_edits(self) -> None:
        """Build now what the first save would otherwise build (the link resolver, the
        graph's writable parts, the parser: 1.2 s of the first save at 50k notes). For the
        index's writer when it stays open; the watcher calls it when it becomes the writer."""
        with self._writer_turn():
            try:
                self.indexer.prepare_for_edits()
            except Exception:  # the save builds them itself; this is only ahead of time
                log.debug("preparing for edits failed", exc_info=True)

    def _catalog_changed(self) -> None:
        self.searcher.refresh_titles()
        if self._prepare_tables:
            self.prepare_in_background()

    def _notes_changed(self) -> None:
        self.searcher.refresh_facts()
        if self._prepare_tables:
            self.prepare_in_background()

    def prepare_in_background(self) -> None:
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
                self.searcher.prepare()
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
        self.searcher.stop_preparing()
        with self._prepare_state:
            thread = self._prepare_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _open_indexes(self) -> None:
        self.indexes = Indexes(
            self.index_dir,
            self.config,
            self.embedder,
            self.lexicon,
            writable=self._can_repair,
            writer=lambda: self.writer,
        )
        self.repairs.extend(self.indexes.repairs)
        self._catalog_replaced = self.indexes.catalog_replaced
        self.catalog = self.indexes.catalog
        self.fulltext = self.indexes.fulltext
        self.vectors = self.indexes.vectors
        self.graph = self.indexes.graph


    def refresh(self) -> bool:
        """Pick up what another process wrote to the index; True if anything changed.

        Cheap when nothing changed (one catalog read and a few stats); skipped while
        this process is reindexing, which keeps its own views current.
        """
        self.last_refresh_check = time.monotonic()
        if self._closed or not self._reindex_lock.acquire(blocking=False):
            return False
        try:
            return self._reopen_if_replaced(recreate=False) or self._catch_up()
        finally:
            self._reindex_lock.release()

    def _catch_up(self) -> bool:
        """Reload the in-memory views if the index changed on disk since this process looked."""
        state = self.indexes.state()
        if state == self._seen_state:
            return False
        self.indexes.reload()
        self._catalog_changed()
        self._seen_state = state  # only now: a refresh that failed half-way is tried again
        return True

    def pending(self) -> tuple[str, ...]:
        """Notes added, changed or deleted on disk since they were indexed (by mtime and size)."""
        return pending_changes(self.vault, self.catalog.file_states(), self.catalog.skipped(), self.config.excludes)

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
        usage = getattr(self, "usage", None)
        if usage is not None:
            usage.write()
        self.indexer.request_stop()
        self._stop_preparing()
        with self._reindex_lock:
            self._close_indexes()

    def _close_indexes(self) -> None:
        self.searcher.close()
        # The search side's memory (the vector index above all) goes before the graph is
        # pickled for its save, so that the two never add up at the end of a session.
        self.indexes.close(keep=("graph",))
        try:
            writer = self._lock.try_acquire()
        except OSError:  # the index folder is gone: there is nothing to save into
            writer = False
        if writer:  # only the writer saves
            try:
                self.graph.save()  # incremental updates since the last save
            except OSError as exc:
                log.warning("could not save the graph: %s", exc)
        self.indexes.close(vouch=writer)
        self._lock.release()

    def answer_locally(self, answer: Callable[[object], dict[str, Any]]) -> bool:
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
        self._answers = AnswerServer(self.index_dir, answer)
        return self._answers.start()

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
            backlog = embed and paths is None and self.embedder is not None
            self._catch_up()  # another process may have written since this one last looked
            # This process's own failure, or another writer's: killed after its catalog
            # batch and before its commit, it left the channels behind the catalog.
            if self._derived_lag or self.indexes.lagging():
                self._catch_up_derived()
            try:
                report = self.indexer.reindex(paths, full=full, progress=progress, embed=embed and not backlog)
                self._commit_generations()
            except BaseException:
                self._derived_lag = True
                self._rescan_due = recreated
                raise
        if paths is None:
            gc.freeze()  # a full pass may have rebuilt the graph: out of the collector's scans (long_lived_heap)
        if self._prepare_tables:
            self.prepare_in_background()  # the channels' filter tables, now that all of them changed
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
                    done = self.indexer.embed_pending(progress, should_yield=self.writers_waiting)
                    if done:
                        self.vectors.save()
                        self._commit_generations()
            except IndexLocked:
                return total  # another process took over writing; it embeds the rest
            except IndexClosed:
                return total  # the engine closed meanwhile: what was embedded is committed
            total += done
            if not self.writers_waiting():
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
        self.indexer.resolve_all_links()
        self.indexes.sync(writer=True)  # only called holding the writer lock
        self.graph.open(self.catalog)  # rebuilt unless the saved graph matches the catalog
        self._catalog_changed()
        self._derived_lag = False

    def writers_waiting(self) -> bool:
        return self._waiting_writers > 0

    def _commit_generations(self) -> None:
        """Record that the derived indexes reflect the catalog as it is now."""
        self.indexes.commit()
        self._seen_state = self.indexes.state()


    def embed_pending(self, progress: ProgressFn | None = None, *, paths: Collection[str] | None = None) -> int:
        """Embed chunks that have no vector yet (what `reindex(embed=False)` left); `paths` limits to those notes."""
        with self._writer_turn(), self._lock.held(), index_writes():
            self._catch_up()
            done = self.indexer.embed_pending(progress or (lambda _p: None), paths=paths)
            self.vectors.save()
            self._seen_state = self.indexes.state()
            return done

    def stop(self) -> None:
        """Ask a running reindex to stop embedding after the current batch."""
        self.indexer.request_stop()

    def link_resolver(self) -> LinkResolver:
        names = self.names()
        resolver = self._resolver
        if resolver is None or resolver[0] is not names:
            resolver = self._resolver = (names, LinkResolver(names.notes, names.attachments))
        return resolver[1]

    def _prepare_names(self) -> None:
        """What the first `[[` typed would otherwise build (~0.3 s at 10k notes): the names folded
        for completion and the resolver its headings and blocks follow links with."""
        self.names().prepare()
        self.link_resolver()

    def names(self) -> complete.Names:
        """The vault's note names and attachments, for completion and resolution: read (and folded)
        again only after the catalog changed, as each keystroke of a link asks for them."""
        attachments_meta = self.catalog.get_meta("attachments") or "[]"
        state = (self.catalog.generation, attachments_meta)
        cached = self._names
        if cached is not None and cached[0] == state:
            return cached[1]
        names = complete.Names(self.catalog.note_names(), tuple(json.loads(attachments_meta)))
        self._names = (state, names)
        return names

    # -- status ----------------------------------------------------------------------
    def status(self) -> IndexStatus:
        """Counts, what is embedded, skipped files, model and size."""
        counts = self.catalog.counts()
        model_id = self.embedder.model_id if self.embedder else ""
        embedded = self.catalog.embedded_chunk_count(model_id) if model_id else 0
        if self.embedder is None:
            vectors = ChannelStatus("unavailable", 0.0, self.model_problem)
        elif embedded < counts["chunks"]:
            vectors = ChannelStatus("degraded", 0.0, f"{embedded}/{counts['chunks']} chunks embedded")
        else:
            vectors = ChannelStatus("ok", 0.0)
        last = self.catalog.get_meta("last_update")
        backlog = self._backlog(model_id) if model_id and embedded < counts["chunks"] else None
        return IndexStatus(
            vault=str(self.vault),
            index_dir=str(self.index_dir),
            notes=counts["notes"],
            chunks=counts["chunks"],
            links=counts["links"],
            dangling_links=counts["dangling_links"],
            embedded_chunks=embedded,
            entities=self.graph.entity_count(),
            skipped=self.catalog.skipped(),
            model=model_id or "none",
            vectors=vectors,
            index_bytes=dir_size(self.index_dir),
            last_update=float(last) if last else None,
            channel_counts={
                "fulltext": self.fulltext.count(),
                "vectors": self.vectors.count(),
                "graph": self.graph.count(),
            },
            backlog=backlog,
            structure=self.searcher.structure_text(),
        )

    def _backlog(self, model_id: str) -> EmbeddingBacklog:
        """What is left to embed and how long it will take at the rate measured here."""
        rate = self.indexer.embed_rate(model_id)
        running = self.indexer.embedding
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
        texts, chars = self.catalog.backlog_size(model_id)
        return EmbeddingBacklog(texts=texts, chars=chars, chars_per_s=rate, eta_s=eta_seconds(chars, rate))

    @property
    def temp_dir(self) -> Path:
        """Where a save writes its temp file when the note's folder cannot hold one."""
        return self.index_dir / "tmp"

    def prefer(self, path: str) -> None:
        """Embed this note's chunks first: the notes a user reads or edits get their vectors first."""
        self.indexer.prefer(path)

    @property
    def has_model(self) -> bool:
        """Whether this engine has an embedding model (the vector channel can answer)."""
        return self.embedder is not None

    @property
    def writer(self) -> str | None:
        """Who holds the writer lock right now (None when nobody does)."""
        holder = self._lock.holder()
        if holder is None:
            return None
        return describe_holder(holder)



@contextlib.contextmanager
def long_lived_heap() -> Iterator[None]:
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
