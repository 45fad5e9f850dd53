"""The `cairn` console script: subcommand dispatch, help, and errors without a traceback."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app import main as cairn_main


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cairn_main.main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "tui" in out and "web" in out and "cairn [VAULT]" in out


def test_every_subcommand_has_help() -> None:
    parser = cairn_main.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        assert sub.description, name
        for action in sub._actions:
            assert action.help, f"{name} {action.dest}"


def test_a_missing_vault_exits_3_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cairn_main.main([str(tmp_path / "missing"), "--no-model"]) == 3
    assert "Vault not found" in capsys.readouterr().err


def test_a_bad_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text("nope = 1\n", encoding="utf-8")
    assert cairn_main.main([str(tmp_path), "--config", str(config)]) == 2
    assert "Invalid configuration" in capsys.readouterr().err


def test_web_dispatches_to_app_web_main(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[argparse.Namespace] = []

    class FakeWeb:
        @staticmethod
        def add_arguments(parser: argparse.ArgumentParser) -> None:
            parser.add_argument("--port", type=int)

        @staticmethod
        def main(args: argparse.Namespace) -> int:
            seen.append(args)
            return 0

    monkeypatch.setattr(cairn_main, "_web_module", lambda: FakeWeb)
    assert cairn_main.main(["web", str(tmp_path), "--port", "9000"]) == 0
    assert seen[0].command == "web" and seen[0].port == 9000 and seen[0].vault == tmp_path


def test_web_without_the_module_says_so(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cairn_main, "_web_module", lambda: None)
    assert cairn_main.main(["web"]) == 1
    assert "not installed" in capsys.readouterr().err


def test_a_vault_named_like_nothing_special_opens_the_tui(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    opened: list[argparse.Namespace] = []
    monkeypatch.setattr(cairn_main, "_tui", lambda args: opened.append(args) or 0)
    assert cairn_main.main([str(tmp_path), "--index-dir", str(tmp_path / "idx")]) == 0
    assert opened[0].command == "tui" and opened[0].vault == tmp_path and opened[0].index_dir == tmp_path / "idx"
