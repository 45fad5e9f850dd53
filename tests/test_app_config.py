"""The app's typed config tree: defaults, TOML loading, unknown keys and wrong types are errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import AppConfig, UIConfig, load_config
from engine.config import EngineConfig
from engine.errors import ConfigError


def test_defaults_when_the_default_file_is_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    config = load_config()
    assert config == AppConfig()
    assert config.engine == EngineConfig()
    assert config.ui.dark_theme == "textual-dark"


def test_loads_every_section(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'vault = "~/notes"\n'
        "[ui]\nstart_dark = false\nsearch_limit = 7\nlight_theme = \"solarized-light\"\n"
        "[web]\nport = 8123\n"
        "[engine]\nembed = false\n[engine.fusion]\nk = 30\n",
        encoding="utf-8",
    )
    config = load_config(path)
    assert config.vault == "~/notes"
    assert config.ui == UIConfig(start_dark=False, search_limit=7, light_theme="solarized-light")
    assert config.web.port == 8123
    assert config.engine.embed is False and config.engine.fusion.k == 30.0


def test_the_default_file_is_found_via_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cairn").mkdir()
    (tmp_path / "cairn" / "config.toml").write_text("[ui]\nsearch_limit = 5\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    assert load_config().ui.search_limit == 5


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("colour = 1\n", "unknown key(s) colour"),
        ("[ui]\nthem = 'x'\n", "ui: unknown key(s) them"),
        ("[ui]\nsearch_limit = 'ten'\n", "ui.search_limit: expected int"),
        ("[ui]\nstart_dark = 1\n", "ui.start_dark: expected bool"),
        ("[engine]\nbogus = 1\n", "unknown key(s) bogus"),
        ("[engine.fusion]\nk = 'x'\n", "fusion.k: expected a number"),
        ("ui = 3\n", "ui: expected a table"),
        ("[ui\n", "config.toml"),
    ],
)
def test_bad_config_is_an_error(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)


def test_an_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.toml")


def test_config_is_frozen() -> None:
    config = AppConfig()
    with pytest.raises(AttributeError):
        config.ui.search_limit = 3  # type: ignore[misc]
