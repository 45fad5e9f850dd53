"""The vault watcher: edits, adds, renames, deletes and folder moves reach every channel."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.api import Engine
from engine.embedder import HashEmbedder
from engine.errors import IndexLocked
from engine.present import watch_line as describe
from engine.records import WatchBatch
from engine.watch import VaultWatcher, classify, is_ignored

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30.0


class Batches:
    """Collects watcher batches; tests wait on a condition over them, never on time."""

    def __init__(self) -> None:
        self.items: list[WatchBatch] = []
        self._cond = threading.Condition()

    def __call__(self, batch: WatchBatch) -> None:
        with self._cond:
            self.items.append(batch)
            self._cond.notify_all()

    def wait(self, predicate: Callable[[list[WatchBatch]], bool], what: str) -> list[WatchBatch]:
        with self._cond:
            assert self._cond.wait_for(lambda: predicate(self.items), TIMEOUT), f"timed out waiting for {what}: {self.items}"
            return list(self.items)

    def after(self, count: int) -> list[WatchBatch]:
        with self._cond:
            return self.items[count:]


@pytest.fixture
def watched(sample_copy: Path, tmp_path: Path) -> Iterator[tuple[Engine, Batches]]:
    engine = Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder())
    batches = Batches()
    watcher = VaultWatcher(engine, batches)
    watcher.start()
    batches.wait(lambda items: len(items) >= 1, "the start-up catch-up")
    yield engine, batches
    watcher.stop()
    assert watcher.error is None
    engine.close()


def indexed(batches: Batches, start: int, path: str, kind: str) -> Callable[[list[WatchBatch]], bool]:
    def check(items: list[WatchBatch]) -> bool:
        return any(b.report is not None and path in getattr(b.report, kind) for b in items[start:])

    return check


def consistent(engine: Engine) -> None:
    status = engine.status()
    with_text = sum(1 for path, _ in engine.notes() if engine._catalog.chunks_for(path))
    assert status.channel_counts == {"fulltext": status.notes, "vectors": with_text, "graph": status.notes}
    assert engine.pending() == ()


@pytest.mark.parametrize(
    "path",
    [
        ".obsidian/workspace.json", ".cairn/catalog.sqlite", ".git/index", ".trash/Old.md",
        "Notes/.Note.md.swp", "Notes/.Note.md.swx", "Notes/Note.md~", "Notes/4913", "Notes/.#Note.md",
        "Notes/draft.tmp", "Notes/.Note.md.a8f3k2.tmp", "Notes/#Note.md#",
    ],
)
def test_editor_noise_is_ignored(path: str) -> None:
    assert is_ignored(path)


@pytest.mark.parametrize("path", ["Notes/Note.md", "Projects/Atlas", "assets/diagram.png", "4913.md"])
def test_notes_folders_and_attachments_are_not_ignored(path: str) -> None:
    assert not is_ignored(path)


def test_classify_sends_folders_and_unknown_paths_to_a_rescan(tmp_path: Path) -> None:
    (tmp_path / "Folder.md").mkdir()
    assert classify(["A.md", "B/C.md", ".obsidian/x.json"], tmp_path) == (("A.md", "B/C.md"), False)
    assert classify(["A.md", "Moved Folder"], tmp_path) == (("A.md",), True)
    assert classify(["Folder.md"], tmp_path) == ((), True)
    assert classify(["image.png"], tmp_path)[1]
    assert classify(["A.md"], tmp_path, has_excludes=True)[1]


def test_edit_add_rename_delete_reach_every_channel(watched: tuple[Engine, Batches]) -> None:
    engine, batches = watched
    vault = engine.vault

    start = len(batches.items)
    (vault / "Inbox" / "Quokka.md").write_text("# Quokka Plan\n\nThe quokka plan links [[CRDT]].\n", encoding="utf-8")
    batches.wait(indexed(batches, start, "Inbox/Quokka.md", "added"), "the new note")
    hit = engine.search("Quokka Plan", as_you_type=False).hits[0]
    assert hit.path == "Inbox/Quokka.md"
    assert set(hit.channels) == {"fulltext", "vectors", "graph"}
    assert "CRDT" in [n.name for n in engine.neighbors("Inbox/Quokka.md")]
    assert "Inbox/Quokka.md" in [b.path for b in engine.backlinks("Glossary/CRDT.md")]

    start = len(batches.items)
    note = vault / "Glossary" / "Tombstone.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA wombat burrow.\n", encoding="utf-8")
    batches.wait(indexed(batches, start, "Glossary/Tombstone.md", "updated"), "the edit")
    assert engine.search("wombat", as_you_type=False).hits[0].path == "Glossary/Tombstone.md"

    start = len(batches.items)
    os.rename(vault / "Inbox" / "Quokka.md", vault / "Inbox" / "Numbat.md")
    batches.wait(indexed(batches, start, "Inbox/Numbat.md", "added"), "the rename")
    paths = [h.path for h in engine.search("quokka", as_you_type=False).hits]
    assert "Inbox/Numbat.md" in paths and "Inbox/Quokka.md" not in paths
    renamed = [b for b in batches.after(start) if b.report is not None]
    assert sum(b.report.embedded_chunks for b in renamed if b.report) == 0, "a rename re-embeds nothing"

    start = len(batches.items)
    (vault / "Inbox" / "Numbat.md").unlink()
    batches.wait(indexed(batches, start, "Inbox/Numbat.md", "removed"), "the delete")
    assert all(h.path != "Inbox/Numbat.md" for h in engine.search("quokka", as_you_type=False).hits)
    assert "Inbox/Numbat.md" not in [b.path for b in engine.backlinks("Glossary/CRDT.md")]
    consistent(engine)


def test_folder_move_reindexes_the_subtree(watched: tuple[Engine, Batches]) -> None:
    engine, batches = watched
    vault = engine.vault
    before = {path for path, _ in engine.notes() if path.startswith("Glossary/")}
    start = len(batches.items)
    os.rename(vault / "Glossary", vault / "Reference" / "Lexicon")
    moved = {f"Reference/Lexicon/{p.removeprefix('Glossary/')}" for p in before}
    batches.wait(lambda items: any(b.rescan for b in items[start:]), "the rescan")
    batches.wait(lambda _items: moved <= {p for p, _ in engine.notes()}, "the moved notes")
    notes = {path for path, _ in engine.notes()}
    assert not any(path.startswith("Glossary/") for path in notes)
    assert "Decisions/ADR-004 Sync with CRDTs.md" in [b.path for b in engine.backlinks("Reference/Lexicon/CRDT.md")]
    assert sum(b.report.embedded_chunks for b in batches.after(start) if b.report) == 0
    consistent(engine)


def test_editor_temp_files_cause_no_batch(watched: tuple[Engine, Batches]) -> None:
    engine, batches = watched
    vault = engine.vault
    start = len(batches.items)
    for name in (".Note.md.swp", "Note.md~", "4913", ".#Note.md", "x.tmp"):
        (vault / "Inbox" / name).write_text("noise", encoding="utf-8")
    (vault / ".obsidian").mkdir(exist_ok=True)
    (vault / ".obsidian" / "workspace.json").write_text("{}", encoding="utf-8")
    # A real note last: its batch must be the only one, and hold only the note.
    (vault / "Inbox" / "Real.md").write_text("# Real\n\nreal text\n", encoding="utf-8")
    seen = batches.wait(indexed(batches, start, "Inbox/Real.md", "added"), "the real note")
    assert [b.paths for b in seen[start:]] == [("Inbox/Real.md",)]


def test_a_thousand_files_are_one_batch(watched: tuple[Engine, Batches]) -> None:
    engine, batches = watched
    folder = engine.vault / "Imported"
    staging = engine.vault.parent / "staging"
    staging.mkdir()
    for i in range(1000):
        (staging / f"Imported {i:04}.md").write_text(f"# Imported {i}\n\nBulk note number {i} about [[CRDT]].\n", encoding="utf-8")
    start = len(batches.items)
    folder.mkdir()
    batches.wait(lambda items: any(b.rescan for b in items[start:]), "the new folder")
    start = len(batches.items)
    for path in sorted(staging.iterdir()):  # 1,000 renames in a burst, as a checkout writes them
        os.rename(path, folder / path.name)
    seen = batches.wait(lambda items: sum(b.changed_notes for b in items[start:]) >= 1000, "1,000 notes")
    absorbed = [b for b in seen[start:] if b.changed_notes]
    assert len(absorbed) == 1, [describe(b) for b in absorbed]
    batch = absorbed[0]
    assert batch.report is not None and len(batch.report.added) == 1000
    assert batch.seconds > 0 and "1000 added" in describe(batch)
    assert engine.status().notes == 63 + 1000


def test_second_engine_reads_while_the_watcher_writes(watched: tuple[Engine, Batches]) -> None:
    writer, batches = watched
    reader = Engine.open(writer.vault, index_dir=writer.index_dir, embedder=HashEmbedder())
    try:
        assert reader.writer is not None and f"pid {os.getpid()}" in reader.writer
        with pytest.raises(IndexLocked, match=f"being written by pid {os.getpid()}"):
            reader.reindex()
        assert reader.search("platypus", channels=("fulltext",), as_you_type=False).hits == ()
        start = len(batches.items)
        (writer.vault / "Inbox" / "Platypus.md").write_text("# Platypus\n\nA platypus note.\n", encoding="utf-8")
        batches.wait(indexed(batches, start, "Inbox/Platypus.md", "added"), "the writer's batch")
        assert reader.refresh()
        hit = reader.search("Platypus", as_you_type=False).hits[0]
        assert hit.path == "Inbox/Platypus.md" and set(hit.channels) == {"fulltext", "vectors", "graph"}
        assert not reader.refresh(), "nothing new"
        saved = reader.save_note("Inbox/Echidna.md", "# Echidna\n\nsaved by the reader\n", expected_sha=None)
        assert not saved.indexed and "being written by" in saved.warnings[0]
        batches.wait(indexed(batches, start, "Inbox/Echidna.md", "added"), "the writer indexing the reader's save")
    finally:
        reader.close()


def test_pending_lists_changes_not_yet_indexed(sample_copy: Path, tmp_path: Path) -> None:
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        assert engine.pending() == ()
        (sample_copy / "Inbox" / "New.md").write_text("# New\n", encoding="utf-8")
        (sample_copy / "Glossary" / "CRDT.md").unlink()
        with (sample_copy / "Glossary" / "Tombstone.md").open("a", encoding="utf-8") as handle:
            handle.write("\nmore\n")
        assert engine.pending() == ("Glossary/CRDT.md", "Glossary/Tombstone.md", "Inbox/New.md")
        engine.reindex()
        assert engine.pending() == ()


def test_engine_watch_cli_holds_the_index(sample_copy: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    base = [str(sample_copy), "--index-dir", str(index_dir), "--no-model"]
    watch = subprocess.Popen(
        [sys.executable, "-m", "engine", "watch", *base],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=ROOT,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in watch.stderr or ()], daemon=True).start()
    try:
        first = [lines.get(timeout=60), lines.get(timeout=60)]
        assert "watching" in first[0] and "vault rescan: 63 added" in first[1], first
        reindex = subprocess.run(
            [sys.executable, "-m", "engine", "reindex", *base], capture_output=True, text=True, cwd=ROOT, timeout=60
        )
        assert reindex.returncode == 4
        assert f"the index is being written by pid {watch.pid} (engine watch)" in reindex.stderr
        second = subprocess.run(
            [sys.executable, "-m", "engine", "watch", *base], capture_output=True, text=True, cwd=ROOT, timeout=60
        )
        assert second.returncode == 4 and f"pid {watch.pid} (engine watch)" in second.stderr
        (sample_copy / "Inbox" / "Galah.md").write_text("# Galah\n", encoding="utf-8")
        line = lines.get(timeout=60)
        assert "1 files: 1 added" in line and "s" in line.split(" in ")[-1], line
    finally:
        watch.terminate()
        code = watch.wait(30)
    assert code == 0, "SIGTERM stops the watcher cleanly"
    status = subprocess.run(
        [sys.executable, "-m", "engine", "status", *base, "--json"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert '"writer": null' in status.stdout and '"pending": []' in status.stdout
    shutil.rmtree(index_dir)


def test_the_index_folder_deleted_while_watching_is_rebuilt_and_watched(watched: tuple[Engine, Batches]) -> None:
    engine, batches = watched
    embedded = engine.status().embedded_chunks
    start = len(batches.items)
    shutil.rmtree(engine.index_dir)
    items = batches.wait(
        lambda items: any(b.report is not None and len(b.report.added) == 63 for b in items[start:]), "the rebuild"
    )
    rebuilt = next(b for b in items[start:] if b.report is not None and b.report.added)
    assert not rebuilt.error and rebuilt.report is not None
    assert rebuilt.report.embedded_chunks == 0, "the vectors cached in the removed catalog came across"
    assert (engine.index_dir / "catalog.sqlite").is_file()
    assert engine.status().embedded_chunks == embedded
    assert engine.search("tombstone", as_you_type=False).hits[0].path == "Glossary/Tombstone.md"

    start = len(batches.items)
    (engine.vault / "Inbox" / "Galah.md").write_text("# Galah\n\nA galahword note.\n", encoding="utf-8")
    batches.wait(indexed(batches, start, "Inbox/Galah.md", "added"), "a note written after the rebuild")
    assert engine.search("galahword", as_you_type=False).hits[0].path == "Inbox/Galah.md"
    # Exactly one writer lock, on the file other processes see.
    with Engine.open(engine.vault, index_dir=engine.index_dir, embedder=HashEmbedder()) as other, pytest.raises(IndexLocked):
        other.reindex()
    consistent(engine)


def test_a_note_written_the_moment_the_watcher_is_ready_is_indexed(sample_copy: Path, tmp_path: Path) -> None:
    """Watching starts before the catch-up comparison, so nothing written between the two is missed."""
    with Engine.open(sample_copy, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        batches = Batches()
        watcher = VaultWatcher(engine, batches)
        watcher.start()
        try:
            assert watcher.ready.wait(TIMEOUT)
            start = len(batches.items)
            (sample_copy / "Inbox" / "Quoll.md").write_text("# Quoll\n\nA quollword note.\n", encoding="utf-8")
            batches.wait(indexed(batches, start, "Inbox/Quoll.md", "added"), "the note written at once")
        finally:
            watcher.stop()
        assert watcher.error is None


def test_a_file_put_where_the_index_was_is_reported_and_the_watcher_waits_it_out(
    watched: tuple[Engine, Batches],
) -> None:
    engine, batches = watched
    start = len(batches.items)
    shutil.rmtree(engine.index_dir)
    engine.index_dir.write_text("not an index", encoding="utf-8")
    items = batches.wait(lambda items: any(b.error for b in items[start:]), "the refusal")
    assert "is a file, not a folder" in next(b.error for b in items[start:] if b.error)
    engine.index_dir.unlink()
    batches.wait(lambda items: any(b.report is not None and len(b.report.added) == 63 for b in items[start:]), "the rebuild")
    assert engine.search("tombstone", as_you_type=False).hits[0].path == "Glossary/Tombstone.md"
