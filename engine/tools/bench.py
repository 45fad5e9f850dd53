"""`engine bench`: index, update and search timings of a real or synthetic vault, in one run.

The parent process only orchestrates; indexing and serving each run in their own
child process (`python -m engine.tools.bench index|serve ...`) so each peak RSS is that
phase's own, and cold open is timed as a fresh `python -m engine search`.
Children print one JSON object on stdout; everything else goes to stderr.
`--parsers` times the parser stages on hostile inputs instead (engine/bench_parsers.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.embedder import parallel_batches_of, unpadded_rows
from engine.errors import CairnError
from engine.records import ChannelName, WatchBatch
from engine.tools.bench_args import SERVE_QUERIES
from engine.tools.bench_refs import fts5, percentiles, ripgrep

if TYPE_CHECKING:
    from engine.api import Engine

_SERVE_QUERIES = SERVE_QUERIES
_UPDATE_EDITS = 5
_RAW_SAMPLE_CHUNKS = 256
_CHILD_TIMEOUT_S = 6 * 3600


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _peak_rss_mb() -> float:
    """This process's peak resident set size (ru_maxrss is KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


# -- the indexing child ------------------------------------------------------------
def _child_index(args: argparse.Namespace) -> dict[str, Any]:
    """Full index of a vault; then the raw model loop over the same tokenized batches."""
    from engine.api import Engine
    from engine.catalog import Catalog
    from engine.embedder import OnnxEmbedder, load_default_embedder
    from engine.records import Progress
    from engine.storage import dir_size

    started = time.perf_counter()
    embedder: OnnxEmbedder | None = None
    if not args.no_model:
        embedder = load_default_embedder()
    model_load_s = time.perf_counter() - started
    last = [0.0]

    def progress(p: Progress) -> None:
        now = time.monotonic()
        if now - last[0] > 5 or p.done == p.total:
            last[0] = now
            _log(f"index {p.phase}: {p.done}/{p.total}")

    engine = Engine.open(args.vault, index_dir=args.index_dir, embedder=embedder)
    try:
        report = engine.reindex(progress=progress, embed=False)
        phases = dict(report.timings)
        catalog = Catalog(args.index_dir / "catalog.sqlite")
        try:
            paths = [p for p, _ in engine.notes()]
            embed_paths = paths if args.embed_notes is None else _subset(paths, args.embed_notes)
            texts = [t for _, t in catalog.chunks_missing_embedding("", embed_paths)] if embedder else []
            every_text = [t for _, t in catalog.chunks_missing_embedding("")]
            all_chunk_texts = len(every_text)
        finally:
            catalog.close()
        embed: dict[str, Any] = {}
        if embedder is not None and not args.no_embed and texts:
            embed_started = time.perf_counter()
            embedded = engine.embed_pending(progress, paths=None if args.embed_notes is None else embed_paths)
            phases["embed"] = round(time.perf_counter() - embed_started, 3)
            embed["embedded_chunks"] = embedded
        if embedder is not None and args.fill_vectors:
            from engine.tools.bench_fill import fill_vectors

            _log("filling the vector index to full size with stand-in vectors")
            embed["fill"] = fill_vectors(engine, args.index_dir, embedder.model_id, embedder.dims)
        peak = _peak_rss_mb()
        # Parse and full-text worker processes: the largest one's peak (two run at once).
        workers_peak = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0, 1)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        status = engine.status()
    finally:
        engine.close()
    index_bytes = dir_size(args.index_dir)
    result: dict[str, Any] = {
        "phases_s": phases,
        "lexical_graph_s": round(sum(v for k, v in phases.items() if k in ("scan", "parse", "catalog", "fulltext", "graph")), 3),
        "model_load_s": round(model_load_s, 3),
        "notes": status.notes,
        "chunks": status.chunks,
        "links": status.links,
        "entities": status.entities,
        "distinct_chunk_texts": all_chunk_texts,
        "peak_rss_mb": peak,
        "peak_rss_workers_mb": workers_peak,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "index_bytes": index_bytes,
        "vectors_in_index": status.channel_counts.get("vectors", 0),
        "embedded_chunks_total": status.embedded_chunks,
    }
    if embedder is not None:
        result.update(_embed_numbers(embedder, texts, phases.get("embed"), args))
        result.update(embed)
        if args.embed_notes is not None and result.get("embed_tokens_per_s"):
            # The whole vault at the engine's measured rate: a projection, labelled as one.
            every_tokens = sum(sum(embedder.count_tokens(every_text[s : s + 256])) for s in range(0, len(every_text), 256))
            result["embed_all_tokens"] = every_tokens
            result["embed_all_projected_s"] = round(every_tokens / result["embed_tokens_per_s"], 1)
    result["loadavg"] = _loadavg()
    return result


