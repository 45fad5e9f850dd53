"""Full-text channel: Whoosh BM25F over one document per note."""

from __future__ import annotations

import bisect
import heapq
import logging
import os
import shutil
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.catalog import Catalog, NoteRow
from engine.channels.base import ChannelAnswer, ChannelContext, ChannelReading
from engine.channels.bm25 import BUCKET_CHARS, BulkScorer, SegmentCache
from engine.config import FulltextConfig
from engine.entities import displayed_text
from engine.errors import IndexCorrupt
from engine.folding import fold_accents, typed_form
from engine.lexicon import Lexicon
from engine.query import Query
from engine.records import ChannelHit, ChannelName
from engine.tokens import script_of

log = logging.getLogger("cairn.fulltext")

_FIELDS = ("title", "aliases", "headings", "tags", "body")
# Prefix expansions come from buckets of terms sharing their first letters.
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
# The letters a slip may put in a word, by the word's script (engine/tokens.py): a Greek
# word with a Latin letter in it reads as no word of the vault. A word of another script
# tries its own letters.
_ALPHABETS: dict[str, str] = {
    "latin": _ALPHABET,
    "greek": "αβγδεζηθικλμνξοπρσςτυφχψωάέήίόύώϊϋΐΰ",
    "cyrillic": "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґў",
}
# The most letters a stemmer takes off a word ("business" → "busi").
_STEM_TAIL = 4
# A typed word's expansions are read from the terms sharing its first three letters: a
# bucket of the first two held thousands of terms at 10k notes, 20-40 ms to read at the
# first keystroke of every word (issue 20's sixth round, `git show 0398263:docs/BENCHMARKS.md`).
# The segment cache keeps
# each bucket's terms and where their postings are.
_BUCKET_CHARS = BUCKET_CHARS
# Typed prefixes whose expansions are kept (for the current searcher).
_KEPT_EXPANSIONS = 4096
# The language's words read for one word being typed ("pro" starts some 600 of English's).
_TYPED_READ = 2000
# The flat scan's typo search looks among the terms sharing a word's first two letters.
_FUZZY_BUCKET_CHARS = 2
# Shorter words have too many neighbours one edit away to be worth a fuzzy guess.
_FUZZY_MIN_CHARS = 4
# Longer words are not read as typos: each of a word's letters is tried deleted, swapped,
# replaced and inserted, and each variant stemmed, so the work grows with the square of the
# word's length (a pasted run of 228 letters took 10 s at one keystroke). A longer word is
# searched as typed (the vectors still read it).
_CORRECTED_MAX_CHARS = 24
# Typos are few: a query with more words than this that neither the vault nor the language
# knows is another language or pasted text, and none of them is read as a typo. Each word
# read so tries every variant one edit away (about 50 per letter) with two posting reads.
_MAX_TYPOS = 3
# Index terms looked up for corrections per query, at most: three long typos fit.
_CORRECTION_LOOKUPS = 4000
# A word being typed is read as the word one edit of it begins from this many letters on.
_PREFIX_CORRECTED_MIN_CHARS = 5
# Whoosh's multi-process writer pays off only for big batches (worker start-up, extra segments).
_PARALLEL_WRITE_MIN = 2000
_MAX_WRITER_PROCS = 2
# Posting buffer per writer process before it spills a sorted run to disk (merged at commit).
_WRITER_LIMIT_MB = 512


def _schema() -> Any:
    from whoosh import fields

    from engine.channels.analysis import analyzer as script_analyzer

    # One analyzer for notes and queries, per word by script (engine/channels/analysis.py);
    # accents folded as Obsidian's Omnisearch does by default: "jose" finds "José".
    analyzer = script_analyzer()
    # Term frequencies only: nothing runs phrase queries, and writing word positions
    # took a third of the indexing time (and a fifth of the index size).
    return fields.Schema(
        path=fields.ID(stored=True, unique=True),
        sha=fields.STORED(),
        title=fields.TEXT(analyzer=analyzer, stored=False, phrase=False),
        aliases=fields.TEXT(analyzer=analyzer, phrase=False),
        headings=fields.TEXT(analyzer=analyzer, phrase=False),
        tags=fields.TEXT(analyzer=analyzer, phrase=False),
        body=fields.TEXT(analyzer=analyzer, phrase=False),
    )


