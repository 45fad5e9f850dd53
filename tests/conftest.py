"""Shared fixtures: copies of the sample vault and engines over them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from vault_copy import copy_sample_vault

from engine.api import Engine

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT.parent / "shared" / "datasets"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test reads the user's config, index or cache: what an earlier run or session left there varies."""
    home = tmp_path_factory.getbasetemp() / "xdg"
    monkeypatch.delenv("CAIRN_INDEX_DIR", raising=False)
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    """A private, writable copy of sample_vault/'s notes."""
    return copy_sample_vault(tmp_path / "vault")


@pytest.fixture(scope="session")
def indexed_sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One engine over a copy of sample_vault, fully indexed with the real model.

    Session-scoped because embedding takes a few seconds; tests must not modify it.
    """
    base = tmp_path_factory.mktemp("indexed-sample")
    vault = copy_sample_vault(base / "vault")
    engine = Engine.open(vault, index_dir=base / "index")
    engine.reindex()
    yield engine
    engine.close()
