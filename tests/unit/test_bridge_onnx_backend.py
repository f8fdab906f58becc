"""Aidge as an ONNX backend (interop.bridge.onnx_backend) and the ONNX conformance case source
(interop.cases.onnx_conformance), on small hand-made graphs: the values, the graph's own dtypes,
the refusals with their phase, the skip reasons and the tolerance rule."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from interop.bridge.onnx_backend import AidgeBackend
from interop.cases import onnx_conformance as oc
from interop.errors import AidgeError, UnsupportedOperatorError


def _model(op, inputs, outputs, opset=18, **attrs):
    node = helper.make_node(op, [name for name, *_ in inputs], [name for name, *_ in outputs], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_a_relu_runs_with_the_values_numpy_gives():
    model = _model("Relu", [("x", TensorProto.FLOAT, [2, 3])], [("y", TensorProto.FLOAT, [2, 3])])
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -0.25, 0.0]], dtype=np.float32)
    (y,) = AidgeBackend.run_model(model, [x])
    assert y.dtype == np.float32 and y.shape == (2, 3)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    rep = AidgeBackend.prepare(model)
    (again,) = rep.run({"x": -x})  # a mapping by name, a second call on the same compile
    np.testing.assert_array_equal(again, np.maximum(-x, 0))


def test_an_integer_graph_keeps_its_dtype():
    model = _model("Add", [("a", TensorProto.INT64, [3]), ("b", TensorProto.INT64, [3])],
                   [("c", TensorProto.INT64, [3])])
    a, b = np.array([1, 2, 2**40], dtype=np.int64), np.array([5, -7, 3], dtype=np.int64)
    (c,) = AidgeBackend.run_model(model, [a, b])
    assert c.dtype == np.int64
    np.testing.assert_array_equal(c, a + b)


def test_a_graph_recompiles_when_the_input_shape_changes():
    model = _model("Relu", [("x", TensorProto.FLOAT, None)], [("y", TensorProto.FLOAT, None)])
    rep = AidgeBackend.prepare(model)
    assert rep.run([np.ones((2, 2), np.float32)])[0].shape == (2, 2)
    assert rep.run([-np.ones((4, 1, 3), np.float32)])[0].shape == (4, 1, 3)


def test_an_op_without_an_aidge_operator_is_refused_at_import():
    model = _model("Einsum", [("a", TensorProto.FLOAT, [2, 3]), ("b", TensorProto.FLOAT, [3, 4])],
                   [("c", TensorProto.FLOAT, [2, 4])], equation="ij,jk->ik")
    with pytest.raises(UnsupportedOperatorError) as err:
        AidgeBackend.prepare(model)
    assert err.value.phase == "import" and "GenericOperator" in str(err.value)


def test_wrong_inputs_are_refused_by_name():
    model = _model("Relu", [("x", TensorProto.FLOAT, [2])], [("y", TensorProto.FLOAT, [2])])
    rep = AidgeBackend.prepare(model)
    with pytest.raises(ValueError, match="2 input"):
        rep.run([np.ones(2, np.float32), np.ones(2, np.float32)])
    with pytest.raises(ValueError, match=r"\['x'\]"):
        rep.run({"z": np.ones(2, np.float32)})


def test_devices():
    assert AidgeBackend.supports_device("CPU")
    assert not AidgeBackend.supports_device("TPU")
    with pytest.raises(ValueError, match="unknown device"):
        AidgeBackend.prepare(_model("Relu", [("x", TensorProto.FLOAT, [1])], [("y", TensorProto.FLOAT, [1])]), "TPU")


def test_aidge_errors_carry_their_phase():
    """A MatMul whose operands do not fit: Aidge refuses it at compile or forward, never a result."""
    model = _model("MatMul", [("a", TensorProto.FLOAT, None), ("b", TensorProto.FLOAT, None)],
                   [("y", TensorProto.FLOAT, None)])
    rep = AidgeBackend.prepare(model)
    with pytest.raises(AidgeError) as err:
        rep.run([np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)])
    assert err.value.phase in ("compile", "forward")


def _test(model, inputs, group="node", name="test_x"):
    return oc.OnnxTest(group, name, model, [(inputs, [])], 1e-3, 1e-7)  # onnx's own default, as its loader gives


def test_skip_reasons():
    strings = _model("Identity", [("x", TensorProto.STRING, [2])], [("y", TensorProto.STRING, [2])])
    assert oc.skip_reason_of(_test(strings, [])).startswith("strings:")
    f8 = _model("Cast", [("x", TensorProto.FLOAT, [2])], [("y", TensorProto.FLOAT8E4M3FN, [2])],
                to=TensorProto.FLOAT8E4M3FN)
    assert oc.skip_reason_of(_test(f8, [])) == "no Aidge data type: FLOAT8E4M3FN"
    seq = helper.make_graph([helper.make_node("SequenceEmpty", [], ["s"])], "g", [],
                            [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)])
    assert oc.skip_reason_of(_test(helper.make_model(seq), [])).startswith("sequences:")
    relu = _model("Relu", [("x", TensorProto.FLOAT, [2])], [("y", TensorProto.FLOAT, [2])])
    assert oc.skip_reason_of(_test(relu, [np.ones(2, np.float32)])) is None
    for reason in ("strings", "sequences", "no Aidge data type"):
        assert reason in oc.SKIP_REASONS


def _dropout(training: bool, ratio: float):
    model = _model("Dropout", [("x", TensorProto.FLOAT, [4]), ("r", TensorProto.FLOAT, []),
                               ("t", TensorProto.BOOL, [])], [("y", TensorProto.FLOAT, [4])])
    return _test(model, [np.ones(4, np.float32), np.array(ratio, np.float32), np.array(training)])


def test_only_a_training_dropout_with_a_ratio_is_random():
    """Its expected output is onnx's own random mask: skipped. Inference, or ratio 0, is the identity
    and stays a case (Aidge's Dropout defect must show as a failure there)."""
    assert oc.skip_reason_of(_dropout(True, 0.5)).startswith("random expected output")
    assert oc.skip_reason_of(_dropout(False, 0.5)) is None
    assert oc.skip_reason_of(_dropout(True, 0.0)) is None


def test_operator_of_names_the_op_under_test():
    relu = _model("Relu", [("x", TensorProto.FLOAT, [2])], [("y", TensorProto.FLOAT, [2])])
    assert oc.operator_of(_test(relu, [])) == "Relu"
    two = helper.make_graph([helper.make_node("Exp", ["x"], ["e"]), helper.make_node("ReduceSum", ["e"], ["y"])],
                            "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    expanded = _test(helper.make_model(two), [], name="test_softmax_axis_0_expanded")
    assert oc.operator_of(expanded) == "Softmax"
    assert oc.operator_of(_test(relu, [], group="pytorch-converted")) == "pytorch-converted"


def test_the_tolerance_is_onnx_s_own_never_tighter_than_the_oracle_s():
    from interop.oracle.tolerance import default_tolerances

    test = _test(_model("Relu", [("x", TensorProto.FLOAT, [2])], [("y", TensorProto.FLOAT, [2])]), [])
    tol = oc.case_tolerance(test, np.float32)
    d_rtol, d_atol = default_tolerances("float32")
    assert tol.rtol == max(test.rtol, d_rtol) and tol.atol == max(test.atol, d_atol)
    exact = oc.case_tolerance(test, np.int64)
    assert (exact.rtol, exact.atol) == (0.0, 0.0)  # integers compared exactly whatever onnx's tolerance


def test_onnx_s_own_runner_takes_the_backend():
    """onnx.backend.test.BackendTest, onnx's runner, drives AidgeBackend as it is: a passing node test
    passes, Aidge's Dropout in inference (its output should be its input) fails there too."""
    import unittest
    import warnings

    from onnx.backend.test import BackendTest

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # onnx's case generators warn on purpose (overflowing casts)
        runner = BackendTest(AidgeBackend, __name__)
    runner.include(r"^test_(relu|dropout_default)_cpu$")
    tests = list(unittest.defaultTestLoader.loadTestsFromTestCase(runner.tests))  # include/exclude applied
    ids = [t.id().rsplit(".", 1)[-1] for t in tests]
    result = unittest.TestResult()
    unittest.TestSuite(tests).run(result)
    ran = set(ids) - {t.id().rsplit(".", 1)[-1] for t, _ in result.skipped}  # onnx skips what no include matches
    failed = {t.id().rsplit(".", 1)[-1] for t, _ in result.failures + result.errors}
    assert ran == {"test_relu_cpu", "test_dropout_default_cpu"}, ran
    assert failed == {"test_dropout_default_cpu"}
