"""The headless `engine` command: stdout is data, stderr is progress and errors."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from engine.console import EXIT_HELP, Exit, exit_code, run_console
from engine.errors import CairnError, ConfigError

if TYPE_CHECKING:
    from engine.answers import Answer, Ask
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


class _Parser(argparse.ArgumentParser):
    """argparse, with a hint where a query that starts with - was read as an option."""

    searching = False  # the command line is a search

    def error(self, message: str) -> typing.NoReturn:
        if _Parser.searching and ("unrecognized arguments: -" in message or "required: query" in message):
            message += "\n(a query that starts with - goes after --: engine search VAULT -- -draft notes)"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by the docs test: every command has help)."""
    parser = _Parser(
        prog="engine",
        description="Cairn's headless search engine: index a Markdown vault and search it.",
        epilog=EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(
            name, help=help_text.partition(". ")[0].rstrip(".") + ".", description=help_text, epilog=EXIT_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        return command

    def vault_args(command: argparse.ArgumentParser) -> None:
        command.add_argument("vault", type=Path, help="the vault folder")
        command.add_argument("--index-dir", type=Path, help="where the index lives (default VAULT/.cairn)")
        command.add_argument("--config", type=Path, help="a TOML file of engine settings")
        command.add_argument("--no-model", action="store_true", help="do not load the embedding model")

    def asking_args(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--cold", action="store_true",
            help="open the index in this process even when a running Cairn could answer at once",
        )
        command.add_argument(
            "--color", choices=("auto", "always", "never"), default="auto",
            help="colour the output: on a terminal (auto, unless NO_COLOR is set), always, or never",
        )

    reindex = add("reindex", "Index new and changed notes (incremental by content hash).")
    vault_args(reindex)
    reindex.add_argument("--full", action="store_true", help="re-read and re-index every note")
    reindex.add_argument("--no-embed", action="store_true", help="skip the embedding phase")
    reindex.add_argument("--json", action="store_true", help="print the report as JSON")

    search = add(
        "search",
        "Search the vault; each hit says why it was found. A query may start with - (an exclusion: "
        "engine search VAULT -draft notes); after -- nothing is read as an option",
    )
    vault_args(search)
    search.add_argument("query", nargs="+", help="the query (several words are one query)")
    search.add_argument("--limit", type=positive_int, default=10, help="maximum results (default 10)")
    shape = search.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print one JSON object")
    shape.add_argument(
        "--vimgrep", action="store_true",
        help="print path:line:column:text for each hit, as ripgrep --vimgrep does (for editors and pipes)",
    )
    shape.add_argument(
        "-l", "--files-with-matches", action="store_true", dest="files", help="print only the paths of the hits"
    )
    search.add_argument("--explain", action="store_true", help="say why each hit was found, and how the query was read")
    search.add_argument(
        "--raw", action="store_true",
        help="show the engine's own evidence: labels, per-channel ranks and scores, votes, index terms",
    )
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
    asking_args(search)

    context = add("context", "Assemble what a question needs from the vault: top chunks, their entities and relationships.")
    vault_args(context)
    context.add_argument("question", help="the question")
    context.add_argument("--max-tokens", type=positive_int, default=4000, metavar="N", help="the whole token budget: all that is printed fits it (default 4000)")
    context.add_argument("--max-source-tokens", type=non_negative_int, metavar="N", help="the sources' budget (default 60%% of the whole)")
    context.add_argument("--max-entity-tokens", type=non_negative_int, metavar="N", help="the entities' budget (default 20%%); relationships get the rest")
    context.add_argument("--depth", type=non_negative_int, default=2, metavar="D", help="hops of the walk from the chunks' entities (default 2; 0: only theirs)")
    context.add_argument("--top-k", type=positive_int, metavar="K", help="the most sources (default: as many as the budget holds, of the top 20)")
    context.add_argument("--json", action="store_true", help="print one JSON object")
    asking_args(context)

    status = add("status", "Show index counts, embedded fraction, skipped files, model and size.")
    vault_args(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")
    asking_args(status)

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


# Commands whose free text may start with `-` (an exclusion: `engine search VAULT -draft`),
# and the short options they own, which stay options.
_FREE_TEXT_COMMANDS = ("search", "context")
_SHORT_OPTIONS = ("-h", "-l")


def _free_text_arguments(argv: Sequence[str]) -> list[str]:
    """`argv` with a query that starts with `-` marked as text, not as an unknown option.

    These commands have no short option but -h and -l, so `-draft` or `-path:Archive` can
    only be the query; argparse reads an argument holding a blank as a value, so one is put in front
    (the query parser drops it).
    """
    arguments = list(argv)
    if not arguments or arguments[0] not in _FREE_TEXT_COMMANDS:
        return arguments
    return [
        f" {arg}" if index and arg.startswith("-") and not arg.startswith("--") and arg not in _SHORT_OPTIONS and len(arg) > 1 else arg
        for index, arg in enumerate(arguments)
    ]


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    words = _free_text_arguments(sys.argv[1:] if argv is None else argv)
    _Parser.searching = bool(words) and words[0] == "search"
    args = parser.parse_args(words)
    if not args.command:
        parser.print_help(sys.stderr)
        return Exit.USAGE
    handlers = {
        "reindex": _reindex,
        "search": _ask,
        "context": _ask,
        "status": _ask,
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
    """Each phase's progress on stderr as it truly is: a redrawn bar on a terminal (each phase
    left on its own line at its end, with its time), sparse lines otherwise, JSON lines with
    `--json`. Phases report their start and their end, so no bar stays short of its total."""

    def __init__(self, stream: TextIO, *, as_json: bool = False) -> None:
        self._stream = stream
        self._json = as_json
        self._tty = stream.isatty() and not as_json
        self._phase = ""
        self._started = 0.0
        self._last: Progress | None = None
        self._last_draw = 0.0
        self._last_quarter = -1

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.phase != self._phase:
            self._finish(now)
            self._phase, self._started, self._last_quarter = progress.phase, now, -1
        self._last = progress
        quarter = 4 * progress.done // progress.total if progress.total else 0
        ended = progress.done >= progress.total
        if self._json:
            if quarter != self._last_quarter or ended:
                self._write_json(progress, now)
        elif self._tty:
            if now - self._last_draw >= 0.1 or ended or self._last_quarter < 0:
                self._stream.write("\r" + self._line(progress, None) + "\x1b[K")
                self._stream.flush()
                self._last_draw = now
        elif quarter != self._last_quarter:
            self._stream.write(self._line(progress, None) + "\n")
        self._last_quarter = quarter

    def _write_json(self, progress: Progress, now: float) -> None:
        record = {"phase": progress.phase, "done": progress.done, "total": progress.total, "seconds": round(now - self._started, 3)}
        if progress.eta_s is not None:
            record["eta_s"] = round(progress.eta_s, 1)
        if progress.order:
            record["order"] = progress.order
        self._stream.write(json.dumps(record) + "\n")

    def _line(self, progress: Progress, elapsed: float | None) -> str:
        from engine.present import duration_text, phase_text

        name = phase_text(progress.phase)
        if progress.total:
            width = 24
            filled = width * min(progress.done, progress.total) // progress.total
            count = f"{'█' * filled}{'░' * (width - filled)} {progress.done:,}/{progress.total:,}"
        else:
            count = "nothing to do" if elapsed is not None else "…"
        if elapsed is not None:
            return f"{name:<12} {count} · {elapsed:.2f} s"
        eta = f" · {duration_text(progress.eta_s)} left" if progress.eta_s is not None and progress.done < progress.total else ""
        return f"{name:<12} {count}{eta}"

    def _finish(self, now: float) -> None:
        """Leave the phase that ended on its own line, as it ended, with the time it took."""
        last = self._last
        if last is None:
            return
        if self._tty:
            self._stream.write("\r" + self._line(last, now - self._started) + "\x1b[K\n")
        elif not self._json and last.total and last.done < last.total:
            self._stream.write(self._line(last, now - self._started) + "\n")
        self._stream.flush()
        self._last = None

    def close(self) -> None:
        self._finish(time.monotonic())


def _reindex(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    with _open(args) as engine:
        bar = _ProgressBar(sys.stderr, as_json=args.json)
        try:
            report = engine.reindex(full=args.full, progress=bar, embed=not args.no_embed)
        finally:
            bar.close()
        status = engine.status()
    total = time.perf_counter() - started
    from engine.present import reindex_to_json

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


# -- search, context, status --------------------------------------------------------------
def _ask(args: argparse.Namespace) -> int:
    """Ask a running Cairn that holds the index open (answers at once), else open it here."""
    ask = _question(args)
    answer = None if args.cold else _asked(args, ask)
    if answer is None:
        answer = _answer_cold(args, ask)
    sys.stdout.write(answer.stdout)
    sys.stdout.flush()
    sys.stderr.write(answer.stderr)
    return answer.code


def _question(args: argparse.Namespace) -> Ask:
    from engine.answers import Ask

    config = None
    if args.config:
        import tomllib

        try:
            config = tomllib.loads(args.config.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{args.config}: {exc}") from exc
    output = "json" if args.json else "text"
    common = {
        "vault": str(args.vault.expanduser().resolve()),
        "shown_vault": str(args.vault),
        "config": config,
        "today": getattr(args, "today", None),
        "no_model": bool(args.no_model),
        "color": _color(args.color),
    }
    if args.command == "status":
        return Ask("status", output=output, **common)  # type: ignore[arg-type]
    if args.command == "context":
        return Ask(
            "context",
            output=output,  # type: ignore[arg-type]
            query=args.question,
            max_tokens=args.max_tokens,
            max_source_tokens=args.max_source_tokens,
            max_entity_tokens=args.max_entity_tokens,
            depth=args.depth,
            top_k=args.top_k,
            **common,  # type: ignore[arg-type]
        )
    if args.vimgrep:
        output = "vimgrep"
    elif args.files:
        output = "files"
    channels = tuple(args.channels)
    if "vectors" not in channels:
        common["no_model"] = True  # load what the query needs: no vectors, no model
    return Ask(
        "search",
        output=output,  # type: ignore[arg-type]
        query=" ".join(args.query).strip(),
        limit=args.limit,
        explain=args.explain,
        raw=args.raw,
        channels=channels,
        typing=args.typing,
        why=args.why,
        graph_weight=args.graph_weight,
        max_hops=args.max_hops,
        graph_seeding=args.graph_seeding,
        **common,  # type: ignore[arg-type]
    )


def _color(choice: str) -> bool:
    """`--color`: always, never, or on a terminal unless NO_COLOR is set (no-color.org) or TERM is dumb."""
    import os

    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


def _asked(args: argparse.Namespace, ask: Ask) -> Answer | None:
    """The answer of a running Cairn that holds this vault's index open, or None (answer alone)."""
    from engine.answers import Answer
    from engine.serve import ask as ask_socket

    vault = Path(ask.vault)
    if not vault.is_dir():
        return None  # the cold path says what is wrong
    asked = ask_socket(_index_dir(args, vault), ask.to_json())
    if asked.refused:
        print(f"note: {asked.note}; answering without it", file=sys.stderr)
    if asked.answer is None:
        return None
    reply = asked.answer
    return Answer(reply["stdout"], reply["stderr"], reply["code"])


def _index_dir(args: argparse.Namespace, vault: Path) -> Path:
    """Where the index is, as `engine.storage.resolve_index_dir` says, without importing the
    storage layer (SQLite) in the usual case of a writable `VAULT/.cairn`: asking a running
    Cairn is a matter of milliseconds, and imports are most of them."""
    import os

    if args.index_dir:
        return Path(args.index_dir).expanduser()
    if os.environ.get("CAIRN_INDEX_DIR"):
        return Path(os.environ["CAIRN_INDEX_DIR"])
    default = vault / ".cairn"
    if default.is_dir() and os.access(default, os.W_OK):
        return default
    from engine.storage import resolve_index_dir

    return resolve_index_dir(vault)


def _answer_cold(args: argparse.Namespace, ask: Ask) -> Answer:
    from engine.answers import answer

    args.no_model = ask.no_model
    with _open(args) as engine:
        return answer(engine, ask)


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

    from engine.present import one_line, watch_line

    stop = threading.Event()
    with _open(args) as engine:

        def on_signal(_signum: int, _frame: object) -> None:
            stop.set()
            engine.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        answering = engine.answer_locally()
        if answering:
            engine.prepare_for_typing()  # what the commands it answers for would otherwise build first
        also = "; `engine search` asks this process" if answering else ""
        print(f"watching {one_line(str(engine.vault))} (ctrl+c stops){also}", file=sys.stderr)
        engine.watch(
            stop,
            lambda batch: print(watch_line(batch), file=sys.stderr, flush=True),
            debounce_ms=args.debounce_ms,
            step_ms=args.step_ms,
            require_writer=True,
        )
    return Exit.OK


if __name__ == "__main__":
    sys.exit(main())
