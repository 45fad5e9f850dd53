"""Cairn's typed, frozen configuration tree, loaded once from TOML; unknown keys are an error."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from engine.config import EngineConfig
from engine.errors import ConfigError

DEFAULT_CONFIG_PATH = Path("~/.config/cairn/config.toml")


@dataclass(frozen=True)
class UIConfig:
    """How the terminal UI looks and behaves."""

    dark_theme: str = "textual-dark"
    light_theme: str = "textual-light"
    start_dark: bool = True
    search_limit: int = 20
    show_timings: bool = True
    editor_soft_wrap: bool = True
    index_on_start: bool = True
    watch: bool = True
    cursor_blink: bool = True  # false: a steady cursor in the search box and the editor


@dataclass(frozen=True)
class WebConfig:
    """The local web view's listen address (used by `cairn web`)."""

    host: str = "127.0.0.1"
    port: int = 0


@dataclass(frozen=True)
class AppConfig:
    """Everything Cairn can be told: the engine part and the front ends' parts."""

    vault: str = ""
    index_dir: str = ""
    engine: EngineConfig = field(default_factory=EngineConfig)
    ui: UIConfig = field(default_factory=UIConfig)
    web: WebConfig = field(default_factory=WebConfig)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AppConfig:
        """Build the tree from a plain mapping (parsed TOML); unknown keys raise ConfigError."""
        _check_keys(data, {f.name for f in fields(cls)}, "config")
        return cls(
            vault=_typed(data, "vault", str, ""),
            index_dir=_typed(data, "index_dir", str, ""),
            engine=EngineConfig.from_dict(_table(data, "engine")),
            ui=_simple(UIConfig, _table(data, "ui"), "ui"),
            web=_simple(WebConfig, _table(data, "web"), "web"),
        )


def default_config_path() -> Path:
    """`$CAIRN_CONFIG` if set, else ~/.config/cairn/config.toml (XDG_CONFIG_HOME honoured)."""
    if os.environ.get("CAIRN_CONFIG"):
        return Path(os.environ["CAIRN_CONFIG"]).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "cairn" / "config.toml"
    return DEFAULT_CONFIG_PATH.expanduser()


def load_config(path: Path | None = None) -> AppConfig:
    """Load the config file (an explicit `path` must exist; the default one may be absent)."""
    explicit = path is not None
    target = path.expanduser() if path is not None else default_config_path()
    if not target.exists():
        if explicit:
            raise ConfigError(f"{target}: no such config file")
        return AppConfig()
    try:
        data = tomllib.loads(target.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{target}: {exc}") from exc
    try:
        return AppConfig.from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"{target}: {exc}") from exc


def _check_keys(data: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a table, got {type(value).__name__}")
    return value


def _typed(data: dict[str, Any], key: str, kind: type, default: Any, where: str = "") -> Any:
    value = data.get(key, default)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        name = f"{where}.{key}" if where else key
        raise ConfigError(f"{name}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _simple(cls: Any, data: dict[str, Any], where: str) -> Any:
    """Build a flat dataclass of str/int/bool fields, checking names and types."""
    defaults = cls()
    _check_keys(data, {f.name for f in fields(cls)}, where)
    values = {
        name: _typed(data, name, type(getattr(defaults, name)), getattr(defaults, name), where)
        for name in data
    }
    for name, value in values.items():
        if isinstance(value, str) and name.endswith("_theme") and not value:
            raise ConfigError(f"{where}.{name}: must not be empty")
    return cls(**values)
