"""The command lines at their edges: empty channel lists, bad limits, a reader that stops reading."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.main import main as cairn_main
from engine.api import Engine
from engine.console import Exit, run_console
from engine.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(vault, index dir) of the sample vault indexed without the model (these tests are about the CLI)."""
    from vault_copy import copy_sample_vault

    base = tmp_path_factory.mktemp("cli-edges")
    vault = copy_sample_vault(base / "vault")
    with Engine.open(vault, index_dir=base / "index", embedder=None) as engine:
        engine.reindex()
    return vault, base / "index"


@pytest.mark.parametrize("spec", [",", "", " , ,"])
def test_an_empty_channel_list_is_a_usage_error(
    indexed: tuple[Path, Path], spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    vault, index = indexed
    with pytest.raises(SystemExit) as exited:
        main(["search", str(vault), "--index-dir", str(index), "--no-model", "atlas", "--channels", spec])
    assert exited.value.code == Exit.USAGE
    err = capsys.readouterr().err
    assert "--channels: name at least one channel: fulltext, vectors, graph" in err


def test_an_unknown_channel_is_a_usage_error(indexed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    vault, index = indexed
    with pytest.raises(SystemExit) as exited:
        main(["search", str(vault), "--index-dir", str(index), "atlas", "--channels", "fulltext,bm25"])
    assert exited.value.code == Exit.USAGE
    assert "unknown channel(s): bm25" in capsys.readouterr().err


def test_channels_with_stray_commas_mean_the_ones_named(
    indexed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    vault, index = indexed
    code = main(["search", str(vault), "--index-dir", str(index), "--no-model", "atlas", "--json", "--channels", "fulltext,,"])
    assert code == Exit.OK
    assert '"channels": {\n    "fulltext"' in capsys.readouterr().out


@pytest.mark.parametrize("limit", ["0", "-3", "ten"])
def test_a_limit_below_one_is_a_usage_error(
    indexed: tuple[Path, Path], limit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    vault, index = indexed
    with pytest.raises(SystemExit) as exited:
        main(["search", str(vault), "--index-dir", str(index), "atlas", "--limit", limit])
    assert exited.value.code == Exit.USAGE
    assert "--limit" in capsys.readouterr().err


def test_the_api_takes_an_empty_channel_list_and_odd_limits(indexed: tuple[Path, Path]) -> None:
    vault, index = indexed
    with Engine.open(vault, index_dir=index, embedder=None) as engine:
        nothing = engine.search("atlas", channels=())
        assert nothing.channels == {} and all(hit.channels == {} for hit in nothing.hits)
        assert engine.search("atlas", limit=0).hits == ()
        assert engine.search("atlas", limit=-1).hits == ()
        assert len(engine.search("atlas", limit=3).hits) == 3


def _closed_stdout(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a command whose stdout reader has gone away before it writes (`| head -1` after one line)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    proc.stdout.close()
    _out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(args, proc.returncode, "", err)


@pytest.mark.parametrize(
    "command",
    [["search", "atlas", "--json"], ["search", "atlas"], ["status", "--json"], ["reindex", "--json"]],
    ids=lambda command: " ".join(command),
)
def test_a_closed_pipe_ends_quietly(indexed: tuple[Path, Path], command: list[str]) -> None:
    vault, index = indexed
    name, *rest = command
    args = [sys.executable, "-m", "engine", name, str(vault), "--index-dir", str(index), "--no-model", *rest]
    done = _closed_stdout(args)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == Exit.OUTPUT_CLOSED, done.stderr


def test_cairn_help_into_a_closed_pipe_is_quiet() -> None:
    done = _closed_stdout([sys.executable, "-m", "app", "--help"])
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode in (0, Exit.OUTPUT_CLOSED)


def test_cairn_ends_quietly_when_its_output_goes_away(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import app.main

    def closed(_args: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(app.main, "_tui", closed)
    assert cairn_main([str(tmp_path)]) == Exit.OUTPUT_CLOSED


def test_run_console_passes_other_errors_on() -> None:
    def broken() -> int:
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError):
        run_console(broken)


def test_control_characters_from_a_note_never_reach_the_terminal(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Evil.md").write_bytes(b"# Evil \x1b]0;owned\x07 title\n\nThe \x1b[2J tarantula line.\n")
    base = [str(vault), "--index-dir", str(tmp_path / "index"), "--no-model"]
    subprocess.run([sys.executable, "-m", "engine", "reindex", *base], check=True, capture_output=True, cwd=ROOT, timeout=120)
    for extra in ([], ["--explain"]):
        done = subprocess.run(
            [sys.executable, "-m", "engine", "search", *base, "tarantula evil", *extra],
            capture_output=True, text=True, cwd=ROOT, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "Evil.md" in done.stdout
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout, done.stdout
        assert "\\x1b" in done.stdout, "shown escaped, not dropped"
