"""Fixtures for the web view tests: engines over hostile sample-vault copies and clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from web_support import client_for, make_vault

from engine.api import Engine
from engine.embedder import HashEmbedder


@pytest.fixture(scope="module")
def shared_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """An indexed engine (HashEmbedder) for tests that only read."""
    base = tmp_path_factory.mktemp("web-shared")
    vault = make_vault(base)
    engine = Engine.open(vault, index_dir=base / "index", embedder=HashEmbedder())
    engine.reindex()
    yield engine
    engine.close()


@pytest.fixture
def fresh_engine(tmp_path: Path) -> Iterator[Engine]:
    """An indexed engine (HashEmbedder) over a private vault copy, for tests that write."""
    vault = make_vault(tmp_path)
    engine = Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder())
    engine.reindex()
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def scratch_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """An indexed engine (HashEmbedder) a module's tests may write through (each reads what it needs)."""
    base = tmp_path_factory.mktemp("web-scratch")
    vault = make_vault(base)
    engine = Engine.open(vault, index_dir=base / "index", embedder=HashEmbedder())
    engine.reindex()
    yield engine
    engine.close()


@pytest.fixture
def client(shared_engine: Engine) -> TestClient:
    """An authorized client over the shared (read-only) engine."""
    return client_for(shared_engine)


@pytest.fixture
def anonymous(shared_engine: Engine) -> TestClient:
    """A client without the token."""
    return client_for(shared_engine, authorized=False)


@pytest.fixture
def writer(fresh_engine: Engine) -> TestClient:
    """An authorized client over a private engine it may write through."""
    return client_for(fresh_engine)
