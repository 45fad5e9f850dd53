"""Frozen records the engine and its front ends exchange (stdlib only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ChannelName = Literal["fulltext", "vectors", "graph"]
CHANNEL_NAMES: tuple[ChannelName, ...] = ("fulltext", "vectors", "graph")

ChannelState = Literal["ok", "degraded", "unavailable"]
# How each channel is named on badges and in explain views.
CHANNEL_LABELS: dict[ChannelName, str] = {"fulltext": "BM25", "vectors": "VEC", "graph": "GRAPH"}

EvidenceLabel = Literal[
    "exact_title_match",
    "alias_hit",
    "keyword_exact",
    "high_vector_match",
    "graph_neighbor",
    "weak_semantic",
]


@dataclass(frozen=True)
class Heading:
    """A Markdown heading: level 1-6, its text and its 1-based line in the file."""

    level: int
    text: str
    line: int


@dataclass(frozen=True)
class Link:
    """A link found in a note, before resolution.

    `target` is the link target as written without heading/block part
    (`Note`, `folder/Note`, `image.png`); `kind` is `wikilink` or `markdown`.
    """

    target: str
    display: str | None
    heading: str | None
    block: str | None
    embed: bool
    line: int
    kind: Literal["wikilink", "markdown"] = "wikilink"


@dataclass(frozen=True)
class ParsedNote:
    """Everything parsing one Markdown file yields; `body` excludes frontmatter."""

    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    headings: tuple[Heading, ...]
    links: tuple[Link, ...]
    body: str
    body_line_offset: int
    frontmatter: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chunk:
    """A heading-aware piece of a note's body.

    Spans are character offsets into `ParsedNote.body`; lines are 1-based file lines.
    """

    ordinal: int
    text: str
    heading_path: tuple[str, ...]
    char_start: int
    char_end: int
    line_start: int
    line_end: int


@dataclass(frozen=True)
class NoteInfo:
    """A note as the catalog knows it."""

    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    mtime: float
    size: int
    sha: str
    headings: tuple[Heading, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChannelHit:
    """One note found by one channel, with that channel's raw evidence."""

    path: str
    score: float
    rank: int = 0
    matched_terms: tuple[str, ...] = ()
    chunk_id: int | None = None
    graph_path: tuple[str, ...] = ()
    graph_relation: str | None = None


@dataclass(frozen=True)
class ChannelEvidence:
    """How one channel saw a hit: its 1-based rank, raw score and detail."""

    rank: int
    score: float
    matched_terms: tuple[str, ...] = ()
    chunk_id: int | None = None
    graph_path: tuple[str, ...] = ()
    graph_relation: str | None = None


@dataclass(frozen=True)
class Snippet:
    """The best passage of a hit; `highlights` are (start, end) spans in `text`."""

    text: str
    heading: str
    line: int
    highlights: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Hit:
    """One fused search result."""

    path: str
    title: str
    score: float
    label: EvidenceLabel
    channels: dict[ChannelName, ChannelEvidence]
    snippet: Snippet


@dataclass(frozen=True)
class Badge:
    """One channel's evidence for a hit in a few words (`BM25 #2 "term"`), and which channel it is."""

    channel: ChannelName
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class ChannelStatus:
    """Whether a channel answered, how long it took, and why not if not."""

    status: ChannelState
    ms: float
    message: str = ""


@dataclass(frozen=True)
class AskedKind:
    """The kind of note a query asks for: a name to show ("people", "companies") and its notes."""

    label: str = ""
    notes: frozenset[str] = field(default=frozenset(), repr=False)


NO_KIND = AskedKind()


@dataclass(frozen=True)
class FusionTrace:
    """Everything one fusion used: each channel's list as it answered, and what fusion did with them.

    `hops` are the notes of the asked kind the best keyword match links to: the graph's
    list puts them first. `factors` scale one channel's vote for one note; `floors` are
    the exact title and alias matches put first; `relational` says the graph answered a
    relation question (its weight is boosted). `engine.search.fusion.refuse` fuses a
    trace again, whole, without a channel or with one alone.
    """

    rankings: dict[ChannelName, tuple[str, ...]] = field(default_factory=dict)
    hops: tuple[str, ...] = ()
    factors: dict[str, dict[str, float]] = field(default_factory=dict)
    floors: tuple[str, ...] = ()
    relational: bool = False


@dataclass(frozen=True)
class SearchResults:
    """The answer to one query."""

    query: str
    hits: tuple[Hit, ...]
    channels: dict[ChannelName, ChannelStatus]
    recognized_entities: tuple[str, ...] = ()
    expanded_entities: tuple[str, ...] = ()
    total_ms: float = 0.0
    # The notes of the kind a who-question asks for (people), when the vault says
    # which notes those are; empty otherwise. Fusion ranks the others lower.
    answer_notes: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    # The kind of note the query asks for ("people", "companies": engine/kinds.py), if any;
    # fusion counts other notes' votes `kind_factor` as much.
    asked_kind: AskedKind = field(default=NO_KIND, compare=False)
    # The notes of the asked kind that the best keyword match (a note of another kind)
    # links to; the graph ranks them first (engine/kinds.py, `linked_of_kind`).
    kind_hops: tuple[str, ...] = field(default=(), compare=False)
    # How the hits were fused, for re-fusion (eval) and "why is this note here".
    trace: FusionTrace = field(default_factory=FusionTrace, repr=False, compare=False)


