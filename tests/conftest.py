"""Shared fixtures: copies of the sample vault and engines over them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import Engine

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = ROOT / "sample_vault"
DATASETS = ROOT.parent / "shared" / "datasets"


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    """A private, writable copy of sample_vault/."""
    target = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, target)
    return target


@pytest.fixture(scope="session")
def indexed_sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One engine over a copy of sample_vault, fully indexed with the real model.

    Session-scoped because embedding takes a few seconds; tests must not modify it.
    """
    base = tmp_path_factory.mktemp("indexed-sample")
    vault = base / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    engine = Engine.open(vault, index_dir=base / "index")
    engine.reindex()
    yield engine
    engine.close()
