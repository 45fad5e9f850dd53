"""The engine command: help for every command, exit codes, JSON shape, golden output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.console import Exit
from engine.tools.cli import build_parser, main

GOLDEN = Path(__file__).parent / "data" / "golden_search.json"


def _subcommands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return sorted(action.choices)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", _subcommands())
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "usage: engine" in out and "exit codes" in out
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    assert action.choices[command].description  # type: ignore[index]


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == Exit.USAGE


def test_missing_vault_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["status", str(tmp_path / "nope")])
    assert code == Exit.VAULT_NOT_FOUND
    err = capsys.readouterr().err
    assert "Vault not found" in err and "Traceback" not in err


def test_python_dash_m_engine(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "engine", "status", str(tmp_path / "missing")], capture_output=True, text=True
    )
    assert result.returncode == Exit.VAULT_NOT_FOUND
    assert result.stdout == ""


def _stable(payload: dict[str, object]) -> dict[str, object]:
    """Drop what legitimately varies between runs (timings)."""
    payload = json.loads(json.dumps(payload))
    payload.pop("ms", None)
    for channel in payload["channels"].values():  # type: ignore[union-attr]
        channel.pop("ms", None)
    for hit in payload["hits"]:  # type: ignore[union-attr]
        hit["score"] = round(hit["score"], 4)
        hit["graph_boost"] = round(hit["graph_boost"], 3)
        for evidence in hit["channels"].values():
            evidence.pop("chunk_id", None)
            evidence["score"] = round(evidence["score"], 3)
    return payload


def test_search_json_golden(sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`engine search --json` keeps its documented shape (vectors off, so it is exact)."""
    index = str(tmp_path / "idx")
    assert main(["reindex", str(sample_copy), "--index-dir", index, "--no-model"]) == Exit.OK
    capsys.readouterr()
    assert main(["search", str(sample_copy), "--index-dir", index, "--no-model", "--json", "--limit", "3", "who attended the Atlas kickoff"]) == Exit.OK
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"query", "hits", "channels", "entities", "asked_kind", "kind_hops", "clauses", "plan", "confident", "stages", "ms"}
    assert {stage["stage"] for stage in payload["stages"]} <= {"structure", "coverage", "confidence", "names", "folders", "navigation"}
    assert all(isinstance(stage["said"], list) for stage in payload["stages"])
    assert set(payload["channels"]) == {"fulltext", "vectors", "graph"}
    assert payload["channels"]["vectors"]["status"] == "unavailable"
    for hit in payload["hits"]:
        assert set(hit) == {
            "path", "title", "score", "label", "channels", "snippet",
            "vector_score", "graph_boost", "traversed", "create_safety", "plain",
        }
        assert set(hit["plain"]) == {"label", "evidence", "why"}
        assert hit["vector_score"] is None  # no model
        assert hit["create_safety"] in ("exists", "probable", "unknown")
        assert set(hit["snippet"]) == {"text", "heading", "line", "highlights"}
        assert "vectors" not in hit["channels"]
        for name, evidence in hit["channels"].items():
            assert {"rank", "score"} <= set(evidence)
            if name == "graph":
                assert "path" in evidence and "relations" in evidence
    stable = _stable(payload)
    if not GOLDEN.exists():  # first run writes the golden file; review it before committing
        GOLDEN.write_text(json.dumps(stable, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    assert stable == json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_reindex_and_status_json(sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (sample_copy / "broken.md").write_bytes(b"\x00\x01binary")
    index = str(tmp_path / "idx")
    assert main(["reindex", str(sample_copy), "--index-dir", index, "--no-model", "--json"]) == Exit.OK
    report = json.loads(capsys.readouterr().out)
    assert report["notes"] >= 60
    assert {"path": "broken.md", "reason": "binary file, not Markdown"} in report["skipped"]
    assert set(report["timings_s"]) >= {"scan", "parse", "catalog", "fulltext", "graph"}
    assert main(["status", str(sample_copy), "--index-dir", index, "--no-model", "--json"]) == Exit.OK
    status = json.loads(capsys.readouterr().out)
    assert status["notes"] == report["notes"]
    assert status["vectors"]["status"] == "unavailable"
    assert status["skipped"] == [{"path": "broken.md", "reason": "binary file, not Markdown"}]


def test_status_shows_the_embedding_backlog(sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = str(tmp_path / "idx")
    assert main(["reindex", str(sample_copy), "--index-dir", index, "--no-embed"]) == Exit.OK
    capsys.readouterr()
    assert main(["status", str(sample_copy), "--index-dir", index]) == Exit.OK
    lines = {line.split(":", 1)[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "chunks to embed" in lines["backlog"] and "time left known after the first batches" in lines["backlog"]
    assert main(["status", str(sample_copy), "--index-dir", index, "--json"]) == Exit.OK
    backlog = json.loads(capsys.readouterr().out)["backlog"]
    assert backlog["texts"] > 0 and backlog["running"] is False and backlog["eta_s"] is None


def test_human_search_shows_badges(sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = str(tmp_path / "idx")
    main(["reindex", str(sample_copy), "--index-dir", index, "--no-model"])
    capsys.readouterr()
    assert main(["search", str(sample_copy), "--index-dir", index, "--no-model", "--explain", "SQLCipher"]) == Exit.OK
    out = capsys.readouterr().out
    assert "Security Review" in out.splitlines()[0]
    assert "BM25 #1" not in out and "keyword_exact" not in out and "[SQLCipher]" in out
    assert "all your words" in out.splitlines()[1]
    assert "It holds all of “sqlcipher”: the best match for your words." in out
    assert main(["search", str(sample_copy), "--index-dir", index, "--no-model", "--explain", "--raw", "SQLCipher"]) == Exit.OK
    out = capsys.readouterr().out
    assert "BM25 #1" in out and "keyword_exact" in out and "[SQLCipher]" in out
    assert "entities recognized" in out and "fused score" in out


@pytest.fixture
def indexed_copy(sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The arguments that name an indexed copy of the sample vault (no model)."""
    index = str(tmp_path / "idx")
    assert main(["reindex", str(sample_copy), "--index-dir", index, "--no-model"]) == Exit.OK
    capsys.readouterr()
    return [str(sample_copy), "--index-dir", index, "--no-model"]


def test_vimgrep_lines_point_at_the_matched_word(indexed_copy: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    import re

    assert main(["search", *indexed_copy, "--vimgrep", "offline sync conflicts"]) == Exit.OK
    lines = capsys.readouterr().out.splitlines()
    assert lines
    vault = indexed_copy[0]
    words = ("offline", "sync", "conflict")
    for line in lines:
        found = re.fullmatch(r"(.+?\.md):(\d+):(\d+):(.*)", line)
        assert found, line
        path, number, column, text = found.group(1), int(found.group(2)), int(found.group(3)), found.group(4)
        assert path.startswith(vault + "/")  # as ripgrep prints it: under the folder as given
        file_line = Path(path).read_text(encoding="utf-8").split("\n")[number - 1]
        assert text == file_line[:500]
        at = file_line.encode("utf-8")[column - 1 :].decode("utf-8").casefold()
        assert column == 1 or at.startswith(words), (line, at[:20])
    assert any(int(re.fullmatch(r".+?:\d+:(\d+):.*", line).group(1)) > 1 for line in lines)  # type: ignore[union-attr]


def test_files_with_matches_lists_the_paths_once(indexed_copy: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", *indexed_copy, "-l", "offline sync conflicts"]) == Exit.OK
    paths = capsys.readouterr().out.splitlines()
    assert paths and len(set(paths)) == len(paths)
    assert all(Path(p).is_file() for p in paths)
    assert paths[0].endswith("Offline Sync Conflicts.md")


def test_colour_follows_color_and_no_color(
    indexed_copy: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["search", *indexed_copy, "sqlcipher"]) == Exit.OK
    assert "\x1b[" not in capsys.readouterr().out  # not a terminal: no colour
    assert main(["search", *indexed_copy, "--color", "always", "sqlcipher"]) == Exit.OK
    coloured = capsys.readouterr().out
    assert "\x1b[1m" in coloured and "\x1b[1;33mSQLCipher\x1b[0m" in coloured
    assert main(["search", *indexed_copy, "--color", "always", "--vimgrep", "sqlcipher"]) == Exit.OK
    assert "\x1b[35m" in capsys.readouterr().out  # paths magenta, as ripgrep's
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["search", *indexed_copy, "sqlcipher"]) == Exit.OK
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.delenv("NO_COLOR")
    assert main(["search", *indexed_copy, "sqlcipher"]) == Exit.OK
    assert "\x1b[" in capsys.readouterr().out
    assert main(["search", *indexed_copy, "--color", "never", "sqlcipher"]) == Exit.OK
    assert "\x1b[" not in capsys.readouterr().out


def test_a_query_that_starts_with_a_dash_reads_the_same_after_double_dash(
    indexed_copy: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", *indexed_copy, "--json", "--", "-android", "sync"]) == Exit.OK
    payload = json.loads(capsys.readouterr().out)
    assert payload["query"] == "-android sync"
    assert any(chip["kind"] == "exclude" for chip in payload["plan"]["chips"])
    assert main(["search", *indexed_copy, "--json", "-android", "sync"]) == Exit.OK
    assert json.loads(capsys.readouterr().out)["query"] == "-android sync"


def test_exit_codes_are_distinct_and_documented() -> None:
    from engine.console import EXIT_HELP, exit_code
    from engine.errors import NoteNotFound, UnsafePath

    codes = [int(code) for code in Exit]
    assert len(set(codes)) == len(codes)
    for code in codes:
        assert f"\n  {code} " in "\n" + EXIT_HELP, f"exit code {code} is not in the help"
    assert exit_code(NoteNotFound("x")) == Exit.NOTE_NOT_FOUND == 7
    assert exit_code(UnsafePath("../x")) == Exit.USAGE
    reference = (Path(__file__).parent.parent / "docs" / "REFERENCE.md").read_text(encoding="utf-8")
    for code in codes:
        assert f"| {code} |" in reference, f"exit code {code} is not in docs/REFERENCE.md"


def test_reindex_progress_ends_every_phase_at_its_total(sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = str(tmp_path / "idx")
    assert main(["reindex", str(sample_copy), "--index-dir", index, "--no-model", "--json"]) == Exit.OK
    steps = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    last: dict[str, dict[str, int]] = {}
    for step in steps:
        last[step["phase"]] = step
    assert {"scan", "read", "parse", "catalog", "fulltext", "graph", "vectors"} <= set(last)
    for phase, step in last.items():
        assert step["done"] == step["total"], f"{phase} ended at {step['done']}/{step['total']}"
    assert last["fulltext"]["total"] == last["graph"]["total"] == 63
    # Again, nothing changed: every phase still ends, at 0/0 where there is nothing to do.
    assert main(["reindex", str(sample_copy), "--index-dir", index, "--no-model", "--json"]) == Exit.OK
    again = {json.loads(line)["phase"]: json.loads(line) for line in capsys.readouterr().err.splitlines()}
    assert all(step["done"] == step["total"] for step in again.values())


def test_the_command_finds_the_index_as_the_engine_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from engine.storage import resolve_index_dir
    from engine.tools.cli import _index_dir

    vault = tmp_path / "vault"
    vault.mkdir()
    for given in (None, tmp_path / "elsewhere"):
        args = argparse.Namespace(index_dir=given)
        assert _index_dir(args, vault) == resolve_index_dir(vault, given)  # .cairn not made yet
        (vault / ".cairn").mkdir(exist_ok=True)
        assert _index_dir(args, vault) == resolve_index_dir(vault, given)
    monkeypatch.setenv("CAIRN_INDEX_DIR", str(tmp_path / "from-env"))
    assert _index_dir(argparse.Namespace(index_dir=None), vault) == resolve_index_dir(vault) == tmp_path / "from-env"


@pytest.mark.parametrize("query", ["-atlas", "-path:Projects", "-tag:meeting", '-"offline sync"'])
def test_a_query_that_starts_with_a_dash_needs_no_double_dash(
    sample_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    """`engine search VAULT -atlas` was an unknown option, and `-atlas` alone found nothing
    where `-path:Archive` alone listed the notes outside it."""
    common = [str(sample_copy), "--index-dir", str(tmp_path / "index"), "--no-model"]
    assert main(["reindex", *common]) == 0
    capsys.readouterr()
    assert main(["search", *common, query, "--json", "--limit", "200"]) == 0
    listed = [hit["path"] for hit in json.loads(capsys.readouterr().out)["hits"]]
    assert main(["search", *common, "--json", "--limit", "200", "--", query]) == 0
    assert [hit["path"] for hit in json.loads(capsys.readouterr().out)["hits"]] == listed
    assert 10 < len(listed) < 63, "every note but those the exclusion leaves out"
    assert main(["context", *common, query, "--max-tokens", "200"]) == 0
