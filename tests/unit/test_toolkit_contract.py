"""interop.diagnostics.contract: every check fails on a model built to violate it and passes on a
well-behaved one; the report, the selection rules and the side effects."""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from interop.diagnostics import CHECKS, ContractReport, ContractViolation, check_inference_contract, parity_devices


def _seeded(factory, seed=0):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return factory()


def good_model() -> nn.Module:
    return _seeded(lambda: nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))).eval()


def good_input(n=4) -> torch.Tensor:
    return torch.randn(n, 6, generator=torch.Generator().manual_seed(1))


def run(model, x=None, check=None, **kw) -> ContractReport:
    checks = [check] if check else None
    return check_inference_contract(model, good_input() if x is None else x, raise_on_failure=False,
                                    checks=checks, **kw)


# --------------------------------------------------------------------------------------
# Models built to violate one check each
# --------------------------------------------------------------------------------------


class Accumulates(nn.Module):
    """Returns the same tensor object on every call, accumulating into it."""

    def __init__(self):
        super().__init__()
        self.acc = None

    def forward(self, x):
        if self.acc is None:
            self.acc = torch.zeros_like(x)
        self.acc += x
        return self.acc


class CentersBatch(nn.Module):
    def forward(self, x):
        return x - x.mean(dim=0, keepdim=True)


class MovedBehavesDifferently(nn.Module):
    """Simulates a device-specific code path: the output changes once the module is moved."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)
        self.moved = False

    def _apply(self, fn, recurse=True):
        self.moved = True
        return super()._apply(fn, recurse)

    def forward(self, x):
        return self.lin(x) + (1e-2 if self.moved else 0.0)


class Cancels(nn.Module):
    """``(x + 1e8) - 1e8`` loses every digit of x in float32, none in float64."""

    def forward(self, x):
        return (x + 1e8) - 1e8


class CountsCalls(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)
        self.register_buffer("calls", torch.zeros(()), persistent=False)

    def forward(self, x):
        self.calls += 1
        return self.lin(x)


class EditsWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        with torch.no_grad():
            self.lin.weight.mul_(0.5)
        return self.lin(x)


class AddsBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        if not hasattr(self, "cache"):
            self.register_buffer("cache", x.detach().clone())
        return self.lin(x)


class RemovesBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)
        self.register_buffer("scratch", torch.ones(3))

    def forward(self, x):
        if "scratch" in self._buffers:
            del self._buffers["scratch"]
        return self.lin(x)


class HoldsNaN(nn.Module):
    """A buffer holding NaN that forward never touches: not a mutation (NaN != NaN)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)
        self.register_buffer("unset", torch.full((2,), float("nan")), persistent=False)

    def forward(self, x):
        return self.lin(x)


class EditsInput(nn.Module):
    def forward(self, x):
        x.mul_(2)
        return x.sum(dim=1)


# --------------------------------------------------------------------------------------
# The checks, one by one
# --------------------------------------------------------------------------------------


def test_everything_passes_on_a_well_behaved_model():
    report = run(good_model(), dtypes=(torch.float64,), devices=("cpu",))
    assert report.ok, str(report)
    assert report.passed == list(CHECKS)


def test_eval_mode():
    train = good_model().train()
    result = run(train, check="eval_mode")["eval_mode"]
    assert result.status == "FAIL"
    assert "<root>" in result.reason and "model.eval()" in result.hint
    assert run(good_model(), check="eval_mode")["eval_mode"].status == "PASS"


def test_finite_outputs():
    log = _seeded(lambda: nn.Sequential(nn.Linear(6, 3))).eval()
    bad = nn.Sequential(log, type("Log", (nn.Module,), {"forward": lambda self, x: torch.log(x)})())
    result = run(bad, check="finite_outputs")["finite_outputs"]
    assert result.status == "FAIL" and "NaN" in result.reason
    assert run(good_model(), check="finite_outputs")["finite_outputs"].status == "PASS"


def test_finite_outputs_hint_points_at_non_finite_inputs():
    x = good_input()
    x[0, 0] = float("nan")
    result = run(good_model(), x=x, check="finite_outputs")["finite_outputs"]
    assert result.status == "FAIL" and "inputs already hold NaN/Inf" in result.hint


def test_deterministic_copies_the_first_output():
    # Without copying the first output, both calls return the same object and compare equal.
    result = run(Accumulates(), check="deterministic")["deterministic"]
    assert result.status == "FAIL", str(result)
    assert "bit-exact" in result.reason
    assert run(good_model(), check="deterministic")["deterministic"].status == "PASS"


