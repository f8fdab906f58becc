"""Issue 45: precision is decided against torch float64 on every route (torchscript, dynamo),
in ``verify`` and in ``wrap``'s first-call check, before anyone is blamed. An EfficientNet-style
stack of ten MBConv blocks (expansion, depthwise 3x3, squeeze-excitation, SiLU, BatchNorm with
non-trivial statistics; eval): torch float32, onnxruntime and Aidge are each about 2.5e-4 from
torch's float64 result, and differ from each other by as much. Before (4e189b7): ``verify`` said
``fail [export]`` on both routes (onnxruntime differs from torch too) and ``wrap``'s first call
raised ValueMismatchError; now ``precision``, and ``wrap`` returns the values."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import interop
from interop import wrap

pytest.importorskip("aidge_core")
pytest.importorskip("onnxruntime")


class MBConv(torch.nn.Module):
    def __init__(self, c=32, e=4):
        super().__init__()
        self.exp = torch.nn.Conv2d(c, c * e, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(c * e)
        self.dw = torch.nn.Conv2d(c * e, c * e, 3, padding=1, groups=c * e, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(c * e)
        self.se1, self.se2 = torch.nn.Conv2d(c * e, 8, 1), torch.nn.Conv2d(8, c * e, 1)
        self.proj = torch.nn.Conv2d(c * e, c, 1, bias=False)
        self.bn3 = torch.nn.BatchNorm2d(c)
        with torch.no_grad():
            for bn in (self.bn1, self.bn2, self.bn3):
                bn.running_mean.uniform_(-1, 1)
                bn.running_var.uniform_(0.5, 2)
                bn.weight.uniform_(1, 4)

    def forward(self, x):
        h = F.silu(self.bn1(self.exp(x)))
        h = F.silu(self.bn2(self.dw(h)))
        w = torch.sigmoid(self.se2(F.silu(self.se1(h.mean((2, 3), keepdim=True)))))
        return x + self.bn3(self.proj(h * w))


def _stack():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return torch.nn.Sequential(*[MBConv() for _ in range(10)]).eval(), torch.randn(2, 32, 16, 16) * 4


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_float32_rounding_is_precision_on_every_route(exporter):
    model, x = _stack()
    verdict = interop.verify(model, x, exporter=exporter, backward=False, isolate=False)
    # float32 rounding is no mismatch: the verdict passes and says what differed by rounding only
    # (before 2026-12-06: fail / precision, and the verdict stopped there; before issue 45: export)
    assert verdict.outcome == "pass" and verdict.exporter == exporter, verdict
    assert verdict.precision and "float32 rounding only" in verdict.precision[0], verdict
    am = wrap(model, example_inputs=[x], exporter=exporter)
    with torch.no_grad():
        got, want = am(x), model(x)  # before: ValueMismatchError (onnxruntime differs from torch too)
        exact = copy.deepcopy(model).double()(x.double())
    err_aidge, err_torch = (got.double() - exact).abs().max(), (want.double() - exact).abs().max()
    assert err_torch > 1e-4  # the figure that makes this float32 rounding, not a defect
    assert err_aidge <= 2 * err_torch


def test_a_real_difference_is_still_blamed():
    from interop.oracle.precision import within_float32_error

    exact = torch.linspace(-3, 3, 50, dtype=torch.float64)
    torch32 = exact + 3e-4 * torch.sin(exact * 7)  # torch float32 errs up to 3e-4 (a deep float32 stack)
    assert within_float32_error(exact - 4e-4 * torch.cos(exact * 5), torch32, exact, 1.3e-6, 1e-5)
    wrong = torch32.clone()
    wrong[7] += 2e-3  # one element off by more than the float32 error of the tensor
    assert not within_float32_error(wrong, torch32, exact, 1.3e-6, 1e-5)


def test_model_tester_takes_float32_rounding_as_precision_not_a_mismatch():
    """ModelTester (the operator suite's harness) asks the oracle too: before 2026-12-07 the same
    stack raised EquivalenceError ("output differs"), attributed to Aidge by its category alone."""
    from interop.equivalence.tester import ModelTester

    model, x = _stack()
    am = wrap(model, example_inputs=[x])
    tester = ModelTester(model, am, name="mbconv_stack", test_backward=False, epochs=1, benchmark=False)
    tester.unit_test([x], None)
    assert tester.precision and "float32 rounding only" in tester.precision[0], tester.precision


def test_model_tester_names_who_is_to_blame():
    """A real forward defect (Aidge 0.10.1's BatchNorm2D ignores training mode: registry
    D-c80900db): onnxruntime on the same ONNX agrees with torch, so the oracle says ``aidge``."""
    from interop.equivalence.tester import EquivalenceError, ModelTester

    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = torch.nn.BatchNorm2d(3).train()
        x = torch.randn(4, 3, 5, 5) * 3 + 1
    am = wrap(model, example_inputs=[x])
    tester = ModelTester(model, am, name="bn_train", test_backward=False, epochs=1, benchmark=False)
    with pytest.raises(EquivalenceError) as info:
        tester.unit_test([x], None)
    assert info.value.attribution == "aidge", str(info.value)
    assert "attribution: aidge (onnxruntime on the same ONNX model agrees with torch" in str(info.value)


@pytest.mark.parametrize("isolate", [False, True])
def test_a_failing_verdict_keeps_the_precision_it_found_before(isolate):
    """The forward differs by float32 rounding only, then the backward fails (BatchNorm2D has no
    backward on cpu): the verdict names the blocker and still says the forward was rounding
    (before 2026-12-07 its ``precision`` was empty whenever a later step failed)."""
    model, x = _stack()
    verdict = interop.verify(model, x, exporter="torchscript", isolate=isolate)
    assert verdict.category == "backward_not_implemented", verdict
    assert verdict.precision and "float32 rounding only" in verdict.precision[0], verdict
