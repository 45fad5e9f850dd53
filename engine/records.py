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
    "keyword_partial",
    "high_vector_match",
    "graph_neighbor",
    "weak_semantic",
    "filter_match",
    "flat_scan",
]

# Where a search's graph walk starts: the entities the query names, those its top chunks name, or both.
GraphSeeding = Literal["query", "chunks", "both"]

# Whether a note of the name a query says already exists: an exact title or alias
# match, a near one, or nothing to go by.
CreateSafety = Literal["exists", "probable", "unknown"]


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
    `property` names the frontmatter property (`company: "[[Acme]]"`) or Dataview-style
    inline field (`works_at:: [[Acme]]`) the link is the value of, as written.
    """

    target: str
    display: str | None
    heading: str | None
    block: str | None
    embed: bool
    line: int
    kind: Literal["wikilink", "markdown"] = "wikilink"
    property: str | None = None


@dataclass(frozen=True)
class Task:
    """A task list item (`- [ ] call Ana`, `- [x] done`) outside code, and its 1-based file line."""

    done: bool
    text: str
    line: int


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
    tasks: tuple[Task, ...] = ()
    # The day the note is about: a date in its file name (daily notes), else its
    # frontmatter's date / created ("YYYY-MM-DD"), else "".
    date: str = ""


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


# The graph evidence of a note a top chunk names (hop 0 of a walk from the top chunks).
CHUNK_SEEDED = "named in a top chunk"


@dataclass(frozen=True)
class Relation:
    """A relation the vault names between two notes, subject first: Priya Kumar —attended→ Atlas Kickoff.

    `source` does `relation` to `target` (both titles). `explicit` says a property or
    inline field holds it (`company: "[[Acme]]"`), not a sentence.
    """

    source: str
    relation: str
    target: str
    explicit: bool = False


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
    # The named relations along `graph_path`, where the vault names one.
    relations: tuple[Relation, ...] = ()
    # The query's relative clause whose embedding found this note (vector channel), if not the whole query.
    clause: str | None = None


@dataclass(frozen=True)
class ChannelEvidence:
    """How one channel saw a hit: its 1-based rank, raw score and detail.

    `matched_terms` are index terms ("migrat"); `matched_words` the same as the user
    typed them ("migration"), stop words left out: what badges show.
    """

    rank: int
    score: float
    matched_terms: tuple[str, ...] = ()
    matched_words: tuple[str, ...] = ()
    chunk_id: int | None = None
    graph_path: tuple[str, ...] = ()
    graph_relation: str | None = None
    relations: tuple[Relation, ...] = ()
    # The query's relative clause whose embedding found the note, where it was not the whole query.
    clause: str | None = None


@dataclass(frozen=True)
class Snippet:
    """The best passage of a hit; `highlights` are (start, end) spans in `text`."""

    text: str
    heading: str
    line: int
    highlights: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Hit:
    """One fused search result.

    `votes` are what each channel added to the fused score (the graph's is its boost);
    `create_safety` says whether this note is the note the query names (`exists`), nearly
    (`probable`), or neither (`unknown`); `flat_scan` lists the query words a flat scan
    matched (`atlsa ~ atlas`) for a hit no channel found.
    """

    path: str
    title: str
    score: float
    label: EvidenceLabel
    channels: dict[ChannelName, ChannelEvidence]
    snippet: Snippet
    votes: dict[ChannelName, float] = field(default_factory=dict)
    create_safety: CreateSafety = "unknown"
    flat_scan: tuple[str, ...] = ()


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
class StageRecord:
    """What one ranking stage added to one search (engine/search/ranking/): evidence, never a place.

    `factors` scale one channel's vote for one note (channel → note → factor); `weights`
    multiply a channel's weight for this search; `first` are notes the stage reached that
    join the front of a channel's list (the kind hop's notes in the graph's), with the
    note each was reached from in `reached`; `floors` are notes the query names, which come
    first (the navigation stage's only); `said` is what the stage did, in words.
    """

    stage: str
    factors: dict[str, dict[str, float]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    first: dict[str, tuple[str, ...]] = field(default_factory=dict)
    reached: dict[str, str] = field(default_factory=dict)
    floors: tuple[str, ...] = ()
    # A floor that stands on one channel's evidence (note → channel): fused without that
    # channel, or with another alone, the note has no floor.
    floor_channels: dict[str, str] = field(default_factory=dict)
    said: tuple[str, ...] = ()


@dataclass(frozen=True)
class FusionTrace:
    """Everything one fusion used: each channel's list and raw scores as it answered, and
    each ranking stage's record, in the order the stages ran.

    `weights` are the channel weights this search was told to use instead of the
    configured ones (`--graph-weight`); `fallback` the notes a flat scan of titles and
    fuzzy terms found when the channels found fewer than asked (they follow the fused
    ones). `engine.search.fusion.refuse` fuses a trace again: whole, without a channel,
    with one alone, or without some stages.
    """

    rankings: dict[ChannelName, tuple[str, ...]] = field(default_factory=dict)
    stages: tuple[StageRecord, ...] = ()
    fallback: tuple[str, ...] = ()
    weights: dict[str, float] = field(default_factory=dict)
    # Each channel's raw scores, in the order of its ranking (for "why is this note not here").
    scores: dict[ChannelName, tuple[float, ...]] = field(default_factory=dict)

    def record(self, stage: str) -> StageRecord | None:
        """The record of one stage, if it ran."""
        return next((record for record in self.stages if record.stage == stage), None)

    @property
    def floors(self) -> tuple[str, ...]:
        """The notes the query names, first, in the order the stages put them."""
        return tuple(dict.fromkeys(path for record in self.stages for path in record.floors))

    @property
    def hops(self) -> tuple[str, ...]:
        """The notes stages put at the front of the graph's list."""
        return tuple(dict.fromkeys(path for record in self.stages for path in record.first.get("graph", ())))

    def factor(self, channel: str, path: str) -> float:
        """Every stage's factor on one channel's vote for one note, multiplied."""
        product = 1.0
        for record in self.stages:
            product *= record.factors.get(channel, {}).get(path, 1.0)
        return product


@dataclass(frozen=True)
class QueryChip:
    """One thing the query said besides its words, as a front end shows it (and can remove it).

    `kind`: tag, path, file, prop, task, task-todo, task-done, date, phrase, exclude, or,
    typo. `text` is what the chip says ("tag:project", "last week", '"vector tiles"',
    "-android", "kikcoff → kickoff"); `written` is the part of the query it came from
    (empty when there is nothing to remove), and `without` the query as typed with that
    part taken out: what a front end searches for when the user removes the chip.
    """

    kind: str
    text: str
    written: str = ""
    negated: bool = False
    without: str = ""


@dataclass(frozen=True)
class QueryReading:
    """How the engine read a query: the words it ranks by, its chips, and notes on what it did not take literally."""

    words: tuple[str, ...] = ()
    chips: tuple[QueryChip, ...] = ()
    notes: tuple[str, ...] = ()
    only_filters: bool = False
    stems: tuple[str, ...] = ()  # the words' index terms
    prefix: str | None = None  # the word still being typed
    corrections: tuple[tuple[str, str], ...] = ()  # (as typed, read as)
    # The whole word the word being typed was searched by meaning as ("tombst" → "tombstone").
    typed_as: str = ""


@dataclass(frozen=True)
class SearchResults:
    """The answer to one query."""

    query: str
    hits: tuple[Hit, ...]
    channels: dict[ChannelName, ChannelStatus]
    recognized_entities: tuple[str, ...] = ()
    expanded_entities: tuple[str, ...] = ()
    # Why each name the query was read to say is one ("written as a name", "the whole
    # query", "a rare word in the vault"), and the titles it matched only as common words.
    named_because: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    not_names: tuple[tuple[str, str], ...] = field(default=(), compare=False)
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
    # How the query was read: its words, filters and other chips, and what was not taken literally.
    reading: QueryReading = field(default_factory=QueryReading, compare=False)
    # The question's relative clauses the vector channel searched beside it ("where Karel
    # Purkyně died"); a hit they found says which (`ChannelEvidence.clause`).
    clauses: tuple[str, ...] = field(default=(), compare=False)
    # Hits before this index have confident evidence; those after are the nearest notes
    # shown under a "no confident match" divider (front ends draw it here).
    confident: int = field(default=0, compare=False)
    # Words of the query that name something no note holds (engine/unnamed.py): none of
    # the hits is confident evidence then.
    unnamed: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ChannelWhy:
    """How one channel saw one note in one search: its place, its vote, and what weighed on it.

    `rank` is its place in the channel's list (None: not in it); `listed` how many the
    channel returned and `counted` how many of them fusion counts; `factor` what fusion
    multiplied this channel's vote for the note by; `vote` what it added to the fused score.
    """

    channel: ChannelName
    rank: int | None
    score: float | None
    listed: int
    counted: int
    factor: float
    vote: float
    status: ChannelState = "ok"


@dataclass(frozen=True)
class WhyReport:
    """Why a note is where it is in a search's results, or not in them.

    `rank` is its place in the whole fused list (None: no channel counted it), `shown` how
    many results the search was asked for, `cutoff` the fused score of the last one shown.
    `reasons` are the rules and cuts that placed it, the most telling first.
    """

    query: str
    path: str
    title: str
    rank: int | None
    score: float
    shown: int
    cutoff: float
    channels: tuple[ChannelWhy, ...]
    floors: tuple[str, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ContextSource:
    """A chunk a question's context quotes: its catalog id, note, heading path, text and place."""

    id: int
    path: str
    title: str
    heading: str
    text: str
    line: int
    rank: int
    tokens: int


@dataclass(frozen=True)
class ContextEntity:
    """An entity a context's chunks name or lead to: a note, a tag or a free-text name.

    `hop` is 0 for one a source chunk names, else how many edges the walk took to it;
    `description` is one line (a property's or the note's first sentence).
    """

    name: str
    kind: str
    path: str | None
    description: str
    rank: int
    hop: int
    score: float
    tokens: int


@dataclass(frozen=True)
class ContextRelationship:
    """An edge between two of a context's entities: what relates them and how strongly.

    `relation` is the named relation subject first ("Priya Kumar —attended→ Atlas
    Kickoff", then `source` is its subject) when the vault names one; `evidence` the
    kind of edge (links, mentions, tagged, co-occurs); `sentence` the sentence that links
    them, as written (links as their shown text), trimmed around the link when long.
    """

    source: str
    target: str
    relation: str | None
    evidence: str
    sentence: str
    weight: float
    rank: int
    hop: int
    tokens: int


@dataclass(frozen=True)
class ContextCounts:
    """How much a context holds, and how much its budgets left out."""

    chunks: int
    entities: int
    relationships: int
    neighbours: int
    left_out: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ContextBundle:
    """What a question needs from the vault, in three sections, each within its token budget.

    `budgets` and `used` are tokens per section ("sources", "entities", "relationships",
    "total"), and each item's `tokens` what it takes of its section's: its text's tokens or,
    when the context was fitted to the form it is printed in, what it adds to the printed
    text (ids, keys and marks too). Then `used["printed"]` is the tokens of all of it as
    printed (headers and counts too; where no number prints as its own count, the least one
    above it), never above `budgets["total"]`.
    `confident` is how many of the searched notes have confident evidence: sources come from
    those only. `tokenizer` says how tokens were counted; `notes` say how the context
    degraded (no confident match, no entities, no edges, a channel unavailable).
    """

    question: str
    sources: tuple[ContextSource, ...]
    entities: tuple[ContextEntity, ...]
    relationships: tuple[ContextRelationship, ...]
    counts: ContextCounts
    budgets: dict[str, int]
    used: dict[str, int]
    tokenizer: str
    depth: int
    notes: tuple[str, ...] = ()
    channels: dict[ChannelName, ChannelStatus] = field(default_factory=dict)
    confident: int = 0


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
    # Whether the ranking's structure pack is on for this vault, and why, in words.
    structure: str = ""

    @property
    def embedded_fraction(self) -> float:
        """Share of chunks that have an embedding (1.0 for an empty vault)."""
        return 1.0 if self.chunks == 0 else self.embedded_chunks / self.chunks


@dataclass(frozen=True)
class NoteChoice:
    """A note a picker offers for what was typed: its path and title, the name that matched
    (the title, an alias or the path) and how (`exact`, `prefix`, `word`, `contains`,
    `letters`: the typed letters in order; `nearest`: only a close spelling)."""

    path: str
    title: str
    matched: str
    how: str


@dataclass(frozen=True)
class Backlink:
    """A note linking to another, with the line that links."""

    path: str
    title: str
    line: int
    context: str


@dataclass(frozen=True)
class LinkedNote:
    """A note or file the open note links to: its title, and the open note's first line that links to it."""

    path: str
    title: str
    line: int
    context: str


@dataclass(frozen=True)
class Neighbor:
    """An entity next to a note in the graph, with the edge weight and the relation the vault names, if any."""

    name: str
    kind: str
    weight: float
    path: str | None = None
    relation: Relation | None = None


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
    """A note for display: its catalog record plus its text and resolved links.

    `same_title` are the other notes with this title (a copy, a namesake in another
    folder): where there are any, front ends show the path so the two can be told apart.
    """

    info: NoteInfo
    text: str
    body_line_offset: int
    links: tuple[tuple[Link, str | None], ...]
    same_title: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoteSection:
    """A part of a note an embed shows: the whole body, a heading's section or a block.

    `line` is the 1-based file line the text starts at; `text` is cut at a line when
    the section is longer than an embed may show (`truncated`); `links` are the note's
    resolved links, so the section's own links and embeds render as in the note.
    """

    path: str
    title: str
    heading: str | None
    block: str | None
    line: int
    text: str
    truncated: bool = False
    links: tuple[tuple[Link, str | None], ...] = ()


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


# What a vault file is, as the trees and embeds show it.
FileKind = Literal["note", "image", "audio", "video", "pdf", "canvas", "other"]


@dataclass(frozen=True)
class VaultEntry:
    """A file of the vault as the trees list it: a note (titled) or an attachment (named by its file)."""

    path: str
    title: str
    kind: FileKind = "note"


@dataclass(frozen=True)
class LinkCompletion:
    """One way to finish a `[[` link being typed.

    `link` is what goes between `[[` and `]]` (the shortest link Obsidian would write:
    `Atlas`, `Projects/Beacon/Roadmap#Risks`, `Atlas|the map`); `label` is what a list
    shows (a title, an alias, a heading, a block's text) and `detail` where it is.
    """

    link: str
    label: str
    detail: str
    path: str
    kind: Literal["note", "alias", "file", "heading", "block"]


@dataclass(frozen=True)
class TagCount:
    """A tag (without `#`) and how many notes carry it."""

    tag: str
    notes: int


@dataclass(frozen=True)
class CanvasCard:
    """One card of an Obsidian canvas: its text, or the note, file or web page it shows, and its box."""

    kind: Literal["text", "file", "link", "group"]
    text: str
    x: float
    y: float
    width: float
    height: float
    path: str | None = None
    color: str = ""


@dataclass(frozen=True)
class CanvasEdge:
    """An arrow between two canvas cards (indices into the card list), with its label."""

    source: int
    target: int
    label: str = ""


@dataclass(frozen=True)
class Canvas:
    """An Obsidian `.canvas` file read: its cards and arrows (`problem` says why it could not be read)."""

    path: str
    cards: tuple[CanvasCard, ...] = ()
    edges: tuple[CanvasEdge, ...] = ()
    problem: str = ""


@dataclass(frozen=True)
class GraphNode:
    """A node of a note's local graph: a note (`path`) or an entity no note holds; x, y in [0, 1]."""

    name: str
    path: str | None
    role: Literal["center", "link", "backlink", "both", "neighbor"]
    x: float
    y: float


@dataclass(frozen=True)
class GraphEdge:
    """An edge of a local graph between two nodes (indices), with the relation the vault names, if any."""

    source: int
    target: int
    kind: Literal["link", "neighbor"]
    relation: str = ""


@dataclass(frozen=True)
class LocalGraph:
    """A note, its links, backlinks and graph neighbours, laid out for drawing."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
