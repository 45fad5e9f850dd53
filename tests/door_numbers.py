"""Numbers of the door for agents on an indexed vault: abstention, recall, tokens.

    .venv/bin/python tests/door_numbers.py VAULT INDEX_DIR QUERIES QRELS ABSTENTION [--no-model]

prints one JSON object: of the abstention questions (about names the vault lacks), how many
were answered with confident hits; of the labelled questions, how many the door answered
"nothing here" for, and R@5 of the notes the brief answer shows as confident against R@5 of
the ranking (the first five notes a person sees). The door test runs the same functions on
a small vault through a real MCP client.
"""

from __future__ import annotations

import csv
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def read_queries(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["qid"]: row["query"] for row in csv.DictReader(handle, delimiter="\t")}


def read_qrels(path: Path) -> dict[str, set[str]]:
    relevant: dict[str, set[str]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if int(row["grade"]) >= 1:
                relevant.setdefault(row["qid"], set()).add(row["path"])
    return relevant


def recall_at(ranked: Sequence[str], relevant: set[str], depth: int = 5) -> float:
    return len(set(ranked[:depth]) & relevant) / len(relevant) if relevant else 0.0


def abstention(answers: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Of brief search answers to questions about what the vault lacks, those with confident hits."""
    answered = sorted(qid for qid, answer in answers.items() if answer["confident"] > 0)
    return {
        "questions": len(answers),
        "answered_confidently": len(answered),
        "rate": round(len(answered) / len(answers), 4) if answers else 0.0,
        "answered": answered,
    }


def recall(
    answers: Mapping[str, Mapping[str, Any]],
    ranked: Mapping[str, Sequence[str]],
    qrels: Mapping[str, set[str]],
) -> dict[str, Any]:
    """R@5 of the ranking, and of the notes the brief answers present as confident (what an agent may take as the answer)."""
    qids = [qid for qid in answers if qid in qrels]
    ranking = [recall_at(ranked[qid], qrels[qid]) for qid in qids]
    confident = [
        recall_at(
            [hit["path"] for hit in answers[qid]["hits"] if not hit.get("nearest")], qrels[qid]
        )
        for qid in qids
    ]
    said_nothing = sum(1 for qid in qids if answers[qid]["confident"] == 0)
    return {
        "questions": len(qids),
        "recall5_ranking": round(statistics.fmean(ranking), 4) if qids else 0.0,
        "recall5_confident": round(statistics.fmean(confident), 4) if qids else 0.0,
        "said_nothing_here": said_nothing,
    }


def main(argv: Sequence[str]) -> int:
    from engine.api import Engine
    from engine.door import search_answer

    vault, index, queries, qrels_file, abstaining = (Path(a) for a in argv[:5])
    no_model = "--no-model" in argv
    opened = (
        Engine.open(vault, index_dir=index, embedder=None)
        if no_model
        else Engine.open(vault, index_dir=index)
    )
    with opened as engine:
        counter = engine.token_counter()

        def ask(text: str) -> tuple[dict[str, Any], list[str]]:
            results = engine.search(text, limit=10, as_you_type=False)
            return search_answer(results, detail="brief", counter=counter, max_tokens=None), [
                h.path for h in results.hits
            ]

        invented = {qid: ask(text)[0] for qid, text in read_queries(abstaining).items()}
        real: dict[str, dict[str, Any]] = {}
        ranked: dict[str, list[str]] = {}
        for qid, text in read_queries(queries).items():
            real[qid], ranked[qid] = ask(text)
    out = {"abstention": abstention(invented), "real": recall(real, ranked, read_qrels(qrels_file))}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv[1:]))
