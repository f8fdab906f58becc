#!/usr/bin/env python3
"""Who is at fault for CLIPTextModel's Reshape (issue 42)? numpy, onnx, onnxruntime and Aidge only.

1. The whole CLIPTextModel bundle (clip-reshape/) compiled three ways, against torch's stored outputs:
   - "bridge": as the suite's bridge does: ``GraphView.compile("cpu", float32, dims)`` (the float32
     compile of Aidge's own examples), the int64 token ids fed as they are;
   - "ids as float32": the same compile, the ids fed as float32 (the dtype the compile declared);
   - "input's own dtype": ``set_backend("cpu")``, ``forward_dtype([int64])``, ``forward_dims`` (Aidge's
     dtype propagation from the input's own dtype, the bridge's dtype-faithful compile).
2. One-node graphs compiled in float32 and fed an int64 tensor: which Aidge kernels refuse the
   mismatched dtype and which copy its bytes into their float32 output.

    python check_clip_int64_compile.py
"""
import glob
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.path.join(HERE, "clip-reshape")


def _run(core, graph, mode, x):
    dims = [list(x.shape)]
    if mode == "input's own dtype":
        graph.set_backend("cpu")
        graph.forward_dtype([core.dtype.int64])
        graph.forward_dims(dims)
    else:
        graph.compile("cpu", core.dtype.float32, dims=dims)
    feed = x.astype(np.float32) if mode == "ids as float32" else x
    core.SequentialScheduler(graph).forward(True, [core.Tensor(np.array(feed, order="C", copy=True))])
    return graph


def whole_graph(core, aidge_onnx):
    model = onnx.load(os.path.join(BUNDLE, "model.onnx"))
    (path,) = glob.glob(os.path.join(BUNDLE, "test_data_set_0", "input_*.pb"))
    x = numpy_helper.to_array(onnx.load_tensor(path))
    wants = [numpy_helper.to_array(onnx.load_tensor(p)).astype(np.float64)
             for p in sorted(glob.glob(os.path.join(BUNDLE, "test_data_set_0", "output_*.pb")))]
    options = ort.SessionOptions()
    options.log_severity_level = 3  # not the "initializer appears in graph inputs" warning per parameter
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    ort_out = session.run(None, {session.get_inputs()[0].name: x})
    print(f"input {x.dtype} {list(x.shape)}: {x.ravel()[:6].tolist()} ...")
    print("onnxruntime against torch: " + ", ".join(
        f"output {k} max {np.abs(np.asarray(o, np.float64) - w).max():.3g}" for k, (o, w) in enumerate(zip(ort_out, wants))))
    for mode in ("bridge", "ids as float32", "input's own dtype"):
        graph = aidge_onnx.convert_onnx_to_aidge(onnx.load(os.path.join(BUNDLE, "model.onnx")))
        core.remove_flatten(graph)
        graph = _run(core, graph, mode, x)
        reshape = {n.name(): n for n in graph.get_nodes()}["fn_Reshape"].get_operator()
        outs = [np.array(n.get_operator().get_output(i), copy=True).astype(np.float64) for n, i in graph.get_ordered_outputs()]
        figures = []
        for k, (a, w) in enumerate(zip(outs, wants)):
            bad = ~np.isclose(a, w, rtol=1.3e-6, atol=1e-5)
            figures.append(f"output {k}: {int(bad.sum())} of {bad.size} beyond, max {np.abs(a - w).max():.3g}")
        print(f"[{mode}] Reshape in {reshape.get_input(0).dtype} out {reshape.get_output(0).dtype} "
              f"{np.array(reshape.get_output(0)).ravel()[:4].tolist()}; against torch: {'; '.join(figures)}")


def one_node(core, aidge_onnx):
    x = np.array([[37, 43, 12, 8], [63, 9, 1, 2]], np.int64)

    def model(op, inits=(), inputs=(), **attrs):
        node = helper.make_node(op, ["x", *inputs], ["y"], **attrs)
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT64, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)], initializer=list(inits))
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])

    axis0 = [helper.make_tensor("a", TensorProto.INT64, [1], [0])]
    graphs = {"Reshape": model("Reshape", [helper.make_tensor("s", TensorProto.INT64, [1], [8])], ["s"]),
              "Flatten": model("Flatten", axis=0), "Unsqueeze": model("Unsqueeze", axis0, ["a"]),
              "Identity": model("Identity"), "Transpose": model("Transpose", perm=[1, 0]), "Relu": model("Relu"),
              "Add": model("Add", [helper.make_tensor("b", TensorProto.INT64, [1], [1])], ["b"])}
    print(f"one node, GraphView.compile('cpu', float32), fed int64 {x.ravel()[:4].tolist()}:")
    for name, m in graphs.items():
        try:
            graph = _run(core, aidge_onnx.convert_onnx_to_aidge(m), "bridge", x)
            (n, i), = graph.get_ordered_outputs()
            out = n.get_operator().get_output(i)
            print(f"  {name:9s} runs: {out.dtype} {np.array(out).ravel()[:4].tolist()}")
        except Exception as exc:  # noqa: BLE001
            print(f"  {name:9s} refuses: {type(exc).__name__}: {str(exc)[:100]}")


def main():
    import aidge_backend_cpu  # noqa: F401
    import aidge_core as core
    import aidge_onnx

    core.Log.set_console_level(core.Level.Fatal)
    whole_graph(core, aidge_onnx)
    one_node(core, aidge_onnx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
