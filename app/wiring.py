"""Wiring: open the engine from the config and build the TUI (the factory tests use too)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.config import AppConfig

if TYPE_CHECKING:
    from engine.api import Embedder, Engine
    from ui.app import CairnApp

_DEFAULT_EMBEDDER = object()


def open_engine(
    vault: Path,
    config: AppConfig,
    *,
    index_dir: Path | None = None,
    no_model: bool = False,
    embedder: Embedder | object | None = _DEFAULT_EMBEDDER,
) -> Engine:
    """Open the vault's existing index at once (Engine.open never embeds)."""
    from engine.api import Engine

    directory = index_dir or (Path(config.index_dir) if config.index_dir else None)
    if no_model:
        engine = Engine.open(vault, config.engine, index_dir=directory, embedder=None)
    elif embedder is _DEFAULT_EMBEDDER:
        engine = Engine.open(vault, config.engine, index_dir=directory)
    else:
        engine = Engine.open(vault, config.engine, index_dir=directory, embedder=embedder)
    engine.prepare_for_typing()  # the front ends stay open: the first keystrokes find the tables built
    # While a front end holds the index open, `engine search`, `context` and `status` ask it
    # over a socket only this user can use, and answer at once (engine/serve.py).
    engine.answer_locally()
    return engine


def build_app(
    engine: Engine,
    config: AppConfig | None = None,
    *,
    show_timings: bool | None = None,
    index_on_start: bool | None = None,
    cursor_blink: bool | None = None,
    hangup: bool = False,
) -> CairnApp:
    """The Cairn TUI over an open engine; tests pass `show_timings=False` and `cursor_blink=False`.

    Timings and a blinking cursor would make a snapshot depend on when it was taken.
    `hangup`: the app ends on SIGHUP, keeping unsaved edits (the entry point's app).
    """
    from ui.app import CairnApp

    ui_config = (config or AppConfig()).ui
    if show_timings is not None:
        ui_config = replace(ui_config, show_timings=show_timings)
    if index_on_start is not None:
        ui_config = replace(ui_config, index_on_start=index_on_start)
    if cursor_blink is not None:
        ui_config = replace(ui_config, cursor_blink=cursor_blink)
    return CairnApp(engine, ui_config, hangup=hangup)
