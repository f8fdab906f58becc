"""interop.verify: a verdict for any torch callable, each mismatch attributed."""
from __future__ import annotations

import os
import signal

import pytest
import torch
import torch.nn.functional as F

import interop
from interop.oracle.precision import within_float32_error
from interop.equivalence.verdict import Verdict


def test_a_function_that_matches_passes_forward_and_backward():
    verdict = interop.verify(torch.tanh, torch.randn(2, 3))
    assert isinstance(verdict, Verdict)
    assert verdict.outcome == "pass" and verdict.passed
    assert verdict.category is None and verdict.attribution is None
    assert verdict.backward_checked


def test_a_module_with_parameters_matches_and_keeps_its_mode():
    model = torch.nn.Linear(4, 3).eval()
    before = model.weight.detach().clone()
    verdict = interop.verify(model, torch.randn(2, 4))
    assert verdict.outcome == "pass", verdict.message
    assert not model.training and torch.equal(model.weight, before)


def test_non_tensor_arguments_are_constants():
    verdict = interop.verify(torch.clamp, torch.randn(3, 4), min=-0.5, max=0.5, backward=False)
    assert verdict.outcome == "pass", verdict.message
    assert not verdict.backward_checked


def test_weights_given_as_arguments_are_graph_inputs():
    x, w, b = torch.randn(1, 3, 6, 6), torch.randn(4, 3, 3, 3), torch.randn(4)
    verdict = interop.verify(F.conv2d, x, w, b, padding=1)
    assert verdict.outcome == "pass", verdict.message
    assert verdict.backward_checked


def test_a_function_aidge_computes_differently_is_a_fail_attributed_to_aidge():
    # Aidge's ReLU maps NaN to 0; torch and onnxruntime propagate it
    verdict = interop.verify(torch.relu, torch.tensor([1.0, float("nan"), -1.0]), backward=False)
    assert verdict.outcome == "fail"
    assert verdict.category == "outputs_differ"
    assert verdict.attribution == "aidge"
    assert verdict.phase == "forward"
    assert verdict.mismatch["n_mismatched"] == 1 and verdict.mismatch["n_total"] == 3
    assert "outputs_differ [aidge]" in verdict.summary


def test_a_gradient_mismatch_is_attributed_against_the_float64_gradient():
    # Aidge's LeakyReLU backward scales positive inputs' gradient by the slope too
    verdict = interop.verify(F.leaky_relu, torch.linspace(-1, 1, 8), 0.2)
    assert verdict.outcome == "fail"
    assert verdict.category == "gradients_differ"
    assert verdict.phase == "backward" and verdict.attribution == "aidge"


def _segfault(x):
    os.kill(os.getpid(), signal.SIGSEGV)
    return x


def test_a_crash_is_a_verdict_with_its_signal():
    # the callable kills the process while torch.onnx.export traces it: torch's side, not Aidge's
    verdict = interop.verify(_segfault, torch.randn(2))
    assert verdict.outcome == "crash"
    assert verdict.category == "crash"
    assert verdict.signal == "SIGSEGV"
    assert "SIGSEGV" in verdict.summary
    assert verdict.phase == "export" and verdict.attribution == "export"


def test_aidge_crashing_in_its_forward_on_a_graph_onnxruntime_refuses_is_the_exports():
    # Aidge 0.10.1: a 0-d input reduced with keepdim=True segfaults in the forward
    # (docs/aidge-notes.md, "crash on a 0-d input reduced with keepdim=True"); the exported
    # ReduceSum has axis 0 on a rank-0 input, which onnxruntime refuses ("axis must be in
    # [-rank, rank-1]"): since issue 45 the crash is the export's, whatever the phase
    verdict = interop.verify(torch.sum, torch.randn(()), 0, keepdim=True)
    assert verdict.outcome == "crash" and verdict.category == "crash"
    assert verdict.phase == "forward" and verdict.attribution == "export"


def test_an_export_that_loses_an_argument_is_attributed_to_the_export():
    # torch.onnx lowers softplus(x, beta, threshold) to ONNX Softplus, which has no threshold:
    # torch returns x above the threshold, onnxruntime and Aidge log(1 + exp(x))
    x = torch.linspace(-3, 3, 12).reshape(3, 4)
    verdict = interop.verify(F.softplus, x, beta=1, threshold=1)
    assert verdict.outcome == "fail"
    assert verdict.category == "outputs_differ"
    assert verdict.attribution == "export"
    assert "onnxruntime" in verdict.message


def test_an_unsupported_operator_is_an_error_verdict():
    verdict = interop.verify(F.elu, torch.randn(3))
    assert verdict.outcome == "error"
    assert verdict.category == "unsupported_operator"
    assert verdict.phase == "import" and verdict.attribution == "aidge"


def test_a_callable_without_tensor_arguments_is_refused():
    verdict = interop.verify(lambda n: torch.zeros(n), 3, isolate=False)
    assert verdict.outcome == "error" and "no tensor argument" in verdict.message


@pytest.mark.parametrize("aidge, expected", [
    ([1.0, 2.0], True),      # as close to the exact value as torch float32
    ([1.0, 2.5], False),     # farther
    ([float("nan"), 2.0], False),
])
def test_precision_rule(aidge, expected):
    exact = torch.tensor([1.0, 2.0], dtype=torch.float64)
    torch32 = torch.tensor([1.0, 2.1])
    assert within_float32_error(torch.tensor(aidge), torch32, exact, 1.3e-6, 1e-5) is expected


def test_verify_is_a_lazy_public_name():
    assert "verify" in dir(interop) and interop.verify is interop.equivalence.verdict.verify


def test_a_callable_that_depends_on_memory_layout_gets_no_verdict_on_aidge():
    # OpInfo's as_strided.partial_views: a view into a larger storage, read by absolute offset.
    # The check feeds fresh copies (values only, as an ONNX graph sees them): torch's own call
    # fails on them, so there is nothing to compare: a loud error of the case, never Aidge's
    base = torch.randn(20)
    verdict = interop.verify(torch.as_strided, base[10:20], (2, 2), (1, 2), storage_offset=10)
    assert verdict.outcome == "error"
    assert verdict.category == "not_comparable (test strategy)"
    assert verdict.attribution == "unknown"
    assert "torch's own call fails on copies of the inputs" in verdict.message


def test_opinfo_samples_without_a_tensor_are_no_case():
    from interop.cases import opinfo

    try:
        cases = opinfo.opinfo_cases(["linspace.tensor_overload"], cap=None)
    except opinfo.OpInfoUnavailable:
        pytest.skip("torch's OpInfo database is not importable here")
    assert cases  # the entry's samples with tensor bounds stay
    ids = {c.id for c in cases}
    assert "opinfo_linspace.tensor_overload_s181_1_3_1" not in ids  # start=1, end=3, steps=1: no tensor
