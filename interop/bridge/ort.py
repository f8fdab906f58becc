"""onnxruntime as this project asks it questions (the third reference: who is wrong when Aidge and
torch disagree, the intermediates of a graph, the expected values of a crash bundle): one CPU
session factory, one thread, quiet, and the map from aidge_onnx's node names back to the ONNX
graph's nodes. Used by the value check (:mod:`.value_check`), the attribution
(:mod:`interop.equivalence.attribution`) and the reproducers (:mod:`interop.diagnostics.reproducer`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["ort_session", "aidge_node_indices"]


def ort_session(model: Any, *, optimize: bool = True):
    """An onnxruntime CPU session on ``model`` (an ``onnx.ModelProto``, serialized bytes or a path),
    one thread, quiet; ``optimize=False``: none of its graph rewrites (every intermediate is the
    graph's own)."""
    from .._lazy import quiet_import

    ort = quiet_import("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if not optimize or _training_batch_norm(model):
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    return ort.InferenceSession(str(model) if isinstance(model, Path) else model, options,
                                providers=["CPUExecutionProvider"])


def _training_batch_norm(model: Any) -> bool:
    """Whether ``model`` (a ModelProto) holds a ``BatchNormalization`` with ``training_mode=1``:
    onnxruntime's extended rewrites fuse it into a preceding Conv whose inputs are initializers as
    if it were an inference one (measured 2026-12-03, onnxruntime 1.32.0:
    Conv + train-mode BatchNorm 0.24 off with them, 6e-7 without), so such a graph gets none."""
    graph = getattr(model, "graph", None)
    if graph is None:
        return False
    return any(node.op_type == "BatchNormalization"
               and any(a.name == "training_mode" and a.i for a in node.attribute) for node in graph.node)


def aidge_node_indices(proto) -> dict[str, int]:
    """Aidge node name -> index of its ONNX node: aidge_onnx renames every node and tensor
    (``onnx_to_aidge_model_names``: ``/0/Conv`` becomes ``data_0_Conv``) and names a node after
    its ONNX name, or its first output when it has none. Matched on a renamed copy, node by node."""
    import onnx

    from . import runtime as rt

    renamed = onnx.ModelProto()
    renamed.CopyFrom(proto)
    try:
        rt.aidge_onnx().onnx_to_aidge_model_names(renamed)
    except Exception:  # noqa: BLE001 - an older aidge_onnx: the names as they are
        renamed = proto
    names: dict[str, int] = {}
    for k, (node, new) in enumerate(zip(proto.graph.node, renamed.graph.node)):
        for candidate in (new.name, new.output[0] if new.output else "", node.name):
            if candidate:
                names.setdefault(candidate, k)
    return names
