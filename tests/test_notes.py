"""Note files through the engine: atomic compare-and-replace, encodings and line endings kept,
rename with link updates (code untouched, every note or none), trash, names, temp files."""

from __future__ import annotations

import errno
import os
import posixpath
import random
import re
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import notes
from engine.api import Engine
from engine.embedder import HashEmbedder
from engine.errors import EncodingMismatch, NoteExists, NoteNotSaved, SaveConflict, UnsafePath

ROOT = Path(__file__).resolve().parent.parent


def _vault(tmp_path: Path, files: dict[str, bytes]) -> Path:
    vault = tmp_path / "vault"
    for name, data in files.items():
        target = vault / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    vault.mkdir(exist_ok=True)
    return vault


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Engine]:
    """An indexed engine over a vault of a few notes in different encodings and line endings."""
    files = {
        "Old.md": b"# Old\n\nThe note that gets renamed.\n",
        "Crlf.md": b"# Crlf\r\n\r\nFirst line.\r\nSecond line.\r\n",
        "Cr.md": b"# Cr\r\rOnly carriage returns.\r",
        "Mixed.md": b"# Mixed\n\r\none\r\ntwo\nthree\rfour\n",
        "Leading.md": b"\n\n# Leading\n\nTwo blank lines first.\n",
        "Latin.md": "# Café\n\nCrème brûlée, naïve façade, “quotes”. See [[Old]].\n".encode("cp1252"),
        "Wide.md": "\ufeff# Wide\r\n\r\nÜber straße, 東京. [[Old]]\r\n".encode("utf-16-le"),
        "Wider.md": "\ufeff# Wider\n\nZürich 🏔 [[Old]]\n".encode("utf-32-be"),
        "Bom.md": "\ufeff# Bom\n\nWith a UTF-8 mark. [[Old]]\n".encode(),
        "Code.md": (
            b"# Code\n\nA real link [[Old]] and `[[Old]]` in code.\n\n"
            b"```\n[[Old]] in a fence\n```\n\n    [[Old]] indented code\n\n"
            b"A [markdown link](Old.md#top) and ![[Old#Heading|shown]] and [[Old|alias]].\n"
        ),
    }
    vault = _vault(tmp_path, files)
    engine = Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder())
    engine.reindex()
    yield engine
    engine.close()


def _bytes(engine: Engine, path: str) -> bytes:
    return (engine.vault / path).read_bytes()


# -- compare and replace --------------------------------------------------------------


