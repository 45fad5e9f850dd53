"""The headless `engine` command: stdout is data, stderr is progress and errors."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from engine.console import EXIT_HELP, Exit, exit_code, run_console
from engine.errors import CairnError, ConfigError
from engine.present import (
    NO_CONFIDENT_MATCH,
    asked_kind_text,
    badges,
    context_json_text,
    context_text,
    duration_text,
    highlighted,
    next_hop_text,
    one_line,
    progress_text,
    reading_text,
    reindex_to_json,
    relation_text,
    results_to_json,
    split_hits,
    status_to_json,
    typed_as_text,
    vectors_text,
    watch_line,
    why_lines,
    why_to_json,
)

if TYPE_CHECKING:
    from engine.api import Engine
    from engine.records import Progress


CHANNEL_CHOICES = ("fulltext", "vectors", "graph")


def channel_list(spec: str) -> tuple[str, ...]:
    """`--channels`: a comma-separated, non-empty list of channel names (an argparse type)."""
    names = tuple(dict.fromkeys(c.strip() for c in spec.split(",") if c.strip()))
    unknown = [c for c in names if c not in CHANNEL_CHOICES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown channel(s): {', '.join(unknown)} (choose from {', '.join(CHANNEL_CHOICES)})")
    if not names:
        raise argparse.ArgumentTypeError(f"name at least one channel: {', '.join(CHANNEL_CHOICES)}")
    return names


def positive_int(text: str) -> int:
    """A whole number of at least 1 (an argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def non_negative_int(text: str) -> int:
    """A whole number of at least 0 (an argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number of at least 0 (an argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of at least 0, not {text}")
    return value


def graph_weight(text: str) -> float:
    """A graph weight: a number from 0 to `MAX_GRAPH_WEIGHT` (an argparse type)."""
    from engine.config import MAX_GRAPH_WEIGHT

    value = non_negative_float(text)
    if value > MAX_GRAPH_WEIGHT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_GRAPH_WEIGHT:g}, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by the docs test: every command has help)."""
    parser = argparse.ArgumentParser(
        prog="engine",
        description="Cairn's headless search engine: index a Markdown vault and search it.",
        epilog=EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(
            name, help=help_text, description=help_text, epilog=EXIT_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        return command

    def vault_args(command: argparse.ArgumentParser) -> None:
        command.add_argument("vault", type=Path, help="the vault folder")
        command.add_argument("--index-dir", type=Path, help="where the index lives (default VAULT/.cairn)")
        command.add_argument("--config", type=Path, help="a TOML file of engine settings")
        command.add_argument("--no-model", action="store_true", help="do not load the embedding model")

    reindex = add("reindex", "Index new and changed notes (incremental by content hash).")
    vault_args(reindex)
    reindex.add_argument("--full", action="store_true", help="re-read and re-index every note")
    reindex.add_argument("--no-embed", action="store_true", help="skip the embedding phase")
    reindex.add_argument("--json", action="store_true", help="print the report as JSON")

    search = add("search", "Search the vault; shows channel badges and evidence.")
    vault_args(search)
    search.add_argument("query", help="the query")
    search.add_argument("--limit", type=positive_int, default=10, help="maximum results (default 10)")
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.add_argument("--explain", action="store_true", help="per-channel ranks, scores and entities")
    search.add_argument(
        "--channels",
        type=channel_list,
        default=CHANNEL_CHOICES,
        help="comma-separated channels to use, at least one (default fulltext,vectors,graph)",
    )
    search.add_argument("--typing", action="store_true", help="treat the last word as a prefix, as when typing")
    search.add_argument("--today", help="the day time words count from, YYYY-MM-DD (default: the clock)")
    search.add_argument("--why", metavar="NOTE", help="why NOTE (a path, title or alias) is where it is in the results, or not in them")
    search.add_argument("--graph-weight", type=graph_weight, metavar="W", help="the graph's weight in fusion for this search (default: configured, 1)")
    search.add_argument("--max-hops", type=non_negative_int, metavar="H", help="how many hops the graph walks (default: configured, 2; 0: only the named entities)")
    search.add_argument(
        "--graph-seeding",
        choices=("query", "chunks", "both"),
        help="where the graph walk starts: the entities the query names (default), those its top chunks name, or both",
    )

    context = add("context", "Assemble what a question needs from the vault: top chunks, their entities and relationships.")
    vault_args(context)
    context.add_argument("question", help="the question")
    context.add_argument("--max-tokens", type=positive_int, default=4000, metavar="N", help="the whole token budget: all that is printed fits it (default 4000)")
    context.add_argument("--max-source-tokens", type=non_negative_int, metavar="N", help="the sources' budget (default 60%% of the whole)")
    context.add_argument("--max-entity-tokens", type=non_negative_int, metavar="N", help="the entities' budget (default 20%%); relationships get the rest")
    context.add_argument("--depth", type=non_negative_int, default=2, metavar="D", help="hops of the walk from the chunks' entities (default 2; 0: only theirs)")
    context.add_argument("--top-k", type=positive_int, metavar="K", help="the most sources (default: as many as the budget holds, of the top 20)")
    context.add_argument("--json", action="store_true", help="print one JSON object")

    status = add("status", "Show index counts, embedded fraction, skipped files, model and size.")
    vault_args(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")

    evaluate = add("eval", "Reindex a vault, run labelled queries and report P@5, R@5, MRR, nDCG@10.")
    evaluate.add_argument("--vault", type=Path, required=True, help="the vault folder")
    evaluate.add_argument("--queries", type=Path, required=True, help="TSV: qid<TAB>query")
    evaluate.add_argument("--qrels", type=Path, required=True, help="TSV: qid<TAB>path<TAB>grade")
    evaluate.add_argument("--index-dir", type=Path, help="where the index lives (default VAULT/.cairn)")
    evaluate.add_argument("--config", type=Path, help="a TOML file of engine settings")
    evaluate.add_argument("--no-model", action="store_true", help="do not load the embedding model")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")
    evaluate.add_argument(
        "--typing", action="store_true", help="run each query as typed: its last word a prefix, as in the search box"
    )
    evaluate.add_argument(
        "--cut-mid-word",
        action="store_true",
        help="run each query as typed halfway through its last word (of 5+ letters; other queries are skipped)",
    )
    evaluate.add_argument("--today", help="the day time words count from, YYYY-MM-DD (default: the clock)")
    evaluate.add_argument(
        "--channels", default="fulltext,vectors,graph", help="channels to fuse and measure alone"
    )
    evaluate.add_argument("--per-query", type=Path, help="write one JSON line per query to this file")
    evaluate.add_argument("--limit", type=int, default=100, help="hits per search (default 100)")
    evaluate.add_argument("--qid-prefix", action="append", help="only queries whose id starts so (repeatable)")
    evaluate.add_argument(
        "--half",
        choices=("tune", "check"),
        help="only the queries of one half (split by a hash of the query id; tests/data/splits/)",
    )
    evaluate.add_argument(
        "--ablate",
        action="store_true",
        help="run again with each ranking stage off, and report them beside plain RRF, per half and family",
    )
    evaluate.add_argument("--min-ndcg", type=float, help="exit 6 when hybrid nDCG@10 is below this")
    evaluate.add_argument("--min-recall5", type=float, help="exit 6 when hybrid R@5 is below this")
    evaluate.add_argument("--min-mrr", type=float, help="exit 6 when hybrid MRR is below this")
    evaluate.add_argument(
        "--max-forbidden", type=int, help="exit 6 when more than this many grade -1 (must not be found) notes are found"
    )

    watch = add("watch", "Keep the index fresh while notes change; one line per batch on stderr.")
    vault_args(watch)
    watch.add_argument("--debounce-ms", type=int, default=3000, help="longest a burst of changes is gathered (default 3000)")
    watch.add_argument("--step-ms", type=int, default=60, help="quiet time that ends a burst (default 60)")

    bench = add("bench", "Benchmark indexing, updates and as-you-type search on a synthetic or real vault.")
    from engine.tools.bench_args import add_arguments as bench_arguments  # stdlib only

    bench_arguments(bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `engine` console script."""
    return run_console(lambda: _main(argv))


# Commands whose free text may start with `-` (an exclusion: `engine search VAULT -draft`).
_FREE_TEXT_COMMANDS = ("search", "context")


def _free_text_arguments(argv: Sequence[str]) -> list[str]:
    """`argv` with a query that starts with `-` marked as text, not as an unknown option.

    These commands have no short option but -h, so `-draft` or `-path:Archive` can only be
    the query; argparse reads an argument holding a blank as a value, so one is put in front
    (the query parser drops it).
    """
    arguments = list(argv)
    if not arguments or arguments[0] not in _FREE_TEXT_COMMANDS:
        return arguments
    return [
        f" {arg}" if index and arg.startswith("-") and not arg.startswith("--") and arg != "-h" and len(arg) > 1 else arg
        for index, arg in enumerate(arguments)
    ]


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(_free_text_arguments(sys.argv[1:] if argv is None else argv))
    if not args.command:
        parser.print_help(sys.stderr)
        return Exit.USAGE
    handlers = {
        "reindex": _reindex,
        "search": _search,
        "context": _context,
        "status": _status,
        "eval": _eval,
        "bench": _bench,
        "watch": _watch,
    }
    try:
        return int(handlers[args.command](args))
    except CairnError as exc:
        print(f"error: {exc.title}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _open(args: argparse.Namespace) -> Engine:
    from engine.api import Engine
    from engine.config import EngineConfig

    config = EngineConfig()
    if getattr(args, "config", None):
        import tomllib

        try:
            config = EngineConfig.from_dict(tomllib.loads(args.config.read_text(encoding="utf-8")))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{args.config}: {exc}") from exc
    if getattr(args, "today", None):
        import dataclasses

        config = dataclasses.replace(config, today=args.today)
    if args.no_model:
        engine = Engine.open(args.vault, config, index_dir=args.index_dir, embedder=None)
    else:
        engine = Engine.open(args.vault, config, index_dir=args.index_dir)
    for repair in engine.repairs:
        print(f"repaired: {repair}", file=sys.stderr)
    return engine


# -- reindex -----------------------------------------------------------------------
class _ProgressBar:
    """Phase and count on stderr: a redrawn bar on a terminal, sparse lines otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._phase = ""
        self._last_draw = 0.0
        self._last_pct = -1

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        new_phase = progress.phase != self._phase
        pct = int(100 * progress.done / progress.total) if progress.total else 0
        if self._tty:
            if not new_phase and now - self._last_draw < 0.1 and progress.done != progress.total:
                return
            width = 30
            filled = int(width * pct / 100)
            bar = "█" * filled + "░" * (width - filled)
            if new_phase and self._phase:
                self._stream.write("\n")
            eta = f"· {duration_text(progress.eta_s)} left " if progress.eta_s is not None else ""
            self._stream.write(f"\r{progress.phase:<9} {bar} {progress.done}/{progress.total} {eta}   ")
            self._stream.flush()
        elif new_phase or pct // 25 != self._last_pct // 25:
            self._stream.write(f"{progress_text(progress) if progress.phase == 'embed' else f'{progress.phase}: {progress.done}/{progress.total}'}\n")
        self._phase = progress.phase
        self._last_draw = now
        self._last_pct = pct

    def close(self) -> None:
        if self._tty and self._phase:
            self._stream.write("\n")


def _reindex(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    with _open(args) as engine:
        bar = _ProgressBar(sys.stderr)
        try:
            report = engine.reindex(full=args.full, progress=bar, embed=not args.no_embed)
        finally:
            bar.close()
        status = engine.status()
    total = time.perf_counter() - started
    if args.json:
        payload = {**reindex_to_json(report), "total_s": round(total, 3), "notes": status.notes}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return Exit.OK
    out = sys.stdout
    out.write(
        f"{status.notes} notes: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged, {len(report.skipped)} skipped\n"
    )
    out.write(f"embedded {report.embedded_chunks} chunks; {status.embedded_chunks}/{status.chunks} chunks have vectors\n")
    for skipped in report.skipped:
        out.write(f"  skipped {skipped.path}: {skipped.reason}\n")
    for warning in report.warnings:
        out.write(f"  warning {warning.path}: {warning.reason}\n")
    phases = ", ".join(f"{phase} {seconds:.2f}s" for phase, seconds in report.timings.items())
    out.write(f"time: {total:.2f}s ({phases})\n")
    return Exit.OK


# -- search ------------------------------------------------------------------------
def _search(args: argparse.Namespace) -> int:
    channels = args.channels
    knobs = {"graph_weight": args.graph_weight, "max_hops": args.max_hops, "graph_seeding": args.graph_seeding}
    if "vectors" not in channels:
        args.no_model = True  # load what the query needs: no vectors, no model
    with _open(args) as engine:
        if args.why is not None:
            report = engine.why(args.query, args.why, limit=args.limit, channels=channels, as_you_type=args.typing, **knobs)
            if args.json:
                print(json.dumps(why_to_json(report), ensure_ascii=False, indent=2))
            else:
                sys.stdout.write("\n".join(why_lines(report)) + "\n")
            return Exit.OK
        results = engine.search(args.query, limit=args.limit, channels=channels, as_you_type=args.typing, **knobs)  # type: ignore[arg-type]
        if not results.hits and not engine.notes():
            print("note: the index is empty; run `engine reindex VAULT` first", file=sys.stderr)
    if args.json:
        print(json.dumps(results_to_json(results), ensure_ascii=False, indent=2))
        return Exit.OK
    out = sys.stdout
    tty = out.isatty()
    read_as = reading_text(results.reading)
    if read_as:
        out.write(f"read as: {one_line(read_as)}\n")
    typed_as = typed_as_text(results.reading)
    if args.explain and typed_as:
        out.write(f"typing: {one_line(typed_as)}\n")
    confident, nearest = split_hits(results)
    for number, hit in enumerate((*confident, *nearest), start=1):
        if number == len(confident) + 1 and nearest:
            out.write(f"    -- {NO_CONFIDENT_MATCH} --\n")
        out.write(f"{number:>2}. {one_line(hit.title)}  ({one_line(hit.path)})\n")
        out.write(f"    {hit.label}  {one_line('  '.join(f'[{b}]' for b in badges(hit)))}\n")
        heading = f"{one_line(hit.snippet.heading)} · " if hit.snippet.heading else ""
        snippet = highlighted(hit.snippet.text, hit.snippet.highlights, tty)
        out.write(f"    {heading}line {hit.snippet.line}: {snippet}\n")
        if args.explain:
            for name, ev in hit.channels.items():
                detail = ""
                if ev.matched_terms:
                    detail = f" terms={','.join(ev.matched_terms)}"
                if ev.graph_path:
                    detail = f" path={' → '.join(ev.graph_path)}" + (f" ({ev.graph_relation})" if ev.graph_relation else "")
                    detail += "".join(f"; {relation_text(r)}" for r in ev.relations)
                if ev.chunk_id is not None:
                    detail += f" chunk={ev.chunk_id}"
                if ev.clause is not None:
                    detail += f" clause={ev.clause!r}"
                out.write(f"      {name:<8} rank {ev.rank:<3} score {round(ev.score, 4):<8}{one_line(detail)}\n")
            votes = ", ".join(f"{name} {vote:.4f}" for name, vote in hit.votes.items())
            out.write(f"      fused score {hit.score} ({votes or 'no channel'}); create_safety {hit.create_safety}\n")
            if hit.flat_scan:
                out.write(f"      flat scan: {one_line(', '.join(hit.flat_scan))}\n")
            if hit.next_hop is not None:
                out.write(f"      next hop: {one_line(next_hop_text(hit.next_hop))}\n")
    if not results.hits:
        out.write("no results\n")
    if args.explain:
        out.write(
            "channels: "
            + ", ".join(
                f"{name} {st.status} {st.ms:.1f}ms" + (f" ({st.message})" if st.message else "")
                for name, st in results.channels.items()
            )
            + f"; total {results.total_ms:.1f}ms\n"
        )
        out.write(f"entities recognized: {one_line(', '.join(results.recognized_entities)) or '-'}\n")
        named = "; ".join([*(f"{text}: {why}" for text, why in results.named_because), *(f"{text}: not a name, {why}" for text, why in results.not_names)])
        out.write(f"names, and why:      {one_line(named) or '-'}\n")
        out.write(f"entities expanded:   {one_line(', '.join(results.expanded_entities)) or '-'}\n")
        out.write(f"clauses searched:    {one_line('; '.join(results.clauses)) or '-'}\n")
        out.write(f"asks for:            {asked_kind_text(results, count=True) or '-'}\n")
    for name, st in results.channels.items():
        if st.status != "ok" and not args.explain:
            print(f"note: {name} channel {st.status}: {st.message}", file=sys.stderr)
    return Exit.OK


# -- context -------------------------------------------------------------------------
def _context(args: argparse.Namespace) -> int:
    with _open(args) as engine:
        if engine.status().notes == 0:
            print("note: the index is empty; run `engine reindex VAULT` first", file=sys.stderr)
        render = context_json_text if args.json else context_text
        bundle = engine.context(
            args.question,
            max_tokens=args.max_tokens,
            max_source_tokens=args.max_source_tokens,
            max_entity_tokens=args.max_entity_tokens,
            depth=args.depth,
            top_k=args.top_k,
            render=render,
        )
    # Printed exactly as counted: the budget bounds these characters.
    sys.stdout.write(render(bundle) + ("\n" if args.json else ""))
    return Exit.OK


# -- eval ----------------------------------------------------------------------------
def _eval(args: argparse.Namespace) -> int:
    from engine.tools.eval import run_command

    with _open(args) as engine:
        bar = _ProgressBar(sys.stderr)
        try:
            return run_command(args, engine, bar, sys.stderr, sys.stdout)
        finally:
            bar.close()


# -- bench ---------------------------------------------------------------------------
def _bench(args: argparse.Namespace) -> int:
    from engine.tools.bench import main as bench_main

    return bench_main(args)


# -- watch ---------------------------------------------------------------------------
def _watch(args: argparse.Namespace) -> int:
    import signal
    import threading

    stop = threading.Event()
    with _open(args) as engine:

        def on_signal(_signum: int, _frame: object) -> None:
            stop.set()
            engine.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        print(f"watching {one_line(str(engine.vault))} (ctrl+c stops)", file=sys.stderr)
        engine.watch(
            stop,
            lambda batch: print(watch_line(batch), file=sys.stderr, flush=True),
            debounce_ms=args.debounce_ms,
            step_ms=args.step_ms,
            require_writer=True,
        )
    return Exit.OK


# -- status --------------------------------------------------------------------------
def _status(args: argparse.Namespace) -> int:
    with _open(args) as engine:
        status = engine.status()
        writer = engine.writer
        pending = engine.pending()
    payload = {**status_to_json(status), "writer": writer, "pending": list(pending)}
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return Exit.OK
    out = sys.stdout
    last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.last_update)) if status.last_update else "never"
    out.write(f"vault:      {one_line(status.vault)}\nindex:      {one_line(status.index_dir)} ({status.index_bytes / 1e6:.1f} MB)\n")
    out.write(f"notes:      {status.notes} ({status.chunks} chunks, {status.links} links, {status.dangling_links} dangling)\n")
    out.write(f"entities:   {status.entities}\n")
    out.write(f"embedded:   {status.embedded_chunks}/{status.chunks} chunks ({status.embedded_fraction:.0%})\n")
    if status.backlog is not None:
        rate = status.backlog.chars_per_s
        measured = f" at {rate:,.0f} characters/s, measured here" if rate else ""
        out.write(f"backlog:    {vectors_text(status)}{measured}\n")
    out.write(f"model:      {status.model} — vectors {status.vectors.status}{': ' + status.vectors.message if status.vectors.message else ''}\n")
    out.write(f"channels:   {', '.join(f'{k} {v}' for k, v in status.channel_counts.items())}\n")
    out.write(f"updated:    {last}\nwriter:     {writer or 'none'}\n")
    out.write(f"pending:    {len(pending)} notes changed on disk since indexed\n")
    out.write(f"skipped:    {len(status.skipped)}\n")
    for skipped in status.skipped:
        out.write(f"  {skipped.path}: {skipped.reason}\n")
    return Exit.OK


if __name__ == "__main__":
    sys.exit(main())
