"""Damaged index files are detected at open and repaired without re-embedding, never a traceback."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from index_checks import notes_with_embedded_chunks
from vault_copy import copy_sample_vault

from engine.api import Engine
from engine.embedder import Embedder, load_default_embedder
from engine.errors import IndexLocked
from engine.storage import MANIFEST_VERSION, WriterLock

ROOT = Path(__file__).resolve().parent.parent


class CountingEmbedder:
    """The real model, counting the chunk texts it embeds (queries are not counted)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dims = inner.dims
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.embedded += len(texts)
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._inner.embed_query(text)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._inner.count_tokens(texts)


@pytest.fixture(scope="module")
def real_embedder() -> Embedder:
    return load_default_embedder()


@pytest.fixture(scope="module")
def indexed_base(tmp_path_factory: pytest.TempPathFactory, real_embedder: Embedder) -> Path:
    """A vault copy indexed once with the real model; tests damage copies of it."""
    base = tmp_path_factory.mktemp("corruption-base")
    copy_sample_vault(base / "vault")
    with Engine.open(base / "vault", index_dir=base / "index", embedder=real_embedder) as engine:
        engine.reindex()
    return base


@pytest.fixture
def damaged(indexed_base: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(vault, index_dir): a private copy of the indexed base."""
    shutil.copytree(indexed_base / "vault", tmp_path / "vault")
    shutil.copytree(indexed_base / "index", tmp_path / "index")
    return tmp_path / "vault", tmp_path / "index"


@pytest.fixture
def counting(real_embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(real_embedder)


@pytest.fixture
def opened() -> Iterator[list[Engine]]:
    engines: list[Engine] = []
    yield engines
    for engine in engines:
        engine.close()


def assert_healthy(engine: Engine, index_dir: Path, embedder: CountingEmbedder) -> None:
    status = engine.status()
    assert status.notes == len(list(engine.vault.rglob("*.md")))
    assert status.channel_counts["fulltext"] == status.notes
    assert status.channel_counts["graph"] == status.notes
    assert status.channel_counts["vectors"] == notes_with_embedded_chunks(index_dir, embedder.model_id)
    results = engine.search("resolving simultaneous edits made while offline", as_you_type=False)
    assert results.hits
    assert all(st.status == "ok" for st in results.channels.values()), results.channels
    assert "Projects/Atlas/Offline Sync Conflicts.md" in [hit.path for hit in results.hits[:5]]


def open_engine(vault: Path, index_dir: Path, embedder: CountingEmbedder, opened: list[Engine]) -> Engine:
    engine = Engine.open(vault, index_dir=index_dir, embedder=embedder)
    opened.append(engine)
    return engine


def test_truncated_faiss_is_rebuilt_from_cached_embeddings(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    faiss_file = index_dir / "vectors.faiss"
    faiss_file.write_bytes(faiss_file.read_bytes()[: faiss_file.stat().st_size // 2])
    engine = open_engine(vault, index_dir, counting, opened)
    assert len(engine.repairs) == 1 and "vector index" in engine.repairs[0], engine.repairs
    assert_healthy(engine, index_dir, counting)
    assert counting.embedded == 0, "repair used the embedding cache"
    assert engine.status().embedded_fraction == 1.0


def test_truncated_vector_delta_is_rebuilt(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    delta = index_dir / "vectors.delta.npz"
    delta.write_bytes(delta.read_bytes()[:100] if delta.exists() else b"PK\x03\x04 half")
    engine = open_engine(vault, index_dir, counting, opened)
    assert engine.repairs, "the damage is reported"
    assert_healthy(engine, index_dir, counting)
    assert counting.embedded == 0


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("vectors.tombstones.json", "{not json"),
        ("vectors.strays.json", "{not json"),
        ("vectors.strays.json", "[987654321]"),  # a chunk id the index does not hold
    ],
)
def test_garbage_vector_side_files_are_repaired(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine], name: str, content: str
) -> None:
    vault, index_dir = damaged
    (index_dir / name).write_text(content, encoding="utf-8")
    engine = open_engine(vault, index_dir, counting, opened)
    assert engine.repairs, "the damage is reported"
    assert_healthy(engine, index_dir, counting)
    assert counting.embedded == 0


def test_missing_whoosh_segment_is_rebuilt_from_catalog(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    segments = sorted((index_dir / "fulltext").glob("*.seg"))
    assert segments, "whoosh writes compound segment files"
    segments[0].unlink()
    engine = open_engine(vault, index_dir, counting, opened)
    assert len(engine.repairs) == 1 and "full-text" in engine.repairs[0], engine.repairs
    assert_healthy(engine, index_dir, counting)
    assert counting.embedded == 0


def test_missing_fulltext_directory_is_rebuilt(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    shutil.rmtree(index_dir / "fulltext")
    engine = open_engine(vault, index_dir, counting, opened)
    assert_healthy(engine, index_dir, counting)
    assert counting.embedded == 0


def test_missing_faiss_file_is_rebuilt(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    (index_dir / "vectors.faiss").unlink()
    engine = open_engine(vault, index_dir, counting, opened)
    assert_healthy(engine, index_dir, counting)
    assert counting.embedded == 0


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        ({"version": 99, "model_id": "", "generations": {}}, "index format 99"),
        ({"version": MANIFEST_VERSION, "model_id": "someone/other-model", "generations": {"fulltext": 1, "vectors": 1}}, "model changed"),
        ("{ half a manifest", "manifest unreadable"),
    ],
)
def test_foreign_or_broken_manifest_rebuilds_derived_indexes(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine], manifest: object, says: str
) -> None:
    vault, index_dir = damaged
    path = index_dir / "manifest.json"
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest), encoding="utf-8")
    engine = open_engine(vault, index_dir, counting, opened)
    assert any(says in repair for repair in engine.repairs), engine.repairs
    assert_healthy(engine, index_dir, counting)
    assert counting.embedded == 0
    report = engine.reindex()
    assert report.embedded_chunks == 0 and not report.added and not report.updated
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["version"] == MANIFEST_VERSION and saved["model_id"] == counting.model_id


def test_garbage_catalog_is_moved_aside_and_rebuilt(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    catalog = index_dir / "catalog.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{catalog}{suffix}").unlink(missing_ok=True)
    catalog.write_bytes(b"this is not a database" * 500)
    engine = open_engine(vault, index_dir, counting, opened)
    assert len(engine.repairs) == 1 and "catalog was damaged" in engine.repairs[0], engine.repairs
    assert list(index_dir.glob("catalog.damaged-*.sqlite")), "the damaged file is kept for inspection"
    status = engine.status()
    assert status.notes == len(list(vault.rglob("*.md")))
    assert status.channel_counts["fulltext"] == status.notes == status.channel_counts["graph"]
    assert status.channel_counts["vectors"] == notes_with_embedded_chunks(index_dir, counting.model_id)
    results = engine.search("SQLCipher", as_you_type=False)
    assert results.hits[0].path == "Meetings/2026/2026-03-25 Security Review.md"
    assert results.channels["fulltext"].status == "ok" and results.channels["graph"].status == "ok"
    assert counting.embedded == 0, "opening never embeds; the next reindex does"


@pytest.mark.parametrize("damage", ["emptied", "deleted"])
def test_empty_or_missing_catalog_is_damage_and_rebuilt_from_the_notes(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine], damage: str
) -> None:
    vault, index_dir = damaged
    catalog = index_dir / "catalog.sqlite"
    if damage == "emptied":
        catalog.write_bytes(b"")  # a 0-byte file opens as a new, empty database
    else:
        catalog.unlink()
    engine = open_engine(vault, index_dir, counting, opened)
    assert len(engine.repairs) == 1, engine.repairs
    assert ("catalog is empty" if damage == "emptied" else "catalog is missing") in engine.repairs[0]
    assert "rebuilt from the notes" in engine.repairs[0]
    status = engine.status()
    assert status.notes == len(list(vault.rglob("*.md")))
    assert status.channel_counts["fulltext"] == status.notes == status.channel_counts["graph"]
    results = engine.search("SQLCipher", as_you_type=False)
    assert results.hits[0].path == "Meetings/2026/2026-03-25 Security Review.md"
    assert results.channels["fulltext"].status == "ok" and results.channels["graph"].status == "ok"
    engine.reindex()  # the embeddings lived in the catalog: this run computes them again
    assert_healthy(engine, index_dir, counting)
    assert engine.status().embedded_fraction == 1.0


def test_a_new_index_is_not_reported_as_damaged(tmp_path: Path, counting: CountingEmbedder, opened: list[Engine]) -> None:
    (tmp_path / "vault").mkdir()
    engine = open_engine(tmp_path / "vault", tmp_path / "index", counting, opened)
    assert engine.repairs == []
    engine.close()
    engine = open_engine(tmp_path / "vault", tmp_path / "index", counting, opened)
    assert engine.repairs == [], "an empty vault's index opens again without a repair"


def _checkpointed(catalog: Path) -> bytes:
    conn = sqlite3.connect(catalog)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return catalog.read_bytes()


def test_half_written_catalog_is_moved_aside_and_rebuilt(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    catalog = index_dir / "catalog.sqlite"
    data = _checkpointed(catalog)
    catalog.write_bytes(data[: len(data) // 2])
    engine = open_engine(vault, index_dir, counting, opened)
    assert len(engine.repairs) == 1 and "catalog was damaged" in engine.repairs[0], engine.repairs
    status = engine.status()
    assert status.notes == len(list(vault.rglob("*.md")))
    assert status.channel_counts["fulltext"] == status.notes == status.channel_counts["graph"]
    assert status.channel_counts["vectors"] == notes_with_embedded_chunks(index_dir, counting.model_id)
    assert engine.search("SQLCipher", as_you_type=False).hits


def test_damaged_catalog_gives_back_its_cached_embeddings(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine]
) -> None:
    vault, index_dir = damaged
    catalog = index_dir / "catalog.sqlite"
    data = bytearray(_checkpointed(catalog))
    page_size = int.from_bytes(data[16:18], "big")
    notes_root = 4  # the notes table's b-tree root: the damage is in the notes, not the cache
    data[(notes_root - 1) * page_size : notes_root * page_size] = b"\xff" * page_size
    catalog.write_bytes(bytes(data))
    engine = open_engine(vault, index_dir, counting, opened)
    assert any("cached embeddings recovered" in repair for repair in engine.repairs), engine.repairs
    report = engine.reindex()
    assert report.embedded_chunks == 0 and counting.embedded == 0, "every vector came back from the damaged file"
    assert_healthy(engine, index_dir, counting)
    assert engine.status().embedded_fraction == 1.0


def test_cli_prints_repairs_and_answers(damaged: tuple[Path, Path]) -> None:
    vault, index_dir = damaged
    faiss_file = index_dir / "vectors.faiss"
    faiss_file.write_bytes(faiss_file.read_bytes()[: faiss_file.stat().st_size // 2])
    shutil.rmtree(index_dir / "fulltext")
    done = subprocess.run(
        [sys.executable, "-m", "engine", "search", str(vault), "--index-dir", str(index_dir), "SQLCipher", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "repaired: vector index unreadable" in done.stderr
    assert json.loads(done.stdout)["hits"][0]["path"] == "Meetings/2026/2026-03-25 Security Review.md"


def test_the_integrity_check_runs_again_only_when_the_catalog_file_changed(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.catalog import Catalog

    vault, index_dir = damaged
    checks: list[Path] = []
    real_check = Catalog.check

    def counted(self: Catalog) -> str:
        checks.append(self.path)
        return real_check(self)

    monkeypatch.setattr(Catalog, "check", counted)
    (index_dir / "catalog.sqlite.checked").unlink(missing_ok=True)
    open_engine(vault, index_dir, counting, opened).close()
    assert len(checks) == 1, "never checked: the whole file is read"
    open_engine(vault, index_dir, counting, opened).close()
    assert len(checks) == 1, "unchanged since it passed: not read again"
    engine = open_engine(vault, index_dir, counting, opened)
    before = (index_dir / "catalog.sqlite").stat()
    (vault / "Inbox.md").write_text("# Inbox\n\nA new note changes the catalog.\n", encoding="utf-8")
    engine.reindex()
    engine.close()
    after = (index_dir / "catalog.sqlite").stat()
    assert (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns), "the save changed the file"
    open_engine(vault, index_dir, counting, opened).close()
    assert len(checks) == 1, "written by the writer, which closed cleanly and vouched for it: not read again"
    # Written by a process that never closed (killed, or not an engine at all): checked again.
    outside = sqlite3.connect(index_dir / "catalog.sqlite")
    outside.execute("INSERT INTO meta(key, value) VALUES('written-outside', 'yes')")
    outside.commit()
    outside.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    outside.close()
    open_engine(vault, index_dir, counting, opened).close()
    assert len(checks) == 2, "written since by a process that vouched for nothing: checked again"
    reader = open_engine(vault, index_dir, counting, opened)
    reader.search("Inbox")
    reader.close()
    open_engine(vault, index_dir, counting, opened).close()
    assert len(checks) == 2, "searched only: nothing written, nothing to check"
    catalog = index_dir / "catalog.sqlite"
    data = bytearray(_checkpointed(catalog))
    page_size = int.from_bytes(data[16:18], "big")
    data[3 * page_size : 4 * page_size] = b"\xff" * page_size
    catalog.write_bytes(bytes(data))
    engine = open_engine(vault, index_dir, counting, opened)
    assert any("catalog was damaged" in repair for repair in engine.repairs), engine.repairs


HOSTILE_JSON = [
    "Infinity", "-Infinity", "NaN", "1e400", "12345678901234567890123456", "-1", "true", "3.5", '"7"', "{}",
    "[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000 + "1" + "}" * 50_000,
]


@pytest.mark.parametrize("number", HOSTILE_JSON, ids=lambda text: text[:12])
@pytest.mark.parametrize("name", ["manifest.json", "vectors.strays.json", "vectors.tombstones.json"])
def test_index_files_holding_any_number_or_nesting_are_repaired(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine], name: str, number: str
) -> None:
    """Infinity, 1e400, a 26-digit id or 100k nested brackets broke every command until the file was deleted."""
    vault, index_dir = damaged
    contents = {
        "manifest.json": f'{{"version": {number}, "model_id": "x", "generations": {{"fulltext": {number}}}}}',
        "vectors.strays.json": f"[{number}]",
        "vectors.tombstones.json": f"[{number}]",
    }
    text = number if number.startswith(("[", "{")) else contents[name]
    (index_dir / name).write_text(text, encoding="utf-8")
    engine = open_engine(vault, index_dir, counting, opened)
    assert engine.repairs, "the damage is reported"
    assert all(len(repair) < 400 for repair in engine.repairs), "a repair names the damage, not all of it"
    assert_healthy(engine, index_dir, counting)
    report = engine.reindex(full=True)
    assert not report.skipped and counting.embedded == 0


@pytest.mark.parametrize(
    "arrays",
    [
        {"stamp": [float("inf"), 1.0], "ids": [1], "vectors": "rows"},
        {"stamp": [[1, 2], [3, 4]], "ids": [1], "vectors": "rows"},
        {"stamp": "base", "ids": [float("nan")], "vectors": "rows"},
        {"stamp": "base", "ids": [1, 2], "vectors": "rows"},
        {"stamp": "base", "ids": [1], "vectors": "infinite"},
    ],
    ids=["infinite stamp", "stamp of four", "ids not whole", "more ids than rows", "infinite vector"],
)
def test_a_vector_delta_of_any_numbers_is_repaired(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine], arrays: dict[str, object]
) -> None:
    vault, index_dir = damaged
    base = index_dir / "vectors.faiss"
    stamp = [base.stat().st_size, base.stat().st_mtime_ns]
    rows = np.zeros((1, counting.dims), dtype=np.float32)
    values = {
        "stamp": np.asarray(stamp if arrays["stamp"] == "base" else arrays["stamp"]),
        "ids": np.asarray(arrays["ids"]),
        "vectors": np.full_like(rows, np.inf) if arrays["vectors"] == "infinite" else rows,
    }
    with (index_dir / "vectors.delta.npz").open("wb") as handle:
        np.savez(handle, **values)
    engine = open_engine(vault, index_dir, counting, opened)
    assert any("vector delta" in repair for repair in engine.repairs), engine.repairs
    assert_healthy(engine, index_dir, counting)


@pytest.mark.parametrize("content", [*HOSTILE_JSON[:5], '{"pid": Infinity, "since": 1e400}', "[" * 100_000], ids=lambda text: text[:12])
def test_a_writer_lock_naming_its_holder_in_any_bytes_is_still_read(
    damaged: tuple[Path, Path], counting: CountingEmbedder, opened: list[Engine], content: str
) -> None:
    vault, index_dir = damaged
    engine = open_engine(vault, index_dir, counting, opened)
    other = WriterLock(index_dir / "writer.lock")
    assert other.try_acquire()
    try:
        (index_dir / "writer.lock").write_text(content, encoding="utf-8")  # the flock stays; the name is damaged
        assert engine.writer is not None
        with pytest.raises(IndexLocked):
            engine.reindex()
    finally:
        other.release()