@dataclass(frozen=True)
class FulltextReading(ChannelReading):
    """What the full text read from a query beside its hits."""

    # The index terms the word still being typed was searched as (its expansions).
    prefix_terms: tuple[str, ...] = ()


class FulltextChannel:
    """BM25F with per-field boosts; the last word being typed expands as a bounded prefix."""

    name: ChannelName = "fulltext"

    def __init__(self, directory: Path, config: FulltextConfig) -> None:
        from whoosh import index
        from whoosh.scoring import BM25F

        from engine.channels.mapped import MappedStorage

        self._dir = directory
        self._config = config
        self._lock = threading.RLock()
        self._weighting = BM25F(B=config.bm25_b, K1=config.bm25_k1)
        try:
            if directory.is_dir() and index.exists_in(str(directory)):
                self._ix = MappedStorage(str(directory)).open_index()
            else:
                directory.mkdir(parents=True, exist_ok=True)
                self._ix = MappedStorage(str(directory)).create_index(_schema())
            self._searcher = self._ix.searcher(weighting=self._weighting)
        except Exception as exc:  # whoosh raises assorted errors for damaged segments
            raise IndexCorrupt(f"full-text index unreadable: {exc}") from exc
        self._analyzer = _schema()["body"].analyzer
        self._segments = SegmentCache()
        self._scorer: BulkScorer | None = None
        self._buckets: dict[str, list[tuple[str, int]]] = {}
        # Each typed prefix's expansions: planning (typo correction) and the search both ask.
        self._expansions: dict[str, list[str]] = {}
        # Corrections found for the current searcher: typing repeats the same words.
        self._corrected: tuple[BulkScorer, dict[str, tuple[str, str] | None]] | None = None
        self._known_words: tuple[Mapping[str, int], list[str]] | None = None
        self._word_terms: dict[str, list[str]] = {}

    # -- building ---------------------------------------------------------------
    def rebuild(self, catalog: Catalog) -> None:
        """Recreate the index from every catalog note."""
        from engine.channels.mapped import MappedStorage

        with self._lock:
            self._searcher.close()
            self._ix.close()
            _remove_index_files(self._dir)
            self._dir.mkdir(parents=True, exist_ok=True)
            self._ix = MappedStorage(str(self._dir)).create_index(_schema())
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
            writer = self._ix.writer(limitmb=_WRITER_LIMIT_MB, procs=procs, multisegment=True)
        else:
            writer = self._ix.writer(limitmb=_WRITER_LIMIT_MB)
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
                    # Folders file notes as tags do: "people who ..." is about notes in People/.
                    "tags": " ".join([*_tag_words(row.tags), *_folder_words(row.path)]),
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
        before = self._searcher
        self._searcher = self._ix.searcher(weighting=self._weighting)
        # The scorer read the old searcher's segments: freed now, not at the next search.
        self._scorer = None
        self._corrected = None
        self._buckets, self._expansions = {}, {}
        if not fresh:  # a rebuild closed the old searcher before it deleted the index
            before.close()

    # -- searching ---------------------------------------------------------------
    def analyze(self, text: str) -> list[str]:
        """The terms a query's text is looked up by (lowercased, stop words dropped, stemmed)."""
        return [token.text for token in self._analyzer(text, mode="query")]

    def search(self, query: Query, limit: int) -> ChannelAnswer:
        """BM25F over title, aliases, headings, tags and body."""
        with self._lock:
            searcher = self._searcher
            planned = getattr(query, "complete_stems", None)
            if planned is not None and (planned or not query.terms):
                stems = list(planned)  # the plan's: with any typo read as the word it was meant to be
            else:
                complete = query.terms[:-1] if query.prefix else query.terms
                stems = []
                for word in complete:
                    stems.extend(self.analyze(word))
            expansions: list[str] = []
            if query.prefix:
                expansions = self._expand_prefix(self._scorer_for(searcher), query.prefix)
            if not stems and not expansions:
                return ChannelAnswer(hits=())
            boosts = self._boosts()
            # The same query as Or(Term(field, stem, boost) ...) per stem plus one Or of the
            # prefix's expansions, scored with Whoosh's BM25F in bulk (engine/channels/bm25.py).
            clauses = [(field, stem, boost) for stem in dict.fromkeys(stems) for field, boost in boosts]
            clauses += [(field, term, boost) for term in expansions for field, boost in boosts]
            scorer = self._scorer_for(searcher)
            candidates = getattr(query, "candidates", None)
            allowed = scorer.docnums(candidates) if candidates is not None else None
            hits = [
                ChannelHit(
                    path=scorer.path_of(doc.docnum),
                    score=doc.score,
                    rank=rank,
                    matched_terms=doc.matched_terms,
                )
                for rank, doc in enumerate(scorer.search(clauses, limit, allowed), start=1)
            ]
            return ChannelAnswer(hits=tuple(hits), reading=FulltextReading(prefix_terms=tuple(expansions)))

    def corrections(
        self, words: Sequence[str], prefix: str | None = None, known: Callable[[], Mapping[str, int]] = dict
    ) -> dict[str, tuple[str, str]]:
        """For each word the index has never seen, (the index term, the word) one edit away that most notes hold.

        An edit is one letter deleted, inserted, replaced, or two neighbours swapped
        ("kikcoff" → kickoff, "postgress" → postgres); a word the index knows, or one with
        no such neighbour, is left alone, and so is a whole word of the language (`known`,
        read only when a word is not in the index: "attended" is a word even where no note
        says it). Words under four letters and numbers are never corrected: too many of
        their neighbours are words of their own. `prefix`, the word still being typed, is
        corrected only when no index term and no word of the language starts with it
        ("discon", of disconnected, stays as typed in a vault without that word). When no
        whole word is one edit from it either, it reads as the word that a variant one edit
        away begins (`_prefix_correction`: "kikcof" → kickoff). Of variants that read as the same
        index term, one in `known` is the one shown: "atlsa" reads as atlas, not as the
        stem's other spelling "atla".
        """
        with self._lock:
            scorer = self._scorer_for(self._searcher)
            cache = self._corrected
            if cache is None or cache[0] is not scorer:
                cache = self._corrected = (scorer, {})
            out: dict[str, tuple[str, str]] = {}
            starts = prefix and any(self._frequency(scorer, term) for term in self._expand_prefix(scorer, prefix))
            # A word being typed that begins a word of the language is no typo, even where the
            # vault lacks that word ("recep", of reception, is not read as recap).
            typo = bool(prefix and not starts and not _words_beginning(self._words_of(known()), _folded(prefix)))
            if prefix and typo:
                words = [*words, prefix]
            unknown = [word for word in dict.fromkeys(words) if self._unknown(scorer, word, known)]
            if len(unknown) > _MAX_TYPOS:
                return out
            budget = [_CORRECTION_LOOKUPS]
            for word in unknown:
                if word not in cache[1]:
                    found = self._correction(scorer, word, known, budget)
                    if budget[0] <= 0:
                        break  # cut short: not remembered, a shorter query reads it whole
                    cache[1][word] = found
                found = cache[1][word]
                if found:
                    out[word] = found
            if prefix and typo and prefix not in out:
                begun = f"{prefix}\0"  # the cache's key for the word the prefix begins
                if begun not in cache[1]:
                    cache[1][begun] = self._prefix_correction(scorer, prefix, known())
                found = cache[1][begun]
                if found:
                    out[prefix] = found
            return out

    def _prefix_correction(self, scorer: BulkScorer, prefix: str, known: Mapping[str, int]) -> tuple[str, str] | None:
        """The word being typed, when it begins no index term and no word of the language,
        read as the whole word that a variant one edit away begins ("kikcof" → kickoff: no
        word starts "kikcof", and "kickof", its neighbours swapped, starts kickoff). Of such words,
        the one whose index term the most notes hold, then the one with the first kind of
        edit (as `_correction` orders them). A prefix under five letters has too many
        variants that begin a word to be read so, and names outside the language's words
        are not completed (as `word_being_typed` completes none)."""
        if not _PREFIX_CORRECTED_MIN_CHARS <= len(prefix) <= _CORRECTED_MAX_CHARS or not prefix.isalpha():
            return None
        words = self._words_of(known)
        best: tuple[str, str] | None = None
        best_key: tuple[int, int, int, str] | None = None
        for variant, kind in _one_edit(prefix, script_of(prefix)).items():
            begun = [word for word in _words_beginning(words, variant) if len(word) > len(variant)]
            if not begun:
                continue
            self._expand_prefix(scorer, variant)  # reads the bucket of the variant's first letters
            counts = dict(self._buckets.get(variant[:_BUCKET_CHARS], ()))
            for word in begun:
                terms = self._analyzed(word)
                count = counts.get(terms[0], 0) if len(terms) == 1 else 0
                key = (-count, kind, known[word], word)
                if count and (best_key is None or key < best_key):
                    best, best_key = (terms[0], word), key
        return best

    def _unknown(self, scorer: BulkScorer, word: str, whole_words: Callable[[], Collection[str]]) -> bool:
        """Whether `word` may be a typo: four to 24 letters, and neither in the index nor a word of the language."""
        if not 4 <= len(word) <= _CORRECTED_MAX_CHARS or not word.isalpha():
            return False
        stems = self.analyze(word)
        if not stems or any(self._frequency(scorer, stem) for stem in stems):
            return False
        return word not in whole_words()

    def _correction(
        self, scorer: BulkScorer, word: str, whole_words: Callable[[], Collection[str]], budget: list[int]
    ) -> tuple[str, str] | None:
        """The index term (and word) one edit from an unknown `word` that most notes hold;
        `budget` counts down the index terms looked up (a stem shared by variants, once)."""
        known = whole_words()
        # Of the variants most notes hold, the first kind of edit (then the shorter) is the one shown.
        variants = _one_edit(word, script_of(word))
        counts: dict[str, int] = {}
        best: tuple[str, str] | None = None
        best_key: tuple[int, int, int, int, str] | None = None
        for variant, kind in variants.items():
            for stem in self.analyze(variant):
                count = counts.get(stem)
                if count is None:
                    if budget[0] <= 0:
                        return best
                    budget[0] -= 1
                    count = counts[stem] = self._frequency(scorer, stem)
                key = (-count, int(variant not in known), kind, len(variant), variant)
                if count and (best_key is None or key < best_key):
                    best, best_key = (stem, variant), key
        return best

    def _frequency(self, scorer: BulkScorer, term: str) -> int:
        """How many documents hold `term` in their title or body."""
        return max(len(scorer.docs_with(term, ("title",))), len(scorer.docs_with(term, ("body",))))

    def notes_with(self, word: str) -> set[str]:
        """Notes that hold `word` (its index terms, all of them) in any field."""
        stems = self.analyze(word)
        if not stems:
            return set()
        with self._lock:
            scorer = self._scorer_for(self._searcher)
            fields = [field for field, _boost in self._boosts()]
            found: set[int] | None = None
            for stem in stems:
                docs = set(scorer.docs_with(stem, fields).tolist())
                found = docs if found is None else found & docs
            return set(scorer.paths_of(found)) if found else set()
    def fuzzy_search(self, words: Sequence[str], limit: int) -> list[tuple[str, tuple[str, ...]]]:
        """Notes holding an indexed term one edit from a query word ("atlsa" → atla), best first.

        The flat scan's fallback when no channel found enough: (path, "word ~ term" pairs).
        Terms are looked for among those sharing the word's first letters, so a typo there
        finds nothing. Words of which more than a few are not in the index are no typos,
        and are looked for as written only.
        """
        with self._lock:
            scorer = self._scorer_for(self._searcher)
            near: dict[str, str] = {}
            unknown = {w for w in words if len(w) >= _FUZZY_MIN_CHARS and not any(self._frequency(scorer, t) for t in self.analyze(w))}
            if len(unknown) > _MAX_TYPOS:
                return []  # another language or pasted text, not typos (as `corrections` reads it)
            forms = [form for w in words for form in (fold_accents(w.lower()), *self.analyze(w))]
            for word in dict.fromkeys(forms):
                if len(word) < _FUZZY_MIN_CHARS:
                    continue
                start = word[:_FUZZY_BUCKET_CHARS]
                for field in ("title", "body"):
                    for term in scorer.terms(field, start):
                        if term != word and within_one_edit(word, term):
                            near.setdefault(term, word)
            if not near:
                return []
            clauses = [(field, term, boost) for term in near for field, boost in self._boosts()]
            return [
                (scorer.path_of(doc.docnum), tuple(f"{near[t]} ~ {t}" for t in doc.matched_terms if t in near))
                for doc in scorer.search(clauses, limit)
            ]

    def prepare(self) -> None:
        """Read the stored paths of every segment not read yet (0.4 s at 50k notes for a
        whole index), which the first filtered search would otherwise read. A reader of
        its own does it, off the channel's lock: searches go on meanwhile, and never
        share a file position with it."""
        with self._lock:
            index, segments = self._ix, self._segments
            leaves = self._searcher.reader().leaf_readers()
            if all(leaf.segment() is None or segments.has_paths(leaf) for leaf, _base in leaves):
                return  # every segment read already: no reader to open
        try:
            reader = index.reader()
        except Exception:  # a commit or merge replacing segments meanwhile: the search reads them
            return
        try:
            for leaf, _base in reader.leaf_readers():
                if leaf.segment() is not None and not segments.has_paths(leaf):
                    segments.paths(leaf)
        except Exception:  # the same, found while reading
            log.debug("reading the stored paths ahead failed", exc_info=True)
        finally:
            reader.close()

    def term_weights(self, terms: Iterable[str]) -> dict[str, float]:
        """Each index term's idf in the body field (BM25's, as Whoosh computes it)."""
        with self._lock:
            scorer = self._scorer_for(self._searcher)
            return {term: scorer.idf("body", term) for term in dict.fromkeys(terms)}

    def _boosts(self) -> list[tuple[str, float]]:
        c = self._config
        return [
            ("title", c.title_boost),
            ("aliases", c.alias_boost),
            ("headings", c.heading_boost),
            ("tags", c.tag_boost),
            ("body", c.body_boost),
        ]

    def _scorer_for(self, searcher: Any) -> BulkScorer:
        """The bulk scorer of the current searcher (a new one after every commit)."""
        scorer = self._scorer
        if scorer is None or scorer.searcher is not searcher:
            scorer = self._scorer = BulkScorer(searcher, self._segments, b=self._weighting.B, k1=self._weighting.K1)
            self._buckets, self._expansions = {}, {}
        return scorer

    def _expand_prefix(self, scorer: BulkScorer, prefix: str) -> list[str]:
        """The most frequent indexed terms starting with `prefix`, plus its own stem."""
        found = self._expansions.get(prefix)
        if found is None:
            if len(self._expansions) >= _KEPT_EXPANSIONS:
                self._expansions.clear()
            found = self._expansions[prefix] = self._expansions_of(scorer, prefix)
        return found

    def word_being_typed(self, prefix: str, lexicon: Lexicon) -> str:
        """The whole word `prefix` most likely becomes in this vault ("" when none is known).

        Of the language's whole words (`Lexicon.known_words`) that start with the prefix
        and are no stop words, the one whose index term the most notes hold; of those
        reading as the same term, the commonest in the language. "tombst" becomes
        "tombstone", "meeti" "meeting", "the" "themes" in a vault about themes, "communi"
        "community" (not "communism", read as the same term). A prefix shorter than full
        text's expansions, or one that begins no known word of the vault, becomes nothing.
        """
        if len(prefix) < self._config.prefix_min_chars or not prefix.isalpha():
            return ""
        lowered = _folded(prefix)
        known = lexicon.known_words()
        words = self._words_of(known)
        candidates = [word for word in _words_beginning(words, lowered) if word not in lexicon.stop_words]
        if not candidates:
            return ""
        with self._lock:
            scorer = self._scorer_for(self._searcher)
            self._expand_prefix(scorer, prefix)  # reads the bucket of the prefix's first letters
            counts = dict(self._buckets.get(lowered[:_BUCKET_CHARS], ()))
        best, best_key = "", (0, 0)
        for word in candidates:
            terms = self._analyzed(word)
            key = (counts.get(terms[0], 0) if len(terms) == 1 else 0, -known[word])
            if key[0] and key > best_key:
                best, best_key = word, key
        return best

    def _analyzed(self, word: str) -> list[str]:
        """`analyze(word)`, remembered (a word being typed is read again on every keystroke)."""
        found = self._word_terms.get(word)
        if found is None:
            if len(self._word_terms) >= _KEPT_EXPANSIONS * 8:
                self._word_terms.clear()
            found = self._word_terms[word] = self.analyze(word)
        return found

    def _words_of(self, known: Mapping[str, int]) -> list[str]:
        """The language's whole words, sorted (once per vocabulary)."""
        if self._known_words is None or self._known_words[0] is not known:
            self._known_words = (known, sorted(known))
        return self._known_words[1]

    def _expansions_of(self, scorer: BulkScorer, prefix: str) -> list[str]:
        own = self.analyze(prefix)
        if len(prefix) < self._config.prefix_min_chars:
            return own
        lowered = fold_accents(typed_form(prefix).casefold())
        start = lowered[:_BUCKET_CHARS]
        bucket = self._buckets.get(start)
        if bucket is None:
            # Terms sharing the first letters, read once per segment and searcher: typing
            # a word re-filters the same bucket on every keystroke.
            candidates: dict[str, int] = {}
            for field in ("title", "body"):
                for term, count in scorer.terms(field, start).items():
                    candidates.setdefault(term, count)
            for field in ("aliases", "headings", "tags"):
                # Read too (small), so the expansions' postings in every field are found
                # in their bucket: a term a segment lacks costs a dictionary lookup.
                scorer.terms(field, start)
            bucket = self._buckets[start] = list(candidates.items())
        matching = bucket if len(lowered) <= _BUCKET_CHARS else [kv for kv in bucket if kv[0].startswith(lowered)]
        if not matching:
            # The word has grown past its stem: "meeti" is on its way to "meeting", indexed as
            # "meet". The longest index term it starts with, a few letters back, stands in
            # (else the word read as a typo costs a search of every word one edit away).
            counts = dict(bucket)
            for end in range(len(lowered) - 1, max(3, len(lowered) - _STEM_TAIL) - 1, -1):
                if counts.get(lowered[:end]):
                    matching = [(lowered[:end], counts[lowered[:end]])]
                    break
        best = heapq.nlargest(self._config.prefix_max_terms, matching, key=lambda kv: kv[1])
        return list(dict.fromkeys([*own, *(term for term, _ in best)]))

    # -- lifecycle ----------------------------------------------------------------
    def sync(self, catalog: Catalog, *, lagging: bool, writable: bool) -> str:
        """Re-index the notes whose indexed sha differs from the catalog's (a killed run left them)."""
        if not writable or (not lagging and self.count() == catalog.counts()["notes"]):
            return ""
        catalog_shas = {p: state.sha for p, state in catalog.file_states().items()}
        indexed = self.indexed_shas()
        stale = [p for p, sha in catalog_shas.items() if indexed.get(p) != sha]
        extra = [p for p in indexed if p not in catalog_shas]
        if not stale and not extra:
            return ""
        self.update(catalog, stale, extra)
        return f"full-text index caught up with the catalog ({len(stale) + len(extra)} notes)"

    def reload(self, catalog: Catalog) -> None:
        """Reopen the searcher if another process committed since it was opened."""
        self.refresh()

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
def within_one_edit(a: str, b: str) -> bool:
    """Whether one insertion, deletion or substitution turns `a` into `b` (or they are equal)."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    prefix = 0
    while prefix < len(a) and a[prefix] == b[prefix]:
        prefix += 1
    if len(a) == len(b):
        return a[prefix + 1 :] == b[prefix + 1 :]
    return a[prefix:] == b[prefix + 1 :]


def _shared_analyzer() -> Any:
    return _schema()["body"].analyzer


def analyze_text(text: str) -> list[str]:
    """The query terms of some text without an open index (the same analyzer as the index)."""
    return [token.text for token in _shared_analyzer()(text, mode="query")]


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def _folder_words(path: str) -> list[str]:
    """The names of the folders a note sits in ("People/Team A/x.md" -> people, team a)."""
    return [folder.lower() for folder in path.split("/")[:-1] if folder and not folder.startswith(".")]


def _tag_words(tags: Iterable[str]) -> list[str]:
    words: list[str] = []
    for tag in tags:
        clean = tag.lstrip("#").lower()
        words.append(clean.replace("/", "_"))
        words.extend(part for part in clean.split("/") if part)
    return words


def _remove_index_files(directory: Path) -> None:
    """Delete a full-text index folder, only if it holds nothing but an index's flat files.

    Raises:
        IndexCorrupt: the folder holds a folder or a note: not ours to delete.
    """
    try:
        with os.scandir(directory) as entries:
            foreign = [e.name for e in entries if e.is_dir(follow_symlinks=False) or e.name.lower().endswith(".md")]
    except FileNotFoundError:
        return
    except OSError as exc:
        raise IndexCorrupt(f"full-text index folder {directory} cannot be listed: {exc.strerror or exc}") from exc
    if foreign:
        raise IndexCorrupt(f"{directory} holds {foreign[0]!r}, which no full-text index holds; it was left as it is")
    shutil.rmtree(directory, ignore_errors=True)


def open_channel(context: ChannelContext) -> tuple[FulltextChannel, str]:
    """The full-text channel over `<index>/fulltext`, rebuilt from the catalog when unreadable or discarded."""
    directory = context.index_dir / "fulltext"
    if context.discard and context.writable:
        _remove_index_files(directory)
    try:
        return FulltextChannel(directory, context.config.fulltext), ""
    except IndexCorrupt as exc:
        if not context.writable:
            raise
        _remove_index_files(directory)
        channel = FulltextChannel(directory, context.config.fulltext)
        channel.rebuild(context.catalog)
        return channel, f"{exc}; rebuilt from the catalog"


def _one_edit(word: str, script: str) -> dict[str, int]:
    """Every variant of `word` one edit away, with the kind of edit: deletions first (a
    doubled or stray letter is the commonest slip), then swaps, replacements and insertions."""
    letters = sorted(set(_ALPHABETS.get(script, "")) | set(word))
    variants: dict[str, int] = {}

    def add(variant: str, kind: int) -> None:
        variants[variant] = min(kind, variants.get(variant, kind))

    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        if tail:
            add(head + tail[1:], 0)  # a letter deleted
            if len(tail) > 1:
                add(head + tail[1] + tail[0] + tail[2:], 1)  # neighbours swapped
            for c in letters:
                add(head + c + tail[1:], 2)  # a letter replaced
        for c in letters:
            add(head + c + tail, 3)  # a letter inserted
    variants.pop(word, None)
    return variants


def _words_beginning(words: Sequence[str], prefix: str) -> list[str]:
    """The first `_TYPED_READ` of sorted `words` that begin with `prefix` (read from where
    `prefix` would sit: no pass over the words before it)."""
    begun: list[str] = []
    start = bisect.bisect_left(words, prefix)
    for at in range(start, min(len(words), start + _TYPED_READ)):
        if not words[at].startswith(prefix):
            break
        begun.append(words[at])
    return begun


def _folded(word: str) -> str:
    """`word` as the language's word list spells it: normalised, lower case, no accents."""
    return fold_accents(typed_form(word).casefold())
