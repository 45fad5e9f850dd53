"""Cairn's search engine and vault model; imports no front end."""

from __future__ import annotations

__all__ = ["Engine", "EngineConfig"]


def __getattr__(name: str) -> object:
    # Lazy so that `import engine.records` stays cheap and free of heavy libraries.
    if name == "Engine":
        from engine.api import Engine

        return Engine
    if name == "EngineConfig":
        from engine.config import EngineConfig

        return EngineConfig
    raise AttributeError(name)
