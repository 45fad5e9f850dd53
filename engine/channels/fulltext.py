"""Full-text channel: Whoosh BM25F over one document per note."""

from __future__ import annotations

import heapq
import shutil
import threading
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from engine.catalog import Catalog, NoteRow
from engine.channels.base import ChannelAnswer
from engine.config import FulltextConfig
from engine.errors import IndexCorrupt
from engine.query import Query
from engine.records import ChannelHit, ChannelName

_FIELDS = ("title", "aliases", "headings", "tags", "body")
_PREFIX_SCAN_LIMIT = 4000


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
            self._write(catalog.note_rows(), removed=(), fresh=True)

    def update(self, catalog: Catalog, changed: Collection[str], removed: Collection[str]) -> None:
        """Replace changed notes' documents and delete removed ones."""
        with self._lock:
            self._write(catalog.note_rows(changed) if changed else iter(()), removed=removed, fresh=False)

    def indexed_shas(self) -> dict[str, str]:
        """path → sha of every indexed document, for repair against the catalog."""
        with self._lock:
            return {
                str(fields["path"]): str(fields.get("sha", ""))
                for fields in self._searcher.reader().all_stored_fields()
            }

    def _write(self, rows: Iterable[NoteRow], *, removed: Collection[str], fresh: bool) -> None:
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
                    "headings": " ; ".join(row.headings),
                    "tags": " ".join(_tag_words(row.tags)),
                    "body": row.body,
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
        from whoosh import query as wq

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
            clauses = [
                wq.Or([wq.Term(field, stem, boost=boost) for field, boost in boosts])
                for stem in dict.fromkeys(stems)
            ]
            if expansions:
                clauses.append(
                    wq.Or([wq.Term(field, term, boost=boost) for term in expansions for field, boost in boosts])
                )
            results = searcher.search(wq.Or(clauses), limit=limit, terms=True)
            hits = []
            for rank, hit in enumerate(results, start=1):
                matched = tuple(
                    dict.fromkeys(
                        term.decode("utf-8") if isinstance(term, bytes) else str(term)
                        for _field, term in (hit.matched_terms() or ())
                    )
                )
                hits.append(
                    ChannelHit(path=str(hit["path"]), score=float(hit.score or 0.0), rank=rank, matched_terms=matched)
                )
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
            for scanned, term in enumerate(reader.expand_prefix(field, prefix)):
                if scanned >= _PREFIX_SCAN_LIMIT:
                    break  # bounded: a 2-letter prefix must not walk the whole lexicon
                text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
                if text not in candidates:
                    candidates[text] = int(reader.doc_frequency(field, term))
        best = heapq.nlargest(self._config.prefix_max_terms, candidates.items(), key=lambda kv: kv[1])
        return list(dict.fromkeys([*own, *(term for term, _ in best)]))

    # -- lifecycle ----------------------------------------------------------------
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


def _tag_words(tags: Iterable[str]) -> list[str]:
    words: list[str] = []
    for tag in tags:
        clean = tag.lstrip("#").lower()
        words.append(clean.replace("/", "_"))
        words.extend(part for part in clean.split("/") if part)
    return words
