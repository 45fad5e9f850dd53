"""The engine loads without any front-end library; the UI never loads search libraries."""

from __future__ import annotations

import subprocess
import sys

FRONT_END = ("textual", "rich", "ui", "app", "starlette", "uvicorn")


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {name.split(".")[0] for name in out.split()}


def test_engine_api_imports_no_front_end() -> None:
    loaded = _loaded_after("import engine.api, engine.tools.cli, models")
    assert not loaded & set(FRONT_END)


def _lexical_search(tmp_path) -> str:  # type: ignore[no-untyped-def]
    """Statements that index a one-note vault without the model and search it."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# Alpha\n\nsome words\n", encoding="utf-8")
    return (
        "from engine.api import Engine; "
        f"e = Engine.open({str(vault)!r}, index_dir={str(tmp_path / 'i')!r}, embedder=None); "
        "e.reindex(); assert e.search('alpha').hits"
    )


def test_engine_search_runs_without_front_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    loaded = _loaded_after(_lexical_search(tmp_path))
    assert not loaded & set(FRONT_END)
    assert "whoosh" in loaded and "igraph" in loaded


def test_a_search_loads_no_web_client(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Whoosh's compatibility module imports urllib.request (http.client, ssl, email: tens
    # of milliseconds of every start) for a download the engine never makes.
    code = (
        f"import sys; {_lexical_search(tmp_path)}; "
        "print(sorted(m for m in ('urllib.request', 'http.client', 'ssl') if m in sys.modules)); "
        "import whoosh.compat, urllib.request; "
        "print(callable(whoosh.compat.urlretrieve), hasattr(urllib.request, 'urlopen'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "True True"  # the name still works, and the real module imports as usual