def _subset(paths: list[str], count: int) -> list[str]:
    """A seeded, representative subset of notes (not the shortest, not one folder)."""
    chosen = random.Random(1234).sample(paths, min(count, len(paths)))
    return sorted(chosen)


def _embed_numbers(embedder: Any, texts: list[str], embed_s: float | None, args: argparse.Namespace) -> dict[str, Any]:
    """Tokens/s of the engine's embedding phase vs a bare ONNX Runtime loop on the same batches."""
    from engine.config import VectorConfig

    batch_size = VectorConfig().batch_size
    if embed_s is None:
        # No embedding phase: time the raw loop on a sample and project the full phase.
        sample = random.Random(99).sample(texts, min(_RAW_SAMPLE_CHUNKS, len(texts)))
    elif args.raw_sample and args.raw_sample < len(texts):
        # A long embedding phase: the bare loop on a seeded sample of the same texts.
        sample = random.Random(99).sample(texts, args.raw_sample)
    else:
        sample = texts
    total_tokens = sum(sum(embedder.count_tokens(texts[s : s + 256])) for s in range(0, len(texts), 256))
    order = sorted(range(len(sample)), key=lambda i: len(sample[i]))
    # As the engine's embedder runs them: one text per run, without padding.
    batches = [
        row
        for s in range(0, len(order), batch_size)
        for row in unpadded_rows(embedder.tokenize([sample[i] for i in order[s : s + batch_size]]))
    ]
    sample_tokens = sum(int(b["attention_mask"].sum()) for b in batches)
    if batches:
        embedder.run(batches[0])  # warm-up, as the engine's phase had its own
    _log(f"raw model loop: {len(sample)} texts, {sample_tokens} tokens")
    runs = parallel_batches_of(embedder)
    started = time.perf_counter()
    if runs > 1:  # as many batches at once as the engine's phase runs
        with ThreadPoolExecutor(max_workers=runs) as pool:
            list(pool.map(embedder.run, batches))
    else:
        for feeds in batches:
            embedder.run(feeds)
    raw_s = time.perf_counter() - started
    raw_tps = sample_tokens / raw_s if raw_s > 0 else 0.0
    out: dict[str, Any] = {"raw_model_tokens_per_s": round(raw_tps, 1), "raw_model_s": round(raw_s, 3)}
    out["raw_model_texts"] = len(sample)
    if embed_s is not None:
        engine_tps = total_tokens / embed_s if embed_s > 0 else 0.0
        out.update(
            embed_texts=len(texts),
            embed_tokens=total_tokens,
            embed_tokens_per_s=round(engine_tps, 1),
            embed_ratio=round(engine_tps / raw_tps, 3) if raw_tps else None,
        )
    else:
        out.update(
            embed_tokens=total_tokens,
            embed_tokens_per_s=None,
            embed_ratio=None,
            embed_projected_s=round(total_tokens / raw_tps, 1) if raw_tps else None,
        )
    return out


