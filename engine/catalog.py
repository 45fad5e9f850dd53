"""The SQLite catalog: the source of truth every derived index is rebuilt from."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from engine.errors import IndexCorrupt, IndexWriteFailed
from engine.records import Chunk, Heading, Link, NoteInfo, SkippedFile
from engine.storage import index_writes, write_failure

log = logging.getLogger("cairn.catalog")

SCHEMA_VERSION = 2
_BUSY_TIMEOUT_MS = 30_000
# Schema 1 kept the vectors in a WITHOUT ROWID table, whose rows may hold only about a
# quarter of a page: every 1.5 KB vector spilled to an overflow page of its own (4.7 KB
# per vector on disk). A rowid table keeps two to a page.
_EMBEDDINGS_V1_TO_V2 = """
CREATE TABLE embeddings_v2 (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    text_sha TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model_id, text_sha)
);
INSERT INTO embeddings_v2(model_id, text_sha, vector) SELECT model_id, text_sha, vector FROM embeddings;
DROP TABLE embeddings;
ALTER TABLE embeddings_v2 RENAME TO embeddings;
"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    aliases TEXT NOT NULL,
    tags TEXT NOT NULL,
    headings TEXT NOT NULL,
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    sha TEXT NOT NULL,
    body TEXT NOT NULL,
    body_line_offset INTEGER NOT NULL,
    warnings TEXT NOT NULL,
    indexed_at REAL NOT NULL,
    facts TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    text_sha TEXT NOT NULL,
    heading_path TEXT NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_note ON chunks(note_id);
CREATE INDEX IF NOT EXISTS chunks_sha ON chunks(text_sha);
CREATE TABLE IF NOT EXISTS links (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    target TEXT NOT NULL,
    display TEXT,
    heading TEXT,
    block TEXT,
    embed INTEGER NOT NULL,
    line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    resolved TEXT,
    property TEXT
);
CREATE INDEX IF NOT EXISTS links_note ON links(note_id);
CREATE INDEX IF NOT EXISTS links_resolved ON links(resolved);
CREATE TABLE IF NOT EXISTS mentions (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    chunk_ordinal INTEGER NOT NULL,
    surface TEXT NOT NULL,
    evidence INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS mentions_note ON mentions(note_id);
CREATE TABLE IF NOT EXISTS embeddings (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    text_sha TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model_id, text_sha)
);
CREATE TABLE IF NOT EXISTS skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
"""


@dataclass(frozen=True)
class StoredChunk:
    """A chunk row with its catalog id and note path."""

    id: int
    path: str
    chunk: Chunk
    text_sha: str


@dataclass(frozen=True)
class NoteRow:
    """The fields of a note that channels index."""

    id: int
    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    headings: tuple[str, ...]
    body: str
    sha: str


class FileState(NamedTuple):
    """What the catalog knows of a note file: its mtime and size when indexed, and its text's sha."""

    mtime: float
    size: int
    sha: str


class NoteName(NamedTuple):
    """A note's path and the names it is linked and found by."""

    path: str
    title: str
    aliases: tuple[str, ...]


class NoteBody(NamedTuple):
    """A note's indexed body and how many file lines come before it (the frontmatter)."""

    text: str
    line_offset: int


class BacklogText(NamedTuple):
    """A chunk text waiting for its vector: its sha, the text the embedder sees, and the
    most recently changed note that holds it (the embedding order follows the note)."""

    sha: str
    text: str
    path: str
    mtime: float


class LinkTarget(NamedTuple):
    """A stored link's row id, the note it is written in and its target as written."""

    rowid: int
    source: str
    target: str


class Mention(NamedTuple):
    """A name found in a note's chunk, with what its writing says of it (engine.entities.WRITTEN …)."""

    path: str
    ordinal: int
    surface: str
    evidence: int = 0


class ChunkLines(NamedTuple):
    """The file lines a chunk of a note spans."""

    path: str
    ordinal: int
    start: int
    end: int


class ResolvedLink(NamedTuple):
    """A link that resolves: its source, the note or file it points to, its line, its target as
    written and the property or inline field it is the value of (None for a link in the text)."""

    source: str
    target: str
    line: int
    written: str
    property: str | None = None


@dataclass(frozen=True)
class LinkRow:
    """A stored link with its source path and resolved target (None if dangling)."""

    source: str
    link: Link
    resolved: str | None


