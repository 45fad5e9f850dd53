"""The Engine façade: the only thing front ends call.

Each verb hands its work to the object that owns it, where its arguments, results and
errors are documented in full:

- `IndexSession` (engine/session.py): opening the index, the writer's turn, reindexing,
  embedding, background preparation, following other processes, status;
- `Questions` (engine/questions.py): search, why, context, related;
- `NoteFiles` (engine/notes.py): reading notes, saves, creates, renames with their link
  updates, the trash;
- `Links` (engine/links.py): names, links, backlinks, unlinked mentions, tags, the local graph.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from engine import context as context_module
from engine.config import EngineConfig
from engine.context import DEFAULT_DEPTH, DEFAULT_MAX_TOKENS, TokenCounter
from engine.embedder import Embedder
from engine.embedders import load_embedder
from engine.errors import ModelUnavailable, VaultNotFound
from engine.indexer import ProgressFn
from engine.links import Links
from engine.notes import NoteFiles
from engine.query import QueryPlan
from engine.questions import Questions
from engine.records import (
    Backlink,
    Canvas,
    ChannelName,
    ContextBundle,
    GraphSeeding,
    Heading,
    IndexStatus,
    LinkCompletion,
    LinkedNote,
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
    TagCount,
    VaultEntry,
    WhyReport,
)
from engine.session import IndexSession, long_lived_heap
from engine.storage import check_index_dir, resolve_index_dir
from engine.vault import complete
from engine.vault.files import obsidian_uri
from engine.watch import DEFAULT_DEBOUNCE_MS, DEFAULT_STEP_MS, BatchFn, VaultWatcher, run_watch

__all__ = ["Embedder", "Engine", "Watcher"]

Watcher = VaultWatcher
"""What `Engine.watcher` hands out: `start()`, `stop()`, `running`, `error`."""

_USE_DEFAULT = object()


class Engine:
    """Opens (or creates) a vault's index; searches, reindexes and reads notes.

    Thread-safe for concurrent `search` calls; one reindex at a time.
    """

    def __init__(
        self, vault: Path, index_dir: Path, config: EngineConfig, embedder: Embedder | None, model_problem: str
    ) -> None:
        self._session = IndexSession(vault, index_dir, config, embedder, model_problem)
        self.vault, self.index_dir, self.config = vault, index_dir, config
        self.repairs: list[str] = self._session.repairs  # what opening (or reopening) the index repaired
        self._notes = NoteFiles(self._session)
        self._links = Links(self._session, self._notes)
        self._questions = Questions(self._session, self._notes, self._links)

    # The open index's parts, for the tests that look inside (documented exceptions); the
    # session swaps them when the index is replaced under it, so they are read through it.
    _catalog = property(lambda self: self._session.catalog)
    _fulltext = property(lambda self: self._session.fulltext)
    _vectors = property(lambda self: self._session.vectors)
    _graph = property(lambda self: self._session.graph)
    _searcher = property(lambda self: self._session.searcher)
    _indexer = property(lambda self: self._session.indexer)
    _embedder = property(lambda self: self._session.embedder)

    # -- opening and closing ----------------------------------------------------------
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
        with long_lived_heap():
            root = Path(vault).expanduser()
            if not root.is_dir():
                raise VaultNotFound(f"{root} does not exist or is not a folder")
            root, cfg = root.resolve(), config or EngineConfig()
            directory = resolve_index_dir(root, Path(index_dir).expanduser() if index_dir else None)
            check_index_dir(root, directory, cfg.excludes)
            directory.mkdir(parents=True, exist_ok=True)
            return cls(root, directory, cfg, *_embedder_for(cfg, embedder))

    def refresh(self) -> bool:
        """Pick up what another process wrote to the index; True if anything changed."""
        return self._session.refresh()

    def index_replaced(self) -> bool:
        """Whether the index folder or its catalog is no longer the one this process opened."""
        return self._session.index_replaced()

    def prepare_for_typing(self, *, wait: bool = False) -> None:
        """Build the search tables the first keystrokes need, in the background unless `wait`."""
        self._session.prepare_for_typing(wait=wait)

    def prepare_for_edits(self) -> None:
        """Build now what the first save would otherwise build (for an index's writer that stays open)."""
        self._session.prepare_for_edits()

    def pending(self) -> tuple[str, ...]:
        """Notes added, changed or deleted on disk since they were indexed (by mtime and size)."""
        return self._session.pending()

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
        return self._session.hold_writer()

    def acquire_writer(self) -> None:
        """Become the index's writer until `release_writer()` (IndexLocked: another process writes it)."""
        self._session.acquire_writer()

    def release_writer(self) -> None:
        """Stop being the index's writer."""
        self._session.release_writer()

    def close(self) -> None:
        """Release the index, after a running reindex's current batch (closing twice is harmless)."""
        self._session.close()

    def answer_locally(self) -> bool:
        """Answer `engine search`, `context` and `status` for this index from this process, until `close`."""
        from engine.answers import answer_request

        return self._session.answer_locally(lambda question: answer_request(self, question))

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing -------------------------------------------------------------------
    def reindex(
        self, paths: Iterable[str] | None = None, *, full: bool = False, progress: ProgressFn | None = None, embed: bool = True
    ) -> ReindexReport:
        """Bring the index up to date with the vault (`paths`: only those; `full`: every note again)."""
        return self._session.reindex(paths, full=full, progress=progress, embed=embed)

    def embed_pending(self, progress: ProgressFn | None = None, *, paths: Collection[str] | None = None) -> int:
        """Embed chunks that have no vector yet (what `reindex(embed=False)` left); `paths` limits to those notes."""
        return self._session.embed_pending(progress, paths=paths)

    def stop(self) -> None:
        """Ask a running reindex to stop embedding after the current batch."""
        self._session.stop()

    def status(self) -> IndexStatus:
        """Counts, what is embedded, skipped files, model and size."""
        return self._session.status()

    @property
    def has_model(self) -> bool:
        """Whether this engine has an embedding model (the vector channel can answer)."""
        return self._session.has_model

    @property
    def writer(self) -> str | None:
        """Who holds the writer lock right now (None when nobody does)."""
        return self._session.writer

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
        """Hybrid search with per-channel evidence (engine/questions.py says what each knob does)."""
        return self._questions.search(
            query,
            limit=limit,
            channels=channels,
            as_you_type=as_you_type,
            graph_weight=graph_weight,
            max_hops=max_hops,
            graph_seeding=graph_seeding,
            stages_off=stages_off,
        )

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
        """Why `note` (a path, title or alias) is where it is in a search's results, or not in them."""
        return self._questions.why(
            query,
            note,
            limit=limit,
            channels=channels,
            graph_weight=graph_weight,
            max_hops=max_hops,
            graph_seeding=graph_seeding,
            as_you_type=as_you_type,
        )

    def token_counter(self) -> TokenCounter:
        """Counts tokens as `context` counts them: the embedder's tokenizer, or about four characters a token."""
        return self._questions.token_counter()

    def channel_usage(self) -> dict[str, Any]:
        """How often each channel placed notes in searches' first five, and notes only it found (engine/usage.py)."""
        return self._questions.channel_usage()

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
        """What a question needs from the vault, within a token budget: top chunks, their entities, how those relate."""
        return self._questions.context(
            question,
            max_tokens=max_tokens,
            max_source_tokens=max_source_tokens,
            max_entity_tokens=max_entity_tokens,
            depth=depth,
            top_k=top_k,
            render=render,
        )

    def plan(self, query: str, *, as_you_type: bool = True) -> QueryPlan:
        """What the engine reads from a query (engine/query/plan.py)."""
        return self._questions.plan(query, as_you_type=as_you_type)

    def related(self, path: str, *, limit: int = 10) -> SearchResults:
        """Hybrid "more like this": the note's title and opening text as a query."""
        return self._questions.related(path, limit=limit)

    def term_weights(self, terms: Sequence[str]) -> dict[str, float]:
        """The full-text idf of index terms (stemmed words), as fusion weighs keyword coverage."""
        return self._questions.term_weights(terms)

    # -- names and links -------------------------------------------------------------
    def find_note(self, name: str) -> str | None:
        """The note a path, title or alias names (case and accents aside), or None."""
        return self._links.find_note(name)

    def nearest_notes(self, name: str, *, limit: int = 5) -> list[tuple[str, str]]:
        """(path, title) of the notes whose title, alias or path is closest to `name`, closest first."""
        return self._links.nearest_notes(name, limit=limit)

    def note_choices(self, text: str, *, limit: int = 8) -> list[NoteChoice]:
        """The notes a note picker offers for `text`, best first, never empty-handed for a typo."""
        return self._links.note_choices(text, limit=limit)

    def resolve_link(self, source_path: str, target: str) -> str | None:
        """Where a link target written in `source_path` points (a vault path), as Obsidian resolves it; None: nowhere."""
        return self._links.link_path(source_path, target)

    def embed_section(
        self, source_path: str, target: str, *, heading: str | None = None, block: str | None = None
    ) -> NoteSection | None:
        """What `![[target#heading]]` (or `#^block`) written in `source_path` shows; None: no such note or part."""
        return self._links.embed_section(source_path, target, heading=heading, block=block)

    def complete_link(self, typed: str, *, source: str | None = None, limit: int = complete.DEFAULT_LIMIT) -> list[LinkCompletion]:
        """The ways to finish a `[[` link whose text so far is `typed`, best first (engine/vault/complete.py)."""
        return self._links.complete_link(typed, source=source, limit=limit)

    def outgoing_links(self, path: str) -> list[LinkedNote]:
        """The notes and files `path` links to, each once, titled, with the first line that links (as text)."""
        return self._links.outgoing_links(path)

    def backlinks(self, path: str) -> list[Backlink]:
        """Notes linking to `path`, each with the linking line."""
        return self._links.backlinks(path)

    def unlinked_mentions(self, path: str, *, limit: int = 50) -> list[Backlink]:
        """Notes that name this note (title or alias, as whole words) without linking to it."""
        return self._links.unlinked_mentions(path, limit=limit)

    def neighbors(self, path: str, *, limit: int = 20) -> list[Neighbor]:
        """The note's strongest entity-graph neighbors."""
        return self._links.neighbors(path, limit=limit)

    def local_graph(self, path: str) -> LocalGraph:
        """The note, the notes it links to and from, and its graph neighbours, laid out for drawing."""
        return self._links.local_graph(path)

    def canvas(self, path: str) -> Canvas:
        """An Obsidian canvas as its cards and arrows (file cards resolved like links from the canvas)."""
        return self._links.canvas(path)

    def tags(self) -> list[TagCount]:
        """Every tag of the vault with how many notes carry it (a nested tag counts for its parents too), by name."""
        return self._links.tags()

    def recent_notes(self, limit: int = 10) -> list[tuple[str, str]]:
        """(path, title) of the notes changed last (by modification time as indexed), newest first."""
        return self._links.recent_notes(limit)

    def obsidian_uri(self, path: str) -> str | None:
        """The `obsidian://open?vault=…&file=…` URI of a vault file, or None when the vault has no `.obsidian/`."""
        return obsidian_uri(self.vault, path)

    # -- notes (engine/notes.py does the reading and writing) -------------------------
    def notes(self) -> list[tuple[str, str]]:
        """(path, title) of every indexed note, sorted by path."""
        return self._notes.notes()

    def note_files(self) -> list[tuple[str, str]]:
        """(path, title) of every note in the vault, indexed or not yet, sorted by path."""
        return self._notes.note_files()

    def vault_files(self) -> list[VaultEntry]:
        """Every note (titled, indexed or not yet) and every attachment of the vault, sorted by path."""
        return self._notes.vault_files()

    def resolve_path(self, path: str) -> Path:
        """The absolute file of a vault-relative path (UnsafePath: it escapes the vault)."""
        return self._notes.resolve_path(path)

    def note(self, path: str) -> NoteView:
        """A note's catalog record, current text on disk and resolved links (NoteNotFound: not indexed)."""
        return self._notes.note(path)

    def section(self, path: str, *, heading: str | None = None, block: str | None = None) -> NoteSection | None:
        """A part of a note as an embed shows it: the body, the section under `heading`, or block `block`."""
        return self._notes.section(path, heading=heading, block=block)

    def outline(self, path: str) -> list[Heading]:
        """A note's headings as it is on disk now (level, text, line), in order: what an outline lists."""
        return self._notes.outline(path)

    def read_note(self, path: str) -> NoteText:
        """A note's text for editing: LF newlines, decoded as the indexer reads it, with its sha."""
        return self._notes.read_note(path)

    def save_note(self, path: str, text: str, *, expected_sha: str | None, as_utf8: bool = False) -> SaveResult:
        """Write a note atomically if it is still the version `expected_sha` (None: a new note), then reindex it."""
        return self._notes.save_note(path, text, expected_sha=expected_sha, as_utf8=as_utf8)

    def create_note(self, folder: str, title: str, text: str | None = None) -> SaveResult:
        """Create a note named `title` in `folder` (a title with '/' is a vault path)."""
        return self._notes.create_note(folder, title, text)

    def rename_note(self, old: str, name: str) -> RenameResult:
        """Move note `old` to `name` and reindex both; the result names the notes whose links name `old`."""
        return self._notes.rename_note(old, name)

    def update_links(self, renamed: RenameResult) -> LinkUpdate:
        """Point the links to a renamed note at its new path: in every linking note, or in none."""
        return self._notes.update_links(renamed)

    def trash_note(self, path: str) -> str:
        """Move a note to the vault's `.trash/` folder, never overwriting; drop it from the index."""
        return self._notes.trash_note(path)

    def conflict_copy_path(self, path: str) -> str:
        """A free sibling path to save a conflicting edit in: `Note (conflict 2026-03-04 101500).md`."""
        return self._notes.conflict_copy_path(path)


def _embedder_for(config: EngineConfig, given: Embedder | object | None) -> tuple[Embedder | None, str]:
    """The embedder to open the index with, and why there is none when there is none."""
    if given is not _USE_DEFAULT:
        return given, ("" if given is not None else "no embedder configured")  # type: ignore[return-value]
    if not config.embed:
        return None, "embedding disabled in the configuration"
    try:
        return load_embedder(config.vectors.model, query_cache_size=config.vectors.query_cache_size), ""
    except ModelUnavailable as exc:
        return None, str(exc)