# -- the serving child --------------------------------------------------------------
def _child_serve(args: argparse.Namespace) -> dict[str, Any]:
    """Open the index, type queries key by key, edit notes and time until searchable."""
    from engine.api import Engine
    from engine.catalog import Catalog

    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    started = time.perf_counter()
    if args.no_model:
        engine = Engine.open(args.vault, index_dir=args.index_dir, embedder=None)
    else:
        engine = Engine.open(args.vault, index_dir=args.index_dir)
    open_ms = (time.perf_counter() - started) * 1000
    # As the front ends do (app/wiring.py), in the background there, here before typing starts.
    prepare_started = time.perf_counter()
    engine.prepare_for_typing(wait=True)
    prepare_ms = (time.perf_counter() - prepare_started) * 1000
    first_started = time.perf_counter()
    engine.search(queries[0], as_you_type=False)
    first_ms = (time.perf_counter() - first_started) * 1000
    result: dict[str, Any] = {
        "open_ms": round(open_ms, 1),
        "prepare_ms": round(prepare_ms, 1),
        "first_search_ms": round(first_ms, 1),
    }
    try:
        result["as_you_type"] = _as_you_type(engine, queries)
        if args.syntax_queries is not None:
            syntax = json.loads(args.syntax_queries.read_text(encoding="utf-8"))
            result["as_you_type_syntax"] = _as_you_type(engine, syntax) if syntax else None
        result["keyword"] = _keyword(engine, queries)
        # Before any edit: what a process that only searches holds (an edit reads the graph's rest).
        result["peak_rss_before_edits_mb"] = _peak_rss_mb()
        catalog = Catalog(args.index_dir / "catalog.sqlite")
        try:
            result["update"] = _updates(engine, catalog, args.vault, vectors=not args.no_model)
        finally:
            catalog.close()
        if not args.no_watch:
            from engine.errors import CairnError

            try:
                result["watch"] = measure_watch_latency(engine)
            except CairnError as exc:
                _log(f"watch latency not measured: {exc}")
                result["watch"] = {"error": str(exc)}
    finally:
        engine.close()
    result["peak_rss_mb"] = _peak_rss_mb()
    result["loadavg"] = _loadavg()
    return result


def _loadavg() -> list[float]:
    """The 1-, 5- and 15-minute load averages now (recorded with every phase)."""
    return [round(v, 2) for v in os.getloadavg()]


def _as_you_type(engine: Any, queries: list[str]) -> dict[str, Any]:
    """Every prefix of every query, as typed: total and per-channel latency."""
    totals: list[float] = []
    per_channel: dict[str, list[float]] = {}
    slowest: list[tuple[float, str]] = []
    for query in queries:
        for end in range(1, len(query) + 1):
            prefix = query[:end]
            results = engine.search(prefix, as_you_type=True)
            totals.append(results.total_ms)
            slowest.append((results.total_ms, prefix))
            for name, status in results.channels.items():
                per_channel.setdefault(name, []).append(status.ms)
    slowest.sort(reverse=True)
    return {
        "keystrokes": len(totals),
        **percentiles(totals),
        "per_channel": {name: percentiles(values) for name, values in per_channel.items()},
        "slowest": [{"ms": ms, "prefix": prefix} for ms, prefix in slowest[:5]],
    }


def _keyword(engine: Any, queries: list[str]) -> dict[str, Any]:
    """Complete keyword queries on the full-text channel alone (compare with rg)."""
    times = [engine.search(q, as_you_type=False, channels=("fulltext",)).total_ms for q in queries]
    return percentiles(times)


