"""An index folder that would put notes at risk is refused before anything is written or deleted."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from engine.api import Engine
from engine.errors import ConfigError, IndexCorrupt
from engine.tools.cli import main


def _vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "fulltext").mkdir(parents=True)
    (vault / "fulltext" / "BM25 notes.md").write_text("# BM25 notes\nthree months of research\n", encoding="utf-8")
    (vault / "Home.md").write_text("# Home\nsee [[BM25 notes]]\n", encoding="utf-8")
    return vault


def _files(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        (lambda root, vault: vault, "holds the vault"),
        (lambda root, vault: root, "holds the vault"),
        (lambda root, vault: vault / "fulltext", "one of the vault's note folders"),
        (lambda root, vault: vault / "new index", "one of the vault's note folders"),
    ],
)
def test_an_index_folder_over_the_notes_is_refused_and_nothing_is_touched(tmp_path, where, reason):
    vault = _vault(tmp_path)
    before = _files(tmp_path)
    with pytest.raises(ConfigError, match=reason):
        Engine.open(vault, index_dir=where(tmp_path, vault), embedder=None)
    assert _files(tmp_path) == before
    assert not (vault / "new index").exists()


@pytest.mark.parametrize("manifest", [None, '{"name": "my extension", "manifest_version": 3}'])
def test_a_folder_of_other_files_is_refused_and_kept(tmp_path, manifest):
    vault = _vault(tmp_path)
    elsewhere = tmp_path / "papers"
    (elsewhere / "fulltext").mkdir(parents=True)
    (elsewhere / "fulltext" / "draft.txt").write_text("a draft\n", encoding="utf-8")
    if manifest is not None:  # a browser extension's, say: the name alone is no index
        (elsewhere / "manifest.json").write_text(manifest, encoding="utf-8")
    before = _files(tmp_path)
    with pytest.raises(ConfigError, match="not a Cairn index"):
        Engine.open(vault, index_dir=elsewhere, embedder=None)
    assert _files(tmp_path) == before


def test_the_cli_says_why_and_exits_with_the_usage_code(tmp_path, capsys):
    vault = _vault(tmp_path)
    assert main(["reindex", str(vault), "--index-dir", str(vault)]) == 2
    assert "holds the vault" in capsys.readouterr().err
    assert (vault / "fulltext" / "BM25 notes.md").exists()


def test_hidden_new_empty_and_existing_index_folders_are_used(tmp_path):
    vault = _vault(tmp_path)
    (tmp_path / "empty").mkdir()
    (vault / ".cairn").mkdir()
    (vault / ".cairn" / ".gitignore").write_text("*\n", encoding="utf-8")  # a vault repo's, cloned fresh
    (tmp_path / "killed").mkdir()
    (tmp_path / "killed" / "writer.lock").write_text("", encoding="utf-8")  # a first open killed early
    for index in (vault / ".index", vault / ".cairn", tmp_path / "new", tmp_path / "empty", tmp_path / "killed"):
        with Engine.open(vault, index_dir=index, embedder=None) as engine:
            engine.reindex()
            assert engine.search("research").hits[0].path == "fulltext/BM25 notes.md"
        with Engine.open(vault, index_dir=index, embedder=None) as engine:  # an index now: reopened
            assert engine.search("research").hits
    assert (vault / "fulltext" / "BM25 notes.md").exists()


def test_a_damaged_index_s_full_text_folder_holding_notes_is_not_deleted(tmp_path):
    vault = _vault(tmp_path)
    index = tmp_path / "index"
    with Engine.open(vault, index_dir=index, embedder=None) as engine:
        engine.reindex()
    for part in (index / "fulltext").glob("*.toc"):
        part.write_bytes(b"garbage")  # unreadable: the channel would rebuild the folder
    (index / "fulltext" / "moved here by hand.md").write_text("# mine\n", encoding="utf-8")
    with pytest.raises(IndexCorrupt, match="left as it is"):
        Engine.open(vault, index_dir=index, embedder=None)
    assert (index / "fulltext" / "moved here by hand.md").read_text(encoding="utf-8") == "# mine\n"


@pytest.mark.parametrize("name", ["manifest.json", "writer.lock", "vectors.tombstones.json"])
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_an_index_name_holding_a_folder_or_a_fifo_is_named_not_read(tmp_path, name, kind):
    vault = _vault(tmp_path)
    index = tmp_path / "index"
    with Engine.open(vault, index_dir=index, embedder=None) as engine:
        engine.reindex()
    (index / name).unlink(missing_ok=True)
    if kind == "folder":
        (index / name).mkdir()
    else:
        os.mkfifo(index / name)  # opening it to read would wait for a writer forever
    with pytest.raises(IndexCorrupt, match=f"{name} is not the file Cairn keeps there"):
        Engine.open(vault, index_dir=index, embedder=None)


def test_a_visible_folder_the_configuration_excludes_may_hold_the_index(tmp_path):
    from engine.config import EngineConfig

    vault = _vault(tmp_path)
    config = EngineConfig(excludes=("_index",))
    with Engine.open(vault, config, index_dir=vault / "_index", embedder=None) as engine:
        engine.reindex()
        assert [hit.path for hit in engine.search("research").hits] == ["fulltext/BM25 notes.md"]


def _second_vault(root: Path) -> Path:
    other = root / "other"
    other.mkdir()
    (other / "Elsewhere.md").write_text("# Elsewhere\nnothing about ranking\n", encoding="utf-8")
    return other


def _paths(engine: Engine, query: str) -> list[str]:
    return [hit.path for hit in engine.search(query, as_you_type=False).hits]


def test_one_index_folder_is_one_vault_s_and_refuses_another(tmp_path, monkeypatch, capsys):
    vault, other, index_dir = _vault(tmp_path), _second_vault(tmp_path), tmp_path / "shared-index"
    with Engine.open(vault, index_dir=index_dir, embedder=None) as engine:
        engine.reindex()
    before = _files(index_dir)
    with pytest.raises(ConfigError, match=f"another vault, {vault.resolve()}"):
        Engine.open(other, index_dir=index_dir, embedder=None)
    monkeypatch.setenv("CAIRN_INDEX_DIR", str(index_dir))
    assert main(["search", str(other), "research", "--no-model"]) == 2
    assert "holds the index of another vault" in capsys.readouterr().err
    assert main(["reindex", str(other), "--full", "--no-model"]) == 2
    monkeypatch.delenv("CAIRN_INDEX_DIR")
    assert {k: v for k, v in _files(index_dir).items() if "catalog.sqlite" not in k} == {
        k: v for k, v in before.items() if "catalog.sqlite" not in k
    }, "nothing of the first vault's index was rebuilt"
    with Engine.open(vault, index_dir=index_dir, embedder=None) as engine:
        assert _paths(engine, "research") == ["fulltext/BM25 notes.md"]


def test_a_vault_moved_or_copied_with_its_index_keeps_it(tmp_path):
    vault = _vault(tmp_path)
    with Engine.open(vault, embedder=None) as engine:  # <vault>/.cairn
        engine.reindex()
    moved = tmp_path / "moved"
    vault.rename(moved)
    with Engine.open(moved, embedder=None) as engine:
        assert _paths(engine, "research") == ["fulltext/BM25 notes.md"]
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(moved, copy)
    with Engine.open(copy, embedder=None) as engine:
        assert _paths(engine, "research") == ["fulltext/BM25 notes.md"]
    # An index outside the vault moved alone with it (the recorded vault is gone) too.
    outside = tmp_path / "outside-index"
    with Engine.open(copy, index_dir=outside, embedder=None) as engine:
        engine.reindex()
    copy.rename(tmp_path / "copy-moved")
    with Engine.open(tmp_path / "copy-moved", index_dir=outside, embedder=None) as engine:
        assert _paths(engine, "research") == ["fulltext/BM25 notes.md"]