def test_deterministic_catches_dropout_left_on():
    model = _seeded(lambda: nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5)))  # train mode
    assert run(model, check="deterministic")["deterministic"].status == "FAIL"


def test_batch_invariance():
    result = run(CentersBatch(), check="batch_invariance")["batch_invariance"]
    assert result.status == "FAIL" and "sample 0" in result.reason
    assert run(good_model(), check="batch_invariance")["batch_invariance"].status == "PASS"


def test_batch_invariance_needs_two_samples():
    result = run(good_model(), x=good_input(1), check="batch_invariance")["batch_invariance"]
    assert result.status == "SKIP" and "at least 2" in result.reason


def test_batch_invariance_catches_batchnorm_in_training_mode():
    model = _seeded(lambda: nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1d(4)))
    result = run(model, check="batch_invariance")["batch_invariance"]
    assert result.status == "FAIL"  # raises on a batch of one: reported, not propagated
    assert "Expected more than 1 value per channel" in result.reason


def test_device_parity():
    bad = _seeded(MovedBehavesDifferently).eval()
    result = run(bad, check="device_parity", devices=("cpu",))["device_parity"]
    assert result.status == "FAIL" and "on cpu" in result.reason
    good = run(good_model(), check="device_parity", devices=("cpu",))["device_parity"]
    assert good.status == "PASS"


def test_device_parity_without_devices_is_skipped_without_touching_a_gpu(monkeypatch):
    def forbidden(*a, **k):
        raise AssertionError("device_parity probed CUDA although devices=() was given")

    monkeypatch.setattr(torch.cuda, "is_available", forbidden)
    result = run(good_model(), check="device_parity", devices=())["device_parity"]
    assert result.status == "SKIP" and "--torch-device=cpu" in result.reason
    assert parity_devices("cpu") == ()  # what --torch-device=cpu hands to the check


def test_parity_devices():
    assert parity_devices("cuda") == ("cpu",)
    expected = ("cuda",) if torch.cuda.is_available() else ()
    assert parity_devices("auto")[: len(expected)] == expected


def test_dtype_parity():
    result = run(Cancels(), check="dtype_parity", dtypes=(torch.float64,))["dtype_parity"]
    assert result.status == "FAIL" and "torch.float64" in result.reason
    good = run(good_model(), check="dtype_parity", dtypes=(torch.float64,))["dtype_parity"]
    assert good.status == "PASS"
    skipped = run(good_model(), check="dtype_parity")["dtype_parity"]
    assert skipped.status == "SKIP" and "no dtype asked" in skipped.reason


@pytest.mark.parametrize("model, words", [
    (CountsCalls, ["calls (buffer)", "changed"]),  # non-persistent buffer
    (EditsWeight, ["lin.weight (parameter)"]),
    (AddsBuffer, ["state added by forward: cache (buffer)"]),
    (RemovesBuffer, ["state removed by forward: scratch (buffer)"]),
    (EditsInput, ["inputs were modified in place"]),
], ids=["counter", "parameter", "added", "removed", "input"])
def test_no_state_mutation(model, words):
    result = run(_seeded(model).eval(), check="no_state_mutation")["no_state_mutation"]
    assert result.status == "FAIL", str(result)
    for word in words:
        assert word in result.reason


def test_no_state_mutation_is_nan_safe():
    result = run(_seeded(HoldsNaN).eval(), check="no_state_mutation")["no_state_mutation"]
    assert result.status == "PASS", str(result)


# --------------------------------------------------------------------------------------
# Report, selection, side effects
# --------------------------------------------------------------------------------------


def test_report_text():
    report = run(_seeded(lambda: nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5))))
    text = str(report)
    first, *lines = text.splitlines()
    assert re.fullmatch(r"Inference contract: \d+ passed, \d+ failed, \d+ skipped", first)
    assert first == (f"Inference contract: {len(report.passed)} passed, {len(report.failed)} failed, "
                     f"{len(report.skipped)} skipped")
    assert "[FAIL] eval_mode" in lines and "[FAIL] deterministic" in lines
    i = lines.index("[FAIL] deterministic")
    assert lines[i + 1].strip().startswith("reason:")
    assert any(line.strip().startswith("hint:") for line in lines[i + 1:])
    assert any(line.startswith("[SKIP] dtype_parity: ") for line in lines)


