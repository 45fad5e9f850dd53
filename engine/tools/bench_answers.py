"""`engine bench --answers`: how long `engine search` takes from a fresh process, answered by a
running Cairn over its socket and by opening the index itself (with and without the model),
beside ripgrep over the same vault and queries.

Every number is the wall time of a whole process, spawn to exit, as a user at a shell
waits for it: `engine search VAULT --vimgrep -- QUERY`, and `rg --vimgrep -i -F -e WORD …
VAULT` for each of the query's words.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["render_answers", "run_answers"]

# Timed runs of each query on each path (after one untimed run that warms the file cache).
_RUNS = 3
_WATCH_READY_S = 600.0
_SETTLE_S = 15.0


def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    allowed = (0, 1) if Path(command[0]).name == "rg" else (0,)  # ripgrep exits 1 when nothing matches
    if done.returncode not in allowed:
        raise RuntimeError(f"{command[:4]} … failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return elapsed


def _summary(times: list[float]) -> dict[str, Any]:
    ordered = sorted(times)
    return {
        "runs": len(ordered),
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 1),
        "min_ms": round(ordered[0], 1),
        "max_ms": round(ordered[-1], 1),
    }


def _measure(commands: list[list[str]], env: dict[str, str]) -> dict[str, Any]:
    load = round(os.getloadavg()[0], 2)
    times: list[float] = []
    for command in commands:
        _timed(command, env)  # untimed: the file cache and bytecode, as after a first use
        times.extend(_timed(command, env) for _ in range(_RUNS))
    return {**_summary(times), "loadavg_1m": load}


def _commit() -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return done.stdout.strip()


def _wait_for_answers(index_dir: Path, vault: Path, no_model: bool, watcher: subprocess.Popen[str]) -> None:
    """Wait until the watcher answers a search over the socket (it indexes, then serves)."""
    from engine.answers import Ask
    from engine.serve import ask

    question = Ask("search", vault=str(vault.resolve()), query="ready", no_model=no_model, output="files").to_json()
    deadline = time.monotonic() + _WATCH_READY_S
    while time.monotonic() < deadline:
        if watcher.poll() is not None:
            raise RuntimeError(f"engine watch ended ({watcher.returncode}): {(watcher.stderr.read() if watcher.stderr else '')[-300:]}")
        asked = ask(index_dir, question)
        if asked.answer is not None:
            return
        time.sleep(0.5)
    raise RuntimeError("engine watch did not answer on its socket in time")


def run_answers(args: argparse.Namespace) -> dict[str, Any]:
    """The measurement; returns the JSON-able result."""
    from engine.tools.bench import _machine, _run_child
    from engine.tools.synth import SynthSpec, SynthVault, generate, keyword_queries

    rg = shutil.which("rg")
    machine = _machine()
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="cairn-answers-"))
    workdir.mkdir(parents=True, exist_ok=True)
    watcher: subprocess.Popen[str] | None = None
    try:
        vault = workdir / "vault"
        shutil.rmtree(vault, ignore_errors=True)
        if args.vault is not None:
            shutil.copytree(Path(args.vault).expanduser(), vault, ignore=shutil.ignore_patterns(".cairn", ".obsidian", ".git"))
            notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
            queries = [Path(p).stem for p in notes[:: max(1, len(notes) // args.queries)]][: args.queries]
        else:
            synth: SynthVault = generate(vault, SynthSpec(args.notes, args.seed))
            queries = keyword_queries(synth, args.queries, seed=args.seed)
        index_dir = workdir / "index"
        shutil.rmtree(index_dir, ignore_errors=True)
        no_model = args.no_embed
        _log(f"indexing {vault} (child process; vectors: {'off' if no_model else 'stand-ins at full size'})")
        index_argv = ["--vault", str(vault), "--index-dir", str(index_dir), "--no-embed", "--raw-sample", "8"]
        if no_model:
            index_argv.append("--no-model")
        else:
            index_argv.append("--fill-vectors")
        indexed = _run_child("index", index_argv)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
        env.pop("NO_COLOR", None)

        def search(*extra: str) -> list[list[str]]:
            base = [sys.executable, "-m", "engine", "search", str(vault), "--index-dir", str(index_dir), "--vimgrep", *extra]
            return [[*base, "--", query] for query in queries]

        result: dict[str, Any] = {
            "notes": indexed["notes"],
            "chunks": indexed["chunks"],
            "vault": "synthetic" if args.vault is None else str(args.vault),
            "seed": args.seed if args.vault is None else None,
            "queries": len(queries),
            "runs_per_query": _RUNS,
            "commit": _commit(),
            "machine": machine,
        }
        paths: dict[str, Any] = {}
        paths["python_start"] = _measure([[sys.executable, "-c", "pass"]], env)
        if rg is not None:
            _log("ripgrep")
            paths["ripgrep"] = _measure(
                [[rg, "--vimgrep", "-i", "-F", *(a for w in q.split() for a in ("-e", w)), str(vault)] for q in queries], env
            )
        else:
            _log("rg (ripgrep) not found; apt-get install -y ripgrep — skipping that reference")
        _log("cold: the command opens the index itself")
        paths["cold_lexical"] = _measure(search("--no-model", "--cold"), env)
        if not no_model:
            paths["cold_model"] = _measure(search("--cold"), env)
        _log("answered by a running `engine watch` over its socket")
        watch = [sys.executable, "-m", "engine", "watch", str(vault), "--index-dir", str(index_dir)]
        if no_model:
            watch.append("--no-model")
        watcher = subprocess.Popen(watch, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        _wait_for_answers(index_dir, vault, no_model, watcher)
        # It answers before its background preparation ends (the tables typing reads, the
        # model's query session): let that finish, as it has long before a user types a command.
        time.sleep(_SETTLE_S)
        paths["socket_lexical"] = _measure(search("--no-model"), env)
        if not no_model:
            paths["socket_model"] = _measure(search(), env)
        result["paths"] = paths
        result["machine"]["loadavg_1m_end"] = _machine()["loadavg_1m"]
        return result
    finally:
        if watcher is not None and watcher.poll() is None:
            watcher.send_signal(signal.SIGINT)
            try:
                watcher.wait(timeout=30)
            except subprocess.TimeoutExpired:
                watcher.kill()
                watcher.wait()
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


_NAMES = {
    "python_start": "python -c pass (the floor of any Python command)",
    "ripgrep": "rg --vimgrep -i -F -e WORD … VAULT",
    "socket_lexical": "engine search --vimgrep --no-model, answered by engine watch",
    "socket_model": "engine search --vimgrep, answered by engine watch",
    "cold_lexical": "engine search --vimgrep --no-model --cold (opens the index)",
    "cold_model": "engine search --vimgrep --cold (opens the index and the model)",
}


def render_answers(result: dict[str, Any]) -> str:
    """The result as a Markdown table, what docs/BENCHMARKS.md shows."""
    machine = result["machine"]
    lines = [
        f"{result['notes']:,} notes ({result['vault']}), {result['queries']} queries × {result['runs_per_query']} runs, "
        f"commit {result['commit'] or '?'}; {machine['cpus']} CPUs ({machine['cpu']}), load {machine['loadavg_1m']} → "
        f"{machine.get('loadavg_1m_end', '?')}",
        "",
        "| command (a fresh process each time) | median | p90 | min–max | load at start |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key, name in _NAMES.items():
        if key in result["paths"]:
            row = result["paths"][key]
            lines.append(
                f"| {name} | {row['median_ms']:,.0f} ms | {row['p90_ms']:,.0f} ms | {row['min_ms']:,.0f}–{row['max_ms']:,.0f} ms "
                f"| {row.get('loadavg_1m', '?')} |"
            )
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    """`engine bench --answers`."""
    result = run_answers(args)
    payload = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(payload + "\n", encoding="utf-8")
    sys.stdout.write(payload + "\n" if args.json else render_answers(result))
    return 0
