"""The int8 model derived from the pinned MiniLM weights (models/derive.py), run for real."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from engine.embedder import OnnxEmbedder, load_default_embedder
from models import ModelSpec, load_spec, verify
from models import derive as derive_module
from models.derive import (
    DerivationError,
    derive,
    derived_id,
    drop_softmax_nan_guards,
    fold,
    runnable,
)

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [
    note.read_text(encoding="utf-8")[:1200]
    for note in sorted((ROOT / "sample_vault").rglob("*.md"))[:24]
]


@pytest.fixture(scope="module")
def spec() -> ModelSpec:
    loaded = load_spec()
    verify(loaded)
    return loaded


@pytest.fixture(scope="module")
def pinned(spec: ModelSpec) -> OnnxEmbedder:
    return OnnxEmbedder(spec.weights_path, spec.tokenizer_path, model_id=spec.model_id, dims=spec.dims)


def test_the_default_embedder_runs_the_derived_model_close_to_the_pinned_one(pinned: OnnxEmbedder, spec: ModelSpec) -> None:
    derived = load_default_embedder()
    assert derived.model_id == derived_id(spec) != spec.model_id
    cosines = (derived.embed(TEXTS) * pinned.embed(TEXTS)).sum(axis=1)
    assert cosines.mean() >= 0.99 and cosines.min() >= 0.97, cosines
    query = "where are plugin settings stored"
    assert float(derived.embed_query(query) @ pinned.embed_query(query)) >= 0.97


def test_a_texts_vector_does_not_depend_on_its_batch() -> None:
    embedder = load_default_embedder()
    together = embedder.embed(TEXTS[:6])
    alone = np.concatenate([embedder.embed([text]) for text in reversed(TEXTS[:6])])[::-1]
    assert np.array_equal(together, alone)
    assert np.allclose(embedder.embed_query(TEXTS[0]), together[0], atol=1e-6)


def test_dropping_the_nan_guards_changes_no_output(spec: ModelSpec, tmp_path: Path) -> None:
    import onnxruntime as ort

    fold(spec.weights_path, tmp_path / "folded.onnx")
    model = onnx.load(str(tmp_path / "folded.onnx"))
    assert drop_softmax_nan_guards(model) == 6  # one per layer
    assert not any(node.op_type == "IsNaN" for node in model.graph.node)
    onnx.save(model, str(tmp_path / "unguarded.onnx"))
    embedder = OnnxEmbedder(spec.weights_path, spec.tokenizer_path, model_id="probe", dims=spec.dims)
    feeds = embedder.tokenize(TEXTS[:8])  # a padded batch: the masked positions are there
    options = ort.SessionOptions()
    options.log_severity_level = 3
    before, after = (
        ort.InferenceSession(str(tmp_path / name), options, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        for name in ("folded.onnx", "unguarded.onnx")
    )
    assert np.array_equal(before, after)


def _guarded_softmax(constant: float) -> onnx.ModelProto:
    """x + c → Softmax → Where(IsNaN(p), 0, p): the export's pattern in three nodes."""
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "c"], ["scores"]),
            helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
            helper.make_node("IsNaN", ["p"], ["nan"]),
            helper.make_node("Where", ["nan", "zero", "p"], ["guarded"]),
            helper.make_node("Identity", ["guarded"], ["y"]),
        ],
        "guard",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [
            helper.make_tensor("c", TensorProto.FLOAT, [1, 4], [0.0, 0.0, constant, constant]),
            helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
        ],
    )
    return helper.make_model(graph)


def test_the_guard_stays_when_a_constant_could_make_a_softmax_nan() -> None:
    finite = _guarded_softmax(-3.4e38)
    assert drop_softmax_nan_guards(finite) == 1
    assert [node.op_type for node in finite.graph.node] == ["Add", "Softmax", "Identity"]
    assert finite.graph.node[-1].input[0] == "p"
    infinite = _guarded_softmax(float("-inf"))
    assert drop_softmax_nan_guards(infinite) == 0
    assert len(infinite.graph.node) == 5


def _folders(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    monkeypatch.setattr(derive_module, "_folders", lambda: list(folders))


def test_a_damaged_derived_model_is_derived_again(spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _folders(monkeypatch, tmp_path / "models")
    first = runnable(spec)
    assert first.derived and first.path.parent == tmp_path / "models"
    good = first.path.read_bytes()
    damaged = bytearray(good)
    damaged[len(damaged) // 2] ^= 0xFF
    first.path.write_bytes(bytes(damaged))
    assert not runnable(spec, build=False).derived  # not trusted as it is
    again = runnable(spec)
    assert again.derived and again.path.read_bytes() == good  # the recipe is deterministic


def test_an_unwritable_folder_falls_through_to_the_next(spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "read-only"
    blocked.write_text("a file where the folder would be")  # mkdir fails as on a read-only install
    _folders(monkeypatch, blocked, tmp_path / "cache")
    chosen = runnable(spec)
    assert chosen.derived and chosen.path.parent == tmp_path / "cache"


def test_without_onnx_the_pinned_weights_run_and_say_why(spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _folders(monkeypatch, tmp_path / "models")
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    with pytest.raises(DerivationError, match="onnx is not installed"):
        derive(spec, tmp_path / "models")
    chosen = runnable(spec)
    assert not chosen.derived
    assert chosen.path == spec.weights_path and chosen.model_id == spec.model_id
    assert "onnx is not installed" in chosen.note
    assert not any((tmp_path / "models").glob("*.onnx"))


def test_a_probe_that_fails_keeps_nothing(spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derive_module, "probe", lambda *args: (0.95, 0.9))
    with pytest.raises(DerivationError, match="too far"):
        derive(spec, tmp_path / "models")
    assert not any((tmp_path / "models").iterdir())


def test_the_step_files_of_a_killed_derivation_are_removed(spec: ModelSpec, tmp_path: Path) -> None:
    import os

    abandoned = tmp_path / "models" / ".derive-killed"
    abandoned.mkdir(parents=True)
    (abandoned / "folded.onnx").write_bytes(b"half a model")
    os.utime(abandoned, (0, 0))
    derive(spec, tmp_path / "models")
    assert not abandoned.exists()
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [f"{derived_id(spec)}.json", f"{derived_id(spec)}.onnx"]
