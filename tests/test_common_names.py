"""A title that is also a common word names its note only when the query says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import Engine
from engine.config import EngineConfig, GraphConfig
from engine.tools.cli import main

# 44 notes use the word "settings" and the tag #plugin; one note is titled Settings, one with a word no other uses.
NOTES = 44


def _vault(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "Settings.md").write_text("# Settings\n\nEvery option, grouped by pane.\n", encoding="utf-8")
    (root / "Kubernetes.md").write_text("# Kubernetes\n\nHow the cluster runs.\n", encoding="utf-8")
    (root / "Config folder.md").write_text(
        "# Config folder\n\nA hidden folder inside the vault holds the settings and the plugins.\n", encoding="utf-8"
    )
    for number in range(NOTES):
        (root / f"Topic {number}.md").write_text(
            f"---\ntags: [plugin]\n---\n# Topic {number}\n\nThis plugin has its own settings pane, see [[Settings]].\n",
            encoding="utf-8",
        )
    return root


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("names")
    opened = Engine.open(_vault(base / "vault"), index_dir=base / "index", embedder=None)
    opened.reindex()
    yield opened
    opened.close()


@pytest.mark.parametrize(
    ("query", "named", "because"),
    [
        ("Settings", ["Settings"], "written as a name"),
        ("settings", ["settings"], "the whole query"),
        ("where the Settings are kept", ["Settings"], "written as a name"),
        ("deploy kubernetes cluster", ["kubernetes"], "a rare word in the vault"),
        ("which plugin has a pane", ["plugin"], "a tag"),  # a tag is written in lower case
    ],
)
def test_a_name_the_query_says(engine: Engine, query: str, named: list[str], because: str) -> None:
    results = engine.search(query, limit=5, as_you_type=False)
    assert list(results.recognized_entities) == named
    assert results.named_because == tuple((text, because) for text in named)
    assert results.not_names == ()


def test_a_common_lowercase_word_is_not_a_name(engine: Engine) -> None:
    results = engine.search("folder where settings and plugins are stored", limit=5, as_you_type=False)
    assert results.recognized_entities == ()
    [(text, why)] = results.not_names
    assert text == "settings" and why.startswith("a common word (in ") and why.endswith("% of notes)")
    # Not the hub's neighbours: the note that answers comes first.
    assert results.hits[0].path == "Config folder.md"


def test_the_rule_can_be_turned_off(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    config = EngineConfig(graph=GraphConfig(common_name_share=0.0))
    with Engine.open(vault, config, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex()
        results = engine.search("folder where settings and plugins are stored", limit=5, as_you_type=False)
    assert results.recognized_entities == ("settings",)
    assert results.not_names == ()


def test_explain_says_why_a_name_was_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, index = str(_vault(tmp_path / "vault")), str(tmp_path / "index")
    assert main(["reindex", vault, "--index-dir", index, "--no-model"]) == 0
    capsys.readouterr()
    assert main(["search", vault, "--index-dir", index, "--no-model", "--explain", "settings of Kubernetes"]) == 0
    out = capsys.readouterr().out
    assert "Names in your query: Kubernetes (written as a name)." in out
    assert "“settings” is read as a plain word, not a name: a common word (in " in out
    assert main(["search", vault, "--index-dir", index, "--no-model", "--explain", "--raw", "settings of Kubernetes"]) == 0
    out = capsys.readouterr().out
    assert "Kubernetes: written as a name" in out
    assert "settings: not a name, a common word (in " in out


def test_a_repeated_word_is_one_reason(engine: Engine) -> None:
    results = engine.search("settings, settings and plugins", limit=5, as_you_type=False)
    assert len(results.not_names) == 1 and results.not_names[0][0] == "settings"
