"""Unit tests of the ``export_cpp`` backend (Aidge's generated C++, compiled and called in
process): results in torch's layout and structure, the cache, nothing written into the
current directory, forward only, fixed shapes, errors that name the node."""
from __future__ import annotations

import os

import pytest
import torch

import interop
from interop.bridge import ExportCppModule
from interop.bridge.export_cpp import CACHE_ENV, DFORMATS
from interop.errors import AidgeError, BackwardNotApplicableError, ShapeSpecializedError

pytest.importorskip("aidge_export_cpp")


class SmallNet(torch.nn.Module):
    """Conv + ReLU + MaxPool + Linear: the 4-D layout questions in one cheap model."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.head = torch.nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        return self.head(self.pool(torch.relu(self.conv(x))).flatten(1))


class FeatureMap(torch.nn.Module):
    """A 4-D output with 2 outputs in a dict: layout and structure of the outputs."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return {"map": torch.relu(y), "pooled": torch.nn.functional.max_pool2d(y, 2)}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(path))
    return path


def _model(cls):
    torch.manual_seed(0)
    return cls().eval()


@pytest.mark.parametrize("dformat", DFORMATS)
def test_matches_torch_and_writes_nothing_in_cwd(cache, tmp_path, monkeypatch, dformat):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    model = _model(SmallNet)
    am = interop.wrap(model, (2, 3, 8, 8), backend="export_cpp", dformat=dformat)
    assert isinstance(am, ExportCppModule) and am.backend == "export_cpp" and am.dformat == dformat
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        interop.assert_outputs_close(am(x), model(x))
    assert os.listdir(cwd) == [], "the export wrote into the current directory"
    assert os.getcwd() == str(cwd)
    assert am.compiled.library.is_file() and am.compiled.library.is_relative_to(cache)
    assert am.aidge_time_s > 0
    assert set(dict(am.named_parameters())) == set(dict(model.named_parameters()))


@pytest.mark.parametrize("dformat", DFORMATS)
def test_output_structure_and_4d_layout(cache, dformat):
    model = _model(FeatureMap)
    am = interop.wrap(model, (1, 3, 6, 6), backend="export_cpp", dformat=dformat)
    x = torch.randn(1, 3, 6, 6)
    with torch.no_grad():
        interop.assert_outputs_close(am(x), model(x))


def test_cached_and_reused(cache):
    model = _model(SmallNet)
    first = interop.wrap(model, (1, 3, 8, 8), backend="export_cpp")
    second = interop.wrap(model, (1, 3, 8, 8), backend="export_cpp")
    assert not first.compiled.cached and second.compiled.cached
    assert first.compiled.key == second.compiled.key
    assert first.compiled.generation_s > 0 and first.compiled.compile_s > 0
    other = interop.wrap(model, (2, 3, 8, 8), backend="export_cpp")
    assert other.compiled.key != first.compiled.key  # shapes are part of the key


def test_forward_only_and_fixed_shapes(cache):
    model = _model(SmallNet)
    am = interop.wrap(model, (1, 3, 8, 8), backend="export_cpp")
    x = torch.randn(1, 3, 8, 8, requires_grad=True)
    out = am(x)
    with pytest.raises(BackwardNotApplicableError, match="not applicable on backend 'export_cpp'"):
        out.sum().backward()
    with pytest.raises(ShapeSpecializedError, match="fixes every shape"):
        am(torch.randn(2, 3, 8, 8))
    with pytest.raises(BackwardNotApplicableError):
        am.train()
    with pytest.raises(BackwardNotApplicableError, match="inference only"):
        interop.wrap(model.train(), (1, 3, 8, 8), backend="export_cpp")


class ExpNet(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x)


def test_generation_error_names_the_node(cache):
    with pytest.raises(AidgeError) as info:
        interop.wrap(ExpNet().eval(), (2, 3), backend="export_cpp")
    message = str(info.value)
    assert "Exp" in message and "/Exp (Exp)" in message, message
    assert info.value.phase == "compile"
    # the failure is cached: the same error again, without generating
    with pytest.raises(AidgeError) as again:
        interop.wrap(ExpNet().eval(), (2, 3), backend="export_cpp")
    assert str(again.value) == message


def test_dformat_only_for_export_cpp():
    with pytest.raises(ValueError, match="dformat"):
        interop.wrap(SmallNet().eval(), (1, 3, 8, 8), backend="cpu", dformat="nchw")


def test_cases_on_export_cpp_are_forward_only_in_eval_mode():
    from interop.cases.catalog import model_cases, operator_cases

    conv = [c for c in operator_cases(["Conv2D"], backend="export_cpp")][0]
    assert conv.backend == "export_cpp" and not conv.test_backward and conv.training is False
    assert conv.params.get("not_applicable") == ("backward", "step")
    assert not conv.build_model().training
    by_id = {c.id: c for c in model_cases(backend="export_cpp")}
    assert by_id["LeNet_eval"].skip_reason is None
    assert "not applicable on backend 'export_cpp'" in by_id["LeNet_train"].skip_reason
    assert model_cases(backend="cpu")[0].skip_reason is None  # the other backends unchanged


def test_expected_failure_backend_tuple():
    from interop.cases.expected_failures import ExpectedFailure

    entry = ExpectedFailure("Slice", "forward", "aidge_error", "x", ("Pad:*",), backend=("cpu", "cuda"))
    assert entry.covers("operator", "Pad", "a", "cpu") and entry.covers("operator", "Pad", "a", "cuda")
    assert not entry.covers("operator", "Pad", "a", "export_cpp")


@pytest.mark.parametrize("dformat", DFORMATS)
def test_input_whose_channel_last_dims_read_alike(cache, dformat):
    """(1, 8, 8, 8): torch's dims and their channel-last order are the same tuple; layout mode
    ``default`` must still hand the export a channel-last input (measured: it did not, and the
    output was wrong)."""
    torch.manual_seed(0)
    model = torch.nn.Conv2d(8, 8, 3).eval()
    am = interop.wrap(model, (1, 8, 8, 8), backend="export_cpp", dformat=dformat)
    x = torch.randn(1, 8, 8, 8)
    with torch.no_grad():
        interop.assert_outputs_close(am(x), model(x))


def test_verify_on_export_cpp_is_forward_only_in_eval_mode(cache):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Dropout(0.5))  # train mode, as built
    verdict = interop.verify(model, torch.randn(1, 3, 8, 8), backend="export_cpp", isolate=False)
    assert verdict.passed, verdict.message
    assert not verdict.backward_checked and "2 calls" in verdict.summary
    assert model.training and model[1].training  # the caller's modes restored
    with pytest.raises(BackwardNotApplicableError, match="inference only"):
        interop.verify(torch.relu, torch.randn(2, 3), backend="export_cpp", backward=True)
    # a silent mismatch of the export is a verdict like any other (its entry: MaxPool2D:dilation_2*)
    failed = interop.verify(torch.nn.MaxPool2d(2, dilation=2), torch.randn(1, 2, 8, 8), backend="export_cpp",
                            isolate=False)
    assert failed.outcome == "fail" and failed.phase == "forward" and failed.category == "outputs_differ"
