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


# Each identifier is written in one note; the other notes repeat the sentence around it.
IDENTIFIERS = {
    "camel case": ("FeatureCollection", "the FeatureCollection refactor"),
    "file name": ("ferry_timetable.xlsx", "the ferry_timetable.xlsx sheet"),
    "path": ("src/harbour/merge.py", "the src/harbour/merge.py change"),
    "url": ("https://example.org/lantern-guide", "the https://example.org/lantern-guide page"),
    "e-mail": ("quay-ops@example.org", "quay-ops@example.org"),
}


def _identifier_vault(root: Path) -> Path:
    files = {
        f"Notes/Refactor {i:02}.md": (
            f"# Refactor {i:02}\n\nNotes about the harbour refactor, the refactor plan and the refactor "
            f"review; the sheet, the change and the page for the harbour team, day {i}.\n"
        )
        for i in range(30)
    }
    for kind, (identifier, _) in IDENTIFIERS.items():
        files[f"Written/{kind.title()} note.md"] = f"# {kind.title()} note\n\nOne line says {identifier} once.\n"
    return _write(root, files)


@pytest.mark.parametrize("with_model", [False, True], ids=["no model", "model"])
def test_an_identifier_in_a_sentence_brings_the_note_that_writes_it_into_the_top_three(
    tmp_path: Path, with_model: bool
) -> None:
    from engine.embedder import load_default_embedder

    embedder = load_default_embedder() if with_model else None
    with Engine.open(_identifier_vault(tmp_path / "v"), index_dir=tmp_path / "i", embedder=embedder) as engine:
        engine.reindex()
        for kind, (identifier, phrase) in IDENTIFIERS.items():
            note = f"Written/{kind.title()} note.md"
            for query in (identifier, f"find the notes about {phrase} for the harbour team review"):
                results = engine.search(query, limit=10, as_you_type=False)
                top = [hit.path for hit in results.hits[:3]]
                assert note in top, (kind, query, top)
                record = results.trace.record("navigation")
                assert (record is not None and any(identifier in said for said in record.said)) or query == identifier


def test_an_identifier_many_notes_write_names_none_of_them(tmp_path: Path) -> None:
    files = {f"N{i}.md": f"# N{i}\n\nThe SharedWidget and the harbour, day {i}.\n" for i in range(6)}
    with Engine.open(_write(tmp_path / "v", files), index_dir=tmp_path / "i", embedder=None) as engine:
        engine.reindex()
        record = engine.search("notes on the SharedWidget harbour", limit=10, as_you_type=False).trace.record("navigation")
        assert record is not None and not record.floors
