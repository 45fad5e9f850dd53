"""The graph's best answer keeps a place in the top five (fusion.graph_kept), and `--why` says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine
from engine.config import EngineConfig, FusionConfig

QUESTION = "Which year was the producer of the Natural Born Killers soundtrack born?"


def _vault(root: Path) -> Path:
    """A second hop only the graph reaches (the producer's note shares no word with the
    question) among seven notes that share many."""
    root.mkdir()
    (root / "Natural Born Killers soundtrack.md").write_text(
        "# Natural Born Killers soundtrack\n\nThe soundtrack of the film Natural Born Killers was produced by "
        "[[Trent Reznor]] in 1994.\n",
        encoding="utf-8",
    )
    (root / "Trent Reznor.md").write_text(
        "# Trent Reznor\n\nAn American musician and composer from Pennsylvania, who leads Nine Inch Nails.\n",
        encoding="utf-8",
    )
    for i in range(1, 8):
        (root / f"Film {i}.md").write_text(
            f"# Film {i}\n\nA film soundtrack review: the killers in this film, the producer of the soundtrack, "
            "and the year of its birth as a film.\n",
            encoding="utf-8",
        )
    return root


@pytest.mark.parametrize("kept", [0, 2])
def test_the_graph_s_best_answer_keeps_the_fifth_place(tmp_path: Path, kept: int) -> None:
    # A light graph weight sinks its answer below the fold, as a long question's coverage factor does.
    fusion = FusionConfig(graph_kept=kept, weights={"fulltext": 1.0, "vectors": 1.0, "graph": 0.1})
    with Engine.open(_vault(tmp_path / "vault"), EngineConfig(fusion=fusion), index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        results = engine.search(QUESTION, limit=8, as_you_type=False)
        paths = [hit.path for hit in results.hits]
        assert results.trace.rankings["graph"][0] == "Trent Reznor.md"
        if not kept:
            assert "Trent Reznor.md" not in paths[:5], paths
            return
        assert paths[4] == "Trent Reznor.md", paths
        moved = engine.why(QUESTION, "Trent Reznor.md", limit=8)
        down = engine.why(QUESTION, paths[5], limit=8)
    assert moved.rank == 5
    assert any(r.startswith("the graph ranks it in its first 2") for r in moved.reasons), moved.reasons
    assert any(r.startswith("place 5 is kept for the graph's best answer, Trent Reznor") for r in down.reasons), down.reasons
