#!/usr/bin/env python3
"""Hand check of a reproducer's first diverging node against onnxruntime (issue 42).

Needs numpy, onnx, onnxruntime and Aidge (aidge_core, aidge_backend_cpu, aidge_onnx) only: no torch,
no aidge_torch_interop. It reads a bundle's ``model.onnx`` (the graph Aidge was given) and
``test_data_set_0/input_K.pb``, cuts the graph with onnx's own ``onnx.utils.Extractor`` so that its
outputs are the named node's first output and the first output of the node before it (the last node,
in the graph's order, that feeds it), runs the cut graph in onnxruntime and in Aidge (imported by
aidge_onnx, compiled for the CPU in float32 as the suite's bridge does, run ``--calls`` times on the
same inputs), and prints, for both nodes, the largest difference and the count beyond the
suite's tolerance (``--rtol``, ``--atol``).

    python check_node.py BUNDLE NODE [--before NODE] [--calls N] [--rtol R] [--atol A]

Exit 0 when the node before agrees and the node differs (the record's claim holds), 1 otherwise.
"""
import argparse
import glob
import os
import re
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def _aidge_name(onnx_name):
    """aidge_onnx's name for an ONNX node (``/fn/Reshape`` -> ``fn_Reshape``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", onnx_name).strip("_")


def _session(model):
    options = ort.SessionOptions()
    options.log_severity_level = 3  # not the "initializer appears in graph inputs" warning per parameter
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bundle")
    p.add_argument("node")
    p.add_argument("--before", default=None, help="the node before (default: the last node feeding NODE)")
    p.add_argument("--calls", type=int, default=1)
    p.add_argument("--rtol", type=float, default=1.3e-6)
    p.add_argument("--atol", type=float, default=1e-5)
    a = p.parse_args()

    model = onnx.load(os.path.join(a.bundle, "model.onnx"))
    feeds = {}
    for path in sorted(glob.glob(os.path.join(a.bundle, "test_data_set_0", "input_*.pb"))):
        t = onnx.load_tensor(path)
        feeds[t.name] = numpy_helper.to_array(t)
    nodes = {n.name: (k, n) for k, n in enumerate(model.graph.node)}
    k, node = nodes[a.node]
    producer = {o: (j, n) for j, n in enumerate(model.graph.node) for o in n.output if o}
    if a.before:
        before = nodes[a.before][1]
    else:
        fed = [producer[i] for i in node.input if i in producer]
        before = max(fed, key=lambda jn: jn[0])[1]
    wanted = [before.output[0], node.output[0]]
    # the Extractor finds the cut's outputs among value_info: onnx's shape inference writes them
    cut = onnx.utils.Extractor(onnx.shape_inference.infer_shapes(model)).extract_model(list(feeds), wanted)
    print(f"cut graph: {len(cut.graph.node)} of {len(model.graph.node)} nodes, outputs {wanted}")

    session = _session(cut)
    ort_out = dict(zip([o.name for o in session.get_outputs()],
                       session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})))

    # onnxruntime is the reference only where it computes torch's values on the whole graph
    full = _session(model)
    whole = full.run(None, {i.name: feeds[i.name] for i in full.get_inputs()})
    for j, got in enumerate(whole):
        path = os.path.join(a.bundle, "test_data_set_0", f"output_{j}.pb")
        if os.path.exists(path):
            want = numpy_helper.to_array(onnx.load_tensor(path))
            bad = ~np.isclose(np.asarray(got, np.float64), want.astype(np.float64), rtol=a.rtol, atol=a.atol)
            print(f"whole graph, output {j}: onnxruntime against torch's stored value: max |diff| "
                  f"{float(np.abs(np.asarray(got, np.float64) - want).max()):.3g}, {int(bad.sum())} of {bad.size} "
                  f"beyond tolerance")
            ok_ref = not bad.any()
            if not ok_ref:
                print("onnxruntime does not compute torch's values: it cannot be the reference here")
                return 1

    import aidge_backend_cpu  # noqa: F401  (the CPU kernels)
    import aidge_core as core
    import aidge_onnx

    core.Log.set_console_level(core.Level.Error)
    graph = aidge_onnx.convert_onnx_to_aidge(cut)
    core.remove_flatten(graph)
    inputs = [feeds[i.name] for i in cut.graph.input if i.name in feeds]
    graph.compile("cpu", core.dtype.float32, dims=[list(x.shape) for x in inputs])
    scheduler = core.SequentialScheduler(graph)
    tensors = [core.Tensor(np.array(x.astype(np.float32) if np.issubdtype(x.dtype, np.floating) else x,
                                    order="C", copy=True)) for x in inputs]
    by_name = {n.name(): n for n in graph.get_nodes()}
    ok = True
    for call in range(1, a.calls + 1):
        scheduler.forward(True, tensors)
        for role, n in (("before", before), ("node", node)):
            an = by_name.get(_aidge_name(n.name))
            if an is None:
                print(f"call {call} {role} {n.name!r} ({n.op_type}): no Aidge node named {_aidge_name(n.name)!r}")
                ok = False
                continue
            got = np.array(an.get_operator().get_output(0), copy=True)
            want = ort_out[n.output[0]]
            if got.shape != want.shape:
                print(f"call {call} {role} {n.name!r} ({n.op_type} -> Aidge {an.type()}): shape {list(got.shape)}, "
                      f"onnxruntime {list(want.shape)}")
                ok &= role == "node"
                continue
            g, w = got.astype(np.float64), want.astype(np.float64)
            bad = ~np.isclose(g, w, rtol=a.rtol, atol=a.atol, equal_nan=True)
            diff = np.abs(g - w)
            first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else None
            print(f"call {call} {role} {n.name!r} ({n.op_type} -> Aidge {an.type()}): shape {list(got.shape)}, "
                  f"max |diff| {float(np.nanmax(diff)) if diff.size else 0.0:.6g}, {int(bad.sum())} of {bad.size} "
                  f"beyond rtol={a.rtol:g} atol={a.atol:g}"
                  + (f"; first at {list(first)}: onnxruntime {w[first]:.6g}, Aidge {g[first]:.6g}" if first else ""))
            if call == a.calls:
                ok &= bool(bad.any()) if role == "node" else not bad.any()
    print("CLAIM HOLDS: the node before agrees with onnxruntime, the node differs" if ok else "CLAIM DOES NOT HOLD")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
