"""interop.diagnostics.divergence: the first diverging layer, torch <-> torch and torch <-> AidgeModule."""
from __future__ import annotations

import copy
import re

import pytest
import torch
from torch import nn

import interop
from interop.diagnostics import DivergenceError, first_divergence_hint, localize_divergence


class Net(nn.Module):
    """Conv -> BN -> ReLU -> flatten -> Linear -> ReLU -> Linear -> LayerNorm, with nesting."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.flatten = nn.Flatten()
        self.head = nn.Sequential(nn.Linear(4 * 6 * 6, 16), nn.ReLU(), nn.Linear(16, 8))
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(self.head(self.flatten(self.features(x))))


def make_net() -> Net:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = Net()
        with torch.no_grad():
            net.features[1].running_mean.uniform_(-0.5, 0.5)
            net.features[1].running_var.uniform_(0.5, 1.5)
    return net.eval()


X = torch.randn(3, 2, 6, 6, generator=torch.Generator().manual_seed(1))
INPUT_SIZE = tuple(X.shape)


def perturbed(model: nn.Module, param: str, delta: float = 0.5) -> nn.Module:
    twin = copy.deepcopy(model)
    with torch.no_grad():
        dict(twin.named_parameters())[param].view(-1)[:4] += delta
    return twin


@pytest.fixture(scope="module")
def aidge_same():
    return interop.wrap(make_net(), INPUT_SIZE)


@pytest.mark.parametrize("param, layer, layer_type", [
    ("head.0.weight", "head.0", "Linear"),
    ("features.0.weight", "features.0", "Conv2d"),
    ("norm.weight", "norm", "LayerNorm"),
])
def test_torch_vs_aidge_names_the_perturbed_layer_first(param, layer, layer_type):
    model = make_net()
    am = interop.wrap(perturbed(model, param), INPUT_SIZE)
    report = localize_divergence(model, am, X)
    first = report.first
    assert first is not None, str(report)
    assert (first.layer, first.type, first.inputs) == (layer, layer_type, "ok"), str(report)
    text = str(report)
    assert re.match(rf"Divergence: \d+ of {len(report.layers)} layers exceed tolerance \(rtol=1.3e-06, atol=1e-05\)\. "
                    rf"First: '{re.escape(layer)}' \({layer_type}\)", text), text
    assert re.search(r"^layer\s+type\s+max abs\s+max rel\s+inputs$", text, re.M), text
    # every layer before the perturbed one is within tolerance, every one after saw DIFF inputs
    names = [row.layer for row in report.layers]
    k = names.index(layer)
    assert not any(row.exceeds for row in report.layers[:k])
    assert all(row.inputs == "DIFF" for row in report.layers[k + 1:] if row.exceeds)
    assert "Aidge node(s)" in first.counterpart
    with pytest.raises(DivergenceError, match="First: "):
        report.raise_if_diverged()


def test_torch_vs_aidge_without_perturbation(aidge_same):
    report = localize_divergence(make_net(), aidge_same, X)
    assert report.first is None and not report.diverged, str(report)
    assert str(report).startswith("No divergence: ")
    report.raise_if_diverged()  # no raise
    layers = [row.layer for row in report.layers]
    # every torch leaf with a computation is matched to Aidge nodes, in execution order
    assert layers == ["features.0", "features.1", "features.2", "flatten", "head.0", "head.1", "head.2", "norm"]


def test_aidge_as_reference(aidge_same):
    model = make_net()
    report = localize_divergence(aidge_same, perturbed(model, "head.2.weight"), X)
    assert report.first is not None and report.first.layer == "head.2" and report.first.inputs == "ok", str(report)


def test_torch_vs_torch_with_module_map():
    class Renamed(nn.Module):
        def __init__(self, src: Net):
            super().__init__()
            self.body = copy.deepcopy(src.features)
            self.flat = nn.Flatten()
            self.mlp = copy.deepcopy(src.head)
            self.ln = copy.deepcopy(src.norm)

        def forward(self, x):
            return self.ln(self.mlp(self.flat(self.body(x))))

    model = make_net()
    twin = Renamed(model)
    with torch.no_grad():
        twin.mlp[2].bias += 1.0
    mapping = {"features.0": "body.0", "features.1": "body.1", "features.2": "body.2", "flatten": "flat",
               "head.0": "mlp.0", "head.1": "mlp.1", "head.2": "mlp.2", "norm": "ln"}
    report = localize_divergence(model, twin, X, module_map=mapping)
    assert len(report.layers) == 8 and not report.only_in_a and not report.only_in_b
    assert report.first.layer == "head.2" and report.first.inputs == "ok", str(report)


def test_no_matching_layer_is_said_not_blamed():
    a = nn.Sequential(nn.Linear(4, 4)).eval()
    b = nn.Sequential()  # no layer at all
    b.add_module("other", nn.Linear(4, 4))
    x = torch.randn(2, 4)
    report = localize_divergence(a, b, x)
    assert report.layers == [] and report.first is None
    assert report.diverged  # the outputs differ (different weights)
    assert str(report).startswith("Divergence unknown: no layer of model_a")
    assert "Only in model_a (torch Sequential): 0 (Linear)" in str(report)
    assert "Only in model_b (torch Sequential): other (Linear)" in str(report)


def test_error_entering_between_layers_is_inputs_diff():
    class Scaled(nn.Module):
        def __init__(self, src: Net, scale: float):
            super().__init__()
            self.features, self.flatten, self.head, self.norm = (copy.deepcopy(m) for m in
                                                                 (src.features, src.flatten, src.head, src.norm))
            self.scale = scale

        def forward(self, x):
            return self.norm(self.head(self.flatten(self.features(x)) * self.scale))

    model = make_net()
    report = localize_divergence(Scaled(model, 1.0), Scaled(model, 1.1), X)
    assert report.first.layer == "head.0" and report.first.inputs == "DIFF", str(report)
    assert "the difference entered before this layer" in str(report)


def test_layers_on_one_side_only_are_listed(aidge_same):
    class Extra(Net):
        def __init__(self):
            super().__init__()
            self.unused = nn.Linear(2, 2)
            self.skip = nn.Identity()

        def forward(self, x):
            return self.skip(super().forward(x))

    model = Extra()
    model.load_state_dict(make_net().state_dict(), strict=False)
    report = localize_divergence(model.eval(), aidge_same, X)
    assert not report.diverged, str(report)
    assert any(entry.startswith("skip (Identity)") for entry in report.only_in_a), report.only_in_a


def test_shared_module_called_twice():
    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 5)
            self.out = nn.Linear(5, 2)

        def forward(self, x):
            return self.out(torch.relu(self.fc(torch.relu(self.fc(x)))))

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Shared().eval()
    x = torch.randn(3, 5)
    report = localize_divergence(model, interop.wrap(model, (3, 5)), x)
    assert [row.layer for row in report.layers] == ["fc", "fc (call 2)", "out"], str(report)
    assert not report.diverged


def test_first_divergence_hint():
    model = make_net()
    am = interop.wrap(perturbed(model, "head.0.weight"), INPUT_SIZE)
    hint = first_divergence_hint(model, am, X)
    assert hint.startswith("First diverging layer: 'head.0' (Linear) -> Aidge node(s) ")
    assert "inputs=ok" in hint


def test_first_divergence_hint_is_empty_when_close(aidge_same):
    assert first_divergence_hint(make_net(), aidge_same, X) == ""


def test_first_divergence_hint_never_raises(aidge_same):
    hint = first_divergence_hint(make_net(), aidge_same, torch.randn(3, 7))  # wrong input shape
    assert hint.startswith("First diverging layer: not localised (")


def test_two_aidge_modules_are_refused(aidge_same):
    with pytest.raises(TypeError, match="both models are AidgeModules"):
        localize_divergence(aidge_same, aidge_same, X)


def test_models_keep_their_state():
    model = make_net().train()  # BatchNorm in training mode updates its running stats in forward
    before = {k: v.clone() for k, v in model.state_dict().items()}
    localize_divergence(model, copy.deepcopy(model), X)
    assert model.training
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k
