"""Fixtures for the TUI tests: an indexed copy of sample_vault built once, copied per module."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from vault_copy import copy_sample_vault

from app.config import AppConfig
from app.wiring import build_app, open_engine
from engine.api import Engine
from ui.app import CairnApp


@pytest.fixture(scope="session")
def indexed_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample_vault with its index in `<vault>/.cairn`, embedded with the real model."""
    vault = copy_sample_vault(tmp_path_factory.mktemp("ui-template") / "vault")
    engine = Engine.open(vault)
    try:
        engine.reindex()
    finally:
        engine.close()
    return vault


def copy_indexed(template: Path, target: Path) -> Path:
    """A private copy of the indexed vault (notes and index) at `target`."""
    shutil.copytree(template, target)
    return target


@pytest.fixture(scope="module")
def module_vault(indexed_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This test module's own writable copy of the indexed vault."""
    return copy_indexed(indexed_template, tmp_path_factory.mktemp("ui-module") / "vault")


@pytest.fixture(scope="module")
def engine(module_vault: Path) -> Iterator[Engine]:
    """One engine (real model) per test module over the module's vault copy."""
    opened = open_engine(module_vault, AppConfig())
    yield opened
    opened.close()


@pytest.fixture
def make_app(engine: Engine) -> Callable[..., CairnApp]:
    """The factory the entry point uses, over the module's engine, with a cursor that does not blink."""

    def factory(**overrides: bool) -> CairnApp:
        # A blinking cursor is drawn or not depending on when a snapshot is taken.
        return build_app(engine, AppConfig(), **{"cursor_blink": False, **overrides})

    return factory


OBSIDIAN_FIXTURE = Path(__file__).resolve().parent.parent / "data" / "obsidian_vault"


@pytest.fixture(scope="session")
def obsidian_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the Obsidian fixture vault with its index in `<vault>/.cairn` (real model)."""
    from vault_copy import copy_vault

    vault = copy_vault(OBSIDIAN_FIXTURE, tmp_path_factory.mktemp("obsidian-template") / "vault")
    engine = Engine.open(vault)
    try:
        engine.reindex()
    finally:
        engine.close()
    return vault


@pytest.fixture(scope="module")
def obsidian_engine(obsidian_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One engine per test module over its own copy of the indexed fixture vault."""
    vault = copy_indexed(obsidian_template, tmp_path_factory.mktemp("obsidian-module") / "vault")
    opened = open_engine(vault, AppConfig())
    yield opened
    opened.close()


@pytest.fixture
def make_obsidian_app(obsidian_engine: Engine) -> Callable[..., CairnApp]:
    """The entry point's factory over the fixture vault's engine, cursor steady, timings hidden."""

    def factory(**overrides: bool) -> CairnApp:
        return build_app(obsidian_engine, AppConfig(), **{"cursor_blink": False, "show_timings": False, **overrides})

    return factory
