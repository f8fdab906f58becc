"""wrap() never returns a silently wrong answer: new input shapes, value-dependent traces,
structured outputs, integer inputs, dtype and shape errors, exports under no_grad, nothing
printed (issue 11). Each test failed on the bridge before this change (noted per test)."""
from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import torch

from interop import assert_tensors_close, wrap
from interop.errors import ShapeSpecializedError, TracingError
from interop.bridge.onnx_export import TracingWarning

pytest.importorskip("aidge_core")


def _seeded(factory, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return factory()


class ViewNet(torch.nn.Module):
    """Bakes the batch size into a Reshape constant."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 5)

    def forward(self, x):
        return self.fc(x.view(x.size(0), -1))


class Branch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.a(x) if x.sum() > 0 else -self.a(x)  # BRANCH LINE


# --- new input shapes ------------------------------------------------------------------------------
def test_batch_change_of_a_shape_baking_model_is_a_clear_error():
    # before: shape (2, 5) instead of (5, 5), then free(): invalid next size (exit 134/139)
    model = _seeded(ViewNet)
    am = wrap(model, (2, 3, 4))
    with pytest.raises(ShapeSpecializedError, match=r"wrap\(model, \[\(5, 3, 4\)\]\)") as info:
        am(torch.randn(5, 3, 4))
    assert "value=2 vs Constant() value=5" in str(info.value)
    x = torch.randn(2, 3, 4)
    assert_tensors_close(am(x), model(x).detach())  # still usable at its own shapes


def test_batch_change_runs_in_a_child_without_crashing():
    code = ("import torch, sys; sys.path.insert(0, %r)\n"
            "from tests.unit.test_wrap_safety import ViewNet\n"
            "from interop import wrap\n"
            "from interop.errors import ShapeSpecializedError\n"
            "am = wrap(ViewNet(), (2, 3, 4)); am(torch.randn(2, 3, 4))\n"
            "try:\n    am(torch.randn(5, 3, 4))\nexcept ShapeSpecializedError:\n    print('refused')\n")
    import pathlib

    root = str(pathlib.Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", code % root], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "refused"


class LoopOverBatch(torch.nn.Module):
    def forward(self, x):
        return sum(x[i] * (i + 1) for i in range(x.shape[0]))  # unrolled for the traced batch


def test_a_loop_over_the_batch_is_refused_at_another_batch_size():
    # before: the loop stayed unrolled for batch 2 and batch 3 silently lost a term
    model = LoopOverBatch()
    am = wrap(model, (2, 4))
    x = torch.randn(2, 4)
    assert_tensors_close(am(x), model(x))
    with pytest.raises(ShapeSpecializedError):
        am(torch.randn(3, 4))


def test_batch_change_of_a_batch_polymorphic_model_is_computed():
    model = _seeded(lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()))
    am = wrap(model, (2, 3, 8, 8))
    for batch in (5, 1, 2):
        x = torch.randn(batch, 3, 8, 8)
        assert_tensors_close(am(x), model(x).detach())


def test_shapes_torch_rejects_raise_torchs_error_and_a_rank_change_is_refused():
    # before: (2, 8, 1) gave a (2, 4) output; (8,) gave (1, 4) where torch gives (4,)
    model = _seeded(lambda: torch.nn.Linear(8, 4))
    am = wrap(model, (2, 8))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        model(torch.randn(2, 8, 1))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        am(torch.randn(2, 8, 1))
    with pytest.raises(ShapeSpecializedError):
        am(torch.randn(8))
    x = torch.randn(5, 8)
    assert_tensors_close(am(x), model(x).detach())


def test_a_wrong_input_dtype_names_the_input_and_the_dtype():
    # before: "missing or invalid registrar key"
    am = wrap(torch.nn.Linear(8, 4), (2, 8))
    with pytest.raises(TypeError, match=r"input 0 has dtype torch.int64.*wrapped with torch.float32"):
        am(torch.ones(2, 8, dtype=torch.int64))
    assert am(torch.ones(2, 8, dtype=torch.float64)).dtype == torch.float32  # floats are converted


# --- value-dependent traces -----------------------------------------------------------------------------
def test_a_value_dependent_branch_is_an_error_naming_the_line():
    # before: the TracerWarning was swallowed and the other branch silently returned -y
    with pytest.raises(TracingError) as info:
        wrap(_seeded(Branch), example_inputs=[torch.ones(2, 4)])
    (file, line, _), = info.value.locations
    assert file == __file__
    assert "# BRANCH LINE" in open(file).read().splitlines()[line - 1]
    assert f"{file}:{line}" in str(info.value)


def test_trace_warning_policy_warn_and_ignore(recwarn):
    filters = list(warnings.filters)
    with pytest.warns(TracingWarning, match="depends on input values"):
        wrap(_seeded(Branch), example_inputs=[torch.ones(2, 4)], on_trace_warning="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wrap(_seeded(Branch), example_inputs=[torch.ones(2, 4)], on_trace_warning="ignore")
    assert warnings.filters == filters
    with pytest.raises(ValueError, match="on_trace_warning"):
        wrap(_seeded(Branch), (2, 4), on_trace_warning="loud")


def test_a_shape_check_in_the_model_is_not_a_value_dependence():
    from interop.zoo.operators.split import Split  # `if sum(split) != x.shape[dim]`: warns, same graph

    am = wrap(Split([1, 2], 1), (2, 3, 4))
    x = torch.randn(2, 3, 4)
    for got, want in zip(am(x), Split([1, 2], 1)(x)):
        assert_tensors_close(got, want)


# --- structured outputs -------------------------------------------------------------------------------------
class Structured(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        if self.kind == "tuple1":
            return (x * 2,)
        if self.kind == "list":
            return [x * 2, x + 1]
        if self.kind == "dict":
            return {"b": x * 2, "a": x + 1}
        return {"pair": (x * 2, [x + 1]), "single": x - 1}


@pytest.mark.parametrize("kind", ["tuple1", "list", "dict", "nested"])
def test_outputs_keep_torch_structure(kind):
    # before: a 1-tuple came back bare, a dict as a tuple without its keys
    from torch.utils import _pytree as pytree

    model = Structured(kind)
    am = wrap(model, (2, 3))
    x = torch.randn(2, 3)
    got, want = am(x), model(x)
    assert pytree.tree_structure(got) == pytree.tree_structure(want)
    if isinstance(want, dict):
        assert list(got) == list(want)
    for g, w in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
        assert_tensors_close(g, w)


def test_model_tester_on_dict_outputs():
    # before: AttributeError: 'dict' object has no attribute 'shape'
    from interop import ModelTester

    class DictNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 3)

        def forward(self, x):
            y = self.fc(x)
            return {"logits": y, "relu": torch.relu(y)}

    model = _seeded(DictNet)
    ModelTester(model, wrap(model, (2, 6)), name="DictNet", epochs=2, max_slowdown_ratio=None,
                benchmark=False).test_multiple_step((2, 6))


# --- integer inputs ----------------------------------------------------------------------------------------------
def test_embedding_with_token_ids():
    # before: "the Aidge graph has 0 data inputs [], the torch model 1"
    model = _seeded(lambda: torch.nn.Embedding(10, 8))
    ids = torch.tensor([[1, 2, 3], [4, 5, 9]])
    am = wrap(model, example_inputs=[ids])
    for x in (ids, torch.tensor([[0, 0, 7], [1, 1, 1]])):
        assert_tensors_close(am(x), model(x).detach())


# --- the export runs the kernels a normal call runs -----------------------------------------------------------------
class FastPathUnderNoGrad(torch.nn.Module):
    """Like nn.TransformerEncoderLayer: a fused path under no_grad that cannot be exported."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        if not torch.is_grad_enabled():
            return torch.ops.aten._unsafe_view(self.fc(x) + 0.0, x.shape)  # stands in for a fused kernel
        return self.fc(x)


def test_wrap_under_no_grad_exports_the_normal_path():
    model = _seeded(FastPathUnderNoGrad)
    with torch.no_grad():
        am = wrap(model, (2, 4))
    assert [n.op_type for n in am.onnx_model.graph.node] == ["Gemm"]


# --- nothing printed ------------------------------------------------------------------------------------------------
class NotExportable(torch.nn.Module):
    def forward(self, x):  # no ONNX export on either route (torch.stft exports through dynamo)
        return torch.histc(x, 4)


def test_an_export_failure_prints_nothing(capfd):
    # before: 4.5 KB of TorchScript IR on stdout
    from interop.errors import ExportError

    with pytest.raises(ExportError):
        wrap(NotExportable(), (1, 16))
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# --- errors name the node ---------------------------------------------------------------------------------------------
class TwoReshapes(torch.nn.Module):
    def forward(self, x):
        y = x.reshape(x.shape[0], -1) * 2.0  # a Reshape that runs
        return torch.flatten(y, 0)  # Reshape to a computed shape: fails in Aidge 0.10.1 (see expected_failures)


def test_a_forward_error_names_the_failing_node():
    # before: operator=None, node=None
    from interop.errors import AidgeError

    # torchscript: exporter="auto" now moves on to the dynamo graph, which Aidge runs (issue 45)
    am = wrap(TwoReshapes(), (2, 3, 8), exporter="torchscript")
    with pytest.raises(AidgeError) as info:
        am(torch.randn(2, 3, 8))
    err = info.value
    assert err.operator == "Reshape" and err.node and f"node {err.node!r}" in str(err)
    reshapes = [n.name() for n in am.graph.get_nodes() if n.type() == "Reshape"]
    assert len(reshapes) == 2 and err.node in reshapes
    first_reshape_ran = am._runner.scheduler.get_forward_scheduling()
    assert err.node not in [e.node.name() for e in first_reshape_ran]


def test_a_backward_error_names_the_failing_node():
    from interop.errors import AidgeNotImplementedError

    class ConvBnConv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn, self.head = torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Conv2d(4, 2, 1)

        def forward(self, x):
            return self.head(self.bn(self.conv(x)))

    am = wrap(_seeded(ConvBnConv).eval(), (2, 3, 8, 8))
    with pytest.raises(AidgeNotImplementedError) as info:
        am(torch.randn(2, 3, 8, 8, requires_grad=True)).sum().backward()
    assert info.value.operator == "BatchNorm2D" and info.value.node == "bn_BatchNormalization"


# --- the dims check wherever the node sits ----------------------------------------------------------------------------------
@pytest.mark.parametrize("before", ["input", "relu", "conv1x1"])
def test_depthwise_channel_multiplier_is_refused_wherever_it_sits(before):
    # before: behind a ReLU the call returned an empty tensor; behind a 1x1 conv the process died
    code = f"""
import torch
from interop import wrap
from interop.errors import AidgeError
pre = {{"input": torch.nn.Identity(), "relu": torch.nn.ReLU(), "conv1x1": torch.nn.Conv2d(3, 3, 1)}}[{before!r}]
model = torch.nn.Sequential(pre, torch.nn.Conv2d(3, 6, 3, groups=3))
try:
    wrap(model, (2, 3, 8, 8))(torch.randn(2, 3, 8, 8))
except AidgeError as exc:
    print(exc.phase, exc.operator)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "compile ConvDepthWise2D"
