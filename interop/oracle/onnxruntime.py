"""The oracle's one onnxruntime runner: the third reference (who is wrong when Aidge and torch
disagree, the intermediates of a graph, the expected values of a crash bundle). One CPU session
factory (one thread, quiet) and one way to run a graph, with its outputs or any of its
intermediate tensors as outputs. Every caller (the bridge's first-call check, the attribution,
the reproducers, the node profile) asks through here."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .._lazy import quiet_import
from .compare import to_numpy

__all__ = ["ort_session", "run_onnxruntime", "graph_refusal"]


def ort_session(model: Any, *, optimize: bool = True):
    """An onnxruntime CPU session on ``model`` (an ``onnx.ModelProto``, serialized bytes or a path),
    one thread, quiet; ``optimize=False``: none of its graph rewrites (every intermediate is the
    graph's own)."""
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


def run_onnxruntime(proto, feeds: Mapping[str, Any] | Sequence[Any], outputs: Sequence[str] | None = None, *,
                    input_names: Sequence[str] | None = None) -> list[np.ndarray]:
    """``proto``'s values ``outputs`` (tensor names; None: its graph outputs) under onnxruntime.

    ``feeds``: a mapping input name -> value, or a sequence of values named by ``input_names``;
    values are numpy arrays, torch tensors or anything :func:`interop.oracle.compare.to_numpy`
    takes. Feeds the graph does not take are left out. ImportError without onnxruntime;
    onnxruntime's own error when it refuses the graph."""
    import onnx

    if not isinstance(feeds, Mapping):
        if input_names is None:
            raise TypeError("run_onnxruntime: a sequence of feeds needs input_names")
        feeds = dict(zip(input_names, feeds))
    model = proto
    if outputs is not None:
        model = onnx.ModelProto()
        model.CopyFrom(proto)
        present = {o.name for o in model.graph.output}
        for name in outputs:
            if name not in present:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
    session = ort_session(model)
    wanted = {i.name for i in session.get_inputs()}
    return list(session.run(list(outputs) if outputs is not None else None,
                            {k: to_numpy(v) for k, v in feeds.items() if k in wanted}))


def graph_refusal(model: Any) -> str | None:
    """Why ``model`` (a ModelProto or a path) is no valid ONNX graph, in the refuser's words (one
    line, ``onnx's checker: ...`` or ``onnxruntime: ...``), or None when onnx's full checker (types
    and shapes inferred) accepts it and onnxruntime builds a session on it. onnxruntime lacking a
    kernel (``NOT_IMPLEMENTED``: Erf in float64) says nothing of the graph, nor does a missing
    onnxruntime. The one answer to "was Aidge given a valid graph?", asked before an Aidge failure
    is blamed on Aidge (the bridge's errors, ``verify``, the reproducers)."""
    import onnx

    try:
        onnx.checker.check_model(str(model) if isinstance(model, Path) else model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        return f"onnx's checker: {_first_line(exc)}"
    except Exception:  # noqa: BLE001 - the checker itself cannot run (a proto over 2 GB): no claim
        pass
    try:
        ort_session(model)
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001 - onnxruntime refuses the graph
        line = _first_line(exc)
        return None if "NOT_IMPLEMENTED" in line else f"onnxruntime: {line}"
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]
