"""Bad input: the reindex completes, reports what it skipped and why, and writes no note."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import engine.indexer
from engine.api import Engine
from engine.console import Exit
from engine.embedder import Embedder, HashEmbedder, Vectors, load_default_embedder
from engine.errors import VaultNotFound
from engine.tools.cli import main


def _snapshot(root: Path) -> dict[str, str]:
    """sha256 of every regular file in the vault (outside the index), to prove nothing was written."""
    out = {}
    for path in sorted(root.rglob("*")):
        if ".cairn" in path.parts or path.is_symlink() or not path.is_file():
            continue
        out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def nasty_vault(sample_copy: Path) -> Path:
    inbox = sample_copy / "Inbox"
    (inbox / "Broken frontmatter.md").write_text(
        "---\ntitle: [unclosed\naliases: {nope\n---\n# Broken\n\nThe zeppelin body is still indexed.\n",
        encoding="utf-8",
    )
    (inbox / "Latin1.md").write_bytes("# Café\n\nCrème brûlée recipe, naïve façade.\n".encode("cp1252"))
    (inbox / "Binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (inbox / "Empty.md").write_bytes(b"")
    words = " ".join(f"word{i % 5000}" for i in range(800_000))
    (inbox / "Huge.md").write_text("# Huge\n\n" + words + "\n\nthe gigantic-marker sentence.\n", encoding="utf-8")
    loop = sample_copy / "Loop"
    loop.mkdir()
    (loop / "again").symlink_to(loop, target_is_directory=True)
    os.mkfifo(inbox / "Pipe.md")
    return sample_copy


def test_nasty_vault_completes_and_reports(nasty_vault: Path, tmp_path: Path) -> None:
    before = _snapshot(nasty_vault)
    huge_size = (nasty_vault / "Inbox" / "Huge.md").stat().st_size
    assert huge_size > 5_000_000
    engine = Engine.open(nasty_vault, index_dir=tmp_path / "idx", embedder=HashEmbedder())
    try:
        report = engine.reindex()
        skipped = {s.path: s.reason for s in report.skipped}
        warnings = {w.path: w.reason for w in report.warnings}
        assert skipped["Inbox/Binary.md"] == "binary file, not Markdown"
        assert "regular file" in skipped["Inbox/Pipe.md"]
        assert any("loop" in reason for path, reason in skipped.items() if path.startswith("Loop"))
        assert "frontmatter" in warnings["Inbox/Broken frontmatter.md"]
        assert "UTF-8" in warnings["Inbox/Latin1.md"]
        assert "Inbox/Empty.md" in report.added
        assert "Inbox/Huge.md" in report.added
        assert engine.search("zeppelin", as_you_type=False).hits[0].path == "Inbox/Broken frontmatter.md"
        assert engine.search("brûlée", as_you_type=False).hits[0].path == "Inbox/Latin1.md"
        assert engine.search("gigantic-marker", as_you_type=False).hits[0].path == "Inbox/Huge.md"
        status = engine.status()
        assert {s.path for s in status.skipped} >= {"Inbox/Binary.md", "Inbox/Pipe.md"}
    finally:
        engine.close()
    assert _snapshot(nasty_vault) == before, "indexing must never modify a note"


def test_file_deleted_between_listing_and_reading(
    sample_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = sample_copy / "Inbox" / "Reading list.md"
    real_scan = engine.indexer.scan_vault

    def scan_then_delete(root: Path, excludes: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
        result = real_scan(root, excludes)
        victim.unlink()
        return result

    monkeypatch.setattr(engine.indexer, "scan_vault", scan_then_delete)
    eng = Engine.open(sample_copy, index_dir=tmp_path / "idx", embedder=HashEmbedder())
    try:
        report = eng.reindex()
        assert {s.path: s.reason for s in report.skipped}["Inbox/Reading list.md"].startswith("vanished")
        assert "Inbox/Reading list.md" not in report.added
    finally:
        eng.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a file whatever its mode")
def test_unreadable_file(sample_copy: Path, tmp_path: Path) -> None:
    secret = sample_copy / "Inbox" / "Secret.md"
    secret.write_text("# Secret\n", encoding="utf-8")
    secret.chmod(0)
    eng = Engine.open(sample_copy, index_dir=tmp_path / "idx", embedder=None)
    try:
        report = eng.reindex()
        assert "permission" in {s.path: s.reason for s in report.skipped}["Inbox/Secret.md"]
    finally:
        eng.close()


def test_vault_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFound):
        Engine.open(tmp_path / "missing")
    assert main(["reindex", str(tmp_path / "missing")]) == Exit.VAULT_NOT_FOUND


def test_kill_during_reindex_then_search_works(sample_copy: Path, tmp_path: Path) -> None:
    """SIGKILL in the middle of `engine reindex` (while embedding), then search answers."""
    for i in range(30):
        (sample_copy / "Inbox" / f"Filler {i}.md").write_text(
            f"# Filler {i}\n\n" + f"Paragraph about topic {i} and the lighthouse keeper. " * 20, encoding="utf-8"
        )
    index = tmp_path / "idx"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "reindex", str(sample_copy), "--index-dir", str(index)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until embedding has started, then kill mid-way
        if line.startswith("embed"):
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    search = subprocess.run(
        [sys.executable, "-m", "engine", "search", str(sample_copy), "--index-dir", str(index), "--json", "SQLCipher"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert search.returncode == 0, search.stderr
    assert "Traceback" not in search.stderr
    assert '"Meetings/2026/2026-03-25 Security Review.md"' in search.stdout
    finish = subprocess.run(
        [sys.executable, "-m", "engine", "reindex", str(sample_copy), "--index-dir", str(index), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert finish.returncode == 0, finish.stderr
    model = load_default_embedder()
    embedded: list[int] = []
    counting = _Counting(model, embedded)
    eng = Engine.open(sample_copy, index_dir=index, embedder=counting)
    try:
        assert eng.repairs == [], "the finished run left nothing to repair at open"
        status = eng.status()
        assert status.embedded_fraction == 1.0
        assert status.channel_counts["fulltext"] == status.notes == status.channel_counts["graph"]
    finally:
        eng.close()
    assert embedded == [], "opening a finished index embeds nothing"


class _Counting:
    """The real model, recording how many chunk texts it is asked to embed."""

    def __init__(self, inner: Embedder, embedded: list[int]) -> None:
        self._inner = inner
        self._embedded = embedded
        self.model_id = inner.model_id
        self.dims = inner.dims

    def embed(self, texts: Sequence[str]) -> Vectors:
        self._embedded.append(len(texts))
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> Vectors:
        return self._inner.embed_query(text)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._inner.count_tokens(texts)


@pytest.mark.parametrize("target", ["../outside secret.txt", ".hidden/secret.md"])
def test_a_path_named_to_reindex_is_held_to_the_scan_s_rules(sample_copy: Path, tmp_path: Path, target: str) -> None:
    """The watcher reindexes the paths it saw change: a symlink out of the vault, or into a
    hidden folder, is skipped there as the full scan skips it, and never read."""
    secret = (sample_copy / target).resolve()
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("zebraquokka password=hunter2\n", encoding="utf-8")
    eng = Engine.open(sample_copy, index_dir=tmp_path / "idx", embedder=None)
    eng.reindex()
    (sample_copy / "innocent.md").symlink_to(secret)
    report = eng.reindex(["innocent.md"])
    assert [(s.path, s.reason) for s in report.skipped] == [
        ("innocent.md", "symlink points outside the vault" if target.startswith("..") else "symlink into a hidden or excluded folder")
    ]
    assert not eng.search("zebraquokka").hits
    assert [(s.path, s.reason) for s in eng.reindex().skipped if s.path == "innocent.md"] == [
        (s.path, s.reason) for s in report.skipped
    ]
    eng.close()
