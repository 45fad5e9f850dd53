"""The web renderer on the parser benchmark's hostile inputs: `python -m ui.web.bench_render`.

`engine bench --parsers` cannot time the note page's renderer (the engine never imports
a front end), so this runs the same patterns and sizes through `render_note` and prints
the same table: ms per KB at each size, about constant when rendering is linear.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from engine.tools.bench_parsers import main as bench_main
from engine.tools.bench_parsers import parse_sizes
from ui.web.render import LinkTable, render_note


def _render(text: str) -> Callable[[], object]:
    links = LinkTable()
    return lambda: render_note(text, path="Bench.md", links=links)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def main(argv: Sequence[str] | None = None) -> int:
    """Time the web renderer on each hostile pattern and print the table (or JSON)."""
    parser = argparse.ArgumentParser(prog="python -m ui.web.bench_render", description=__doc__)
    parser.add_argument("--sizes", type=_sizes, metavar="KB,KB,...", help="input sizes in KB (default 16,64,256,1024)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", help="also write the JSON result to FILE")
    return bench_main(parser.parse_args(argv), {"web note page": _render})


if __name__ == "__main__":
    sys.exit(main())
