"""Issue 45, item 3: parameter gradients in every verdict, and a tensor feeding two nodes.

- ``verify`` compares the gradient of every parameter the Aidge graph holds, as the architecture
  cases do: a tied autoencoder whose encoder reads the decoder's weight transposed (new in the
  catalog, :mod:`interop.cases.shared_tensors`) was ``pass`` before (input gradients only) and is
  now ``gradients_differ [aidge]`` at that weight's gradient;
- ``wrap`` gives the right gradient for a shared parameter or refuses it: the graphs whose summing
  Aidge gets wrong (a tensor read by a Transpose and by another node) are refused at the backward
  (before: a wrong gradient, silently); a weight shared without a Transpose (a Linear applied
  twice; TorchScript's tied autoencoder, whose decoder is a Gemm with transB) gets the sum.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import interop
from interop import wrap
from interop.bridge.known_defects import KnownDefectError, installed_release
from interop.cases.shared_tensors import shared_tensor_model

pytest.importorskip("aidge_core")


def _seeded(factory, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return factory()


class LinearTwice(torch.nn.Module):
    """One Linear applied twice: its weight and bias each feed two Gemms."""

    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(5, 5)

    def forward(self, x):
        return self.l(torch.tanh(self.l(x)))


class DecoderTied(torch.nn.Module):
    """The usual tied autoencoder: the decoder reads the encoder's weight transposed."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(6, 3)
        self.dec_bias = torch.nn.Parameter(torch.randn(6))

    def forward(self, x):
        return F.linear(torch.tanh(self.enc(x)), self.enc.weight.t(), self.dec_bias)


def test_verify_compares_parameter_gradients():
    case = shared_tensor_model("shared_TiedAutoencoder")
    model = case.build()
    (x,), _ = case.inputs()
    verdict = interop.verify(model, x, exporter="torchscript")
    # before: "pass: forward matches on 2 calls, input gradients match"
    assert verdict.outcome == "fail", verdict.summary
    assert verdict.category == "gradients_differ" and verdict.attribution == "aidge"
    assert "grad of dec.weight" in verdict.summary


def test_a_passing_verdict_says_how_many_parameters_it_checked():
    verdict = interop.verify(_seeded(LinearTwice), torch.randn(3, 5), exporter="torchscript")
    assert verdict.outcome == "pass", verdict.summary
    assert "the gradients of 2 parameter(s)" in verdict.summary


@pytest.mark.skipif(installed_release() != "0.10.1", reason="the defect is measured on 0.10.1")
@pytest.mark.parametrize("name", ["shared_TiedAutoencoder", "shared_MixerResidual"])
def test_wrap_refuses_a_shared_tensor_gradient_aidge_gets_wrong(name):
    case = shared_tensor_model(name)
    model = case.build()
    (x,), _ = case.inputs()
    am = wrap(model, x.shape)
    x = x.clone().requires_grad_()
    out = am(x)
    torch.testing.assert_close(out, model(x))  # the forward is right
    with pytest.raises(KnownDefectError, match="fan-out-into-transpose-or-gemm") as info:
        out.sum().backward()  # before: a gradient off by 1.69 (the weight) or 1.0 (the input)
    assert info.value.operator == "Transpose|Gemm" and info.value.phase == "backward"
    assert x.grad is None and all(p.grad is None for p in am.parameters())


@pytest.mark.skipif(installed_release() != "0.10.1", reason="the defect is measured on 0.10.1")
def test_wrap_refuses_the_usual_tied_autoencoder_on_the_dynamo_route():
    model = _seeded(DecoderTied)
    am = wrap(model, (2, 6), exporter="dynamo")
    with pytest.raises(KnownDefectError, match=r"param_\d+ \(enc.weight\)"):  # the weight by its torch name
        am(torch.randn(2, 6)).sum().backward()


@pytest.mark.parametrize("factory, exporter", [(LinearTwice, "torchscript"), (LinearTwice, "dynamo"),
                                               (DecoderTied, "torchscript")])
def test_a_weight_shared_without_a_transpose_gets_the_sum(factory, exporter):
    model = _seeded(factory)
    x = _seeded(lambda: torch.randn(3, model.enc.in_features if hasattr(model, "enc") else 5), 1)
    am = wrap(model, x.shape, exporter=exporter)
    am(x).sum().backward()
    model(x).sum().backward()
    grads = dict(am.named_parameters())
    for name, p in model.named_parameters():
        torch.testing.assert_close(grads[name].grad, p.grad)
