"""Tests start from the notes alone: nothing an earlier run left behind leaks into them."""

from __future__ import annotations

import os
from pathlib import Path

from vault_copy import copy_vault


def test_vault_copies_leave_out_the_index_the_trash_and_temp_files(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / ".cairn" / "fulltext").mkdir(parents=True)
    (source / ".cairn" / "catalog.sqlite").write_bytes(b"an index from `make run`")
    (source / ".trash").mkdir()
    (source / ".trash" / "Deleted.md").write_text("# Deleted\n", encoding="utf-8")
    (source / "People").mkdir()
    (source / "People" / "Ana.md").write_text("# Ana\n", encoding="utf-8")
    (source / "People" / ".Ana.md.k3j2.tmp").write_text("half a save", encoding="utf-8")
    (source / ".obsidian").mkdir()
    (source / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    copied = copy_vault(source, tmp_path / "copy")
    found = sorted(path.relative_to(copied).as_posix() for path in copied.rglob("*") if path.is_file())
    assert found == [".obsidian/app.json", "People/Ana.md"]


def test_no_test_sees_the_users_index_or_config() -> None:
    assert "CAIRN_INDEX_DIR" not in os.environ and "CAIRN_CONFIG" not in os.environ
    from app.config import default_config_path

    assert not default_config_path().exists()
    assert str(default_config_path()).startswith(os.environ["XDG_CONFIG_HOME"])
