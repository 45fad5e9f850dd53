"""A lone capitalised word that is a note's title is a mention of that note; other lone words are nothing."""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine
from engine.config import EngineConfig, GraphConfig


def _vault(root: Path) -> Path:
    root.mkdir()
    (root / "Neighbours.md").write_text("# Neighbours\n\nAn Australian television soap opera.\n", "utf-8")
    (root / "Kylie Minogue.md").write_text(
        "# Kylie Minogue\n\nShe became famous playing Charlene in Neighbours, filmed in Melbourne.\n", "utf-8"
    )
    (root / "Melbourne Notes.md").write_text("# Melbourne Notes\n\nTrams and coffee.\n", "utf-8")
    return root


def test_a_title_word_links_the_notes_in_the_graph(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        neighbors = {n.name: n for n in eng.neighbors("Kylie Minogue.md")}
        assert "Neighbours" in neighbors and neighbors["Neighbours"].path == "Neighbours.md"
        assert "Melbourne" not in neighbors  # a lone word that is no note's title makes no vertex
        hits = eng.search("who played in Neighbours", channels=["graph"], as_you_type=False).hits
        assert "Kylie Minogue.md" in [h.path for h in hits]


def test_title_words_can_be_turned_off(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    config = EngineConfig(graph=GraphConfig(title_words=False))
    with Engine.open(vault, config, index_dir=tmp_path / "index", embedder=None) as eng:
        eng.reindex(embed=False)
        assert "Neighbours" not in {n.name for n in eng.neighbors("Kylie Minogue.md")}