def test_raise_on_failure():
    with pytest.raises(ContractViolation) as info:
        check_inference_contract(CentersBatch(), good_input())
    assert isinstance(info.value, AssertionError)
    assert "[FAIL] batch_invariance" in str(info.value)
    assert info.value.report["batch_invariance"].status == "FAIL"
    report = check_inference_contract(good_model(), good_input())  # passes: no raise
    assert report.ok


@pytest.mark.parametrize("kw", [dict(checks=[]), dict(skip=list(CHECKS)), dict(checks=["eval_mode"], skip="eval_mode")])
def test_selecting_no_check_raises_before_the_model_runs(kw):
    calls = []

    class Spy(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x

    with pytest.raises(ValueError, match="no check selected"):
        check_inference_contract(Spy(), good_input(), **kw)
    assert calls == []


def test_unknown_check_name():
    with pytest.raises(ValueError, match="unknown check.*'deterministc'"):
        check_inference_contract(good_model(), good_input(), checks=["deterministc"])


def test_skip_and_order():
    report = check_inference_contract(good_model(), good_input(), checks=["no_state_mutation", "eval_mode"],
                                      raise_on_failure=False)
    assert [r.name for r in report.results] == ["eval_mode", "no_state_mutation"]
    report = check_inference_contract(good_model(), good_input(), skip=["dtype_parity", "device_parity"])
    assert report.passed == [c for c in CHECKS if c not in ("dtype_parity", "device_parity")]


def test_model_mode_and_state_are_restored():
    model = _seeded(lambda: nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1d(4)))  # train mode: BN updates stats
    before = {k: v.clone() for k, v in model.state_dict().items()}
    report = run(model)
    assert "no_state_mutation" in report.failed  # running stats moved during the checks...
    assert model.training and model[1].training
    for k, v in model.state_dict().items():  # ...and were put back afterwards
        assert torch.equal(v, before[k]), k


def test_dict_and_tuple_inputs():
    class TwoInputs(nn.Module):
        def forward(self, a, b):
            return a * 2 + b

    x = (good_input(), good_input())
    assert run(TwoInputs().eval(), x=x).ok
    assert run(TwoInputs().eval(), x={"a": x[0], "b": x[1]}).ok


# --------------------------------------------------------------------------------------
# AidgeModule
# --------------------------------------------------------------------------------------


def test_aidge_module_contract():
    import interop

    am = interop.wrap(good_model(), (4, 6))
    report = run(am, dtypes=(torch.float64,))
    assert report.ok, str(report)
    assert report["device_parity"].status == "SKIP" and "cuda" in report["device_parity"].reason
    assert report["dtype_parity"].status == "SKIP" and "float32" in report["dtype_parity"].reason
    assert {"eval_mode", "finite_outputs", "deterministic", "batch_invariance", "no_state_mutation"} <= set(report.passed)


def test_aidge_module_exported_in_training_mode_fails_eval_mode():
    import interop

    model = _seeded(lambda: nn.Sequential(nn.Linear(6, 4), nn.ReLU()))
    am = interop.wrap(model, (4, 6), training=True).eval()
    result = run(am, check="eval_mode")["eval_mode"]
    assert result.status == "FAIL" and "exported in training mode" in result.reason


def test_aidge_module_device_parity_reimports_its_graph_with_current_weights():
    import interop

    am = interop.wrap(good_model(), (4, 6))
    with torch.no_grad():  # weights changed after wrap (as training would): the twin must see them
        dict(am.named_parameters())["0.weight"].mul_(-2.0)
    result = run(am, check="device_parity", devices=("cpu",))["device_parity"]
    assert result.status == "PASS", str(result)
    skipped = run(am, check="device_parity", devices=())["device_parity"]
    assert skipped.status == "SKIP" and "--torch-device=cpu" in skipped.reason


def test_aidge_twin_is_built_from_current_weights():
    import interop
    from interop.diagnostics.contract_checks import _rewrap_on_backend

    x = good_input()
    am = interop.wrap(good_model(), (4, 6))
    with torch.no_grad():
        dict(am.named_parameters())["2.bias"].add_(1.0)
        expected = am(x)
        twin = _rewrap_on_backend(am, "cpu", x)
        assert torch.equal(twin(x), expected)
        assert not torch.equal(interop.wrap(good_model(), (4, 6))(x), expected)  # the change is visible
