"""The `engine bench` options: standard library only, so the CLI builds its parser without
importing the benchmark (numpy, the model's runtime) on every command."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["SERVE_QUERIES", "add_arguments"]

# How many queries the serving phase types key by key, by default.
SERVE_QUERIES = 24


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `engine bench` options (shared by the CLI and `python -m engine.tools.bench`)."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--notes", type=int, default=1000, help="generate a synthetic vault of N notes (default 1000)")
    source.add_argument("--vault", type=Path, help="benchmark a copy of a real vault instead")
    parser.add_argument("--seed", type=int, default=42, help="seed of the synthetic vault (default 42)")
    parser.add_argument("--no-embed", action="store_true", help="skip embedding (lexical and graph only); vectors off")
    parser.add_argument(
        "--project-embed", action="store_true",
        help="with --no-embed: still load the model to time it on a sample and project the embedding phase",
    )
    parser.add_argument("--embed-notes", type=int, help="embed only K seeded-random notes (smoke tests)")
    parser.add_argument(
        "--fill-vectors", action="store_true",
        help="give the chunks not embedded deterministic stand-in vectors: a full-size vector index, reported as such",
    )
    parser.add_argument(
        "--raw-sample", type=int, default=0, metavar="N",
        help="time the bare model on a seeded sample of N of the embedded texts (default: all of them)",
    )
    parser.add_argument(
        "--queries", type=int, default=SERVE_QUERIES,
        help=f"how many queries to type key by key (default {SERVE_QUERIES})",
    )
    parser.add_argument("--no-watch", action="store_true", help="skip the file-watcher latency measurement")
    parser.add_argument("--workdir", type=Path, help="where the vault and index go (kept); default a temp dir")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    parser.add_argument(
        "--parsers", action="store_true",
        help="instead: time each parser stage on growing hostile inputs (ms per KB, linear when flat)",
    )
    parser.add_argument(
        "--sizes", type=_sizes, metavar="KB,KB,...",
        help="with --parsers: input sizes in KB (default 16,64,256,1024)",
    )
    parser.add_argument(
        "--answers", action="store_true",
        help="instead: time `engine search` from a fresh process, answered by a running engine watch over its "
        "socket and by opening the index itself, beside ripgrep on the same vault and queries",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", type=Path, help="also write the JSON result to FILE")


def _sizes(text: str) -> tuple[int, ...]:
    from engine.tools.bench_parsers import parse_sizes  # stdlib-only module

    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
