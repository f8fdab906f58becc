"""A per-node backward reference (issue 42): a gradient mismatch names the first node, from the
outputs back, whose input gradients differ from a float64 reference VJP of that node alone, given
Aidge's own output gradients (:func:`interop.oracle.divergence.first_diverging_backward`).
The reference: central differences on onnx.reference, bounded by VJP_MAX_ELEMENTS."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from interop.oracle.divergence import VJP_MAX_ELEMENTS, first_diverging_backward, node_vjp


def _rng():
    return np.random.default_rng(0)


def test_the_reference_vjp_matches_the_analytic_gradients():
    r = _rng()
    a, b, g = r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((3, 2))
    got = node_vjp(helper.make_node("MatMul", ["a", "b"], ["y"]), {"a": a, "b": b}, [g])
    assert np.allclose(got["a"], g @ b.T, atol=1e-7) and np.allclose(got["b"], a.T @ g, atol=1e-7)
    x, gs = r.standard_normal(7), r.standard_normal(7)
    s = 1 / (1 + np.exp(-x))
    got = node_vjp(helper.make_node("Sigmoid", ["x"], ["y"]), {"x": x}, [gs])
    assert np.allclose(got["x"], gs * s * (1 - s), atol=1e-8)
    # an integer input (axes, indices) is not differentiated; a float32 input is, in float64
    data, idx = r.standard_normal((4, 3)).astype(np.float32), np.array([2, 0], dtype=np.int64)
    gg = r.standard_normal((2, 3))
    got = node_vjp(helper.make_node("Gather", ["d", "i"], ["y"], axis=0), {"d": data, "i": idx}, [gg])
    want = np.zeros((4, 3))
    want[2], want[0] = gg[0], gg[1]
    assert set(got) == {"d"} and got["d"].dtype == np.float64 and np.allclose(got["d"], want, atol=1e-7)


def test_a_node_over_the_bound_is_refused_and_skipped_by_the_walk():
    big = np.zeros(VJP_MAX_ELEMENTS + 1)
    node = helper.make_node("Neg", ["x"], ["y"], name="big")
    with pytest.raises(ValueError, match="over the bound"):
        node_vjp(node, {"x": big}, [np.ones_like(big)])
    step = {"node": node, "inputs": {"x": big}, "grad_outputs": [np.ones_like(big)], "grad_inputs": {"x": -np.ones_like(big)}}
    assert first_diverging_backward([step], 1e-5, 1e-6) is None


def test_the_walk_names_the_first_node_whose_input_gradient_is_wrong():
    """x -> Exp -> e -> Mul(e, w) -> y. Aidge's gradient of Mul is right, Exp's is wrong (its output
    gradient taken as given): Exp is named, not Mul, though every gradient upstream of it differs."""
    r = _rng()
    x, w, gy = r.standard_normal(5), r.standard_normal(5), r.standard_normal(5)
    e = np.exp(x)
    mul = helper.make_node("Mul", ["e", "w"], ["y"], name="/Mul")
    exp = helper.make_node("Exp", ["x"], ["e"], name="/Exp")
    ge = gy * w  # Mul's input gradients, right
    steps = [{"node": mul, "inputs": {"e": e, "w": w}, "grad_outputs": [gy], "grad_inputs": {"e": ge, "w": gy * e}},
             {"node": exp, "inputs": {"x": x}, "grad_outputs": [ge], "grad_inputs": {"x": ge}}]  # forgot * exp(x)
    found = first_diverging_backward(steps, rtol=1e-5, atol=1e-6)
    assert found["onnx_node"] == "/Exp" and found["op_type"] == "Exp" and found["input"] == "x"
    assert found["checked"] == 2 and found["max_abs_diff"] > 1e-3
    steps[1]["grad_inputs"] = {"x": ge * e}
    assert first_diverging_backward(steps, rtol=1e-5, atol=1e-6) is None  # every node agrees: nothing named


def _bundle(folder, nodes, x, gy, initializers=()):
    import onnx
    from onnx import TensorProto, numpy_helper

    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))],
                              initializer=list(initializers))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(folder / "model.onnx"))
    data = folder / "test_data_set_0"
    data.mkdir()
    (data / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (data / "grad_output_0.pb").write_bytes(numpy_helper.from_array(gy, "grad_output_0").SerializeToString())
    return folder


def test_on_aidge_a_wrong_node_behind_a_right_one_is_named(tmp_path):
    """x -> Sin -> Mul(., w) -> y on Aidge 0.10.1: Mul's gradients are right, Sin's backward is wrong
    (docs/reproducers-table-operators.md: the opinfo sin rows). The walk names Sin, and a graph of
    right nodes names nothing."""
    pytest.importorskip("aidge_core")
    from onnx import numpy_helper

    from interop.reproducers.aidge import backward_divergence

    r = _rng()
    x, w = r.standard_normal((4, 5)).astype(np.float32), r.standard_normal((4, 5)).astype(np.float32)
    gy = r.standard_normal((4, 5)).astype(np.float32)
    sin = (tmp_path / "sin")
    sin.mkdir()
    nodes = [helper.make_node("Sin", ["x"], ["s"], name="/Sin"), helper.make_node("Mul", ["s", "w"], ["y"], name="/Mul")]
    found = backward_divergence(_bundle(sin, nodes, x, gy, [numpy_helper.from_array(w, "w")]), 1.3e-6, 1e-5)
    assert found is not None and found["onnx_node"] == "/Sin" and found["op_type"] == "Sin", found
    assert found["checked"] == 2  # Mul was compared first, and agreed
    right = (tmp_path / "right")
    right.mkdir()
    nodes = [helper.make_node("Mul", ["x", "w"], ["m"], name="/Mul"), helper.make_node("Add", ["m", "w"], ["y"], name="/Add")]
    assert backward_divergence(_bundle(right, nodes, x, gy, [numpy_helper.from_array(w, "w")]), 1.3e-6, 1e-5) is None


def test_the_reduction_names_the_node_of_a_gradient_mismatch_no_forward_value_names(tmp_path):
    pytest.importorskip("aidge_core")
    from onnx import numpy_helper

    from interop.reproducers.aidge import _backward_node

    r = _rng()
    x, w = r.standard_normal((4, 5)).astype(np.float32), r.standard_normal((4, 5)).astype(np.float32)
    gy = r.standard_normal((4, 5)).astype(np.float32)
    nodes = [helper.make_node("Sin", ["x"], ["s"], name="/Sin"), helper.make_node("Mul", ["s", "w"], ["y"], name="/Mul")]
    folder = _bundle(tmp_path, nodes, x, gy, [numpy_helper.from_array(w, "w")])
    meta = {"phase": "backward", "repro": {"line": "DEFECT PRESENT: backward, gradient of input 'x': expected ..."}}
    found = _backward_node(folder, meta, 1.3e-6, 1e-5)
    assert found["onnx_node"] == "/Sin" and found["aidge_type"] == "Sin" and found["line"].startswith("backward: ")
    # a bundle whose script fails in forward (a later call) is not given a backward node
    assert _backward_node(folder, dict(meta, repro={"line": "DEFECT PRESENT: forward call 2, output 0"}), 1.3e-6, 1e-5) is None


def test_a_wrong_sum_over_a_shared_tensor_is_said_where_every_node_agrees(tmp_path):
    """The zoo's shared_MixerResidual as exported (input_0 feeds Gemm, transA, and the residual
    Add): on Aidge 0.10.1 every node's own gradients agree with the reference, and input_0's
    gradient is not the sum of its two consumers' references (which equals torch's to 7e-8 on the
    run's bundle): said as a gradient sum over input_0, no node named. Mul(x, w) + Add(m, x), the
    same shape of graph with other ops, sums right: nothing said."""
    pytest.importorskip("aidge_core")
    from onnx import numpy_helper

    from interop.reproducers.aidge import backward_divergence

    r = _rng()
    x, gy = r.standard_normal((4, 5)).astype(np.float32), r.standard_normal((4, 5)).astype(np.float32)
    params = {"p0": r.standard_normal((8, 4)), "p1": r.standard_normal(8), "p2": r.standard_normal((4, 8)),
              "p3": r.standard_normal(4)}
    nodes = [helper.make_node("Gemm", ["x", "p0", "p1"], ["g0"], name="/Gemm0", transA=1, transB=1),
             helper.make_node("Tanh", ["g0"], ["t"], name="/Tanh"),
             helper.make_node("Gemm", ["t", "p2", "p3"], ["g1"], name="/Gemm1", transB=1),
             helper.make_node("Transpose", ["g1"], ["tr"], name="/Transpose", perm=[1, 0]),
             helper.make_node("Add", ["x", "tr"], ["y"], name="/Add")]
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in params.items()]
    (tmp_path / "mixer").mkdir()
    found = backward_divergence(_bundle(tmp_path / "mixer", nodes, x, gy, inits), 1.3e-6, 1e-5)
    assert found is not None and found.get("gradient_sum") and found["tensor"] == "x", found
    assert sorted(found["consumers"]) == ["/Add", "/Gemm0"] and found["max_abs_diff"] > 1e-3
    w = r.standard_normal((4, 5)).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "w"], ["m"], name="/Mul"), helper.make_node("Add", ["m", "x"], ["y"], name="/Add")]
    (tmp_path / "right").mkdir()
    assert backward_divergence(_bundle(tmp_path / "right", nodes, x, gy, [numpy_helper.from_array(w, "w")]),
                               1.3e-6, 1e-5) is None
