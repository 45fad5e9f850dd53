"""Full-text channel: Whoosh BM25F over one document per note."""

from __future__ import annotations

import heapq
import os
import shutil
import threading
from collections.abc import Collection, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.catalog import Catalog, NoteRow
from engine.channels.base import ChannelAnswer
from engine.channels.bm25 import BulkScorer
from engine.config import FulltextConfig
from engine.entities import displayed_text
from engine.errors import IndexCorrupt
from engine.query import Query
from engine.records import ChannelHit, ChannelName

_FIELDS = ("title", "aliases", "headings", "tags", "body")
_PREFIX_SCAN_LIMIT = 4000
# Whoosh's multi-process writer pays off only for big batches (worker start-up, extra segments).
_PARALLEL_WRITE_MIN = 2000
_MAX_WRITER_PROCS = 2


def _schema() -> Any:
    from whoosh import fields
    from whoosh.analysis import StemmingAnalyzer

    analyzer = StemmingAnalyzer()
    return fields.Schema(
        path=fields.ID(stored=True, unique=True),
        sha=fields.STORED(),
        title=fields.TEXT(analyzer=analyzer, stored=False),
        aliases=fields.TEXT(analyzer=analyzer),
        headings=fields.TEXT(analyzer=analyzer),
        tags=fields.TEXT(analyzer=analyzer),
        body=fields.TEXT(analyzer=analyzer),
    )


