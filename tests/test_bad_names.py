"""File and folder names Cairn cannot use are skipped entries with a reason; the rest of the vault indexes.

A name that is not valid UTF-8 reaches Python as lone surrogates; a name with a line
break or an escape character breaks every one-line listing. None of them may stop a
reindex, and no output may carry them raw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from vault_copy import copy_sample_vault

from engine.api import Engine
from engine.embedder import HashEmbedder
from engine.errors import UnsafePath
from engine.names import path_problem, printable_path
from engine.vault import scan_vault

ROOT = Path(__file__).resolve().parent.parent

# (name as bytes, how reports show it)
BAD_FILES = [
    (b"caf\xe9.md", "caf\\xe9.md"),
    (b"Inbox/\xff\xfe.md", "Inbox/\\xff\\xfe.md"),
    (b"Inbox/new\nline.md", "Inbox/new\\nline.md"),
    (b"Inbox/tab\there.md", "Inbox/tab\\there.md"),
    (b"Inbox/\x1b[31mred.md", "Inbox/\\x1b[31mred.md"),
    (b"Inbox/photo\xe9.png", "Inbox/photo\\xe9.png"),
    (b"Inbox/sur\xed\xa0\x80.md", "Inbox/sur\\xed\\xa0\\x80.md"),  # a UTF-8-encoded surrogate
    (b"Inbox/over\xc0\x80long.md", "Inbox/over\\xc0\\x80long.md"),  # an overlong NUL
    (b"Inbox/del\x7f.md", "Inbox/del\\x7f.md"),
    (b"Inbox/nel\xc2\x85.md", "Inbox/nel\\x85.md"),  # U+0085, a C1 line break, valid UTF-8
]
BAD_FOLDER = (b"Archiv\xe9", "Archiv\\xe9")


def _write(vault: Path, rel: bytes, text: bytes) -> None:
    fd = os.open(os.path.join(os.fsencode(vault), rel), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text)
    finally:
        os.close(fd)


def _with_bad_names(vault: Path) -> Path:
    for rel, _shown in BAD_FILES:
        _write(vault, rel, b"# Unreachable\n\nThe word quokkabad is only in badly named files.\n")
    folder = os.path.join(os.fsencode(vault), BAD_FOLDER[0])
    os.mkdir(folder)
    _write(vault, BAD_FOLDER[0] + b"/Inside.md", b"# Inside\n\nquokkabad again.\n")
    (vault / "Inbox" / "Good neighbour.md").write_text("# Good neighbour\n\nThe wombatgood note.\n", encoding="utf-8")
    return vault


@pytest.fixture
def bad_vault(tmp_path: Path) -> Path:
    return _with_bad_names(copy_sample_vault(tmp_path / "vault"))


@pytest.fixture
def engine(bad_vault: Path, tmp_path: Path) -> Iterator[Engine]:
    with Engine.open(bad_vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as opened:
        yield opened


def _good_notes(vault: Path) -> int:
    return sum(1 for path in vault.rglob("*.md") if not path_problem(path.relative_to(vault).as_posix()))


def test_printable_path_escapes_bad_bytes_and_control_characters() -> None:
    assert printable_path(os.fsdecode(b"caf\xe9.md")) == "caf\\xe9.md"
    assert printable_path("a\nb\tc\x1b\x7f\x85.md") == "a\\nb\\tc\\x1b\\x7f\\x85.md"
    assert printable_path("Café/日本.md") == "Café/日本.md"
    assert printable_path("\ud800.md") == "\\ud800.md"


def test_path_problem_names_the_folder_or_the_file() -> None:
    assert "folder name is not valid UTF-8" in path_problem(os.fsdecode(b"Archiv\xe9/x.md"))
    assert "file name is not valid UTF-8" in path_problem(os.fsdecode(b"Notes/caf\xe9.md"))
    assert "control character" in path_problem("Notes/new\nline.md")
    assert path_problem("Notes/Café ☕.md") == ""


def test_reindex_skips_bad_names_and_indexes_everything_else(engine: Engine, bad_vault: Path) -> None:
    report = engine.reindex()
    skipped = {s.path: s.reason for s in report.skipped}
    for _raw, shown in [*BAD_FILES, BAD_FOLDER]:
        assert shown in skipped, (shown, skipped)
    assert "not valid UTF-8" in skipped["caf\\xe9.md"] and "rename it" in skipped["caf\\xe9.md"]
    assert "control character" in skipped["Inbox/new\\nline.md"]
    assert "folder name" in skipped["Archiv\\xe9"]
    status = engine.status()
    assert status.notes == _good_notes(bad_vault) == 64
    assert {s.path for s in status.skipped} >= {shown for _raw, shown in BAD_FILES}
    for entry in [*report.skipped, *status.skipped]:
        entry.path.encode("utf-8")  # stored in the catalog and shown as they are
        assert "\n" not in entry.path and "\x1b" not in entry.path
    assert engine.search("wombatgood", as_you_type=False).hits[0].path == "Inbox/Good neighbour.md"
    assert engine.search("quokkabad", channels=("fulltext",), as_you_type=False).hits == ()
    assert engine.pending() == (), "a skipped name is not a pending change"
    assert engine.reindex().skipped == report.skipped, "the next run reports the same"


def test_changed_paths_with_bad_names_are_skipped(engine: Engine, bad_vault: Path) -> None:
    engine.reindex()
    changed = [os.fsdecode(raw) for raw, _shown in BAD_FILES] + [os.fsdecode(BAD_FOLDER[0] + b"/Inside.md"), "Inbox/Good neighbour.md"]
    (bad_vault / "Inbox" / "Good neighbour.md").write_text("# Good neighbour\n\nNow the numbatgood note.\n", encoding="utf-8")
    report = engine.reindex(changed)  # what a watcher passes on
    assert report.updated == ("Inbox/Good neighbour.md",)
    assert {s.path for s in report.skipped} == {shown for _raw, shown in BAD_FILES} | {"Archiv\\xe9/Inside.md"}
    assert engine.search("numbatgood", as_you_type=False).hits[0].path == "Inbox/Good neighbour.md"


def test_scan_lists_no_bad_name(bad_vault: Path) -> None:
    scan = scan_vault(bad_vault)
    for name in [*(vf.path for vf in scan.notes), *scan.attachments, *(s.path for s in scan.skipped)]:
        name.encode("utf-8")
        assert not path_problem(name) or name in {shown for _raw, shown in [*BAD_FILES, BAD_FOLDER]}


def _run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, cwd=ROOT, timeout=120)


def test_cli_output_stays_valid_utf8(bad_vault: Path, tmp_path: Path) -> None:
    base = [str(bad_vault), "--index-dir", str(tmp_path / "cli-index"), "--no-model"]
    runs = {
        "reindex": _run("reindex", *base),
        "reindex --json": _run("reindex", *base, "--json"),
        "status": _run("status", *base),
        "status --json": _run("status", *base, "--json"),
        "search --json": _run("search", *base, "quokkabad wombatgood", "--json"),
    }
    for what, done in runs.items():
        assert done.returncode == 0, (what, done.stderr)
        out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")  # strict: raises on invalid UTF-8
        assert "Traceback" not in err, (what, err)
        assert "\x1b" not in out, what
    assert "skipped caf\\xe9.md: file name is not valid UTF-8" in runs["reindex"].stdout.decode()
    status = json.loads(runs["status --json"].stdout)
    assert {"path": "caf\\xe9.md", "reason": "file name is not valid UTF-8 (rename it to index it)"} in status["skipped"]
    assert status["pending"] == []
    assert status["notes"] == _good_notes(bad_vault)


def test_a_vault_whose_own_name_is_not_utf8(tmp_path: Path) -> None:
    vault = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"Notizen \xe9")))
    vault.mkdir()
    (vault / "Plain.md").write_text("# Plain\n\nkakapo\n", encoding="utf-8")
    base = [str(vault), "--index-dir", str(tmp_path / "index"), "--no-model"]
    assert _run("reindex", *base).returncode == 0
    for args in (["status", *base, "--json"], ["search", *base, "kakapo", "--json"], ["status", *base]):
        done = _run(*args)
        assert done.returncode == 0, done.stderr
        done.stdout.decode("utf-8")
        done.stderr.decode("utf-8")
    payload = json.loads(_run("status", *base, "--json").stdout)
    assert payload["vault"].endswith("Notizen \\xe9") and payload["notes"] == 1


@pytest.mark.parametrize(
    "mark", ["\u202e", "\u202a", "\u2066", "\u2069", "\u200f", "\u061c", "\u0085", "\u009b", "\x7f", "\x1b", "\n"]
)
def test_a_new_note_s_name_never_holds_a_control_or_a_reordering_mark(tmp_path: Path, mark: str) -> None:
    """create_note took U+202E (which shows "a\u202eb" reversed) and U+0085 (a C1 control) as they were,
    where the scan refuses control characters: the note was made under a name the vault hides or spoofs."""
    vault = tmp_path / "vault"
    vault.mkdir()
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        made = engine.create_note("", f"evil{mark}dm.txt")
        assert made.path == "evil-dm.txt.md", made.path
        assert (vault / made.path).is_file() and made.indexed
        with pytest.raises(UnsafePath, match="control character or a mark that reorders text"):
            engine.create_note(f"Folder{mark}Name", "note")
        assert not any(mark in p.name for p in vault.rglob("*"))
        renamed = engine.rename_note(made.path, f"other{mark}name")
        assert renamed.new == "other-name.md"


def test_printable_path_shows_reordering_marks_as_escapes() -> None:
    assert printable_path("evil\u202egpj.md") == "evil\\u202egpj.md"
    assert printable_path("a\u2066b\u2069.md") == "a\\u2066b\\u2069.md"
