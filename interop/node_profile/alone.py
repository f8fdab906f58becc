"""One slow node cut out of its graph, alone: timed in Aidge, onnxruntime and torch's equivalent op
(:func:`time_node_alone`, :func:`torch_equivalent`), and written as a timing reproducer that runs
without the suite (:func:`write_timing_reproducer`: the one-node graph, its inputs, ``time_aidge.py``)."""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..bridge.runtime import quiet_aidge
from ..oracle.tolerance import STAND_IN_SCREEN
from ..reproducers.aidge import load_in_aidge
from ..reproducers.reduce import ort_values, single_node_model
from .forward import _attributes
from .records import _data_inputs, _feeds, _named, _one_openmp_thread, _ort_options

_TIMING_SCRIPT = '''"""Times this folder's one-node ONNX graph (model.onnx, inputs.npz) in Aidge alone, one OpenMP
thread, on the thread's CPU time (each timed call after an untimed one), and in onnxruntime when it
is installed. Needs aidge_core, aidge_backend_cpu, aidge_onnx, onnx, numpy; nothing of the suite.
python time_aidge.py [calls]"""
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import onnx  # noqa: E402

import aidge_backend_cpu  # noqa: E402,F401
import aidge_core  # noqa: E402
import aidge_onnx  # noqa: E402

here = Path(__file__).resolve().parent
model = onnx.load(str(here / "model.onnx"))
onnx_bytes = model.SerializeToString()
inits = {t.name for t in model.graph.initializer}
names = [i.name for i in model.graph.input if i.name not in inits]
data = np.load(here / "inputs.npz")
arrays = [np.ascontiguousarray(data[n]) for n in names]
graph = aidge_onnx.convert_onnx_to_aidge(model)  # renames the model in place
graph.set_backend("cpu")  # the graph's own dtypes, as the bridge compiles it
graph.forward_dtype([getattr(aidge_core.dtype, a.dtype.name) for a in arrays])
graph.forward_dims([list(a.shape) for a in arrays])
scheduler = aidge_core.SequentialScheduler(graph)
tensors = [aidge_core.Tensor(a) for a in arrays]
scheduler.forward(True, tensors)


def timed(call, n):
    out = []
    for _ in range(n):
        call()
        t0 = time.thread_time()
        call()
        out.append(time.thread_time() - t0)
    return out


n = int(sys.argv[1]) if len(sys.argv) > 1 else 21
aidge = timed(lambda: scheduler.forward(False, tensors), n)
print(f"Aidge: median {statistics.median(aidge) * 1e6:.1f} us, min {min(aidge) * 1e6:.1f} us "
      f"({n} calls, thread CPU time)")
try:
    import onnxruntime as ort
except ImportError:
    sys.exit(0)
feeds = dict(zip(names, arrays))
for label, level in (("no graph optimisation, as the profile", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
                     ("default optimisations", ort.GraphOptimizationLevel.ORT_ENABLE_ALL)):
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = level
    session = ort.InferenceSession(onnx_bytes, options, providers=["CPUExecutionProvider"])
    theirs = timed(lambda: session.run(None, feeds), n)
    print(f"onnxruntime ({label}): median {statistics.median(theirs) * 1e6:.1f} us, min {min(theirs) * 1e6:.1f} us; "
          f"Aidge/onnxruntime {statistics.median(aidge) / statistics.median(theirs):.1f} (a whole session call)")
'''


def _node_values(model, data_inputs, arrays) -> dict[str, np.ndarray]:
    """Every input of a one-node ``model`` by name: its data inputs' ``arrays`` and its initializers."""
    from onnx import numpy_helper

    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    values.update({getattr(n, "name", n): np.asarray(a) for n, a in zip(data_inputs, arrays)})
    return values


def _symmetric_pads(attrs: dict, rank: int) -> list[int] | None:
    pads = list(attrs.get("pads") or [0] * (2 * rank))
    if str(attrs.get("auto_pad", "NOTSET")) not in ("NOTSET", ""):
        return None
    return pads[:rank] if pads[:rank] == pads[rank:] else None


