"""kill -9 at random moments of reindexing and watching: the index always opens, answers and agrees."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from index_checks import notes_with_embedded_chunks
from vault_copy import copy_sample_vault

from engine.api import Engine
from engine.embedder import Embedder, load_default_embedder

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["harbor", "lantern", "quarry", "meadow", "falcon", "ember", "glacier", "orchard", "summit", "tundra", "canyon", "delta", "prairie", "lagoon", "beacon", "atlas", "sync", "tile", "offline", "telemetry", "crdt", "postgres", "flutter", "retro", "sprint", "budget", "roadmap", "review", "incident", "migration", "latency", "battery", "courier", "ledger"]
KILLS = 20


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."


def _note(rng: random.Random, title: str, titles: list[str]) -> str:
    links = " ".join(f"[[{t}]]" for t in rng.sample(titles, min(2, len(titles))))
    sections = [f"## Part {i}\n\n" + " ".join(_sentence(rng) for _ in range(rng.randint(3, 9))) for i in range(rng.randint(1, 3))]
    return f"# {title}\n\nSee {links}.\n\n" + "\n\n".join(sections) + "\n"


def _mutate(vault: Path, rng: random.Random, round_no: int) -> None:
    """Edit, add, delete and rename a few generated notes so each run has new text to embed."""
    generated = sorted((vault / "Generated").glob("*.md"))
    titles = [p.stem for p in generated] or ["Atlas"]
    for path in rng.sample(generated, min(len(generated), rng.randint(3, 6))):
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n## Round {round_no}\n\n{_sentence(rng)} {_sentence(rng)}\n")
    for i in range(rng.randint(2, 4)):
        title = f"Gen R{round_no} N{i}"
        (vault / "Generated" / f"{title}.md").write_text(_note(rng, title, titles), encoding="utf-8")
    generated = sorted((vault / "Generated").glob("*.md"))
    if len(generated) > 20:
        rng.choice(generated).unlink()
        victim = rng.choice(sorted((vault / "Generated").glob("*.md")))
        victim.rename(victim.with_name(f"Renamed {round_no} {victim.name}"))


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_default_embedder()


@pytest.fixture
def crash_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    copy_sample_vault(vault)
    rng = random.Random(99)
    (vault / "Generated").mkdir()
    titles = [f"Generated Note {i}" for i in range(30)]
    for title in titles:
        (vault / "Generated" / f"{title}.md").write_text(_note(rng, title, titles), encoding="utf-8")
    return vault


class _Run:
    """A `python -m engine …` subprocess whose stderr lines are collected as they come."""

    def __init__(self, args: list[str]) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self.lines: list[str] = []
        self.first_line = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            self.first_line.set()
        self.first_line.set()

    def wait_for_line(self, needle: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(needle in line for line in self.lines):
                return True
            if self.proc.poll() is not None:
                self._reader.join(2)
                return any(needle in line for line in self.lines)
            time.sleep(0.02)
        return False

    def kill(self) -> int | None:
        """SIGKILL; returns the exit code if the process had already finished."""
        code = self.proc.poll()
        if code is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self._reader.join(5)
        return code


def check_consistent(vault: Path, index_dir: Path, embedder: Embedder) -> Engine:
    """Open (repairing), search, and check that catalog and channels agree; returns the open engine."""
    engine = Engine.open(vault, index_dir=index_dir, embedder=embedder)
    status = engine.status()
    assert status.channel_counts["fulltext"] == status.notes, engine.repairs
    assert status.channel_counts["graph"] == status.notes, engine.repairs
    assert status.channel_counts["vectors"] == notes_with_embedded_chunks(index_dir, embedder.model_id), engine.repairs
    catalog_shas = {path: state[2] for path, state in engine._catalog.file_states().items()}
    assert engine._fulltext.indexed_shas() == catalog_shas, "full-text documents match the catalog's notes"
    results = engine.search("offline tile packs for the field", as_you_type=False)
    if status.notes:
        assert results.hits, "an index with notes answers"
    assert all(st.status != "unavailable" for st in results.channels.values())
    return engine


@pytest.mark.slow
def test_random_kills_leave_a_working_index(crash_vault: Path, tmp_path: Path, embedder: Embedder) -> None:
    index_dir = tmp_path / "index"
    rng = random.Random(1234)
    phases_killed: list[str] = []
    base = [str(crash_vault), "--index-dir", str(index_dir)]
    for round_no in range(KILLS):
        _mutate(crash_vault, rng, round_no)
        mode = rng.random()
        if mode < 0.2 and round_no > 0:
            # The watcher: kill it while it catches up or absorbs a burst of edits.
            run = _Run(["watch", *base])
            try:
                assert run.wait_for_line("watching", 60), run.lines
                _mutate(crash_vault, rng, 100 + round_no)
                time.sleep(rng.uniform(0.05, 2.0))
            finally:
                code = run.kill()
            kind = "watch"
        else:
            args = ["reindex", *base, *(["--full"] if mode > 0.85 else [])]
            run = _Run(args)
            try:
                if mode < 0.35:
                    time.sleep(rng.uniform(0.1, 2.0))  # early: imports, open-time repair
                    kind = "early"
                else:
                    assert run.first_line.wait(60)
                    time.sleep(rng.uniform(0.0, 2.5))  # while parsing, writing and embedding
                    kind = "late"
            finally:
                code = run.kill()
        if kind == "watch":
            phase = f"{sum('watch:' in line for line in run.lines)} batches done"
        else:
            phase = "finished" if code is not None else (run.lines[-1].split(":")[0] if run.lines else "starting")
        phases_killed.append(f"{kind}:{phase}")
        assert code in (None, 0), run.lines
        assert not any("Traceback" in line for line in run.lines), run.lines
        engine = check_consistent(crash_vault, index_dir, embedder)
        engine.close()
    print("kills:", phases_killed)
    assert any(p.startswith(("late:embed", "watch")) for p in phases_killed), phases_killed

    # The next run finishes the work.
    final = subprocess.run(
        [sys.executable, "-m", "engine", "reindex", *base],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert final.returncode == 0, final.stderr
    engine = check_consistent(crash_vault, index_dir, embedder)
    try:
        status = engine.status()
        assert status.embedded_fraction == 1.0
        assert engine.pending() == ()
        assert status.notes == len(list(crash_vault.rglob("*.md")))
    finally:
        engine.close()


def test_kill_during_reindex_then_cli_search_works(crash_vault: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    base = [str(crash_vault), "--index-dir", str(index_dir)]
    run = _Run(["reindex", *base])
    try:
        assert run.wait_for_line("embedding ", 90), run.lines
    finally:
        code = run.kill()
    assert code is None, "killed while embedding"
    search = subprocess.run(
        [sys.executable, "-m", "engine", "search", *base, "offline map tiles", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert search.returncode == 0, search.stderr
    assert "Traceback" not in search.stderr
    hits = json.loads(search.stdout)["hits"]
    assert hits
    status = subprocess.run(
        [sys.executable, "-m", "engine", "status", *base, "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert status.returncode == 0, status.stderr
    payload = json.loads(status.stdout)
    assert payload["channel_counts"]["fulltext"] == payload["notes"] == payload["channel_counts"]["graph"]
    assert payload["embedded_chunks"] < payload["chunks"], "the kill left chunks to embed"
    assert payload["writer"] is None