@dataclass(frozen=True)
class SkippedFile:
    """A file the indexer could not use (or used partly), and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class ReindexReport:
    """What one reindex did."""

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: int = 0
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[SkippedFile, ...] = ()
    embedded_chunks: int = 0
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Progress:
    """A reindex progress report: a phase, how far it is, and of how much."""

    phase: str
    done: int
    total: int
    detail: str = ""
    # While embedding: how long the rest will take at the measured rate, and the order
    # it goes in ("opened": the notes the user opened; "newest": by modification time).
    eta_s: float | None = None
    order: str = ""


@dataclass(frozen=True)
class EmbeddingBacklog:
    """The chunk texts still waiting for vectors, and how long they will take.

    `eta_s` comes from the rate measured on this machine (None until something was
    embedded here); `order` and `at_mtime` say what is being embedded now: the notes
    the user opened ("opened") or, newest first, notes changed at `at_mtime` ("newest").
    """

    texts: int
    chars: int
    chars_per_s: float | None = None
    eta_s: float | None = None
    running: bool = False
    order: str = ""
    at_mtime: float | None = None


@dataclass(frozen=True)
class IndexStatus:
    """Counts and health of an index."""

    vault: str
    index_dir: str
    notes: int
    chunks: int
    links: int
    dangling_links: int
    embedded_chunks: int
    entities: int
    skipped: tuple[SkippedFile, ...]
    model: str
    vectors: ChannelStatus
    index_bytes: int
    last_update: float | None
    channel_counts: dict[ChannelName, int] = field(default_factory=dict)
    # None when every chunk has its vector (or there is no model).
    backlog: EmbeddingBacklog | None = None

    @property
    def embedded_fraction(self) -> float:
        """Share of chunks that have an embedding (1.0 for an empty vault)."""
        return 1.0 if self.chunks == 0 else self.embedded_chunks / self.chunks


@dataclass(frozen=True)
class Backlink:
    """A note linking to another, with the line that links."""

    path: str
    title: str
    line: int
    context: str


@dataclass(frozen=True)
class Neighbor:
    """An entity next to a note in the graph, with the edge weight."""

    name: str
    kind: str
    weight: float
    path: str | None = None


@dataclass(frozen=True)
class TextFormat:
    """How a note's text is stored on disk, so that saving writes it back the same way.

    `codec` is the Python codec of the bytes after the byte-order mark `bom`;
    `newline` is the note's most common line ending ("\\n", "\\r\\n" or "\\r").
    """

    codec: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"

    @property
    def label(self) -> str:
        """A short name for people: `UTF-8`, `UTF-16 LE with BOM`, `cp1252`."""
        names = {"utf-8": "UTF-8", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE",
                 "utf-32-le": "UTF-32 LE", "utf-32-be": "UTF-32 BE"}
        name = names.get(self.codec, self.codec)
        return f"{name} with BOM" if self.bom and self.codec == "utf-8" else name


UTF8_LF = TextFormat()


@dataclass(frozen=True)
class NoteText:
    """A note's text as an editor gets it: newlines as `\\n`, no BOM, decoded as the indexer reads it.

    `sha` is the sha256 of the file's bytes (None when the file does not exist yet):
    send it back to `Engine.save_note` so a save never overwrites a change made on disk
    meanwhile. `format` is how the bytes are stored; saving keeps it.
    """

    path: str
    text: str
    sha: str | None
    format: TextFormat = UTF8_LF
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SaveResult:
    """A note written to disk: its new sha, and whether the index took it in."""

    path: str
    sha: str
    indexed: bool
    warnings: tuple[str, ...] = ()
    report: ReindexReport = field(default_factory=ReindexReport)


@dataclass(frozen=True)
class LinkingNote:
    """A note whose links pointed at a renamed note: the link targets as written, and how many."""

    path: str
    targets: tuple[str, ...]
    links: int


@dataclass(frozen=True)
class RenameResult:
    """A note moved from `old` to `new`; `linking` are the notes whose links pointed at `old`."""

    old: str
    new: str
    linking: tuple[LinkingNote, ...] = ()
    save: SaveResult | None = None


@dataclass(frozen=True)
class LinkUpdate:
    """What retargeting the links to a renamed note did: every linking note, or none.

    `untouched` names the notes that could not be updated and why; when it is not
    empty nothing was changed.
    """

    path: str
    links: int = 0
    notes: tuple[str, ...] = ()
    untouched: tuple[SkippedFile, ...] = ()


@dataclass(frozen=True)
class NoteView:
    """A note for display: its catalog record plus its text and resolved links."""

    info: NoteInfo
    text: str
    body_line_offset: int
    links: tuple[tuple[Link, str | None], ...]


@dataclass(frozen=True)
class WatchBatch:
    """One burst of changes absorbed by the watcher.

    `report` is None when another process is the index's writer and this one only
    picked up what it wrote; `rescan` says a folder or non-note path changed, so the
    whole vault was compared (an incremental reindex that skips unchanged files).
    When indexing failed, `error` says why and `retry_in` when the watcher compares the
    whole vault again; `recovered` marks the first batch that succeeded after failures.
    """

    paths: tuple[str, ...]
    rescan: bool
    report: ReindexReport | None
    seconds: float
    writer: bool
    error: str = ""
    retry_in: float = 0.0
    recovered: bool = False

    @property
    def changed_notes(self) -> int:
        """Notes added, updated or removed by this batch."""
        if self.report is None:
            return 0
        return len(self.report.added) + len(self.report.updated) + len(self.report.removed)
