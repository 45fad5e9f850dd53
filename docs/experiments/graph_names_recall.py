"""Recall of names: which real names a vault's graph still recognises, and how often its people's
and organisations' notes are named in plain text. docs/GRAPH.md reports what this prints.

The names are docs/experiments/graph_names_recall.tsv: name vertices drawn at random from each
vault's graph before names needed evidence (commit a4c3259), each judged by reading it in its
sentence (1: a name, 0: not); a judged name counts as recognised when a query made of it alone
names one entity of exactly that text. The notes are those filed in the given folders:

    .venv/bin/python docs/experiments/graph_names_recall.py VAULT INDEX_DIR --label brainbench --folders people,companies
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.api import Engine
from engine.entities import normalize

RECALL = Path(__file__).with_name("graph_names_recall.tsv")
_MENTIONS = 1  # the graph's relation code of a plain-text mention (engine/channels/graph/build.py)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("vault", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--label", required=True, help="the vault's name in the recall table")
    parser.add_argument("--folders", default="", help="folders of people's and organisations' notes, comma-separated")
    args = parser.parse_args()
    rows = [line.split("\t") for line in RECALL.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    names = [name for vault, name, judged in rows if vault == args.label and judged.strip() == "1"]
    folders = tuple(f"{folder.strip().strip('/')}/" for folder in args.folders.split(",") if folder.strip())
    with Engine.open(args.vault, index_dir=args.index_dir, embedder=None) as engine:
        engine.reindex(embed=False)
        missed = []
        for name in names:
            whole = [m for m in engine.plan(name).entities if normalize(m.surface) == normalize(name)]
            if not whole:
                missed.append(name)
        print(f"{args.label}: {len(names) - len(missed)} of {len(names)} judged names recognised; missed: {missed}")
        if not folders:
            return
        engine.prepare_for_edits()  # reads the notes' parts of a saved graph
        build = engine._graph._build  # an experiment reads the notes' parts as built, not through the façade
        assert build is not None
        titled = {f"note:{path}" for path, _title in engine.notes() if path.startswith(folders)}
        mentioned: dict[str, set[str]] = {key: set() for key in titled}
        for path in build.parts:
            for a, b, relation in build.parts[path].edges:
                if relation != _MENTIONS:
                    continue
                for me, other in ((a, b), (b, a)):
                    if other in titled and me == f"note:{path}":
                        mentioned[other].add(path)
        named = sum(1 for paths in mentioned.values() if paths)
        edges = sum(len(paths) for paths in mentioned.values())
        print(f"  {len(titled)} notes in {', '.join(folders)}: {named} named in another note's text, {edges} notes naming them")


if __name__ == "__main__":
    main()
