"""Issue 46, item 3: one equivalence policy. pytest's verdict (check_callable), asv's precheck
(benchmarks/harness.py) and ModelTester's step decide "Aidge matches torch" through
interop.equivalence.policy.difference.

The case: ``x * y.detach()``. torch gives ``y`` no gradient, Aidge one (ONNX has no stop-gradient).
Before the policy, at 65d6256's parent: check_callable passed it; asv's precheck failed it
("PrecheckFailed ... Structure mismatch at input grad[1]: actual is a tensor of shape (2, 3), expected
None") and so did ModelTester ("input grad [1] differs"). Now all three give one answer: a gradient
torch does not give is not compared, so the case passes in the three.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from interop.cases.case import Case  # noqa: E402
from interop.equivalence import policy  # noqa: E402


class ScaleByDetached(torch.nn.Module):
    def forward(self, x, y):
        return x * y.detach()


CASE = Case(id="ScaleByDetached_policy", op_class=ScaleByDetached, input_size=[(2, 3), (2, 3)],
            operator="ScaleByDetached", aidge_types=("Mul",))


@pytest.fixture
def decisions(monkeypatch):
    """What each path asked the policy (``what`` of every call of policy.difference)."""
    asked = []
    real = policy.difference

    def spy(what, *args, **kwargs):
        asked.append(what)
        return real(what, *args, **kwargs)

    monkeypatch.setattr(policy, "difference", spy)
    return asked


def _pytest_verdict():
    from interop.equivalence.callable_check import check_callable

    inputs = harness._seeded_inputs(CASE.id, CASE.input_sizes, ())
    return check_callable(CASE.build_model(), tuple(inputs), name=CASE.id)


def _model_tester():
    from interop import ModelTester, wrap
    from interop.bridge.value_check import checks_deferred

    model = CASE.build_model()
    with checks_deferred():
        aidge = wrap(model, CASE.input_sizes)
    ModelTester(model, aidge, name=CASE.id, epochs=2, benchmark=False,
                max_slowdown_ratio=None).test_multiple_step(CASE.input_sizes)


def test_the_case_that_passed_pytest_and_failed_asv_gets_one_answer_from_the_three(decisions):
    assert _pytest_verdict()["backward_checked"]
    # the spy sees the policy only where the verdict runs in this process (not in an isolated child)
    assert not decisions or "input grad [1]" in decisions  # decided by the policy, not skipped
    decisions.clear()
    pair = harness._build_pair(CASE, "backward")  # PrecheckFailed before the policy
    assert pair.case_id == CASE.id
    assert not decisions or {"output", "input grad [0]", "input grad [1]"} <= set(decisions)
    decisions.clear()
    _model_tester()  # EquivalenceError "input grad [1] differs" before the policy
    assert not decisions or {"output", "loss", "input grad [0]", "input grad [1]"} <= set(decisions)


def test_a_real_difference_is_one_answer_too(monkeypatch):
    """The same three paths fail alike once Aidge's gradient differs (Aidge's y gradient scaled)."""
    from interop.bridge.module import AidgeModule

    from interop.equivalence.tester import EquivalenceError

    real_forward = AidgeModule.forward

    def off_by_two(self, *xs):
        return real_forward(self, *xs) * 2.0

    monkeypatch.setattr(AidgeModule, "forward", off_by_two)
    with pytest.raises(EquivalenceError, match="output"):
        _pytest_verdict()
    with pytest.raises(harness.PrecheckFailed, match="the output of Aidge differs"):
        harness._build_pair(CASE, "backward")
    with pytest.raises(EquivalenceError, match="output differs"):
        _model_tester()


def test_the_gradient_rule():
    grad = torch.ones(2)
    assert policy.difference("g", torch.ones(2), None, gradient=True) is None  # torch gives none
    found = policy.difference("g", None, grad, gradient=True)  # Aidge gives none: zeros
    assert found is not None and torch.equal(found.actual, torch.zeros(2)) and "g" in found.detail
    assert policy.difference("g", None, torch.zeros(2), gradient=True) is None
    # outside the gradient rule a missing value is a difference
    assert policy.difference("out", None, grad) is not None


def test_the_tolerance_follows_torchs_dtype_and_explicit_precisions_hold_for_every_dtype():
    x = torch.tensor([1.0], dtype=torch.float64)
    near = x + 1e-6  # within float32's default (rtol 1.3e-6, atol 1e-5), not float64's (1e-7, 1e-7)
    assert policy.difference("v", near.float(), x.float()) is None
    assert policy.difference("v", near, x) is not None
    assert policy.difference("v", near, x, (1e-3, 1e-3)) is None


def test_seed_and_parameters(monkeypatch):
    import zlib

    monkeypatch.delenv(policy.SEED_ENV, raising=False)
    assert policy.seed_for("Conv2D_x") == zlib.crc32(b"Conv2D_x") & 0x7FFFFFFF
    monkeypatch.setenv(policy.SEED_ENV, "7")
    assert policy.seed_for("Conv2D_x") == 7

    class Held(torch.nn.Module):
        def __init__(self, unmapped=()):
            super().__init__()
            self.a = torch.nn.Parameter(torch.ones(1))
            self.b = torch.nn.Parameter(torch.ones(1))
            self.c = torch.nn.Parameter(torch.ones(1), requires_grad=False)
            self.unmapped_state = list(unmapped)

    names = [n for n, _, _ in policy.compared_parameters(Held(), Held(unmapped=["b"]))]
    assert names == ["a"]