class FulltextChannel:
    """BM25F with per-field boosts; the last word being typed expands as a bounded prefix."""

    name: ChannelName = "fulltext"

    def __init__(self, directory: Path, config: FulltextConfig) -> None:
        from whoosh import index
        from whoosh.scoring import BM25F

        self._dir = directory
        self._config = config
        self._lock = threading.RLock()
        self._weighting = BM25F(B=0.75, K1=1.2)
        try:
            if directory.is_dir() and index.exists_in(str(directory)):
                self._ix = index.open_dir(str(directory))
            else:
                directory.mkdir(parents=True, exist_ok=True)
                self._ix = index.create_in(str(directory), _schema())
            self._searcher = self._ix.searcher(weighting=self._weighting)
        except Exception as exc:  # whoosh raises assorted errors for damaged segments
            raise IndexCorrupt(f"full-text index unreadable: {exc}") from exc
        self._analyzer = _schema()["body"].analyzer
        self._scorer: BulkScorer | None = None

    # -- building ---------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> None:
        """Recreate the index from every catalog note."""
        from whoosh import index

        with self._lock:
            self._searcher.close()
            self._ix.close()
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir.mkdir(parents=True, exist_ok=True)
            self._ix = index.create_in(str(self._dir), _schema())
            self._write(catalog.note_rows(), removed=(), fresh=True, expected=catalog.counts()["notes"])

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Replace changed notes' documents and delete removed ones."""
        with self._lock:
            self._write(
                catalog.note_rows(changed) if changed else iter(()), removed=removed, fresh=False, expected=len(changed)
            )

    def indexed_shas(self) -> dict[str, str]:
        """path → sha of every indexed document, for repair against the catalog."""
        with self._lock:
            return {
                str(fields["path"]): str(fields.get("sha", ""))
                for fields in self._searcher.reader().all_stored_fields()
            }

    def _write(
        self, rows: Iterable[NoteRow], *, removed: Collection[str], fresh: bool, expected: int = 0
    ) -> None:
        procs = min(os.cpu_count() or 1, _MAX_WRITER_PROCS) if expected >= _PARALLEL_WRITE_MIN else 1
        if procs > 1:
            # Analysis and posting encoding are pure Python: one writer process per core,
            # each leaving its own segment (merging them would cost as much again).
            writer = self._ix.writer(limitmb=128, procs=procs, multisegment=True)
        else:
            writer = self._ix.writer(limitmb=128)
        try:
            for path in removed:
                writer.delete_by_term("path", path)
            for row in rows:
                doc = {
                    "path": row.path,
                    "sha": row.sha,
                    "title": row.title,
                    "aliases": " ; ".join(row.aliases),
                    # The H1 that repeats the title is the title, already weighted as such.
                    "headings": " ; ".join(h for h in row.headings if _key(h) != _key(row.title)),
                    "tags": " ".join(_tag_words(row.tags)),
                    "body": displayed_text(row.body),
                }
                if fresh:
                    writer.add_document(**doc)
                else:
                    writer.update_document(**doc)
        except BaseException:
            writer.cancel()
            raise
        writer.commit()
        self._searcher = self._ix.searcher(weighting=self._weighting)

    # -- searching ---------------------------------------------------------------
    def analyze(self, text: str) -> list[str]:
        """The index terms (lowercased, stop words dropped, stemmed) of some text."""
        return [token.text for token in self._analyzer(text)]

    def search(self, query: Query, limit: int) -> ChannelAnswer:
        """BM25F over title, aliases, headings, tags and body."""
        with self._lock:
            searcher = self._searcher
            complete = query.terms[:-1] if query.prefix else query.terms
            stems: list[str] = []
            for word in complete:
                stems.extend(self.analyze(word))
            expansions: list[str] = []
            if query.prefix:
                expansions = self._expand_prefix(searcher, query.prefix)
            if not stems and not expansions:
                return ChannelAnswer(hits=())
            boosts = self._boosts()
            # The same query as Or(Term(field, stem, boost) ...) per stem plus one Or of the
            # prefix's expansions, scored with Whoosh's BM25F in bulk (engine/channels/bm25.py).
            clauses = [(field, stem, boost) for stem in dict.fromkeys(stems) for field, boost in boosts]
            clauses += [(field, term, boost) for term in expansions for field, boost in boosts]
            scorer = self._scorer
            if scorer is None or scorer.searcher is not searcher:
                scorer = self._scorer = BulkScorer(searcher, b=self._weighting.B, k1=self._weighting.K1)
            hits = [
                ChannelHit(
                    path=str(searcher.stored_fields(doc.docnum)["path"]),
                    score=doc.score,
                    rank=rank,
                    matched_terms=doc.matched_terms,
                )
                for rank, doc in enumerate(scorer.search(clauses, limit), start=1)
            ]
            return ChannelAnswer(hits=tuple(hits))

    def _boosts(self) -> list[tuple[str, float]]:
        c = self._config
        return [
            ("title", c.title_boost),
            ("aliases", c.alias_boost),
            ("headings", c.heading_boost),
            ("tags", c.tag_boost),
            ("body", c.body_boost),
        ]

    def _expand_prefix(self, searcher: Any, prefix: str) -> list[str]:
        """The most frequent indexed terms starting with `prefix`, plus its own stem."""
        own = self.analyze(prefix)
        if len(prefix) < self._config.prefix_min_chars:
            return own
        reader = searcher.reader()
        candidates: dict[str, int] = {}
        for field in ("title", "body"):
            # Walk each segment's term file in order (its terms come with their stats);
            # the combined reader would look every term up again in every segment.
            field_counts: dict[str, int] = {}
            for leaf, _base in reader.leaf_readers():
                for scanned, (term, info) in enumerate(leaf.iter_prefix(field, prefix)):
                    if scanned >= _PREFIX_SCAN_LIMIT:
                        break  # bounded: a 2-letter prefix must not walk the whole lexicon
                    text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
                    field_counts[text] = field_counts.get(text, 0) + int(info.doc_frequency())
            for text, count in field_counts.items():
                candidates.setdefault(text, count)
        best = heapq.nlargest(self._config.prefix_max_terms, candidates.items(), key=lambda kv: kv[1])
        return list(dict.fromkeys([*own, *(term for term, _ in best)]))

    # -- lifecycle ----------------------------------------------------------------
    def refresh(self) -> None:
        """Reopen the searcher if another process committed since it was opened."""
        with self._lock:
            if not self._searcher.up_to_date():
                self._searcher = self._searcher.refresh()

    def save(self) -> None:
        """Whoosh commits on every write; nothing more to do."""

    def count(self) -> int:
        """Indexed documents."""
        with self._lock:
            return int(self._searcher.doc_count())

    def close(self) -> None:
        """Close the searcher and index."""
        with self._lock:
            self._searcher.close()
            self._ix.close()


@lru_cache(maxsize=1)
def _shared_analyzer() -> Any:
    return _schema()["body"].analyzer


def analyze_text(text: str) -> list[str]:
    """The index terms of some text without an open index (the same analyzer as the index)."""
    return [token.text for token in _shared_analyzer()(text)]


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def _tag_words(tags: Iterable[str]) -> list[str]:
    words: list[str] = []
    for tag in tags:
        clean = tag.lstrip("#").lower()
        words.append(clean.replace("/", "_"))
        words.extend(part for part in clean.split("/") if part)
    return words
