"""Write, then find, through the door: p50/p95 from a write tool's call to a search that finds the text.

    .venv/bin/python tests/door_write_bench.py --notes 1000 [--no-model] [--writes 20] [--workdir W]

Generates the benchmark's synthetic vault (engine/tools/synth.py), indexes it without
embedding (the server embeds what a write changes, as it would), starts `cairn mcp VAULT
--write --no-index` and, through the MCP SDK's client over stdio, alternates `append` (to a
seeded-random note) and `create_note`, each followed by a `search` for the new made-up word.
The time is from sending the write to the search's answer holding the note first. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))], 1)


def run(notes: int, writes: int, no_model: bool, workdir: Path) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from engine.api import Engine
    from engine.tools.synth import SynthSpec, generate

    vault, index = workdir / "vault", workdir / "index"
    if not vault.exists():
        generate(vault, SynthSpec(notes=notes, seed=42))
    started = time.perf_counter()
    with Engine.open(vault, index_dir=index, embedder=None) as engine:
        engine.reindex(embed=False)
        paths = [path for path, _title in engine.notes()]
    index_s = time.perf_counter() - started
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "app",
            "mcp",
            str(vault),
            "--index-dir",
            str(index),
            "--no-index",
            "--write",
            *(["--no-model"] if no_model else []),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(workdir / "config")},
        cwd=str(ROOT),
    )
    rng = random.Random(48 + os.getpid())  # new words each run: a reused workdir holds the last run's
    latencies: dict[str, list[float]] = {"append": [], "create_note": []}
    unsearchable = 0

    async def main() -> None:
        nonlocal unsearchable
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool(
                "search", {"query": "warm up"}
            )  # the first search loads the tables
            for number in range(writes):
                word = (
                    "qz"
                    + "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4))
                    + f"{number}x"
                )
                if number % 2 == 0:
                    tool, target = "append", rng.choice(paths)
                    arguments = {"path": target, "text": f"A note on the {word} rollout."}
                else:
                    title = f"Door write {os.getpid()}-{number}"  # a new title each run: the workdir may be reused
                    tool, target = "create_note", f"Inbox/{title}.md"
                    arguments = {
                        "title": title,
                        "folder": "Inbox",
                        "text": f"# {title}\n\nThe {word} plan.\n",
                    }
                sent = time.perf_counter()
                written = await session.call_tool(tool, arguments)
                found = await session.call_tool("search", {"query": word, "limit": 3})
                elapsed = (time.perf_counter() - sent) * 1000
                answer = json.loads(written.content[0].text)  # type: ignore[union-attr]
                hits = json.loads(found.content[0].text)["hits"]  # type: ignore[union-attr]
                if not answer["searchable"]["words"] or not hits or hits[0]["path"] != target:
                    unsearchable += 1
                latencies[tool].append(elapsed)

    anyio.run(main)
    every = latencies["append"] + latencies["create_note"]
    return {
        "notes": notes,
        "model": not no_model,
        "index_s_lexical": round(index_s, 1),
        "writes": len(every),
        "not_found_at_once": unsearchable,
        "write_to_find_ms": {
            "p50": _percentile(every, 0.5),
            "p95": _percentile(every, 0.95),
            "max": round(max(every), 1),
        },
        "by_tool_ms": {
            tool: {"p50": _percentile(times, 0.5), "p95": _percentile(times, 0.95)}
            for tool, times in latencies.items()
            if times
        },
        "load": list(os.getloadavg()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--no-model", action="store_true")
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="door-bench-"))
    print(json.dumps(run(args.notes, args.writes, args.no_model, workdir), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