def torch_equivalent(node, values: dict[str, np.ndarray], out_shape: Sequence[int] | None = None):
    """``(call, label)``: torch's own op doing what the ONNX ``node`` does on ``values`` (its inputs
    by name, as torch tensors inside ``call``), or None where no single torch op is mapped (the
    ops the profile finds slow: Conv, pooling, Resize, the normalisations, Gemm/MatMul, the
    element-wise and reduction ops). The caller checks its output against onnxruntime's."""
    import torch
    import torch.nn.functional as F

    attrs = _attributes(node)
    ins = [torch.from_numpy(np.array(values[n])) if n else None for n in node.input]  # writable copies
    op = node.op_type
    x = ins[0] if ins else None
    rank = x.dim() - 2 if x is not None else 0
    unary = {"Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Erf": torch.erf, "Sqrt": torch.sqrt,
             "Exp": torch.exp, "Neg": torch.neg, "Abs": torch.abs, "Log": torch.log, "Reciprocal": torch.reciprocal}
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div, "Pow": torch.pow,
              "MatMul": torch.matmul}
    if op in unary:
        return (lambda: unary[op](x)), f"torch.{unary[op].__name__}"
    if op in binary and len(ins) == 2:
        y = ins[1]
        return (lambda: binary[op](x, y)), f"torch.{binary[op].__name__}"
    if op == "Conv" and 1 <= rank <= 3:
        pads = _symmetric_pads(attrs, rank)
        if pads is None:
            return None
        conv = (F.conv1d, F.conv2d, F.conv3d)[rank - 1]
        w, b = ins[1], ins[2] if len(ins) > 2 else None
        kw = dict(stride=attrs.get("strides") or 1, padding=pads, dilation=attrs.get("dilations") or 1,
                  groups=int(attrs.get("group", 1)))
        return (lambda: conv(x, w, b, **kw)), f"torch.nn.functional.{conv.__name__}"
    if op in ("MaxPool", "AveragePool") and 1 <= rank <= 3:
        pads = _symmetric_pads(attrs, rank)
        if pads is None or any(2 * p > k for p, k in zip(pads, attrs["kernel_shape"])):
            return None
        kw = dict(kernel_size=attrs["kernel_shape"], stride=attrs.get("strides") or 1, padding=pads,
                  ceil_mode=bool(attrs.get("ceil_mode", 0)))
        if op == "MaxPool":
            if any(d != 1 for d in attrs.get("dilations") or []):
                kw["dilation"] = attrs["dilations"]
            pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[rank - 1]
        else:
            kw["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
            pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[rank - 1]
        return (lambda: pool(x, **kw)), f"torch.nn.functional.{pool.__name__}"
    if op == "GlobalAveragePool":
        return (lambda: x.mean(dim=tuple(range(2, x.dim())), keepdim=True)), "torch.mean"
    if op == "Resize" and out_shape is not None and 1 <= rank <= 3:
        mode = str(attrs.get("mode", "nearest"))
        how = str(attrs.get("coordinate_transformation_mode", "half_pixel"))
        if mode == "linear" and how in ("half_pixel", "pytorch_half_pixel", "align_corners"):
            kind = ("linear", "bilinear", "trilinear")[rank - 1]
            size = list(out_shape)[2:]
            corners = how == "align_corners"
            return (lambda: F.interpolate(x, size=size, mode=kind, align_corners=corners)), \
                f"torch.nn.functional.interpolate({kind})"
        if mode == "nearest" and how == "asymmetric" and str(attrs.get("nearest_mode", "")) == "floor":
            size = list(out_shape)[2:]
            return (lambda: F.interpolate(x, size=size, mode="nearest")), "torch.nn.functional.interpolate(nearest)"
        return None
    if op == "LayerNormalization":
        axis = int(attrs.get("axis", -1)) % x.dim()
        w, b = ins[1], ins[2] if len(ins) > 2 else None
        eps = float(attrs.get("epsilon", 1e-5))
        shape = tuple(x.shape[axis:])
        return (lambda: F.layer_norm(x, shape, w, b, eps)), "torch.nn.functional.layer_norm"
    if op == "BatchNormalization" and len(ins) >= 5:
        scale, bias, mean, var = ins[1:5]
        eps = float(attrs.get("epsilon", 1e-5))
        return (lambda: F.batch_norm(x, mean, var, scale, bias, False, 0.0, eps)), "torch.nn.functional.batch_norm"
    if op == "Gemm" and not attrs.get("transA") and float(attrs.get("alpha", 1.0)) == 1.0 \
            and float(attrs.get("beta", 1.0)) == 1.0:
        w = ins[1] if attrs.get("transB") else ins[1].t().contiguous()
        c = ins[2] if len(ins) > 2 else None
        return (lambda: F.linear(x, w, c)), "torch.nn.functional.linear"
    if op == "Softmax":
        axis = int(attrs.get("axis", -1))
        return (lambda: torch.softmax(x, axis)), "torch.softmax"
    if op == "Transpose":
        perm = attrs.get("perm") or list(reversed(range(x.dim())))
        return (lambda: x.permute(*perm).contiguous()), "torch.permute(...).contiguous()"
    if op == "ReduceMean":
        axes = attrs.get("axes") or (ins[1].tolist() if len(ins) > 1 and ins[1] is not None else None)
        keep = bool(attrs.get("keepdims", 1))
        if axes is None:
            return None
        return (lambda: x.mean(dim=tuple(axes), keepdim=keep)), "torch.mean"
    if op == "Concat":
        axis = int(attrs.get("axis", 0))
        return (lambda: torch.cat(ins, axis)), "torch.cat"
    return None


def _node_alone(proto, inputs, node_name: str):
    """The node ``node_name`` of ``proto`` as a graph of its own, fed the values it receives in
    the full graph on ``inputs`` (onnxruntime's): the node, then ``(model, data_inputs, arrays,
    expected)`` of the reproducer's :func:`~interop.reproducers.reduce.single_node_model`; a
    KeyError when the graph has no such node."""
    named = _named(proto)
    feeds = _feeds(named, inputs)
    node = next((n for n in named.graph.node if n.name == node_name), None)
    if node is None:
        raise KeyError(f"no node {node_name!r} in the graph")
    values = ort_values(named, feeds)
    return (node, *single_node_model(named, node, values, set(_data_inputs(named))))


#: interleaved rounds of :func:`time_node_alone`
ALONE_ROUNDS = 11


def time_node_alone(proto, node_name: str, inputs, *, rounds: int = ALONE_ROUNDS) -> dict[str, Any]:
    """The node named ``node_name`` of ``proto`` cut out alone (as :func:`write_timing_reproducer`
    writes it) and timed in ``rounds`` interleaved rounds, one thread each, on the thread's CPU time,
    each timed call after an untimed call of the same runtime: Aidge's scheduler, onnxruntime
    without and with graph optimisation (whole session calls), and torch's equivalent op
    (:func:`torch_equivalent`; None where none is mapped, or where its output differs from
    onnxruntime's: ``torch_op`` then says why). Medians in seconds; ``ratio_ort`` and
    ``ratio_torch`` are Aidge's median over the other's."""
    import onnxruntime as ort
    import torch

    node, model, data_inputs, arrays, expected = _node_alone(proto, inputs, node_name)
    names = [getattr(i, "name", i) for i in data_inputs]
    one = dict(zip(names, [np.ascontiguousarray(a) for a in arrays]))
    onnx_bytes = model.SerializeToString()
    sessions = [ort.InferenceSession(onnx_bytes, _ort_options(ort, profile_prefix=None, optimize=o),
                                     providers=["CPUExecutionProvider"]) for o in (False, True)]
    equivalent = torch_equivalent(node, _node_values(model, names, arrays),
                                  list(expected[0].shape) if expected else None)
    torch_op = equivalent[1] if equivalent else f"no torch op mapped for ONNX {node.op_type} with these attributes"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        if equivalent is not None:
            with torch.no_grad():
                got = equivalent[0]()
            ref = np.asarray(expected[0]) if expected else None

            if ref is None or tuple(got.shape) != ref.shape or not np.allclose(
                    got.numpy(), ref, rtol=STAND_IN_SCREEN.rtol, atol=STAND_IN_SCREEN.atol):
                torch_op = f"{equivalent[1]} does not compute what onnxruntime computes here: not timed"
                equivalent = None
        import onnx

        for_aidge = onnx.ModelProto()
        for_aidge.CopyFrom(model)
        with quiet_aidge(), _one_openmp_thread():
            graph, scheduler, tensors = load_in_aidge(for_aidge, [one[n] for n in names])
            scheduler.forward(True, tensors)
            calls = {"aidge": lambda: scheduler.forward(False, tensors),
                     "ort": lambda: sessions[0].run(None, one), "ort_optimized": lambda: sessions[1].run(None, one)}
            if equivalent is not None:
                calls["torch"] = equivalent[0]
            times: dict[str, list[float]] = {k: [] for k in calls}
            with torch.no_grad():
                for call in calls.values():
                    call()
                for r in range(rounds):
                    for key in (list(calls) if r % 2 == 0 else list(reversed(calls))):
                        calls[key]()  # untimed: the switch from the other runtime
                        t0 = time.thread_time()
                        calls[key]()
                        times[key].append(time.thread_time() - t0)
    finally:
        torch.set_num_threads(threads)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"rounds": rounds, "clock": "thread CPU time per call, median of the rounds",
            "aidge_s": med["aidge"], "ort_s": med["ort"], "ort_optimized_s": med["ort_optimized"],
            "torch_s": med.get("torch"), "torch_op": torch_op,
            "ratio_ort": med["aidge"] / med["ort"] if med["ort"] > 0 else None,
            "ratio_ort_optimized": med["aidge"] / med["ort_optimized"] if med["ort_optimized"] > 0 else None,
            "ratio_torch": (med["aidge"] / med["torch"]) if med.get("torch") else None}


def write_timing_reproducer(proto, node_name: str, inputs, folder: Path, meta: dict | None = None) -> Path:
    """A folder of its own for the node named ``node_name`` of ``proto`` (its name as the profile
    gives it): ``model.onnx`` (the node alone; its inputs that depend on the graph's data are graph
    inputs, the others initializers), ``inputs.npz`` (the values they receive in the full graph on
    ``inputs``, computed by onnxruntime), ``time_aidge.py`` (times it, Aidge alone and onnxruntime,
    without the suite) and ``meta.json`` (``meta``). Returns ``folder``."""
    import onnx

    node, model, data_inputs, arrays, _ = _node_alone(proto, inputs, node_name)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    names = [getattr(i, "name", i) for i in data_inputs]
    np.savez(folder / "inputs.npz", **{n: np.asarray(a) for n, a in zip(names, arrays)})
    (folder / "time_aidge.py").write_text(_TIMING_SCRIPT)
    (folder / "meta.json").write_text(json.dumps(dict(meta or {}, node=node_name, op_type=node.op_type),
                                                 indent=1, default=str) + "\n")
    return folder
