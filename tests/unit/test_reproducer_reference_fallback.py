"""The reduction's reference when onnxruntime has no kernel for a valid export (issue 42): onnx's
reference evaluator gives the intermediate values, and a graph that computes something other than
torch is said to be the export's fault rather than an Aidge node's (opinfo avg_pool2d float64 with
divisor_override: the exporter drops the attribute, onnxruntime has no float64 AveragePool)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from interop.reproducers.bundle import export_check
from interop.reproducers.reduce import _reference_values, reduce_bundle

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _avgpool_f64():
    from onnx import TensorProto, helper

    node = helper.make_node("AveragePool", ["x"], ["y"], name="/AveragePool", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                            strides=[1, 1], ceil_mode=1, count_include_pad=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 2, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1, 2, 5, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


class EquivalenceError(Exception):
    """Named as the comparator's error: the reduction reads a mismatch by its type's name."""


def _bundle(tmp_path, model, x, expected):
    import onnx
    from onnx import numpy_helper

    folder = tmp_path / "bundle"
    (folder / "test_data_set_0").mkdir(parents=True)
    onnx.save(model, str(folder / "model.onnx"))
    (folder / "test_data_set_0" / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (folder / "test_data_set_0" / "output_0.pb").write_bytes(numpy_helper.from_array(expected, "y").SerializeToString())
    return folder


def test_onnxruntime_has_no_float64_averagepool_and_the_reference_stands_in(tmp_path):
    model = _avgpool_f64()
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5))
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    check = export_check(path, {"x": x}, None, 1e-7, 1e-7)
    assert check["valid"] is True and "NOT_IMPLEMENTED" in check["onnxruntime"]
    values = _reference_values(model, {"x": x})
    # the reference is a real AveragePool: the corner averages its 2x2 window (count_include_pad=0)
    assert values["y"].shape == (1, 2, 5, 5)
    assert np.isclose(values["y"][0, 0, 0, 0], x[0, 0, :2, :2].mean())


def test_a_graph_that_computes_something_else_than_torch_is_the_exports_fault(tmp_path):
    model = _avgpool_f64()
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 5))
    reference = _reference_values(model, {"x": x})["y"]
    torch_like = reference * 9 / 2  # divisor_override=2 on a full 3x3 window: what the export dropped
    folder = _bundle(tmp_path, model, x, torch_like)
    meta = {"reproduces": True, "phase": "forward", "calls": 1, "case": "t", "failure": "forward: EquivalenceError",
            "export_check": {"checker": "ok", "valid": True,
                             "onnxruntime": "NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : AveragePool"},
            "repro": {"exit": 1, "line": "DEFECT PRESENT: forward call 1, output 0 (node 'AveragePool', "
                                          "PaddedAvgPooling2D): ..."}}
    out = reduce_bundle(folder, EquivalenceError("differs"), ["x"], [x], True, 1e-7, 1e-7, meta)
    assert out["kept"] is False and out["reference_matches_torch"] is False, out
    assert out["reference"].startswith("onnx.reference")
    assert "export is at fault" in out["why"]
    # Aidge 0.10.1's float64 PaddedAvgPooling2D computes what the ONNX graph says (checked 2026-12-04)
    assert "Aidge agrees with it on every node" in out["why"], out["why"]
    assert "first_diverging" not in out


def test_an_invalid_export_says_so_rather_than_onnxruntime_cannot_run(tmp_path):
    meta = {"reproduces": True, "export_check": {"valid": False, "checker": "ValidationError: x"}}
    out = reduce_bundle(tmp_path, EquivalenceError("d"), [], [], False, 1e-5, 1e-5, meta)
    assert out["kept"] is False and "export is invalid" in out["why"]
