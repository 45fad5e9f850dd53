"""Late interaction (MaxSim over MiniLM's token vectors), measured offline; not in the engine.

docs/QUALITY.md, "Late interaction over MiniLM's token vectors (issue 16, a sixteenth
round)", reports what this prints. For each judged query it runs the engine's hybrid
search, then scores candidate notes ColBERT-style with the default model's contextual
token vectors: each query word piece (punctuation left out) takes its best cosine
against the note's word pieces, and the note's score is the mean of those, in its best
150-word window (windows step 120 words; frontmatter left out). Three ways to use it:

- `rerank`: the hybrid's first K notes re-ordered by RRF (k 10) of their hybrid rank and
  their MaxSim rank, MaxSim weighted w; on every query or only on those that name no
  note (`noseed`);
- `vec head`: the vector channel's first N re-ordered by MaxSim, the trace re-fused;
- `late w`: a fourth list in fusion, the full-text and vector channels' first 20 ordered
  by MaxSim, weighted w times the vector channel's weight;
- `slots w`: as `rerank`, but the hybrid's first 20 that the graph voted for (in its
  counted depth) or that a title floor put there keep their places; the others are
  re-ordered among the places left.

It reads the engine's private embedder (its tokenizer and ONNX session): an experiment,
not an interface.

    .venv/bin/engine reindex VAULT --index-dir DIR
    .venv/bin/python docs/experiments/late_interaction.py VAULT QUERIES QRELS DIR
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine.api import Engine
from engine.search.fusion import refuse
from engine.tools.eval import load_qrels, load_queries, mean_metrics, query_metrics

WINDOW, STEP = 150, 120


def main(vault: Path, queries: Path, qrels_path: Path, index_dir: Path) -> None:
    engine = Engine.open(vault, index_dir=index_dir)
    embedder = engine._embedder
    tokenizer, session = embedder._tokenizer, embedder._session
    fusion = engine.config.fusion

    def token_vectors(text: str) -> tuple[np.ndarray, list[str]]:
        encoding = tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {k: v for k, v in feeds.items() if k in embedder._input_names})[0][0][1:-1]
        return hidden / np.clip(np.linalg.norm(hidden, axis=1, keepdims=True), 1e-9, None), encoding.tokens[1:-1]

    windows: dict[str, list[np.ndarray]] = {}
    encoded = [0, 0.0]  # windows encoded, seconds spent encoding them

    def note_windows(path: str) -> list[np.ndarray]:
        if path not in windows:
            started = time.perf_counter()
            text = (vault / path).read_text(encoding="utf-8", errors="replace")
            words = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S).split() or ["empty"]
            windows[path] = [token_vectors(" ".join(words[i : i + WINDOW]))[0] for i in range(0, len(words), STEP)]
            encoded[0] += len(windows[path])
            encoded[1] += time.perf_counter() - started
        return windows[path]

    qrels = load_qrels(qrels_path)
    results: dict[str, list[dict[str, float]]] = {}
    per_query_windows: list[int] = []

    def add(name: str, ranked: list[str], grades: dict[str, int]) -> None:
        results.setdefault(name, []).append(query_metrics(ranked, grades))

    for qid, text in load_queries(queries):
        grades = dict(qrels.get(qid, {}))
        if not any(grade > 0 for grade in grades.values()):
            continue
        found = engine.search(text, limit=100, as_you_type=False)
        trace, hits = found.trace, [hit.path for hit in found.hits]
        add("hybrid", hits, grades)
        query, pieces = token_vectors(text)
        query = query[[i for i, piece in enumerate(pieces) if re.search(r"\w", piece)] or list(range(len(pieces)))]

        def maxsim(path: str, query: np.ndarray = query) -> float:
            return max(float((query @ w.T).max(axis=1).mean()) for w in note_windows(path))

        top = hits[:20]
        score = {path: maxsim(path) for path in top}
        per_query_windows.append(sum(len(note_windows(path)) for path in top))
        by_maxsim = {path: i for i, path in enumerate(sorted(top, key=lambda p: -score[p]))}
        for weight in (1.0, 2.0):
            reranked = sorted(top, key=lambda p: -(1 / (10 + hits.index(p)) + weight / (10 + by_maxsim[p])))
            add(f"rerank top20 w{weight:g}", reranked + hits[20:], grades)
            add(f"rerank top20 w{weight:g} noseed", hits if found.recognized_entities else reranked + hits[20:], grades)
        graph_depth = fusion.depths.get("graph", len(trace.rankings.get("graph", ())))
        kept = set(trace.rankings.get("graph", ())[:graph_depth]) | set(trace.floors)
        free = [path for path in top if path not in kept]
        by_maxsim_free = {path: i for i, path in enumerate(sorted(free, key=lambda p: -score[p]))}
        for weight in (1.0, 2.0):
            moved = iter(sorted(free, key=lambda p: -(1 / (10 + hits.index(p)) + weight / (10 + by_maxsim_free[p]))))
            add(f"slots w{weight:g}", [path if path in kept else next(moved) for path in top] + hits[20:], grades)
        vectors = list(trace.rankings.get("vectors", ()))
        fulltext = list(trace.rankings.get("fulltext", ()))
        head = vectors[:30]
        if head:
            reordered = sorted(head, key=lambda p: -maxsim(p)) + vectors[30:]
            again = replace(trace, rankings={**trace.rankings, "vectors": tuple(reordered)})
            add("vec head30", [p for p, _ in refuse(again, fusion)], grades)
        else:
            add("vec head30", hits, grades)
        candidates = list(dict.fromkeys(fulltext[:20] + vectors[:20]))
        late = tuple(sorted(candidates, key=lambda p: -maxsim(p)))
        for weight in (0.5, 1.0):
            if not late:
                add(f"late w{weight:g}", hits, grades)
                continue
            weights = {**trace.weights, "late": weight * fusion.weights.get("vectors", 1.0)}
            again = replace(trace, rankings={**trace.rankings, "late": late}, weights=weights)
            add(f"late w{weight:g}", [p for p, _ in refuse(again, fusion)], grades)
    engine.close()
    for name, rows in results.items():
        m = mean_metrics(rows)
        print(f"{name:24s} R@5 {m['R@5']:.4f}  MRR {m['MRR']:.4f}  nDCG@10 {m['nDCG@10']:.4f}")
    per_window = 1000 * encoded[1] / max(encoded[0], 1)
    mean_windows = sum(per_query_windows) / max(len(per_query_windows), 1)
    print(
        f"encoding a window: {per_window:.1f} ms; the hybrid's first 20 notes hold {mean_windows:.1f} windows,"
        f" so {per_window * mean_windows:.0f} ms a query without stored token vectors"
    )


if __name__ == "__main__":
    main(*(Path(arg) for arg in sys.argv[1:5]))
