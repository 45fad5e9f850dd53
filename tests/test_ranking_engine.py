"""The ranking pipeline through the engine, on planted vaults: stages on and off, the
structure pack's switch, folder priors, a half-embedded vault, lists as long as asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine
from engine.config import EngineConfig, SearchConfig
from engine.embedder import HashEmbedder
from engine.errors import ConfigError
from engine.search.ranking import STAGE_NAMES


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _many(root: Path, count: int = 80) -> Path:
    """Notes that share a few words, so every channel finds many of them."""
    topics = ["harbour", "lantern", "orchard", "glacier", "meadow", "quarry", "violin", "compass"]
    return _write(
        root,
        {
            f"Notes/Note {i:03}.md": f"# Note {i:03}\n\nA {topics[i % 8]} and a {topics[(i * 3) % 8]} seen on day {i}.\n"
            for i in range(count)
        },
    )


def test_a_list_is_as_long_as_asked_while_the_vault_has_more_notes(tmp_path: Path) -> None:
    with Engine.open(_many(tmp_path / "v"), index_dir=tmp_path / "i", embedder=HashEmbedder()) as engine:
        engine.reindex()
        short = engine.search("harbour lantern", limit=10, as_you_type=False)
        long = engine.search("harbour lantern", limit=75, as_you_type=False)
        assert len(long.hits) == 75
        # A longer list never reorders the top: its first notes are the short list's.
        assert [h.path for h in long.hits[:10]] == [h.path for h in short.hits]
        # The notes past what fusion counts sit under the confident cut, with their evidence.
        assert long.confident <= 60 and all(h.channels for h in long.hits[long.confident :])
        alone = engine.search("harbour lantern", limit=70, channels=["vectors"], as_you_type=False)
        assert len(alone.hits) == 70


def test_an_archived_copy_ranks_below_the_live_note_by_the_folder_prior(tmp_path: Path) -> None:
    vault = _write(
        tmp_path / "v",
        {
            "Plan.md": "# Plan\n\nThe launch plan for the ferry route.\n",
            "Archive/Plan 2023.md": "# Plan 2023\n\nThe launch plan for the ferry route, the ferry route, launch.\n",
            "Other.md": "# Other\n\nNothing here.\n",
        },
    )
    query = "ferry route launch"
    with Engine.open(vault, index_dir=tmp_path / "i", embedder=HashEmbedder()) as engine:
        engine.reindex()
        assert engine.search(query, as_you_type=False).hits[0].path == "Archive/Plan 2023.md"
    config = EngineConfig(search=SearchConfig(folder_boosts={"Archive/": 0.5}))
    with Engine.open(vault, config, index_dir=tmp_path / "i", embedder=HashEmbedder()) as engine:
        results = engine.search(query, as_you_type=False)
        assert [h.path for h in results.hits[:2]] == ["Plan.md", "Archive/Plan 2023.md"]
        folders = results.trace.record("folders")
        assert folders is not None and "Archive/ × 0.5" in folders.said[0]
        # The note the query names by its title is still first.
        assert engine.search("Plan 2023", as_you_type=False).hits[0].path == "Archive/Plan 2023.md"


def test_a_bad_folder_boost_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError):
        EngineConfig.from_dict({"search": {"folder_boosts": {"Archive/": "half"}}})
    with pytest.raises(ConfigError):
        EngineConfig.from_dict({"search": {"folder_boosts": "Archive/"}})


def test_the_structure_pack_switches_itself_on_for_a_vault_that_files_people(tmp_path: Path) -> None:
    people = _write(
        tmp_path / "people",
        {
            "People/Ada Park.md": "# Ada Park\n\nAda attended [[Kickoff]].\n",
            "Meetings/Kickoff.md": "# Kickoff\n\nAttendees: [[Ada Park]].\n",
            "Plugins/Canvas.md": "# Canvas\n\nA canvas plugin.\n",
        },
    )
    plain = _write(
        tmp_path / "plain",
        {"Plugins/Canvas.md": "# Canvas\n\nA canvas plugin.\n", "Editing/Tables.md": "# Tables\n\nTables and plugins.\n"},
    )
    with Engine.open(people, index_dir=tmp_path / "i1", embedder=None) as engine:
        engine.reindex(embed=False)
        assert engine.status().structure.startswith("on")
        assert engine.search("who attended the Kickoff", as_you_type=False).trace.record("structure") is not None
    with Engine.open(plain, index_dir=tmp_path / "i2", embedder=None) as engine:
        engine.reindex(embed=False)
        assert engine.status().structure.startswith("off")
        # A plural that names a folder in a how-do-I question asks for nothing here.
        results = engine.search("how do I install plugins", as_you_type=False)
        assert results.trace.record("structure") is None and not results.asked_kind.label


def test_a_half_embedded_vault_weighs_its_vectors_by_what_they_cover(tmp_path: Path) -> None:
    with Engine.open(_many(tmp_path / "v", 40), index_dir=tmp_path / "i", embedder=HashEmbedder()) as engine:
        engine.reindex(embed=False)
        engine.embed_pending(paths=[f"Notes/Note {i:03}.md" for i in range(10)])
        record = engine.search("harbour", as_you_type=False).trace.record("confidence")
        assert record is not None and record.weights["vectors"] == pytest.approx(0.25)
        engine.embed_pending()
        record = engine.search("harbour", as_you_type=False).trace.record("confidence")
        assert record is not None and "vectors" not in record.weights


def test_every_stage_can_be_switched_off_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    with Engine.open(_many(tmp_path / "v", 20), index_dir=tmp_path / "i", embedder=HashEmbedder()) as engine:
        engine.reindex()
        for stage in STAGE_NAMES:
            results = engine.search("harbour lantern", stages_off=[stage], as_you_type=False)
            assert results.trace.record(stage) is None and results.hits
        with pytest.raises(ConfigError):
            engine.search("harbour", stages_off=["bridge"])


def test_a_title_typed_with_a_slip_comes_first_in_the_box_and_the_command_line(tmp_path: Path) -> None:
    vault = _write(
        tmp_path / "v",
        {
            "Graph view.md": "# Graph view\n\nThe graph view draws notes as dots.\n",
            "Glossary.md": "# Glossary\n\nGraph: a view of links. Graph view: see there. A graph, a view, graph view.\n",
            "Tables.md": "# Tables\n\nRows and columns.\n",
        },
    )
    with Engine.open(vault, index_dir=tmp_path / "i", embedder=HashEmbedder()) as engine:
        engine.reindex()
        for typing in (True, False):
            results = engine.search("grph view", as_you_type=typing)
            assert results.reading.corrections == (("grph", "graph"),)
            assert results.hits[0].path == "Graph view.md", typing