def _updates(engine: Any, catalog: Any, vault: Path, *, vectors: bool) -> dict[str, Any]:
    """Edit notes on disk; time save → reindex([path]) → found in every channel.

    With vectors, the edited notes are drawn from those already embedded: with
    `--embed-notes` most notes are still backlog, and editing one would time
    embedding its whole backlog, not the edit.
    """
    notes = [p for p, _ in engine.notes()]
    rng = random.Random(5)
    people = [p for p in notes if p.startswith("People/")]
    if vectors:
        owners = catalog.chunk_owners()
        embedded = {owners[cid] for cid, _vector in catalog.chunk_vectors(engine.status().model) if cid in owners}
        notes = [p for p in notes if p in embedded] or notes
    latencies: list[float] = []
    reindex_ms: list[float] = []
    timings: list[dict[str, float]] = []
    for edit in range(_UPDATE_EDITS):
        path = rng.choice(notes)
        word = f"zqx{'abcdefghij'[edit]}vormbleth"
        name = f"Quorblat Zenithar{'abcdefghij'[edit]}"
        link = f" See [[{Path(rng.choice(people)).stem}]]." if people else ""
        sentence = f"We met {name} to discuss the {word} rollout plan and its offline sync risks."
        paragraph = f"\n\n## Bench edit {edit}\n\n{sentence}{link}\n"
        target = vault / path
        with target.open("a", encoding="utf-8") as handle:
            handle.write(paragraph)
        saved = time.perf_counter()
        report = engine.reindex([path])
        reindex_ms.append((time.perf_counter() - saved) * 1000)
        timings.append(report.timings)
        deadline = saved + 30
        while True:
            if _searchable(engine, catalog, path, word, name, sentence, vectors=vectors):
                latencies.append((time.perf_counter() - saved) * 1000)
                break
            if time.perf_counter() > deadline:
                _log(f"update: {path} not searchable in every channel after 30 s")
                latencies.append(float("inf"))
                break
    phase_ms = {k: round(statistics.median(t.get(k, 0.0) for t in timings) * 1000, 1) for k in timings[0]} if timings else {}
    finite = [v for v in latencies if v != float("inf")]
    return {
        "edits": len(latencies),
        "failed": len(latencies) - len(finite),
        "searchable_ms": percentiles(finite),
        "reindex_ms": percentiles(reindex_ms),
        "reindex_phase_ms_median": phase_ms,
    }


def _searchable(
    engine: Any, catalog: Any, path: str, word: str, name: str, sentence: str, *, vectors: bool
) -> bool:
    """The edit is visible: full text finds the word, graph knows the name, and the
    vector channel finds the note by the new sentence with that note's best chunk the
    new one (a made-up word means little to the model; the sentence is what it reads)."""
    fulltext = engine.search(word, as_you_type=False, channels=("fulltext",), limit=5)
    if not any(h.path == path for h in fulltext.hits):
        return False
    graph = engine.search(name, as_you_type=False, channels=("graph",), limit=10)
    if not any(h.path == path for h in graph.hits):
        return False
    if not vectors:
        return True
    semantic = engine.search(sentence, as_you_type=False, channels=("vectors",), limit=10)
    for hit in semantic.hits:
        evidence = hit.channels.get("vectors")
        if hit.path == path and evidence is not None and evidence.chunk_id is not None:
            chunk = catalog.chunk(evidence.chunk_id)
            return chunk is not None and word in chunk.chunk.text
    return False


