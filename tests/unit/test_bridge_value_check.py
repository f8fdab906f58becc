"""Issue 45, item 1: values where shapes are already checked. On the first call at each new
input signature an AidgeModule compares its outputs (and in the first backward there its input
and parameter gradients) with torch's computation of the same call on its own weights; a
mismatch is a ValueMismatchError naming the output and the first diverging node, never a
returned value. Modules the project did not test: ``nn.AvgPool2d(divisor_override=1)`` (the
export drops the attribute), a DCGAN discriminator head (Linear, LeakyReLU, Linear: Aidge's
LeakyReLU backward), a convolution followed by a training-mode BatchNorm. Before this change each call below returned the wrong values without a word."""
from __future__ import annotations

import threading

import pytest
import torch

from interop import wrap
from interop.bridge.value_check import ValueMismatchError, checks_deferred
from loud_or_right import assert_same_parameter_gradients
from loud_or_right import seeded as _seeded

pytest.importorskip("aidge_core")


def test_an_export_that_dropped_an_attribute_is_an_error_not_a_value():
    # before: am(x) returned values 4x off (divisor_override=1 is not in the ONNX graph)
    model = torch.nn.AvgPool2d(2, divisor_override=1)
    am = wrap(model, (1, 2, 4, 4))
    x = _seeded(lambda: torch.randn(1, 2, 4, 4), 1)
    with torch.no_grad(), pytest.raises(ValueMismatchError) as info:
        am(x)
    err = info.value
    assert err.phase == "forward" and err.category == "outputs_differ" and err.what == "output"
    assert err.attribution == "export"  # onnxruntime computes what Aidge computes
    assert "onnxruntime" in str(err) and "(1, 2, 4, 4)" in str(err)
    # the values Aidge gave are on the error (for a harness): ONNX divides by the window size
    torch.testing.assert_close(err.values[0], model(x) / 4)
    with torch.no_grad(), pytest.raises(ValueMismatchError):  # and the next call is checked again
        am(x)


def test_the_first_diverging_node_is_named():
    # before: a training-mode BatchNorm after a convolution returned running-statistics values
    model = _seeded(lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                                                torch.nn.ReLU())).train()
    am = wrap(model, (2, 3, 6, 6))
    with torch.no_grad(), pytest.raises(ValueMismatchError) as info:
        am(_seeded(lambda: torch.randn(2, 3, 6, 6), 2))
    err = info.value
    assert err.attribution == "aidge"
    assert err.operator == "BatchNorm2D" and err.onnx_node.endswith("BatchNormalization")
    assert "BatchNorm2D" in str(err)
    assert model.training and all(m.training for m in model.modules())


def test_a_wrong_gradient_is_an_error_in_the_first_backward():
    # before: the input and weight gradients came back scaled by the slope where x > 0, no word
    model = _seeded(lambda: torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.LeakyReLU(0.2),
                                                torch.nn.Linear(5, 1)))  # a DCGAN discriminator's head
    am = wrap(model, (4, 6))
    x = _seeded(lambda: torch.randn(4, 6), 3).requires_grad_()
    out = am(x)  # the forward matches
    torch.testing.assert_close(out, model(x))
    with pytest.raises(ValueMismatchError) as info:
        out.sum().backward()
    err = info.value
    assert err.phase == "backward" and err.category == "gradients_differ" and err.what == "input grad [0]"
    assert x.grad is None and all(p.grad is None for p in am.parameters())  # nothing reached torch
    with pytest.raises(ValueMismatchError):  # the next backward at this signature is checked again
        am(x).sum().backward()
    with torch.no_grad():
        am(x)  # a forward alone is fine


def test_a_matching_model_is_checked_once_per_signature(monkeypatch):
    model = _seeded(lambda: torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh()))
    am = wrap(model, (2, 5))
    assert am.value_check == "on"
    calls = []
    original = type(am)._reference

    def counting(self, inputs, **kw):
        calls.append([tuple(x.shape) for x in inputs])
        return original(self, inputs, **kw)

    monkeypatch.setattr(type(am), "_reference", counting)
    x = torch.randn(2, 5)
    with torch.no_grad():
        torch.testing.assert_close(am(x), model(x))
        am(x)
        am(torch.randn(3, 5))  # a new batch size: its first call is checked (with the shape guard's torch run)
        am(torch.randn(3, 5))
    assert calls == [[(2, 5)], [(3, 5)]]
    # a call that needs gradients: its forward was checked; forwards that no backward follows
    # run torch no more; the first backward runs torch's forward and backward once
    xg = torch.randn(2, 5, requires_grad=True)
    am(xg)
    am(xg)
    assert calls == [[(2, 5)], [(3, 5)]]
    am(xg).sum().backward()
    am(xg).sum().backward()
    assert calls == [[(2, 5)], [(3, 5)], [(2, 5)]]
    model(xg.detach().requires_grad_()).sum().backward()
    assert_same_parameter_gradients(am, model, scale=2)


def test_the_reference_is_the_modules_own_weights():
    # weights changed on the torch side after wrap, or through the AidgeModule, are no mismatch
    model = _seeded(lambda: torch.nn.Linear(4, 3))
    am = wrap(model, (2, 4))
    with torch.no_grad():
        model.weight.mul_(10)  # the torch model moves on; the AidgeModule keeps its copy
        am.weight.add_(1)  # and the AidgeModule's own weights change (shared with Aidge)
        out = am(torch.ones(2, 4))
    assert torch.isfinite(out).all()


def test_a_random_graph_is_not_checked():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5)).train()
    am = wrap(model, (3, 4))
    assert am.value_check.startswith("off: the graph holds random nodes")


def test_a_harness_that_compares_itself_defers_the_check():
    am = wrap(torch.nn.AvgPool2d(2, divisor_override=1), (1, 1, 2, 2))
    x = torch.ones(1, 1, 2, 2)
    with torch.no_grad():
        with checks_deferred():
            assert float(am(x).sum()) == 1.0  # Aidge's (wrong: torch says 4) value, for the harness to judge
        seen = []

        def other_thread():  # the deferral is this thread's only
            try:
                am(x)
            except ValueMismatchError as exc:
                seen.append(exc)

        with checks_deferred():
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
        assert len(seen) == 1
        with pytest.raises(ValueMismatchError):
            am(x)


def test_first_calls_from_several_threads_are_checked_once_each():
    model = _seeded(lambda: torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh()))
    am = wrap(model, (2, 5))
    inputs = [_seeded(lambda b=b: torch.randn(b, 5), b) for b in (2, 3, 2, 4, 3, 2)]
    results, errors = [None] * len(inputs), []

    def call(k):
        try:
            with torch.no_grad():
                results[k] = am(inputs[k])
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with torch.no_grad():
        for x, got in zip(inputs, results):
            torch.testing.assert_close(got, model(x))
    assert {key[0][0] for key in am._values_checked} == {(2, 5), (3, 5), (4, 5)}