def _race(engine: Engine, path: str, expected: str | None, texts: list[str]) -> list[object]:
    """Save `texts` at once from threads, all against the same `expected` sha."""
    barrier = threading.Barrier(len(texts))
    outcomes: list[object] = [None] * len(texts)

    def save(index: int) -> None:
        barrier.wait()
        try:
            outcomes[index] = engine.save_note(path, texts[index], expected_sha=expected)
        except SaveConflict as exc:
            outcomes[index] = exc

    threads = [threading.Thread(target=save, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_saves_of_the_same_version_at_once_let_exactly_one_win(small: Engine) -> None:
    for round_number in range(20):
        loaded = small.read_note("Old.md")
        texts = [f"# Old\n\nround {round_number} writer {w}\n" for w in range(4)]
        outcomes = _race(small, "Old.md", loaded.sha, texts)
        won = [i for i, o in enumerate(outcomes) if not isinstance(o, SaveConflict)]
        assert len(won) == 1, outcomes
        assert _bytes(small, "Old.md").decode() == texts[won[0]]


def test_creates_of_the_same_new_note_at_once_let_exactly_one_win(small: Engine) -> None:
    for round_number in range(20):
        path = f"New/Race {round_number}.md"
        texts = [f"# Race\n\nwriter {w}\n" for w in range(4)]
        outcomes = _race(small, path, None, texts)
        won = [i for i, o in enumerate(outcomes) if not isinstance(o, SaveConflict)]
        assert len(won) == 1, outcomes
        assert _bytes(small, path).decode() == texts[won[0]]


HOLD_LOCK = """
import sys
from pathlib import Path
from engine.notes import save_lock
with save_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_another_process_saving_in_the_same_folder_is_waited_for(small: Engine) -> None:
    target = small.vault / "Old.md"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(target)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        loaded = small.read_note("Old.md")
        done = threading.Event()

        def save() -> None:
            small.save_note("Old.md", "# Old\n\nafter the other process\n", expected_sha=loaded.sha)
            done.set()

        saver = threading.Thread(target=save)
        saver.start()
        assert not done.wait(0.5), "the save went ahead while another process held the lock"
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        saver.join(timeout=30)
        assert done.is_set()
    finally:
        holder.kill()
        holder.wait()


def test_a_conflict_names_the_current_version_and_overwriting_it_works(small: Engine) -> None:
    loaded = small.read_note("Old.md")
    (small.vault / "Old.md").write_text("# Old\n\nchanged elsewhere\n", encoding="utf-8")
    with pytest.raises(SaveConflict) as caught:
        small.save_note("Old.md", "mine", expected_sha=loaded.sha)
    assert caught.value.current_sha == notes.file_sha(small.vault / "Old.md")
    assert small.save_note("Old.md", "mine\n", expected_sha=caught.value.current_sha).indexed
    assert _bytes(small, "Old.md") == b"mine\n"
    with pytest.raises(SaveConflict):
        small.save_note("Old.md", "create over it", expected_sha=None)


# -- encodings and line endings ---------------------------------------------------------


@pytest.mark.parametrize("path", ["Crlf.md", "Cr.md", "Mixed.md", "Leading.md", "Latin.md", "Wide.md", "Wider.md", "Bom.md"])
def test_saving_unchanged_text_writes_the_same_bytes(small: Engine, path: str) -> None:
    before = _bytes(small, path)
    note = small.read_note(path)
    assert "\r" not in note.text and not note.text.startswith("\ufeff")
    small.save_note(path, note.text, expected_sha=note.sha)
    assert _bytes(small, path) == before


def test_an_edit_keeps_the_encoding_and_every_other_byte(small: Engine) -> None:
    note = small.read_note("Latin.md")
    assert note.format.codec == "cp1252" and "Crème brûlée" in note.text
    small.save_note("Latin.md", note.text.replace("naïve", "très naïve"), expected_sha=note.sha)
    expected = "# Café\n\nCrème brûlée, très naïve façade, “quotes”. See [[Old]].\n".encode("cp1252")
    assert _bytes(small, "Latin.md") == expected
    assert small.search("tres naive", as_you_type=False).hits[0].path == "Latin.md"


@pytest.mark.parametrize(("path", "codec", "bom"), [("Wide.md", "utf-16-le", b"\xff\xfe"), ("Wider.md", "utf-32-be", b"\x00\x00\xfe\xff")])
def test_utf16_and_utf32_notes_stay_what_they_are(small: Engine, path: str, codec: str, bom: bytes) -> None:
    note = small.read_note(path)
    assert note.format.codec == codec and note.format.bom == bom
    small.save_note(path, note.text + "Added.\n", expected_sha=note.sha)
    data = _bytes(small, path)
    assert data.startswith(bom)
    assert data[len(bom):].decode(codec) == note.text.replace("\n", note.format.newline) + "Added." + note.format.newline


def test_a_utf32_note_is_indexed_as_text(small: Engine) -> None:
    hit = small.search("Zürich", as_you_type=False).hits[0]
    assert hit.path == "Wider.md" and "\x00" not in hit.snippet.text


def test_edited_lines_keep_their_own_endings_in_a_mixed_note(small: Engine) -> None:
    note = small.read_note("Mixed.md")
    assert note.text == "# Mixed\n\none\ntwo\nthree\nfour\n"
    edited = note.text.replace("two", "TWO, edited").replace("four\n", "four\nfive\n")
    small.save_note("Mixed.md", edited, expected_sha=note.sha)
    assert _bytes(small, "Mixed.md") == b"# Mixed\n\r\none\r\nTWO, edited\nthree\rfour\nfive\n"


def test_crlf_and_cr_notes_keep_their_endings_for_new_lines(small: Engine) -> None:
    for path, newline in (("Crlf.md", b"\r\n"), ("Cr.md", b"\r")):
        note = small.read_note(path)
        small.save_note(path, note.text + "A new line.\n", expected_sha=note.sha)
        data = _bytes(small, path)
        assert data.endswith(b"A new line." + newline)
        assert b"\n" not in data.replace(b"\r\n", b"") if newline == b"\r\n" else b"\n" not in data


def test_text_the_encoding_cannot_hold_is_refused_unless_saved_as_utf8(small: Engine) -> None:
    before = _bytes(small, "Latin.md")
    note = small.read_note("Latin.md")
    with pytest.raises(EncodingMismatch, match=r"cp1252.*“→”.*line 3"):
        small.save_note("Latin.md", note.text.replace("See", "→ See"), expected_sha=note.sha)
    assert _bytes(small, "Latin.md") == before
    small.save_note("Latin.md", note.text.replace("See", "→ See"), expected_sha=note.sha, as_utf8=True)
    assert _bytes(small, "Latin.md").decode("utf-8").startswith("# Café")
    assert small.read_note("Latin.md").format.codec == "utf-8"


def test_binary_and_oversized_files_are_not_opened_for_editing(small: Engine, tmp_path: Path) -> None:
    (small.vault / "Blob.md").write_bytes(b"\x00\x01\x02PNG" * 100)
    with pytest.raises(NoteNotSaved, match="binary"):
        small.read_note("Blob.md")
    assert small.read_note("Not yet.md").sha is None


# -- what a save says about the index ----------------------------------------------------


def test_an_oversized_save_is_written_and_reported_as_not_indexed(tmp_path: Path) -> None:
    from engine.config import EngineConfig

    vault = _vault(tmp_path, {"Big.md": b"# Big\n\nsmall for now\n"})
    with Engine.open(vault, EngineConfig(max_file_bytes=1000), index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        note = engine.read_note("Big.md")
        result = engine.save_note("Big.md", "# Big\n\n" + "word " * 400, expected_sha=note.sha)
        assert not result.indexed and "too large" in result.warnings[0]
        assert (vault / "Big.md").stat().st_size > 1000


def test_a_full_index_disk_after_the_write_is_a_warning_not_a_lost_save(small: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    note = small.read_note("Old.md")

    def full(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(small._session, "reindex", full)
    result = small.save_note("Old.md", "# Old\n\nsaved anyway\n", expected_sha=note.sha)
    assert not result.indexed and "disk is full" in result.warnings[0]
    assert result.sha == notes.file_sha(small.vault / "Old.md")


def test_a_full_vault_disk_writes_nothing_and_says_so(small: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _bytes(small, "Old.md")
    note = small.read_note("Old.md")
    real_write = os.write

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(NoteNotSaved, match="disk is full"):
        small.save_note("Old.md", "lost?", expected_sha=note.sha)
    monkeypatch.setattr(os, "write", real_write)
    assert _bytes(small, "Old.md") == before
    assert not [p for p in small.vault.rglob("*.tmp")] and not list((small.index_dir / "tmp").iterdir())


def test_a_read_only_vault_says_so(small: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def read_only(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT and not str(path).startswith(str(small.index_dir)):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    real_replace = os.replace

    def replace(source: object, target: object) -> None:
        if str(target).startswith(str(small.vault)) and not str(target).startswith(str(small.index_dir)):
            raise OSError(errno.EROFS, "Read-only file system")
        real_replace(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(NoteNotSaved, match="read-only"):
        small.save_note("Fresh.md", "# Fresh\n", expected_sha=None)
    monkeypatch.undo()


def test_new_notes_get_the_umask_mode_and_edits_keep_theirs(small: Engine) -> None:
    old_umask = os.umask(0o022)
    try:
        small.create_note("", "Mode check")
        assert (small.vault / "Mode check.md").stat().st_mode & 0o777 == 0o644
        (small.vault / "Old.md").chmod(0o600)
        note = small.read_note("Old.md")
        small.save_note("Old.md", note.text + "more\n", expected_sha=note.sha)
        assert (small.vault / "Old.md").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old_umask)


def test_long_names_can_be_created_and_saved(small: Engine) -> None:
    title = "漢字" * 40  # 80 characters, 240 bytes: the name plus a temp suffix used to pass 255
    result = small.create_note("", title)
    assert result.path == f"{title}.md" and (small.vault / result.path).exists()
    note = small.read_note(result.path)
    small.save_note(result.path, note.text + "body\n", expected_sha=note.sha)
    longer = small.create_note("", "長" * 120)  # 360 bytes: the file name is cut, the heading is not
    assert len(longer.path.encode()) <= 255 and longer.path.endswith(".md")
    assert small.read_note(longer.path).text == f"# {'長' * 120}\n\n"
    copy = small.conflict_copy_path(result.path)
    assert len(copy.encode()) <= 255 and "(conflict " in copy


KILLED_SAVE = """
import os, signal, sys
from engine.api import Engine
engine = Engine.open(sys.argv[1], index_dir=sys.argv[2], embedder=None)
note = engine.read_note("Old.md")
real_fsync = os.fsync
os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)
engine.save_note("Old.md", note.text + "never finished\\n", expected_sha=note.sha)
"""


def test_a_save_killed_midway_leaves_nothing_in_the_vault(small: Engine, tmp_path: Path) -> None:
    before = _bytes(small, "Old.md")
    small.close()
    killed = subprocess.run([sys.executable, "-c", KILLED_SAVE, str(small.vault), str(small.index_dir)], cwd=ROOT)
    assert killed.returncode == -9
    assert _bytes(small, "Old.md") == before
    assert [p.name for p in small.vault.iterdir() if p.name.endswith(".tmp")] == []
    left = list((small.index_dir / "tmp").iterdir())
    assert left, "the temp file of the killed save sits in the index folder"
    past = time.time() - 2 * notes.STALE_TEMP_S
    for path in left:
        os.utime(path, (past, past))
    Engine.open(small.vault, index_dir=small.index_dir, embedder=None).close()
    assert list((small.index_dir / "tmp").iterdir()) == []


def test_only_cairns_own_stale_temp_files_are_cleaned(small: Engine) -> None:
    ours = small.vault / f"{notes.TEMP_PREFIX}0a1b2c3d4e5f{notes.TEMP_SUFFIX}"
    fresh = small.vault / f"{notes.TEMP_PREFIX}a1b2c3d4e5f6{notes.TEMP_SUFFIX}"
    others = [small.vault / ".Old.md.k3j9x_0a.tmp", small.vault / ".Journal.md.20260101.tmp", small.vault / ".mine.tmp"]
    for path in (ours, fresh, *others):
        path.write_text("partial", encoding="utf-8")
    past = time.time() - 2 * notes.STALE_TEMP_S
    for path in (ours, *others):
        os.utime(path, (past, past))
    small.reindex()
    assert not ours.exists() and fresh.exists()
    assert all(path.read_text(encoding="utf-8") == "partial" for path in others), "another program's files"


# -- rename and link updates --------------------------------------------------------------


def test_rename_updates_links_with_the_indexer_grammar_and_keeps_encodings(small: Engine) -> None:
    latin_before = _bytes(small, "Latin.md")
    code_before = _bytes(small, "Code.md").decode()
    renamed = small.rename_note("Old.md", "Brand new")
    assert renamed.new == "Brand new.md" and not (small.vault / "Old.md").exists()
    assert {n.path for n in renamed.linking} == {"Latin.md", "Wide.md", "Wider.md", "Bom.md", "Code.md"}
    update = small.update_links(renamed)
    assert not update.untouched and set(update.notes) == {n.path for n in renamed.linking}
    code_after = _bytes(small, "Code.md").decode()
    assert code_after == (
        code_before.replace("real link [[Old]]", "real link [[Brand new]]")
        .replace("(Old.md#top)", "(Brand%20new.md#top)")
        .replace("![[Old#Heading|shown]]", "![[Brand new#Heading|shown]]")
        .replace("[[Old|alias]]", "[[Brand new|alias]]")
    )
    assert "`[[Old]]`" in code_after and "[[Old]] in a fence" in code_after and "    [[Old]] indented" in code_after
    assert _bytes(small, "Latin.md") == latin_before.replace(b"[[Old]]", b"[[Brand new]]")
    wide = _bytes(small, "Wide.md")
    assert wide.startswith(b"\xff\xfe") and wide[2:].decode("utf-16-le").endswith("[[Brand new]]\r\n")
    assert {b.path for b in small.backlinks("Brand new.md")} == {n.path for n in renamed.linking}


def test_links_by_an_alias_or_the_title_are_left_as_the_user_wrote_them(tmp_path: Path) -> None:
    vault = _vault(
        tmp_path,
        {
            "kwame-mensah.md": b"---\naliases: [Kwame, KM]\n---\n# Kwame Mensah\n",
            "Standup.md": b"Met [[Kwame]], [[KM|him]] and [[Kwame Mensah]]; [[kwame-mensah]] is the file.\n",
        },
    )
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        renamed = engine.rename_note("kwame-mensah.md", "People - Kwame")
        assert [(n.path, n.targets, n.links) for n in renamed.linking] == [("Standup.md", ("kwame-mensah",), 1)]
        engine.update_links(renamed)
        assert (vault / "Standup.md").read_bytes() == (
            b"Met [[Kwame]], [[KM|him]] and [[Kwame Mensah]]; [[People - Kwame]] is the file.\n"
        )
        resolved = [row.resolved for row in engine._catalog.links_from("Standup.md")]
        assert resolved == ["People - Kwame.md"] * 4, "every link still reaches the note"


def test_a_link_update_changes_every_note_or_none(small: Engine) -> None:
    renamed = small.rename_note("Old.md", "Pfeil → Ziel")  # cp1252 has no arrow
    before = {n.path: _bytes(small, n.path) for n in renamed.linking}
    update = small.update_links(renamed)
    assert [s.path for s in update.untouched] == ["Latin.md"]
    assert "cp1252" in update.untouched[0].reason
    assert {p: _bytes(small, p) for p in before} == before, "no note changed"


def test_a_link_update_that_fails_midway_puts_back_what_it_wrote(small: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    renamed = small.rename_note("Old.md", "Renamed")
    before = {n.path: _bytes(small, n.path) for n in renamed.linking}
    real_write = notes.write_bytes
    calls = {"count": 0}

    def flaky(target: Path, data: bytes, **kwargs: Path | None) -> None:
        calls["count"] += 1
        if calls["count"] == 3:
            raise NoteNotSaved("the disk is full")
        real_write(target, data, **kwargs)

    monkeypatch.setattr(notes, "write_bytes", flaky)
    update = small.update_links(renamed)
    assert update.untouched and "disk is full" in update.untouched[0].reason
    assert {p: _bytes(small, p) for p in before} == before


def test_rename_refuses_to_overwrite_and_allows_a_case_change(small: Engine) -> None:
    with pytest.raises(NoteExists):
        small.rename_note("Old.md", "Crlf")
    assert _bytes(small, "Crlf.md").startswith(b"# Crlf")
    renamed = small.rename_note("Old.md", "old")
    assert renamed.new == "old.md" and (small.vault / "old.md").exists()


def test_a_rename_waits_for_a_save_creating_its_new_path_and_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path, {"A/Draft.md": b"# Draft\nWeeks of work.\n", "B/Other.md": b"# Other\n"})
    engine = Engine.open(vault, index_dir=tmp_path / "index", embedder=None)
    engine.reindex()
    outcome: list[object] = []

    def rename() -> None:
        try:
            outcome.append(engine.rename_note("A/Draft.md", "B/Plan"))
        except NoteExists as exc:
            outcome.append(exc)

    real_write = notes.write_bytes

    def write_with_a_rename_racing(target: Path, data: bytes, **kwargs: Path | None) -> None:
        if target.name == "Plan.md":  # the create has found the path free and is about to write
            racer = threading.Thread(target=rename)
            racer.start()
            racer.join(timeout=0.5)  # a rename that does not wait would be done by now
            threads.append(racer)
        real_write(target, data, **kwargs)

    threads: list[threading.Thread] = []
    monkeypatch.setattr(notes, "write_bytes", write_with_a_rename_racing)
    engine.save_note("B/Plan.md", "# Plan\n", expected_sha=None)
    for racer in threads:
        racer.join()
    engine.close()
    assert len(outcome) == 1 and isinstance(outcome[0], NoteExists)
    assert (vault / "A/Draft.md").read_bytes() == b"# Draft\nWeeks of work.\n"
    assert (vault / "B/Plan.md").read_bytes() == b"# Plan\n"


def test_trash_never_overwrites_and_unsafe_names_are_refused(small: Engine) -> None:
    first = small.trash_note("Old.md")
    (small.vault / "Old.md").write_text("# Old\n\nagain\n", encoding="utf-8")
    small.reindex(["Old.md"])
    second = small.trash_note("Old.md")
    assert first == ".trash/Old.md" and second == ".trash/Old (1).md"
    assert (small.vault / ".trash/Old.md").read_text(encoding="utf-8").startswith("# Old\n\nThe note")
    with pytest.raises(UnsafePath):
        small.save_note("../outside.md", "x", expected_sha=None)
    with pytest.raises(UnsafePath):
        small.save_note("script.js", "x", expected_sha=None)


def test_trashing_or_renaming_a_note_that_is_a_symlink_moves_the_link(small: Engine) -> None:
    (small.vault / "Alias.md").symlink_to("Old.md")
    (small.vault / "Second.md").symlink_to("Crlf.md")
    small.reindex()
    old, crlf = _bytes(small, "Old.md"), _bytes(small, "Crlf.md")
    assert small.trash_note("Alias.md") == ".trash/Alias.md"
    assert (small.vault / ".trash/Alias.md").is_symlink() and not os.path.lexists(small.vault / "Alias.md")
    assert small.rename_note("Second.md", "Third").new == "Third.md"
    assert (small.vault / "Third.md").is_symlink() and not os.path.lexists(small.vault / "Second.md")
    assert _bytes(small, "Old.md") == old and _bytes(small, "Crlf.md") == crlf
    assert {"Old.md", "Crlf.md", "Third.md"} <= {path for path, _title in small.notes()}


@pytest.mark.parametrize("name", [".obsidian/workspace notes", ".git/hooks/pre-commit", ".trash/zombie", "A/.hidden"])
def test_notes_are_never_created_or_renamed_into_hidden_places(small: Engine, name: str) -> None:
    before = sorted(p for p in small.vault.rglob("*"))
    with pytest.raises(UnsafePath, match="hidden"):
        small.create_note("", name)
    with pytest.raises(UnsafePath, match="hidden"):
        small.rename_note("Old.md", name)
    assert sorted(p for p in small.vault.rglob("*")) == before


def test_a_note_with_the_longest_name_can_be_trashed_twice(small: Engine) -> None:
    name = "Zürich " * 36  # 252 bytes of name, with .md the most a file name holds
    created = [small.create_note("A", name.strip(), "# first\n").path]
    assert len(posixpath.basename(created[0]).encode()) == 255
    first = small.trash_note(created[0])
    small.create_note("A", name.strip(), "# second\n")
    second = small.trash_note(created[0])
    assert first != second and second.endswith(" (1).md") and len(posixpath.basename(second).encode()) <= 255
    assert (small.vault / first).read_text(encoding="utf-8") == "# first\n"
    assert (small.vault / second).read_text(encoding="utf-8") == "# second\n"


def test_a_name_in_another_unicode_form_is_the_same_note(tmp_path: Path) -> None:
    nfc, nfd = unicodedata.normalize("NFC", "Café"), unicodedata.normalize("NFD", "Café")
    vault = _vault(tmp_path, {f"{nfd}.md": b"# The menu\n", "Linker.md": f"see [[{nfc}]]\n".encode(), "Other.md": b"x\n"})
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        assert engine.find_note(nfc) == f"{nfd}.md"
        assert [hit.path for hit in engine.search(f"file:{nfc}").hits] == [f"{nfd}.md"]
        assert [link.path for link in engine.outgoing_links("Linker.md")] == [f"{nfd}.md"]
        with pytest.raises(NoteExists, match="another Unicode form"):
            engine.create_note("", nfc)
        with pytest.raises(NoteExists, match="another Unicode form"):
            engine.rename_note("Other.md", nfc)
        assert sorted(p.name for p in vault.iterdir() if p.suffix == ".md") == sorted([f"{nfd}.md", "Linker.md", "Other.md"])
        assert engine.rename_note(f"{nfd}.md", nfc).new == f"{nfc}.md"  # only the form changes: allowed
        assert (vault / f"{nfc}.md").read_bytes() == b"# The menu\n"


@pytest.mark.parametrize(
    ("folder", "title", "reason"),
    [
        ("", "caf\udce9", "not valid Unicode"),
        ("f" * 300, "t", "folder name 'ffff"),
        ("../outside", "t", "not a path inside the vault"),
    ],
)
def test_a_name_that_cannot_be_a_note_says_why(small: Engine, folder: str, title: str, reason: str) -> None:
    with pytest.raises(UnsafePath, match=reason):
        small.create_note(folder, title)


def test_half_a_character_in_a_save_is_refused_with_advice_that_works(small: Engine) -> None:
    note = small.read_note("Old.md")
    for as_utf8 in (False, True):
        with pytest.raises(NoteNotSaved, match="U\\+D800 on line 2, half of a character") as caught:
            small.save_note("Old.md", "# Old\n\ud800\n", expected_sha=note.sha, as_utf8=as_utf8)
        assert not isinstance(caught.value, EncodingMismatch)
    assert _bytes(small, "Old.md") == b"# Old\n\nThe note that gets renamed.\n"


def test_a_save_never_writes_what_would_read_back_otherwise(small: Engine) -> None:
    latin = small.read_note("Latin.md")
    before = _bytes(small, "Latin.md")
    # In cp1252, "Ã©" is the two bytes of "é" in UTF-8: the next read would show "é".
    with pytest.raises(EncodingMismatch, match="would read back as other characters"):
        small.save_note("Latin.md", "Ã©\n", expected_sha=latin.sha)
    assert _bytes(small, "Latin.md") == before
    small.save_note("Latin.md", "Ã©\n", expected_sha=latin.sha, as_utf8=True)
    assert small.read_note("Latin.md").text == "Ã©\n"
    old = small.read_note("Old.md")
    with pytest.raises(NoteNotSaved, match="reads as binary"):
        small.save_note("Old.md", "# Old\n\x00\n", expected_sha=old.sha)
    assert small.read_note("Old.md").sha == old.sha


def test_a_symlinked_note_renamed_onto_its_own_note_is_refused_and_moves_keep_it_pointing(small: Engine) -> None:
    (small.vault / "Alias.md").symlink_to("Old.md")
    (small.vault / "A").mkdir()
    (small.vault / "B").mkdir()
    (small.vault / "B" / "Note.md").write_bytes(b"# Note\nprecious\n")
    (small.vault / "A" / "Link.md").symlink_to("../B/Note.md")
    small.reindex()
    old = _bytes(small, "Old.md")
    with pytest.raises(NoteExists):
        small.rename_note("Alias.md", "Old")
    with pytest.raises(NoteExists):
        small.rename_note("A/Link.md", "B/Note")
    assert _bytes(small, "Old.md") == old and not (small.vault / "Old.md").is_symlink()
    assert _bytes(small, "B/Note.md") == b"# Note\nprecious\n" and not (small.vault / "B/Note.md").is_symlink()
    moved = small.rename_note("A/Link.md", "Deep/Sub/Link").new
    assert (small.vault / moved).is_symlink() and _bytes(small, moved) == b"# Note\nprecious\n"
    assert small.trash_note(moved).startswith(".trash/")
    assert _bytes(small, "B/Note.md") == b"# Note\nprecious\n"


def test_an_emptied_line_after_a_cr_ending_stays_a_line() -> None:
    data = notes.encode_text("x\n\n", notes.TextFormat(newline="\n"), "x\ry\n")
    assert data == b"x\r\r" and notes.decode_note(data).text == "x\n\n"


def test_a_bomless_utf16_note_that_would_no_longer_read_as_utf16_asks_for_utf8(tmp_path: Path) -> None:
    vault = _vault(tmp_path, {"Wide.md": "# Wide\n\nplain words\n".encode("utf-16-le")})
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        note = engine.read_note("Wide.md")
        assert note.format.codec == "utf-16-le" and not note.format.bom
        text = "一二三四五六七八九十" * 20 + "\n"
        with pytest.raises(EncodingMismatch, match="Save the note as UTF-8"):
            engine.save_note("Wide.md", text, expected_sha=note.sha)
        engine.save_note("Wide.md", text, expected_sha=note.sha, as_utf8=True)
        assert engine.read_note("Wide.md").text == text


def test_a_name_written_in_nfd_is_recognised_in_a_query_typed_in_nfc(tmp_path: Path) -> None:
    name = unicodedata.normalize("NFD", "José Álvarez")
    vault = _vault(
        tmp_path,
        {
            "People/Jose.md": f"# {name}\n\nChef.\n".encode(),
            "Menu.md": f"Dishes by [[Jose|{name}]].\n".encode(),
        },
    )
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        results = engine.search(unicodedata.normalize("NFC", "José Álvarez"), channels=("graph",), as_you_type=False)
        assert results.recognized_entities
        assert {hit.path for hit in results.hits} >= {"People/Jose.md", "Menu.md"}


def test_a_symlink_loop_is_an_unsafe_path_not_a_crash(small: Engine) -> None:
    (small.vault / "loop.md").symlink_to(small.vault / "loop.md")
    with pytest.raises(UnsafePath):
        small.save_note("loop.md", "x", expected_sha=None)
    with pytest.raises(UnsafePath):
        small.read_note("loop.md")


def test_retarget_text_keeps_fragments_display_and_code() -> None:
    retarget = notes.Retarget("Glossary/Tombstone.md", "Glossary/Deletion marker.md", "Deletion marker")
    text = "See [[Tombstone]], [[Glossary/Tombstone|the marker]], ![[Tombstone#^b1]], `[[Tombstone]]` and [[Tile Pack]]."
    new, changed = notes.retarget_text(text, "Daily/x.md", frozenset({"tombstone", "glossary/tombstone"}), retarget)
    assert changed == 3
    assert new == (
        "See [[Deletion marker]], [[Glossary/Deletion marker|the marker]], "
        "![[Deletion marker#^b1]], `[[Tombstone]]` and [[Tile Pack]]."
    )
    md = "See [the retro](../Meetings/2026/2026-03-04%20Sprint%205%20Retro.md#Actions) and [web](https://x.org/a.md)."
    moved = notes.Retarget("Meetings/2026/2026-03-04 Sprint 5 Retro.md", "Meetings/Retro 5.md", "Retro 5")
    new, changed = notes.retarget_text(md, "Daily/2026-03-05.md", frozenset({"../meetings/2026/2026-03-04 sprint 5 retro"}), moved)
    assert changed == 1
    assert new == "See [the retro](../Meetings/Retro%205.md#Actions) and [web](https://x.org/a.md)."


def test_untouched_lines_among_equal_lines_keep_their_endings() -> None:
    """Equal lines around a deletion and an insertion are matched by a line diff, not by
    position: the first line deleted, a line added at the end, every other ending kept."""
    original = "- [ ] a\r\n\r\n- [ ] a\n\n- [ ] a"
    edited = "\n- [ ] a\n\n- [ ] a\n- [ ] b"
    data = notes.encode_text(edited, notes.TextFormat(newline="\n"), original)
    assert data == b"\r\n- [ ] a\n\n- [ ] a\n- [ ] b"


@pytest.mark.parametrize("seed", range(40))
def test_lines_kept_around_insertions_and_deletions_keep_their_endings(seed: int) -> None:
    pick = random.Random(seed)
    lines = [f"line {k}" for k in range(200)]
    endings = {line: pick.choice(("\n", "\r\n", "\r")) for line in lines}
    original = "".join(line + endings[line] for line in lines)
    edited: list[str] = []
    for line in lines:
        if pick.random() < 0.1:
            edited.append(f"inserted before {line}")
        if pick.random() > 0.1:
            edited.append(line)
    data = notes.encode_text("\n".join(edited) + "\n", notes.TextFormat(newline="\n"), original)
    stored = re.findall(r"([^\r\n]*)(\r\n|\n|\r)", data.decode())
    assert [line for line, _ending in stored] == edited
    assert all(ending == endings[line] for line, ending in stored if line in endings), "a kept line's ending"


def test_restored_endings_stay_linear_on_a_huge_rewrite() -> None:
    original = "\r\n".join(f"line {i}" for i in range(60_000)) + "\r\n"
    edited = "\n".join(f"LINE {i}" for i in range(60_000)) + "\n"
    data = notes.encode_text(edited, notes.TextFormat(newline="\r\n"), original)
    assert data.count(b"\r\n") == 60_000


def test_a_fifo_named_like_a_note_is_refused_without_blocking(small: Engine) -> None:
    os.mkfifo(small.vault / "pipe.md")
    outcome: list[BaseException] = []

    def save() -> None:
        try:
            small.save_note("pipe.md", "x", expected_sha="0" * 64)
        except NoteNotSaved as exc:
            outcome.append(exc)

    worker = threading.Thread(target=save, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the save blocked on the FIFO"
    assert outcome and "not a regular file" in str(outcome[0])
    with pytest.raises(NoteNotSaved):
        small.read_note("pipe.md")


# -- hard links -----------------------------------------------------------------------


@pytest.fixture
def linked(small: Engine, tmp_path: Path) -> tuple[Engine, Path, Path]:
    """Old.md with a second name in another vault folder and a third outside the vault."""
    note = small.vault / "Old.md"
    inside = small.vault / "Elsewhere" / "Same.md"
    inside.parent.mkdir()
    os.link(note, inside)
    outside = tmp_path / "outside.md"
    os.link(note, outside)
    return small, inside, outside


def test_a_save_keeps_a_hard_linked_note_one_file(linked: tuple[Engine, Path, Path]) -> None:
    engine, inside, outside = linked
    note = engine.vault / "Old.md"
    before = note.stat()
    loaded = engine.read_note("Old.md")
    text = loaded.text.replace("renamed", "renamed, and saved through one of its names")
    engine.save_note("Old.md", text, expected_sha=loaded.sha)
    after = note.stat()
    assert (after.st_ino, after.st_nlink) == (before.st_ino, 3), "the note is still the one file with three names"
    assert note.read_bytes() == inside.read_bytes() == outside.read_bytes() == text.encode()
    assert not list((engine.index_dir / "tmp").glob("*")) and not list(note.parent.glob(".cairn-*"))
    # The names share one content, so a save through another name compares against it.
    other = engine.read_note("Elsewhere/Same.md")
    assert other.sha == notes.content_sha(text.encode())
    with pytest.raises(SaveConflict):
        engine.save_note("Elsewhere/Same.md", "# stale\n", expected_sha=loaded.sha)
    engine.save_note("Elsewhere/Same.md", text + "More.\n", expected_sha=other.sha)
    assert outside.read_text(encoding="utf-8").endswith("More.\n") and note.stat().st_ino == before.st_ino
    assert "Old.md" in [hit.path for hit in engine.search("saved through one", as_you_type=False).hits]


def test_a_hard_linked_note_a_write_fails_on_keeps_its_old_bytes(
    linked: tuple[Engine, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, _inside, outside = linked
    note = engine.vault / "Old.md"
    old = note.read_bytes()
    real_pwrite = os.pwrite

    def pwrite(fd: int, data: bytes | memoryview, offset: int) -> int:
        if bytes(data[:20]).startswith(b"# New"):  # the new text, half of it written, then the disk is full
            real_pwrite(fd, bytes(data[: len(data) // 2]), offset)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    loaded = engine.read_note("Old.md")
    with pytest.raises(NoteNotSaved, match="disk is full"):
        engine.save_note("Old.md", "# New\n\n" + "a longer text than before " * 20 + "\n", expected_sha=loaded.sha)
    assert note.read_bytes() == outside.read_bytes() == old
    assert note.stat().st_nlink == 3
    assert not list((engine.index_dir / "tmp").glob("*")), "the backup goes once the old bytes are back"