# -- the parent ---------------------------------------------------------------------
def _run_child(kind: str, argv: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "engine.tools.bench", kind, *argv]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=_CHILD_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench child {kind} failed with exit code {done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _cold_open(vault: Path, index_dir: Path, query: str, *, no_model: bool, runs: int = 3) -> dict[str, Any]:
    """Wall time of a fresh `python -m engine search` process, spawn to exit (after one untimed run)."""
    command = [sys.executable, "-m", "engine", "search", str(vault), query, "--index-dir", str(index_dir), "--json", "--limit", "10"]
    if no_model:
        command.append("--no-model")
    # As after an install: the modules' bytecode is on disk (written by an untimed first
    # run under the index dir, even where PYTHONDONTWRITEBYTECODE is set, as in CI).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(index_dir.parent / "pycache")
    subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    times: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        times.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0:
            raise RuntimeError(f"cold open failed: {done.stderr.strip()[-400:]}")
    return {"runs_ms": [round(t, 1) for t in times], "median_ms": round(statistics.median(times), 1)}


def _machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor()
    memory_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        memory_gb = None
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": memory_gb,
        "python": platform.python_version(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "loadavg": _loadavg(),
    }


def _vector_coverage(indexed: dict[str, Any]) -> dict[str, Any]:
    """How many chunks have vectors, and how many of those are the model's own."""
    fill = indexed.get("fill") or {}
    filled = int(fill.get("filled_texts", 0))
    return {
        "chunks": indexed["chunks"],
        "with_vectors": indexed.get("embedded_chunks_total", 0),
        "embedded_by_model": indexed.get("embedded_chunks", 0),
        "stand_in_texts": filled,
        "fill": fill or None,
        "note": (
            f"{filled} chunk texts hold deterministic stand-in vectors (real vectors moved by seeded noise), "
            "so latency, memory and size are measured on a full-size index; their search results mean nothing"
        )
        if filled
        else "",
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole benchmark; returns the JSON-able result."""
    from engine.tools.synth import SynthSpec, SynthVault, generate, keyword_queries, syntax_queries

    machine_before = _machine()
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="cairn-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if args.vault is not None:
            source = Path(args.vault).expanduser().resolve()
            vault = workdir / "vault"
            _log(f"copying {source} (edits must not touch the real vault)")
            shutil.copytree(source, vault, ignore=shutil.ignore_patterns(".cairn", ".obsidian", ".git"))
            synth = SynthVault(root=vault, paths=[str(p.relative_to(vault)) for p in vault.rglob("*.md")])
            synth.people = [Path(p).stem for p in synth.paths if p.lower().startswith("people/")]
        else:
            vault = workdir / "vault"
            shutil.rmtree(vault, ignore_errors=True)
            started = time.perf_counter()
            synth = generate(vault, SynthSpec(args.notes, args.seed))
            _log(f"generated {len(synth.paths)} notes, {synth.words} words in {time.perf_counter() - started:.1f}s")
        queries = keyword_queries(synth, args.queries, seed=args.seed) if synth.projects else _titles_as_queries(synth, args.queries)
        queries_file = workdir / "queries.json"
        queries_file.write_text(json.dumps(queries), encoding="utf-8")
        # The same number of queries in the query language (filters, phrases, exclusions, typos).
        syntax = syntax_queries(synth, args.queries, seed=args.seed) if synth.projects else []
        syntax_file = workdir / "syntax_queries.json"
        syntax_file.write_text(json.dumps(syntax), encoding="utf-8")
        index_dir = workdir / "index"
        shutil.rmtree(index_dir, ignore_errors=True)

        common = ["--vault", str(vault), "--index-dir", str(index_dir)]
        no_model = args.no_embed and not args.project_embed
        if no_model:
            common.append("--no-model")
        _log("indexing (child process)")
        index_argv = [*common]
        if args.no_embed:
            index_argv.append("--no-embed")
        if args.embed_notes is not None:
            index_argv += ["--embed-notes", str(args.embed_notes)]
        if args.fill_vectors:
            index_argv.append("--fill-vectors")
        if args.raw_sample:
            index_argv += ["--raw-sample", str(args.raw_sample)]
        indexed = _run_child("index", index_argv)
        _log(f"indexed in {sum(indexed['phases_s'].values()):.1f}s: {indexed['phases_s']}")

        serve_argv = ["--vault", str(vault), "--index-dir", str(index_dir), "--queries", str(queries_file)]
        serve_argv += ["--syntax-queries", str(syntax_file)]
        if args.no_watch:
            serve_argv.append("--no-watch")
        if args.no_embed:
            serve_argv.append("--no-model")
        _log("cold open (fresh processes)")
        load_cold = _loadavg()
        cold = _cold_open(vault, index_dir, queries[0], no_model=args.no_embed)
        # The same without the model: what a BM25 + graph answer costs from a fresh process.
        cold_lexical = cold if args.no_embed else _cold_open(vault, index_dir, queries[0], no_model=True)
        _log("serving: as-you-type and updates (child process)")
        served = _run_child("serve", serve_argv)
        _log("lexical references: ripgrep and SQLite FTS5 on the same vault and queries")
        load_refs = _loadavg()
        rg = ripgrep(vault, queries)
        if rg is None:
            _log("rg (ripgrep) not found; apt-get install -y ripgrep — skipping that reference")
        fts = fts5(vault, queries, workdir, _log)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    typing = served["as_you_type"]
    typing_syntax = served.get("as_you_type_syntax")
    update = served["update"]
    return {
        "notes": indexed["notes"],
        "vault": "synthetic" if args.vault is None else str(args.vault),
        "seed": args.seed if args.vault is None else None,
        "embedding": "off" if args.no_embed else ("all" if args.embed_notes is None else f"{args.embed_notes} notes"),
        "machine": {**machine_before, "loadavg_1m_end": _machine()["loadavg_1m"]},
        "loadavg": {
            "start": machine_before["loadavg"],
            "indexing_end": indexed["loadavg"],
            "cold_open_start": load_cold,
            "serving_end": served["loadavg"],
            "references_start": load_refs,
            "end": _loadavg(),
        },
        "vectors": _vector_coverage(indexed),
        "index": {
            "phases_s": indexed["phases_s"],
            "lexical_graph_s": indexed["lexical_graph_s"],
            "cpu_s": indexed["cpu_s"],
            "chunks": indexed["chunks"],
            "links": indexed["links"],
            "entities": indexed["entities"],
            "embed_tokens": indexed.get("embed_tokens"),
            "embed_tokens_per_s": indexed.get("embed_tokens_per_s"),
            "raw_model_tokens_per_s": indexed.get("raw_model_tokens_per_s"),
            "embed_ratio": indexed.get("embed_ratio"),
            "embed_projected_s": indexed.get("embed_projected_s"),
            "embed_all_tokens": indexed.get("embed_all_tokens"),
            "embed_all_projected_s": indexed.get("embed_all_projected_s"),
            "embed_texts": indexed.get("embed_texts"),
            "raw_model_texts": indexed.get("raw_model_texts"),
            "model_load_s": indexed.get("model_load_s"),
        },
        "search_ms": {
            "keystrokes": typing["keystrokes"],
            "p50": typing["p50"],
            "p95": typing["p95"],
            "max": typing["max"],
            "per_channel": typing["per_channel"],
            "slowest": typing["slowest"],
            "keyword_fulltext": served["keyword"],
        },
        "search_ms_syntax": None
        if typing_syntax is None
        else {
            "keystrokes": typing_syntax["keystrokes"],
            "p50": typing_syntax["p50"],
            "p95": typing_syntax["p95"],
            "max": typing_syntax["max"],
            "per_channel": typing_syntax["per_channel"],
            "slowest": typing_syntax["slowest"],
        },
        "update_to_searchable_ms": update["searchable_ms"]["max"] if update["edits"] and not update["failed"] else None,
        "update": update,
        "watch_to_searchable_ms": served.get("watch", {}).get("median_ms"),
        "watch": served.get("watch"),
        "cold_open_ms": cold["median_ms"],
        "cold_open": {
            **cold,
            "in_process_open_ms": served["open_ms"],
            "prepare_for_typing_ms": served.get("prepare_ms"),
            "first_search_ms": served["first_search_ms"],
        },
        "cold_open_lexical": cold_lexical,
        "peak_rss_mb": {
            "indexing": indexed["peak_rss_mb"],
            "indexing_largest_worker": indexed.get("peak_rss_workers_mb"),
            "serving": served["peak_rss_mb"],
            "serving_before_edits": served.get("peak_rss_before_edits_mb"),
        },
        "index_bytes": indexed["index_bytes"],
        "rg_ms": rg,
        "fts5": fts,
        "queries": queries,
        "syntax_queries": syntax,
    }


def _titles_as_queries(synth: Any, count: int) -> list[str]:
    """Queries for a real vault: note titles and title words, deterministic."""
    rng = random.Random(3)
    stems = [Path(p).stem for p in synth.paths]
    picks = rng.sample(stems, min(count, len(stems)))
    return [p if i % 2 else " ".join(p.split()[:2]).lower() for i, p in enumerate(picks)] or ["note"]


def render(result: dict[str, Any]) -> str:
    """Human-readable summary of a bench result."""
    idx = result["index"]
    search = result["search_ms"]
    lines = [
        f"vault: {result['vault']} — {result['notes']} notes, {idx['chunks']} chunks, {idx['links']} links, {idx['entities']} entities; embedding {result['embedding']}",
        f"machine: {result['machine']['cpus']} cpus, {result['machine']['memory_gb']} GB, {result['machine']['cpu']}",
        "index phases: " + ", ".join(f"{k} {v:.2f}s" for k, v in idx["phases_s"].items()) + f" (lexical+graph {idx['lexical_graph_s']:.1f}s)",
    ]
    if idx.get("embed_tokens_per_s"):
        lines.append(
            f"embedding: {idx['embed_tokens_per_s']:.0f} tokens/s vs raw model {idx['raw_model_tokens_per_s']:.0f} tokens/s = {idx['embed_ratio']:.0%}"
        )
        if idx.get("embed_all_projected_s"):
            lines.append(
                f"  the whole vault ({idx['embed_all_tokens']} tokens) at that rate: ~{idx['embed_all_projected_s']:.0f}s (projected)"
            )
    elif idx.get("raw_model_tokens_per_s"):
        lines.append(
            f"embedding not run: raw model {idx['raw_model_tokens_per_s']:.0f} tokens/s; {idx['embed_tokens']} tokens would take ~{idx['embed_projected_s']:.0f}s"
        )
    lines.append(
        f"as-you-type ({search['keystrokes']} keystrokes): p50 {search['p50']:.1f} ms, p95 {search['p95']:.1f} ms, max {search['max']:.1f} ms"
    )
    for name, stats in search["per_channel"].items():
        lines.append(f"  {name:<9} p50 {stats['p50']:.1f} ms, p95 {stats['p95']:.1f} ms, max {stats['max']:.1f} ms")
    syntax = result.get("search_ms_syntax")
    if syntax:
        lines.append(
            f"as-you-type in the query language ({syntax['keystrokes']} keystrokes: filters, phrases, exclusions, typos): "
            f"p50 {syntax['p50']:.1f} ms, p95 {syntax['p95']:.1f} ms, max {syntax['max']:.1f} ms"
        )
    lines.append(f"keyword queries, full text only: p50 {search['keyword_fulltext']['p50']:.1f} ms, p95 {search['keyword_fulltext']['p95']:.1f} ms")
    if result["rg_ms"]:
        lines.append(f"ripgrep, same queries: p50 {result['rg_ms']['p50']:.1f} ms, p95 {result['rg_ms']['p95']:.1f} ms")
    update = result["update"]
    lines.append(
        f"edit → searchable in all channels: max {update['searchable_ms']['max']:.0f} ms, p50 {update['searchable_ms']['p50']:.0f} ms over {update['edits']} edits ({update['failed']} failed)"
    )
    lines.append(f"cold open to first result: {result['cold_open_ms']:.0f} ms (fresh process)")
    lexical = result.get("cold_open_lexical")
    if lexical and lexical is not result.get("cold_open"):
        lines.append(f"cold open without the model (BM25 + graph): {lexical['median_ms']:.0f} ms")
    fts = result.get("fts5")
    if fts:
        lines.append(
            f"SQLite FTS5, same vault: built in {fts['build_s']:.1f}s; keyword p50 {fts['keyword_ms']['p50']:.1f} ms, "
            f"as-you-type p50 {fts['as_you_type_ms']['p50']:.1f} / p95 {fts['as_you_type_ms']['p95']:.1f} ms"
        )
    vectors = result.get("vectors") or {}
    if vectors.get("note"):
        lines.append(f"vectors: {vectors['with_vectors']} of {vectors['chunks']} chunks; {vectors['note']}")
    rss = result["peak_rss_mb"]
    workers = f" (+ worker processes, largest {rss['indexing_largest_worker']:.0f} MB)" if rss.get("indexing_largest_worker") else ""
    before = f" ({rss['serving_before_edits']:.0f} MB before the edits)" if rss.get("serving_before_edits") else ""
    lines.append(f"peak RSS: indexing {rss['indexing']:.0f} MB{workers}, serving {rss['serving']:.0f} MB{before}")
    lines.append(f"index size: {result['index_bytes'] / 1e6:.1f} MB")
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    """Run the benchmark and print the result (JSON or human)."""
    if args.parsers:
        from engine.tools.bench_parsers import main as parsers_main

        return parsers_main(args)
    if args.answers:
        from engine.tools.bench_answers import main as answers_main

        return answers_main(args)
    result = run(args)
    payload = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(payload + "\n", encoding="utf-8")
    sys.stdout.write(payload + "\n" if args.json else render(result))
    return 0


def _child_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.tools.bench")
    sub = parser.add_subparsers(dest="kind", required=True)
    for kind in ("index", "serve"):
        child = sub.add_parser(kind)
        child.add_argument("--vault", type=Path, required=True)
        child.add_argument("--index-dir", type=Path, required=True)
        child.add_argument("--no-model", action="store_true")
        child.add_argument("--no-embed", action="store_true")
        child.add_argument("--embed-notes", type=int)
        child.add_argument("--fill-vectors", action="store_true")
        child.add_argument("--raw-sample", type=int, default=0)
        child.add_argument("--queries", type=Path)
        child.add_argument("--syntax-queries", type=Path)
        child.add_argument("--no-watch", action="store_true")
    args = parser.parse_args(argv)
    result = _child_index(args) if args.kind == "index" else _child_serve(args)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


def measure_watch_latency(engine: Engine, *, edits: int = 5) -> dict[str, float]:
    """Edit one note of an open, indexed engine's vault `edits` times under a watcher.

    Each edit adds a fresh word the way an editor saves (temp file, rename); the time
    runs until the watcher's batch has updated every channel and full-text search
    finds the word. Returns median and max ms.
    """
    notes = engine.notes()
    if not notes:
        raise CairnError(f"{engine.vault} has no notes to edit")
    target = notes[len(notes) // 2][0]
    done = threading.Condition()
    indexed: list[float] = []

    def on_batch(batch: WatchBatch) -> None:
        if batch.report is not None and target in batch.report.updated:
            with done:
                indexed.append(time.perf_counter())
                done.notify_all()

    watcher = engine.watcher(on_batch)
    watcher.start()
    samples: list[float] = []
    try:
        _wait_for(lambda: watcher.batches >= 1 or watcher.error is not None, 120.0)
        fulltext_only: tuple[ChannelName, ...] = ("fulltext",)
        for attempt in range(edits):
            word = f"zyxwatch{os.getpid()}x{attempt}"
            file = engine.vault / target
            text = file.read_text(encoding="utf-8")
            started = time.perf_counter()
            _external_write(file, f"{text}\n\nEdited {word} here.\n")
            expected = attempt + 1
            with done:
                if not done.wait_for(lambda: len(indexed) >= expected, 30.0):  # noqa: B023
                    raise CairnError("the watcher did not index an edit within 30 s")
            hits = engine.search(word, channels=fulltext_only, as_you_type=False).hits
            if not any(hit.path == target for hit in hits):
                raise CairnError(f"edit {attempt} indexed but not found by search")
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        watcher.stop()
    return {"median_ms": round(statistics.median(samples), 1), "max_ms": round(max(samples), 1), "edits": float(edits)}


def _external_write(path: Path, text: str) -> None:
    """Write the way an editor does: a temp file, then rename over the note."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _wait_for(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise CairnError("timed out waiting for the watcher")
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
