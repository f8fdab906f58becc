"""Issue 42: a bundle holds the inputs of the call the case failed on, not always its first call's.

A case's later call may feed other values than its first (``verify`` permutes them on call 2, the
ModelTester draws new ones each epoch). When the defect shows only on those values, a bundle with
the first call's inputs reads "FIXED" (OpInfo ``asin`` s0 gradient, ``log_softmax.with_dtype`` s1
float64 did). Here a real Aidge 0.10.1 defect that depends on the values: BatchNormalization in
training mode uses the running statistics (mean 0, variance 1 at export) instead of the batch's,
which agree exactly when each channel of the batch already has mean 0 and variance 1 (call 1:
values +-1), and differ on any other batch (call 2)."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from interop import wrap
from interop.bridge import capture

from bundle_case import captured_case

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _call_one_inputs() -> torch.Tensor:
    """Each channel's batch: half +1, half -1 (mean 0, biased variance 1)."""
    x = torch.ones(2, 3, 2, 2)
    x[1] = -1.0
    return x


def _call_two_inputs() -> torch.Tensor:
    return torch.linspace(0.5, 3.0, 24).reshape(2, 3, 2, 2)


def _batchnorm_train_right_on_call_1_wrong_on_call_2(calls=(1, 2)):
    from interop.oracle.compare import compare_tensors
    from interop.equivalence.tester import EquivalenceError

    torch.manual_seed(0)
    model = torch.nn.BatchNorm2d(3).train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        am = wrap(model, [(2, 3, 2, 2)], known_defects="warn")
    reference = torch.nn.BatchNorm2d(3).train()  # fresh running statistics: train mode ignores them
    for call, x in zip(calls, (_call_one_inputs(), _call_two_inputs())):
        want = reference(x).detach()
        got = am(x)
        mismatch = compare_tensors(got.detach(), want, path="output")
        if mismatch is not None:
            raise EquivalenceError(f"call {call}: {mismatch.message}", test="bn", epoch=call, what="output", seed=0)
    raise AssertionError("Aidge's BatchNorm2D in train mode agreed with torch on both calls: the premise is gone")


def _run_case(tmp_path: Path, name: str, fn) -> dict:
    meta, failure = captured_case(tmp_path, name, fn)
    assert "call 2:" in str(failure), failure  # the case failed on call 2, not call 1
    return meta


def _stored_input(folder: Path) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    return numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0" / "input_0.pb")))


def test_a_failure_on_call_2_keeps_call_2_s_inputs_and_reproduces(tmp_path):
    meta = _run_case(tmp_path, "bn_call2", _batchnorm_train_right_on_call_1_wrong_on_call_2)
    folder = tmp_path / "bn_call2"
    assert meta["inputs_from"] == "call 2" and meta["failing_call"] == 2, meta
    assert np.array_equal(_stored_input(folder), _call_two_inputs().numpy())
    # the expected values are torch's on those inputs (train mode: the batch's statistics)
    import onnx
    from onnx import numpy_helper

    want = torch.nn.BatchNorm2d(3).train()(_call_two_inputs()).detach().numpy()
    got = numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0" / "output_0.pb")))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # and the bundle fails as the case did (it read "FIXED" with call 1's inputs)
    assert meta["reproduces"] is True, meta["repro"]
    assert meta["repro"]["exit"] == 1 and meta["repro"]["line"].startswith("DEFECT PRESENT: forward"), meta["repro"]


def _same_inputs_twice_failing_on_call_1():
    from interop.oracle.compare import compare_tensors
    from interop.equivalence.tester import EquivalenceError

    from interop.bridge.value_check import checks_deferred

    model = torch.nn.BatchNorm2d(3).train()
    x = _call_two_inputs()
    want = torch.nn.BatchNorm2d(3).train()(x).detach()
    with checks_deferred(), warnings.catch_warnings():  # the harness compares, as verify() does
        warnings.simplefilter("ignore")
        am = wrap(model, [(2, 3, 2, 2)], known_defects="warn")
        am(x)
        got = am(x.clone())  # a second call of the same values
    mismatch = compare_tensors(got.detach(), want, path="output")
    raise EquivalenceError(f"call 2: {mismatch.message if mismatch else 'none'}", test="bn", epoch=2, what="output", seed=0)


def test_later_calls_of_the_same_values_keep_the_first_call_s_inputs(tmp_path):
    meta = _run_case(tmp_path, "bn_same", _same_inputs_twice_failing_on_call_1)
    assert meta["inputs_from"] == "first call" and meta["failing_call"] == 2, meta
    assert np.array_equal(_stored_input(tmp_path / "bn_same"), _call_two_inputs().numpy())
    assert meta["reproduces"] is True, meta["repro"]


def test_inputs_changed_in_place_after_the_call_are_not_taken_for_the_call_s():
    entry = capture.Entry(exported=None, example_inputs=[torch.zeros(2)], snapshot=None)
    entry.first_inputs = [torch.zeros(2)]
    x = torch.ones(2)
    entry.latest_inputs, entry.forward_calls = capture._held([x]), 2
    inputs, call, source = entry.failing_call()
    assert call == 2 and source == "call 2" and torch.equal(inputs[0], torch.ones(2))
    x.add_(1)  # the caller reuses its buffer: the held tensor no longer holds call 2's values
    inputs, call, source = entry.failing_call()
    assert call == 2 and source.startswith("first call (call 2's inputs were changed in place")
    assert torch.equal(inputs[0], torch.zeros(2))
    nan = torch.tensor([float("nan"), 1.0])
    entry.first_inputs, entry.latest_inputs = [nan.clone()], capture._held([nan.clone()])
    assert entry.failing_call()[2] == "first call"  # NaN equals NaN here: the same values
