"""Keystrokes with a slip in the word being typed, timed in process on a bench index.

docs/BENCHMARKS.md, "What each part costs", reports what this prints. Each keystroke
of each query is searched as the search box does (the last word a prefix), every prefix
for the first time, after `prepare_for_typing`:

    engine bench --notes 10000 ... --workdir W10K
    .venv/bin/python docs/experiments/typo_keystrokes.py W10K
    .venv/bin/python docs/experiments/typo_keystrokes.py W10K --absent
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from engine.api import Engine

# Words the synthetic vault holds, typed with a slip.
HELD = ["kestrel rolluot", "backup of the potral", "meeting about the relaese", "orchid protal", "project staus"]
# Words it never holds: every lookup runs and finds nothing.
ABSENT = [
    "meeting about the kikcoff agneda",
    "roadmap for the mgiration",
    "notes on perfromance",
    "retro about the relaese chekclist",
    "budget for the infrastrcuture",
]


def main(workdir: Path, queries: list[str]) -> None:
    engine = Engine.open(workdir / "vault", index_dir=workdir / "index")
    engine.prepare_for_typing(wait=True)
    engine.search("warm up query", as_you_type=True)
    timed: list[tuple[float, str, str]] = []
    for query in queries:
        for end in range(1, len(query) + 1):
            started = time.perf_counter()
            found = engine.search(query[:end], as_you_type=True)
            timed.append(((time.perf_counter() - started) * 1000, query[:end], found.reading.typed_as))
    engine.close()
    times = sorted(ms for ms, _, _ in timed)
    p95 = times[max(0, int(0.95 * len(times)) - 1)]
    print(f"{len(times)} keystrokes: p50 {statistics.median(times):.1f}, p95 {p95:.1f}, max {times[-1]:.1f} ms")
    for ms, prefix, typed_as in sorted(timed, reverse=True)[:5]:
        print(f"  {ms:5.1f} ms  {prefix!r}" + (f" (by meaning as {typed_as!r})" if typed_as else ""))


if __name__ == "__main__":
    main(Path(sys.argv[1]), ABSENT if "--absent" in sys.argv[2:] else HELD)
