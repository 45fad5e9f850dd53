"""What a half-embedded vault ranks: the vector channel weighed by the share it covers, or not.

Copies a vault, indexes it without vectors, embeds a share of its notes (chosen by a hash
of the path: embedding order is by modification time, which a copied vault does not keep),
and runs labelled queries with the confidence stage's share weighting on and off.

    python docs/experiments/partial_embedding.py VAULT QUERIES QRELS [--shares 0.1 0.22 0.5 1]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from engine.api import Engine
from engine.config import ConfidenceConfig, EngineConfig
from engine.tools.eval import evaluate, load_qrels, load_queries


def _picked(path: str, share: float) -> bool:
    return int(hashlib.sha256(path.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault", type=Path)
    parser.add_argument("queries", type=Path)
    parser.add_argument("qrels", type=Path)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.1, 0.22, 0.5, 1.0])
    args = parser.parse_args()
    queries, qrels = load_queries(args.queries), load_qrels(args.qrels)
    weighed = EngineConfig()
    unweighed = replace(weighed, fusion=replace(weighed.fusion, confidence=ConfidenceConfig(complete_share=0.0)))
    print("share  embedded  weighed R@5/MRR   unweighed R@5/MRR   full text alone R@5/MRR")
    for share in args.shares:
        with tempfile.TemporaryDirectory() as tmp:
            vault = Path(tmp) / "vault"
            shutil.copytree(args.vault, vault, ignore=shutil.ignore_patterns(".cairn", ".trash"))
            with Engine.open(vault, index_dir=Path(tmp) / "index") as engine:
                engine.reindex(embed=False)
                paths = [path for path, _title in engine.notes() if _picked(path, share)]
                if paths:
                    engine.embed_pending(paths=paths)
                status = engine.status()
            rows = []
            for config in (weighed, unweighed):
                with Engine.open(vault, config, index_dir=Path(tmp) / "index") as engine:
                    rows.append(evaluate(engine, queries, qrels))
            alone = rows[0].channels["fulltext"]
            print(
                f"{share:5.2f}  {status.embedded_chunks / max(1, status.chunks):7.0%}  "
                + "   ".join(f"{r.hybrid['R@5']:.3f} / {r.hybrid['MRR']:.3f}" for r in rows)
                + f"   {alone['R@5']:.3f} / {alone['MRR']:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