class Catalog:
    """SQLite in WAL mode, one connection per thread; writes are transactions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._write_lock = threading.RLock()
        # Whether this process changed the file: a writer that closes cleanly vouches for a
        # file it changed only through SQLite's own commits (engine/indexes.py).
        self.wrote = False
        try:
            conn = self._conn()
            conn.executescript(_SCHEMA)
            columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(notes)")}
            if "facts" not in columns:  # a catalog from before note facts: filled by the next full pass
                with self.transaction() as migrate:
                    migrate.execute("ALTER TABLE notes ADD COLUMN facts TEXT NOT NULL DEFAULT '{}'")
            self._add_missing_columns(conn)
            self._add_name_index(conn)
            version = self.get_meta("schema_version")
            if version is None:
                self.set_meta("schema_version", str(SCHEMA_VERSION))
            elif int(version) == 1:
                self._migrate_embeddings()
            elif int(version) != SCHEMA_VERSION:
                raise IndexCorrupt(f"catalog schema {version} is not {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            failure = write_failure(exc)  # a full disk is no reason to take the catalog for damaged
            if failure is not None:
                raise failure from exc
            raise IndexCorrupt(f"catalog {path.name} is unreadable: {exc}") from exc

    def _add_name_index(self, conn: sqlite3.Connection) -> None:
        """The notes' names and tags as an index of their own: opening a search reads them
        for every note (titles, aliases, the tags that say who is a person), and read from
        the notes table they came with each body's pages (34 → 11 ms at 10k notes). Added
        to a catalog made before it by the first process that may write; optional."""
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type='index' AND name='notes_names'").fetchone():
            return
        conn.execute("PRAGMA busy_timeout=0")  # never wait for another writer for it
        try:
            with self.transaction() as write:
                write.execute("CREATE INDEX IF NOT EXISTS notes_names ON notes(path, title, aliases, tags)")
        except (sqlite3.Error, IndexWriteFailed) as exc:  # read-only, a full disk, another writer: later
            log.debug("the notes' name index is not added now: %s", exc)
        finally:
            conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")

    def _add_missing_columns(self, conn: sqlite3.Connection) -> None:
        """Columns added since a catalog was created (NULL or 0 until its notes are parsed again)."""
        self._property = "l.property"
        self._evidence = "m.evidence"
        columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(links)")}
        if "property" not in columns:
            try:
                conn.execute("ALTER TABLE links ADD COLUMN property TEXT")
            except sqlite3.OperationalError as exc:
                if "readonly" not in str(exc):
                    raise
                self._property = "NULL"  # a read-only catalog of before: its links have no properties
        columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(mentions)")}
        if "evidence" not in columns:
            try:
                conn.execute("ALTER TABLE mentions ADD COLUMN evidence INTEGER NOT NULL DEFAULT 0")
            except sqlite3.OperationalError as exc:
                if "readonly" not in str(exc):
                    raise
                self._evidence = "0"  # a read-only catalog of before: every name counts as written
    def _migrate_embeddings(self) -> None:
        """Move the cached vectors of a schema 1 catalog into the schema 2 table (one transaction),
        then give the old table's pages back to the file system (a few seconds at 10k notes, once;
        skipped while another process reads the catalog: later writes reuse the pages then)."""
        with self.transaction() as conn:
            if self.get_meta("schema_version") != "1":
                return  # another process migrated it meanwhile
            for statement in _EMBEDDINGS_V1_TO_V2.split(";"):
                if statement.strip():
                    conn.execute(statement)
            self.set_meta("schema_version", str(SCHEMA_VERSION), conn)
        try:
            with self._write_lock, index_writes():
                self.wrote = True
                self._conn().execute("VACUUM")
        except sqlite3.OperationalError as exc:
            log.info("catalog not compacted after the schema change: %s", exc)

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            self._local.conn = conn
            with self._write_lock:
                self._all_conns().append(conn)
        return conn

    def _all_conns(self) -> list[sqlite3.Connection]:
        conns: list[sqlite3.Connection] | None = getattr(self, "_conns", None)
        if conns is None:
            conns = []
            self._conns = conns
        return conns

    def close(self) -> None:
        """Close every thread's connection."""
        with self._write_lock:
            for conn in self._all_conns():
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    continue  # closed from its own thread already
            self._all_conns().clear()
        self._local = threading.local()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; serialised across threads, rolled back on error.

        Raises:
            IndexWriteFailed: the disk is full or the catalog is read-only.
        """
        with self._write_lock, index_writes():
            conn = self._conn()
            self.wrote = True
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (it does for a full disk); a second
                # ROLLBACK would fail and hide why.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def check(self) -> str:
        """SQLite's quick integrity check: 'ok' or the first problem."""
        try:
            row = self._conn().execute("PRAGMA quick_check").fetchone()
        except sqlite3.DatabaseError as exc:  # a damaged page can fail the check itself
            return str(exc)
        return str(row[0])

    # -- meta -------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A stored meta value."""
        row = self._conn().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        """Store a meta value (inside `conn`'s transaction when given)."""
        (conn or self._conn()).execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    @property
    def generation(self) -> int:
        """Bumped by every transaction that changes notes."""
        return int(self.get_meta("generation") or 0)

    def bump_generation(self, conn: sqlite3.Connection) -> int:
        """Increment the generation inside a transaction."""
        gen = int(self.get_meta("generation") or 0) + 1
        self.set_meta("generation", str(gen), conn)
        self.set_meta("last_update", str(time.time()), conn)
        return gen

    # -- notes ------------------------------------------------------------------
    def file_states(self, paths: Iterable[str] | None = None) -> dict[str, FileState]:
        """path → (mtime, size, sha) of every note, or of those at `paths` that are notes."""
        rows = _rows_at_paths(self._conn(), "SELECT path, mtime, size, sha FROM notes", "path", paths)
        return {str(p): FileState(float(m), int(s), str(h)) for p, m, s, h in rows}  # type: ignore[arg-type,call-overload]

    def upsert_note(
        self,
        conn: sqlite3.Connection,
        *,
        info: NoteInfo,
        body: str,
        body_line_offset: int,
        chunks: Sequence[tuple[Chunk, str]],
        links: Sequence[Link],
        mentions: Sequence[tuple[int, str, int]],
        facts: str = "{}",
    ) -> int:
        """Insert or replace a note with its chunks, links, mentions and facts (JSON); returns its id."""
        conn.execute("DELETE FROM notes WHERE path=?", (info.path,))
        cur = conn.execute(
            "INSERT INTO notes(path, title, aliases, tags, headings, mtime, size, sha, body,"
            " body_line_offset, warnings, indexed_at, facts) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                info.path,
                info.title,
                json.dumps(list(info.aliases)),
                json.dumps(list(info.tags)),
                json.dumps([[h.level, h.text, h.line] for h in info.headings]),
                info.mtime,
                info.size,
                info.sha,
                body,
                body_line_offset,
                json.dumps(list(info.warnings)),
                time.time(),
                facts,
            ),
        )
        note_id = int(cur.lastrowid or 0)
        conn.executemany(
            "INSERT INTO chunks(note_id, ordinal, text, text_sha, heading_path, char_start,"
            " char_end, line_start, line_end) VALUES(?,?,?,?,?,?,?,?,?)",
            [
                (
                    note_id,
                    c.ordinal,
                    c.text,
                    sha,
                    json.dumps(list(c.heading_path)),
                    c.char_start,
                    c.char_end,
                    c.line_start,
                    c.line_end,
                )
                for c, sha in chunks
            ],
        )
        conn.executemany(
            "INSERT INTO links(note_id, target, display, heading, block, embed, line, kind, property)"
            " VALUES(?,?,?,?,?,?,?,?,?)",
            [
                (note_id, lk.target, lk.display, lk.heading, lk.block, int(lk.embed), lk.line, lk.kind, lk.property)
                for lk in links
            ],
        )
        conn.executemany(
            "INSERT INTO mentions(note_id, chunk_ordinal, surface, evidence) VALUES(?,?,?,?)",
            [(note_id, ordinal, surface, evidence) for ordinal, surface, evidence in mentions],
        )
        return note_id

    def touch_note(self, conn: sqlite3.Connection, path: str, mtime: float, size: int) -> None:
        """Record a new mtime/size for a note whose content hash did not change."""
        conn.execute("UPDATE notes SET mtime=?, size=? WHERE path=?", (mtime, size, path))

    def delete_notes(self, conn: sqlite3.Connection, paths: Iterable[str]) -> None:
        """Remove notes (their chunks, links and mentions cascade)."""
        conn.executemany("DELETE FROM notes WHERE path=?", [(p,) for p in paths])

    def replace_skipped(self, conn: sqlite3.Connection, skipped: Iterable[SkippedFile]) -> None:
        """Replace the list of skipped files."""
        conn.execute("DELETE FROM skipped")
        conn.executemany("INSERT OR REPLACE INTO skipped(path, reason) VALUES(?,?)", [(s.path, s.reason) for s in skipped])

    def skipped(self) -> tuple[SkippedFile, ...]:
        """Files the last reindex could not use, with reasons."""
        rows = self._conn().execute("SELECT path, reason FROM skipped ORDER BY path")
        return tuple(SkippedFile(str(p), str(r)) for p, r in rows)

    def note_infos(self) -> list[NoteInfo]:
        """Every note's metadata (no body)."""
        rows = self._conn().execute(
            "SELECT path, title, aliases, tags, mtime, size, sha, headings, warnings FROM notes ORDER BY path"
        )
        return [_note_info(row) for row in rows]

    def note_names(self) -> list[NoteName]:
        """Every note's (path, title, aliases): what name lookups need, without the rest of the metadata."""
        rows = self._conn().execute("SELECT path, title, aliases FROM notes ORDER BY path")
        return [NoteName(str(p), str(t), tuple(json.loads(str(a))) if a != "[]" else ()) for p, t, a in rows]

    def note_facts(self) -> list[tuple[str, tuple[str, ...], float, str]]:
        """(path, tags, mtime, facts JSON) of every note: what query filters read."""
        rows = self._conn().execute("SELECT path, tags, mtime, facts FROM notes ORDER BY path")
        return [(str(p), tuple(json.loads(str(t))), float(m), str(f)) for p, t, m, f in rows]

    def paths_titled(self, title: str) -> list[str]:
        """The notes whose title is `title` (case ignored), by path."""
        rows = self._conn().execute("SELECT path FROM notes WHERE title = ? COLLATE NOCASE ORDER BY path", (title,))
        return [str(p) for (p,) in rows]

    def note_paths(self) -> list[str]:
        """Every note's path."""
        return [str(p) for (p,) in self._conn().execute("SELECT path FROM notes ORDER BY path")]

    def tags_mentioning(self, words: Collection[str]) -> list[tuple[str, tuple[str, ...]]]:
        """(path, tags) of the notes whose tags contain any of `words` (ASCII case ignored):
        a cheap first cut, in SQLite, for a test of the tags themselves."""
        if not words:
            return []
        where = " OR ".join("tags LIKE ? ESCAPE '\\'" for _ in words)
        patterns = tuple("%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words)
        rows = self._conn().execute(f"SELECT path, tags FROM notes WHERE {where}", patterns)
        return [(str(path), tuple(json.loads(str(tags)))) for path, tags in rows]

    def note_info(self, path: str) -> NoteInfo | None:
        """One note's metadata."""
        row = self._conn().execute(
            "SELECT path, title, aliases, tags, mtime, size, sha, headings, warnings FROM notes WHERE path=?",
            (path,),
        ).fetchone()
        return None if row is None else _note_info(row)

    def note_body(self, path: str) -> NoteBody | None:
        """A note's indexed body and its line offset."""
        row = self._conn().execute("SELECT body, body_line_offset FROM notes WHERE path=?", (path,)).fetchone()
        return None if row is None else NoteBody(str(row[0]), int(row[1]))

    def note_texts(self, paths: Iterable[str]) -> Iterator[tuple[str, str]]:
        """(path, indexed body) of each of `paths` the catalog holds, read 500 at a time."""
        wanted = list(paths)
        conn = self._conn()
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            yield from conn.execute(f"SELECT path, body FROM notes WHERE path IN ({','.join('?' * len(part))})", part)

    def note_rows(self, paths: Iterable[str] | None = None) -> Iterator[NoteRow]:
        """Rows for the full-text channel (all notes, or the given paths)."""
        sql = "SELECT id, path, title, aliases, tags, headings, body, sha FROM notes"
        conn = self._conn()
        if paths is None:
            rows: Iterable[tuple[object, ...]] = conn.execute(sql)
        else:
            wanted = list(paths)
            rows = (
                row
                for start in range(0, len(wanted), 500)
                for row in conn.execute(
                    f"{sql} WHERE path IN ({','.join('?' * len(wanted[start:start + 500]))})",
                    wanted[start : start + 500],
                )
            )
        for nid, path, title, aliases, tags, headings, body, sha in rows:
            yield NoteRow(
                id=int(nid),  # type: ignore[call-overload]
                path=str(path),
                title=str(title),
                aliases=tuple(json.loads(str(aliases))),
                tags=tuple(json.loads(str(tags))),
                headings=tuple(h[1] for h in json.loads(str(headings))),
                body=str(body),
                sha=str(sha),
            )

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables."""
        conn = self._conn()
        return {
            "notes": conn.execute("SELECT count(*) FROM notes").fetchone()[0],
            "chunks": conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
            "links": conn.execute("SELECT count(*) FROM links").fetchone()[0],
            "dangling_links": conn.execute(
                "SELECT count(*) FROM links WHERE resolved IS NULL"
            ).fetchone()[0],
        }

    def chunk_count(self) -> int:
        """How many chunks the vault's notes are cut into."""
        return int(self._conn().execute("SELECT count(*) FROM chunks").fetchone()[0])

    def typed_link_count(self) -> int:
        """Links to notes held by a property or inline field (`company: "[[Acme]]"`): relations
        the vault types."""
        if self._property == "NULL":
            return 0
        row = self._conn().execute(
            "SELECT count(*) FROM links l WHERE l.property IS NOT NULL AND l.resolved LIKE '%.md'"
        ).fetchone()
        return int(row[0])

    # -- chunks -----------------------------------------------------------------
    def chunks_for(self, path: str) -> list[StoredChunk]:
        """A note's chunks in order."""
        return self.chunks_of_notes([path]).get(path, [])

    def chunks_of_notes(self, paths: Iterable[str]) -> dict[str, list[StoredChunk]]:
        """Several notes' chunks in order, in one query: a page of results' snippets."""
        out: dict[str, list[StoredChunk]] = {}
        for row in self._rows_of(f"{_CHUNK_SELECT} WHERE 1", paths, "n.path, c.ordinal"):
            chunk = _stored_chunk(row)
            out.setdefault(chunk.path, []).append(chunk)
        return out

    def chunk(self, chunk_id: int) -> StoredChunk | None:
        """One chunk by id."""
        row = self._conn().execute(f"{_CHUNK_SELECT} WHERE c.id=?", (chunk_id,)).fetchone()
        return None if row is None else _stored_chunk(row)

    def chunk_owners(self, paths: Iterable[str] | None = None) -> dict[int, str]:
        """chunk id → note path, for every chunk, or for the chunks of the notes at `paths`."""
        sql = "SELECT c.id, n.path FROM chunks c JOIN notes n ON n.id=c.note_id"
        rows = _rows_at_paths(self._conn(), sql, "n.path", paths)
        names: dict[str, str] = {}  # one string per note, not per chunk (330k chunks at 50k notes)
        return {int(cid): names.setdefault(str(path), str(path)) for cid, path in rows}  # type: ignore[call-overload]

    def chunks_missing_embedding(
        self, model_id: str, paths: Iterable[str] | None = None
    ) -> list[tuple[str, str]]:
        """(text_sha, embedding text) of distinct chunk texts with no cached vector.

        `paths` limits the answer to the chunks of those notes.
        """
        sql = (
            "SELECT c.text_sha, n.title, c.heading_path, c.text FROM chunks c"
            " JOIN notes n ON n.id=c.note_id"
            " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model_id=? AND e.text_sha=c.text_sha)"
        )
        conn = self._conn()
        if paths is None:
            rows: list[tuple[object, ...]] = conn.execute(f"{sql} GROUP BY c.text_sha", (model_id,)).fetchall()
        else:
            wanted = list(dict.fromkeys(paths))
            rows = []
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                rows.extend(
                    conn.execute(
                        f"{sql} AND n.path IN ({','.join('?' * len(part))}) GROUP BY c.text_sha",
                        (model_id, *part),
                    )
                )
        out: dict[str, str] = {}
        for sha, title, hp, text in rows:
            out.setdefault(str(sha), embedding_text(str(title), json.loads(str(hp)), str(text)))
        return list(out.items())

    def embedding_backlog(self, model_id: str, paths: Iterable[str] | None = None) -> list[BacklogText]:
        """Distinct chunk texts with no cached vector, each with its most recently changed note.

        `paths` limits the answer to the chunks of those notes.
        """
        sql = (
            "SELECT c.text_sha, n.path, n.mtime, n.title, c.heading_path, c.text FROM chunks c"
            " JOIN notes n ON n.id=c.note_id"
            " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model_id=? AND e.text_sha=c.text_sha)"
        )
        conn = self._conn()
        rows: list[tuple[object, ...]] = []
        if paths is None:
            rows = conn.execute(sql, (model_id,)).fetchall()
        else:
            wanted = list(dict.fromkeys(paths))
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                rows.extend(conn.execute(f"{sql} AND n.path IN ({','.join('?' * len(part))})", (model_id, *part)))
        out: dict[str, BacklogText] = {}
        for sha, path, mtime, title, hp, text in rows:
            key = str(sha)
            known = out.get(key)
            if known is None or float(mtime) > known.mtime:  # type: ignore[arg-type]
                out[key] = BacklogText(key, embedding_text(str(title), json.loads(str(hp)), str(text)), str(path), float(mtime))  # type: ignore[arg-type]
        return list(out.values())

    def backlog_size(self, model_id: str) -> tuple[int, int]:
        """(distinct chunk texts with no cached vector, their characters as the embedder sees them, about)."""
        row = self._conn().execute(
            "SELECT count(*), coalesce(sum(chars), 0) FROM (SELECT max(length(c.text) + length(n.title)"
            " + length(c.heading_path)) AS chars FROM chunks c JOIN notes n ON n.id=c.note_id"
            " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model_id=? AND e.text_sha=c.text_sha)"
            " GROUP BY c.text_sha)",
            (model_id,),
        ).fetchone()
        return int(row[0]), int(row[1])

    def chunk_ids_for_shas(self, shas: Iterable[str]) -> list[tuple[int, str]]:
        """(chunk id, text sha) of every chunk whose text has one of these hashes."""
        wanted = list(shas)
        out: list[tuple[int, str]] = []
        conn = self._conn()
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows = conn.execute(
                f"SELECT id, text_sha FROM chunks WHERE text_sha IN ({','.join('?' * len(part))})", part
            )
            out.extend((int(cid), str(sha)) for cid, sha in rows)
        return out

    def embedded_chunk_count(self, model_id: str) -> int:
        """How many chunks have a cached embedding."""
        row = self._conn().execute(
            "SELECT count(*) FROM chunks c WHERE EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.model_id=? AND e.text_sha=c.text_sha)",
            (model_id,),
        ).fetchone()
        return int(row[0])

    def store_embeddings(self, model_id: str, rows: Sequence[tuple[str, npt.NDArray[np.float32]]]) -> None:
        """Cache vectors by (model, chunk-text sha) in one transaction."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings(model_id, text_sha, vector) VALUES(?,?,?)",
                [(model_id, sha, np.asarray(vec, dtype=np.float32).tobytes()) for sha, vec in rows],
            )

    def cached_embeddings(self, batch: int = 512) -> Iterator[tuple[str, list[tuple[str, npt.NDArray[np.float32]]]]]:
        """Every cached vector as (model id, rows) batches, read through a connection this
        catalog already has: its file may have been removed since (the index folder deleted
        under a running process), and a new connection would open a new, empty file."""
        with self._write_lock:
            conns = list(self._all_conns())
        if not conns:
            return
        try:
            cursor = conns[0].execute("SELECT model_id, text_sha, vector FROM embeddings")
            while rows := cursor.fetchmany(batch):
                found: dict[str, list[tuple[str, npt.NDArray[np.float32]]]] = {}
                for model_id, sha, blob in rows:
                    if isinstance(blob, bytes) and len(blob) % 4 == 0:
                        found.setdefault(str(model_id), []).append((str(sha), np.frombuffer(blob, dtype=np.float32)))
                yield from found.items()
        except sqlite3.Error as exc:  # what could not be read is embedded again
            log.info("cached embeddings not all recovered: %s", exc)

    def chunk_vectors(
        self, model_id: str, chunk_ids: Iterable[int] | None = None
    ) -> Iterator[tuple[int, npt.NDArray[np.float32]]]:
        """(chunk id, cached vector) for chunks that have one."""
        sql = (
            "SELECT c.id, e.vector FROM chunks c JOIN embeddings e"
            " ON e.text_sha=c.text_sha AND e.model_id=?"
        )
        conn = self._conn()
        if chunk_ids is None:
            for cid, blob in conn.execute(sql, (model_id,)):
                yield int(cid), np.frombuffer(blob, dtype=np.float32)
            return
        # CROSS JOIN fixes the join order: look the few chunks up by id, then their
        # vectors by key. Left to itself SQLite walks every cached vector (0.6 s per
        # 500 ids at 1k notes, on every edit).
        by_id = sql.replace(" JOIN embeddings", " CROSS JOIN embeddings")
        wanted = list(chunk_ids)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            for cid, blob in conn.execute(f"{by_id} WHERE c.id IN ({','.join('?' * len(part))})", (model_id, *part)):
                yield int(cid), np.frombuffer(blob, dtype=np.float32)

    # -- links and mentions ------------------------------------------------------
    def links(self) -> list[LinkRow]:
        """Every link with source path and resolution."""
        rows = self._conn().execute(
            "SELECT n.path, l.target, l.display, l.heading, l.block, l.embed, l.line, l.kind, l.resolved, "
            f"{self._property}"
            " FROM links l JOIN notes n ON n.id=l.note_id"
        )
        return [_link_row(row) for row in rows]

    def links_from(self, path: str) -> list[LinkRow]:
        """Links written in one note."""
        rows = self._conn().execute(
            "SELECT n.path, l.target, l.display, l.heading, l.block, l.embed, l.line, l.kind, l.resolved, "
            f"{self._property}"
            " FROM links l JOIN notes n ON n.id=l.note_id WHERE n.path=? ORDER BY l.line",
            (path,),
        )
        return [_link_row(row) for row in rows]

    def links_to(self, path: str) -> list[LinkRow]:
        """Links from other notes that resolve to `path`."""
        rows = self._conn().execute(
            "SELECT n.path, l.target, l.display, l.heading, l.block, l.embed, l.line, l.kind, l.resolved, "
            f"{self._property}"
            " FROM links l JOIN notes n ON n.id=l.note_id WHERE l.resolved=? ORDER BY n.path, l.line",
            (path,),
        )
        return [_link_row(row) for row in rows]

    def set_resolutions(self, conn: sqlite3.Connection, rows: Iterable[tuple[str | None, int]]) -> None:
        """Store resolved targets: (resolved path or None, link rowid)."""
        conn.executemany("UPDATE links SET resolved=? WHERE rowid=?", rows)

    def link_resolutions(self) -> dict[int, str | None]:
        """link rowid → stored resolution."""
        rows = self._conn().execute("SELECT rowid, resolved FROM links")
        return {int(r): (None if v is None else str(v)) for r, v in rows}

    def link_targets(self, paths: Iterable[str] | None = None) -> list[LinkTarget]:
        """(link rowid, source path, target) for all links or those of some notes."""
        sql = "SELECT l.rowid, n.path, l.target FROM links l JOIN notes n ON n.id=l.note_id"
        conn = self._conn()
        if paths is None:
            return [LinkTarget(int(r), str(p), str(t)) for r, p, t in conn.execute(sql)]
        out: list[LinkTarget] = []
        wanted = list(paths)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            out.extend(
                LinkTarget(int(r), str(p), str(t))
                for r, p, t in conn.execute(f"{sql} WHERE n.path IN ({','.join('?' * len(part))})", part)
            )
        return out

    # -- per-note rows for the entity graph (all notes, or some) ------------------
    def _rows_of(self, sql: str, paths: Iterable[str] | None, order: str) -> Iterator[tuple[object, ...]]:
        """Rows of `sql` (which joins notes as n), for all notes or those at `paths`, in `order`."""
        conn = self._conn()
        if paths is None:
            yield from conn.execute(f"{sql} ORDER BY {order}")
            return
        wanted = list(paths)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            yield from conn.execute(f"{sql} AND n.path IN ({','.join('?' * len(part))}) ORDER BY {order}", part)

    def mentions_of(self, paths: Iterable[str] | None = None) -> Iterator[Mention]:
        """Names extracted from notes (all, or some), in the order written."""
        sql = (
            f"SELECT n.path, m.chunk_ordinal, m.surface, {self._evidence} FROM mentions m JOIN notes n ON n.id=m.note_id"
            " WHERE 1"
        )
        for path, ordinal, surface, evidence in self._rows_of(sql, paths, "m.rowid"):
            yield Mention(str(path), int(ordinal), str(surface), int(evidence))  # type: ignore[call-overload]

    def surfaces_not_written(self) -> list[str]:
        """The distinct surfaces some note writes other than inside running text (a heading,
        a title, a sentence's start: evidence other than WRITTEN, which is 0 in
        engine/entities.py). One pass in SQLite, no row per mention in Python."""
        conn = self._conn()
        sql = f"SELECT DISTINCT m.surface FROM mentions m WHERE {self._evidence} != 0"
        return [str(surface) for (surface,) in conn.execute(sql)]

    def writing_not_written(self, surfaces: Collection[str]) -> set[str]:
        """The notes that write any of `surfaces` other than inside running text."""
        conn = self._conn()
        wanted = list(surfaces)
        out: set[str] = set()
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            sql = (
                f"SELECT DISTINCT n.path FROM mentions m JOIN notes n ON n.id=m.note_id WHERE {self._evidence} != 0"
                f" AND m.surface IN ({','.join('?' * len(part))})"
            )
            out.update(str(path) for (path,) in conn.execute(sql, part))
        return out

    def naming(self, names: Collection[str], paths: Collection[str]) -> dict[str, set[str]]:
        """Which of `names` (as extracted, exact) each of the notes at `paths` mentions; notes
        that mention none are left out. The filter runs in SQLite: a note may mention
        hundreds of names, and a search asks this of a hundred notes. At most 500 names
        are asked for (the first in sorted order), which keeps one statement's parameters
        within SQLite's oldest limit with 400 paths."""
        if not names or not paths:
            return {}
        chosen = sorted(names)[:500]
        conn = self._conn()
        out: dict[str, set[str]] = {}
        wanted = sorted(paths)
        for start in range(0, len(wanted), 400):
            part = wanted[start : start + 400]
            sql = (
                "SELECT DISTINCT n.path, m.surface FROM notes n JOIN mentions m ON m.note_id=n.id"
                f" WHERE n.path IN ({','.join('?' * len(part))}) AND m.surface IN ({','.join('?' * len(chosen))})"
            )
            for path, surface in conn.execute(sql, [*part, *chosen]):
                out.setdefault(str(path), set()).add(str(surface))
        return out

    def chunk_lines_of(self, paths: Iterable[str] | None = None) -> Iterator[ChunkLines]:
        """The lines each chunk of the notes (all, or some) spans, in stored order."""
        sql = "SELECT n.path, c.ordinal, c.line_start, c.line_end FROM chunks c JOIN notes n ON n.id=c.note_id WHERE 1"
        for path, ordinal, start, end in self._rows_of(sql, paths, "c.rowid"):
            yield ChunkLines(str(path), int(ordinal), int(start), int(end))  # type: ignore[call-overload]

    def resolved_links_of(self, paths: Iterable[str] | None = None) -> Iterator[ResolvedLink]:
        """Resolved links of the notes (all, or some), in the order written."""
        sql = (
            f"SELECT n.path, l.resolved, l.line, l.target, {self._property} FROM links l JOIN notes n ON n.id=l.note_id"
            " WHERE l.resolved IS NOT NULL"
        )
        for path, resolved, line, target, prop in self._rows_of(sql, paths, "l.rowid"):
            yield ResolvedLink(str(path), str(resolved), int(line), str(target), None if prop is None else str(prop))  # type: ignore[call-overload]


def _rows_at_paths(
    conn: sqlite3.Connection, sql: str, column: str, paths: Iterable[str] | None
) -> Iterable[tuple[object, ...]]:
    """The rows of `sql` whose path `column` is one of `paths` (500 at a time), or all of
    them when `paths` is None. A path that is no valid text (a file name's undecodable
    bytes) names no note."""
    if paths is None:
        return conn.execute(sql)
    wanted = [p for p in dict.fromkeys(paths) if p.isascii() or _encodable(p)]
    rows: list[tuple[object, ...]] = []
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        rows.extend(conn.execute(f"{sql} WHERE {column} IN ({','.join('?' * len(part))})", part))
    return rows


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def embedding_text(title: str, heading_path: Sequence[str], text: str) -> str:
    """What the embedder sees for a chunk: title and headings give it context."""
    context = " > ".join([title, *[h for h in heading_path if h != title]])
    return f"{context}\n{text}"


def _note_info(row: tuple[object, ...]) -> NoteInfo:
    path, title, aliases, tags, mtime, size, sha, headings, warnings = row
    return NoteInfo(
        path=str(path),
        title=str(title),
        aliases=tuple(json.loads(str(aliases))),
        tags=tuple(json.loads(str(tags))),
        mtime=float(mtime),  # type: ignore[arg-type]
        size=int(size),  # type: ignore[call-overload]
        sha=str(sha),
        headings=tuple(Heading(int(lv), str(tx), int(ln)) for lv, tx, ln in json.loads(str(headings))),
        warnings=tuple(json.loads(str(warnings))),
    )


# The columns `_stored_chunk` reads, with the note's path.
_CHUNK_SELECT = (
    "SELECT c.id, n.path, c.ordinal, c.text, c.heading_path, c.char_start, c.char_end,"
    " c.line_start, c.line_end, c.text_sha FROM chunks c JOIN notes n ON n.id=c.note_id"
)


@lru_cache(maxsize=4096)
def _heading_path(stored: str) -> tuple[str, ...]:
    """A chunk's stored heading path (JSON); a note's chunks share a few of them."""
    return tuple(json.loads(stored))


def _stored_chunk(row: tuple[object, ...]) -> StoredChunk:
    cid, path, ordinal, text, heading_path, cs, ce, ls, le, sha = row
    return StoredChunk(
        id=int(cid),  # type: ignore[call-overload]
        path=str(path),
        chunk=Chunk(
            ordinal=int(ordinal),  # type: ignore[call-overload]
            text=str(text),
            heading_path=_heading_path(str(heading_path)),
            char_start=int(cs),  # type: ignore[call-overload]
            char_end=int(ce),  # type: ignore[call-overload]
            line_start=int(ls),  # type: ignore[call-overload]
            line_end=int(le),  # type: ignore[call-overload]
        ),
        text_sha=str(sha),
    )


def _link_row(row: tuple[object, ...]) -> LinkRow:
    source, target, display, heading, block, embed, line, kind, resolved, prop = row
    return LinkRow(
        source=str(source),
        link=Link(
            target=str(target),
            display=None if display is None else str(display),
            heading=None if heading is None else str(heading),
            block=None if block is None else str(block),
            embed=bool(embed),
            line=int(line),  # type: ignore[call-overload]
            kind="markdown" if kind == "markdown" else "wikilink",
            property=None if prop is None else str(prop),
        ),
        resolved=None if resolved is None else str(resolved),
    )
