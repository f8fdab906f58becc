"""Issue 45, item 2: graph patterns the installed Aidge release computes wrongly where the
first-call value check cannot see it (from the second call on; in a backward whose order
changes from one wrap to the next) are refused by ``wrap`` by default, naming the defect and
its expected-failure row, or built with a loud warning under ``known_defects="warn"``: one table,
:data:`interop.bridge.known_defects.KNOWN_DEFECTS`, keyed to the Aidge release. Modules the
project did not test: a DCGAN generator (ConvTranspose2d without bias, BatchNorm, ReLU, Tanh),
an input read by a Linear and by a Transpose (dynamo route). Before this change ``wrap``
returned the generator's module and its second call was wrong (up to ~1 off), and the second
model's input gradient was one consumer's share in some wraps, without a word."""
from __future__ import annotations

import warnings

import pytest
import torch

from interop import wrap
from interop.bridge.known_defects import (KNOWN_DEFECTS, KnownDefectError, KnownDefectWarning, defects_in,
                                          installed_release)
from interop.bridge.value_check import checks_deferred

pytest.importorskip("aidge_core")
pytestmark = pytest.mark.skipif(installed_release() != "0.10.1", reason="the defects below are measured on 0.10.1")


def _seeded(factory, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return factory()


def dcgan_generator():
    nz, ngf = 8, 4
    return torch.nn.Sequential(
        torch.nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), torch.nn.BatchNorm2d(ngf * 2), torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(ngf * 2, 3, 4, 2, 1, bias=False), torch.nn.Tanh()).eval()


class InputThroughTranspose(torch.nn.Module):
    """The input feeds a Linear and, transposed, a residual sum (square input). It was
    ``x.t().t()``: the dynamo route's optimiser (issue 45) now folds the two transposes away, and
    Aidge's gradient is then right."""

    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 4)
        self.m = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.m(torch.tanh(self.l(x))) + x.t()


def test_wrap_refuses_a_graph_wrong_from_its_second_call():
    model = _seeded(dcgan_generator)
    with pytest.raises(KnownDefectError) as info:
        wrap(model, (1, 8, 1, 1))
    err = info.value
    assert err.defect.key == "convtranspose-without-bias" and err.phase == "forward"
    assert err.operator == "ConvTranspose2D" and err.category == "outputs_differ"
    text = str(err)
    assert "known_defects='warn'" in text
    # the registry's id and title: the same the ledger, check and the table's rows give it
    assert "D-e4df188f" in text and "ConvTranspose2D without bias computes wrong values" in text


def test_warn_builds_the_module_and_says_so_loudly():
    model = _seeded(dcgan_generator)
    filters = list(warnings.filters)
    with pytest.warns(KnownDefectWarning, match="convtranspose-without-bias.*second call on will be wrong"):
        am = wrap(model, (1, 8, 1, 1), known_defects="warn")
    assert warnings.filters == filters
    z = _seeded(lambda: torch.randn(1, 8, 1, 1), 1)
    with torch.no_grad():
        first, second = am(z), am(z)
        expected = model(z)
    torch.testing.assert_close(first, expected)  # the first call is right (and checked)
    # the defect the table names is still there on this release (if this fails, Aidge fixed it:
    # take the entry out of KNOWN_DEFECTS for the new release)
    assert (second - expected).abs().max() > 1e-2


def test_a_harness_that_compares_every_call_measures_the_defect():
    with warnings.catch_warnings(record=True) as seen, checks_deferred():
        warnings.simplefilter("always")
        wrap(_seeded(dcgan_generator), (1, 8, 1, 1))
    assert not [w for w in seen if issubclass(w.category, KnownDefectWarning)]


def test_a_backward_defect_is_refused_at_the_backward():
    model = _seeded(InputThroughTranspose)
    am = wrap(model, (4, 4), exporter="dynamo")
    x = torch.randn(4, 4, requires_grad=True)
    out = am(x)  # the forward is right
    torch.testing.assert_close(out, model(x))
    with pytest.raises(KnownDefectError) as info:
        out.sum().backward()
    assert info.value.defect.key == "fan-out-into-transpose-or-gemm" and info.value.phase == "backward"
    assert x.grad is None
    with pytest.warns(KnownDefectWarning, match="gradients may be wrong"):
        am = wrap(model, (4, 4), exporter="dynamo", known_defects="warn")
    am(x.detach()).sum().backward()  # computed (maybe wrong: the caller was told)


def test_the_table_is_keyed_to_the_release():
    am_proto = wrap(torch.nn.ConvTranspose2d(2, 2, 3), (1, 2, 3, 3)).onnx_model  # with a bias: not a defect
    assert defects_in(am_proto) == []
    with checks_deferred():
        proto = wrap(torch.nn.ConvTranspose2d(2, 2, 3, bias=False), (1, 2, 3, 3)).onnx_model
    assert [d.key for d, _ in defects_in(proto, "0.10.1")] == ["convtranspose-without-bias"]
    assert defects_in(proto, "0.11.0") == []  # another release: measured again before it is listed
    assert all(d.releases and d.phase in ("forward", "backward") for d in KNOWN_DEFECTS)


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="known_defects='ignore'"):
        wrap(torch.nn.ReLU(), (2, 3), known_defects="ignore")
