"""`engine bench --parsers`: each parser stage on growing hostile inputs, in milliseconds per KB.

A stage is linear when its ms/KB stays about the same as the input grows 64-fold; a
quadratic one shows ms/KB growing with the size. Each input is one pathological
pattern repeated (a run of `[`, a word before a URL, 10,000 tasks...). "display" is the
reading both front ends render (engine/vault/markup.py). Stages that
need their inputs prepared (chunks for the snippet, catalog rows for the graph) get
them untimed. The web renderer lives in `ui/`, which the engine never imports; its
numbers come from `python -m ui.web.bench_render`, which uses `run_stages` from here.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

# A stage takes a note's text and returns what to time: a call with its inputs prepared.
Stage = Callable[[str], Callable[[], object]]

DEFAULT_SIZES_KB = (16, 64, 256, 1024)
# A stage that takes longer than this on one input is not run on the larger ones.
_GIVE_UP_S = 20.0
# Small inputs are timed several times (the fastest run counts) to get above timer noise.
_MIN_TIMED_S = 0.2
_MAX_REPEATS = 5


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


# Each pattern gives a text of about `size` characters.
PATTERNS: dict[str, Callable[[int], str]] = {
    "heading padded with spaces": lambda n: _repeat(" ", n, "# Title", "x\n"),
    "word before a URL": lambda n: _repeat("a1", n, "", " http://x.io #tag\n"),
    "run of [": lambda n: _repeat("[", n, "", " alpha\n"),
    "run of [ closed once": lambda n: _repeat("[", n, "", "]\n"),
    "[ then ]": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "run of ![": lambda n: _repeat("![", n, "", " alpha\n"),
    "run of [^, a footnote": lambda n: _repeat("[^", n, "[^1]: a footnote\n\n", " alpha\n"),
    "run of ^[": lambda n: _repeat("^[", n, "", " alpha\n"),
    "run of [<": lambda n: _repeat("[<", n, "", " alpha\n"),
    "lines of [": lambda n: _repeat("[" * 60 + "\n", n),
    "run of [[a|": lambda n: _repeat("[[a|", n, "", " alpha\n"),
    "run of [a](": lambda n: _repeat("[a](", n, "", " alpha\n"),
    "[a]( before blanks": lambda n: _repeat(" ", n, "[a](", "x\n"),
    "run of ](": lambda n: _repeat("](", n),
    "backticks": lambda n: _repeat("` ", n),
    "* and _ runs": lambda n: _repeat("*a_", n),
    "> nesting": lambda n: _repeat(">", n, "", " x\n"),
    "# run": lambda n: _repeat("#", n),
    "table rows": lambda n: _repeat("|a|b|\n", n, "|a|b|\n|-|-|\n"),
    "%% == $ ^ runs": lambda n: _repeat("%%==$$^^~~", n),
    "many links, one line": lambda n: _repeat("[[Note A]] met [[Note B]]. ", n),
    "many tags": lambda n: _repeat("#tag/x ", n),
    "100k lines": lambda n: _repeat("a\n", n),
    "same heading": lambda n: _repeat("## Notes\ntext\n", n),
    "tasks": lambda n: _repeat("- [ ] task\n", n),
    "capitalised words": lambda n: _repeat("Alpha Beta of Gamma's ", n),
    "e-mails and files": lambda n: _repeat("a.b@c.io x/y.md ", n),
    "CJK": lambda n: _repeat("漢字かなカナ", n),
    "combining marks": lambda n: _repeat("e\u0301", n),
    "frontmatter value": lambda n: _repeat("b", n, "---\ntitle: ", "\n---\nbody\n"),
    "one line of words": lambda n: _repeat("word ", n),
}


def _parsed(text: str) -> Any:
    from engine.vault import parse_note

    return parse_note("Bench.md", text)


def _frontmatter(text: str) -> Callable[[], object]:
    from engine.vault.parse import _split_frontmatter

    return lambda: _split_frontmatter(text)


def _code_and_headings(text: str) -> Callable[[], object]:
    from engine.vault.parse import _mask_code

    return lambda: _mask_code(text)


def _links(text: str) -> Callable[[], object]:
    from engine.vault.links import LineIndex as _LineIndex
    from engine.vault.links import find_links as _find_links
    from engine.vault.parse import _mask_code

    masked, _ = _mask_code(text)
    return lambda: _find_links(masked, _LineIndex(masked), 1)


def _parse(text: str) -> Callable[[], object]:
    return lambda: _parsed(text)


def _chunks(text: str) -> Callable[[], object]:
    from engine.chunking import chunk_note

    note = _parsed(text)
    return lambda: chunk_note(note, 80, 16)


def _names(text: str) -> Callable[[], object]:
    from engine.chunking import chunk_note
    from engine.entities import extract_capitalized_words, read_names

    chunks = [chunk.text for chunk in chunk_note(_parsed(text), 80, 16)]

    def run() -> None:
        for chunk in chunks:
            read_names(chunk)
            extract_capitalized_words(chunk)

    return run


def _fulltext_body(text: str) -> Callable[[], object]:
    from engine.entities import displayed_text

    body = _parsed(text).body
    return lambda: displayed_text(body)


def _display(text: str) -> Callable[[], object]:
    from engine.vault.markup import obsidian_markdown, parse_markdown

    md = obsidian_markdown()
    return lambda: parse_markdown(md, text)


def _snippet(text: str) -> Callable[[], object]:
    from engine.catalog import StoredChunk
    from engine.chunking import chunk_note
    from engine.search import evidence

    chunks = [StoredChunk(i, "Bench.md", c, "") for i, c in enumerate(chunk_note(_parsed(text), 80, 16))]

    def run() -> None:
        # Searches keep chunks' cleaned words; a first search of the note starts cold.
        evidence._words.cache_clear()
        evidence._lowered.cache_clear()
        evidence.build_snippet(chunks, matches=lambda w: w.lower().startswith("a"), hint_terms=["a"])

    return run


def _graph(text: str) -> Callable[[], object]:
    from engine.channels.graph.build import NoteRows, note_part
    from engine.folding import entity_key
    from engine.indexer import _prepare
    from engine.lexicon.en import ENGLISH

    pending = _prepare(("Bench.md", 0.0, len(text), text, "", ()), 80, 16)
    rows = NoteRows(
        mentions=list(pending.mentions),
        chunks=[(c.line_start, c.line_end, c.ordinal) for c, _ in pending.chunks],
        links=[(f"{link.target}.md", link.line, link.target, link.property) for link in _parsed(text).links],
    )
    # Every name is taken for a note's title, so every mention's sentence is read too.
    name_to_note = {entity_key(surface): f"note:{surface}.md" for _, surface, _ in pending.mentions}
    notes = {target for target, _, _, _ in rows.links}
    body = (pending.body, pending.body_line_offset)
    return lambda: note_part(pending.info, rows, lambda: body, name_to_note, notes, 3, True, ENGLISH)


STAGES: dict[str, Stage] = {
    "frontmatter": _frontmatter,
    "code and headings": _code_and_headings,
    "links, URLs": _links,
    "parse (all)": _parse,
    "chunks": _chunks,
    "names": _names,
    "full-text body": _fulltext_body,
    "snippet": _snippet,
    "graph contexts": _graph,
    "display (TUI, web)": _display,
}


def _time(run: Callable[[], object]) -> float:
    """Seconds of the fastest of a few runs (one run when it is slow)."""
    best = float("inf")
    spent = 0.0
    for _ in range(_MAX_REPEATS):
        gc.collect()
        started = time.perf_counter()
        run()
        elapsed = time.perf_counter() - started
        best = min(best, elapsed)
        spent += elapsed
        if spent > _MIN_TIMED_S:
            break
    return best


def run_stages(
    stages: Mapping[str, Stage],
    sizes_kb: Sequence[int],
    patterns: Mapping[str, Callable[[int], str]] = PATTERNS,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """ms per KB of every stage on every pattern at every size (None: not run, too slow before).

    Inline tags have no stage of their own: they are timed within "parse (all)".
    """
    table: dict[str, dict[str, list[float | None]]] = {}
    for stage_name, stage in stages.items():
        rows: dict[str, list[float | None]] = {}
        for pattern_name, pattern in patterns.items():
            row: list[float | None] = []
            for size_kb in sizes_kb:
                text = pattern(size_kb * 1024)
                elapsed = _time(stage(text))
                row.append(round(elapsed * 1000 / (len(text) / 1024), 4))
                if elapsed > _GIVE_UP_S:
                    row.extend([None] * (len(sizes_kb) - len(row)))
                    break
            rows[pattern_name] = row
        table[stage_name] = rows
        if log is not None:
            log(f"{stage_name}: done")
    return {"sizes_kb": list(sizes_kb), "ms_per_kb": table, "worst": _worst(table)}


def _at_largest(row: Sequence[float | None]) -> float:
    """ms/KB at the largest size; a pattern given up on ranks above every other."""
    return float("inf") if not row or row[-1] is None else row[-1]


def _worst(table: Mapping[str, Mapping[str, Sequence[float | None]]]) -> dict[str, dict[str, Any]]:
    """Per stage, the pattern with the highest ms/KB at the largest size."""
    worst: dict[str, dict[str, Any]] = {}
    for stage_name, rows in table.items():
        pattern_name = max(rows, key=lambda name: _at_largest(rows[name]))
        row = rows[pattern_name]
        first = row[0]
        growth = None if row[-1] is None or not first else round(row[-1] / first, 2)
        worst[stage_name] = {"pattern": pattern_name, "ms_per_kb": list(row), "growth": growth}
    return worst


def render(result: Mapping[str, Any]) -> str:
    """The slowest pattern of each stage as a table: ms/KB at each size and their growth."""
    sizes = result["sizes_kb"]
    header = f"{'stage':<20} {'slowest input':<28} " + " ".join(f"{f'{s} KB':>9}" for s in sizes) + "   growth"
    lines = [f"load average {result['loadavg']}" if "loadavg" in result else "", header]
    for stage_name, worst in result["worst"].items():
        cells = " ".join(f"{'-' if v is None else f'{v:.3f}':>9}" for v in worst["ms_per_kb"])
        growth = "gave up" if worst["growth"] is None else f"x{worst['growth']:.2f}"
        lines.append(f"{stage_name:<20} {worst['pattern']:<28} {cells}   {growth}")
    lines.append("ms per KB of input; growth = ms/KB at the largest size / at the smallest (1 is linear)")
    return "\n".join(line for line in lines if line) + "\n"


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())


def parse_sizes(text: str) -> tuple[int, ...]:
    """`16,64,256` → (16, 64, 256): input sizes in KB, each at least 1."""
    try:
        sizes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise ValueError(f"expected whole KB separated by commas, got {text!r}")
    return sizes


def main(args: Any, stages: Mapping[str, Stage] = STAGES) -> int:
    """Run the parser benchmark (`engine bench --parsers`) and print it, as JSON or a table."""
    sizes = tuple(args.sizes or DEFAULT_SIZES_KB)

    def log(message: str) -> None:
        print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    load_before = _loadavg()
    result = run_stages(stages, sizes, log=log)
    result = {"loadavg": load_before, "loadavg_end": _loadavg(), "python": sys.version.split()[0], **result}
    payload = json.dumps(result, indent=2, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(payload + "\n", encoding="utf-8")
    sys.stdout.write(payload + "\n" if args.json else render(result))
    return 0
