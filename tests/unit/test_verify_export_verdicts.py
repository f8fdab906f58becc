"""Issue 45, item 4: our export path fails only where torch's export fails.

- an output holding None (a VAE that returns ``(reconstruction, None)`` in eval, as MONAI's
  SegResNetVAE does) is exported as torch does (the None dropped) and given back as None; before:
  ``ExportError: ... returns non-tensor leaves (NoneType)`` from ``wrap`` and ``verify``;
- a target torch cannot differentiate (``nn.SoftMarginLoss``'s) is left out of ``verify``'s
  gradient check; before: ``not_comparable`` (no verdict at all);
- an Aidge error or crash on a graph that onnx's checker or onnxruntime refuses too is the
  export's (``verify``), whatever the phase; before: ``[aidge]``.
Modules the project did not test: the VAE below, a dict output holding None,
``nn.SoftMarginLoss`` with a target, ``nn.Softmax(dim=0)`` on a 0-d tensor, an unbatched
``nn.AvgPool1d``, ``nn.MaxPool1d`` with padding."""
from __future__ import annotations

import pytest
import torch

import interop
from interop import wrap
from interop.errors import ExportError

pytest.importorskip("aidge_core")


def _seeded(factory, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return factory()


class VAEEval(torch.nn.Module):
    """A VAE whose forward returns ``(reconstruction, None)`` in eval (the KL term in train)."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(6, 3)
        self.dec = torch.nn.Linear(3, 6)

    def forward(self, x):
        z = torch.tanh(self.enc(x))
        return self.dec(z), (None if not self.training else z.pow(2).mean())


class WithNoneLeaves(torch.nn.Module):
    def forward(self, x):
        return {"y": x + 1, "aux": None, "z": [None, x * 3]}


def test_an_output_holding_none_is_given_back_as_none():
    model = _seeded(VAEEval).eval()
    am = wrap(model, (2, 6))
    x = _seeded(lambda: torch.randn(2, 6), 1).requires_grad_()
    out, kl = am(x)
    assert kl is None
    torch.testing.assert_close(out, model(x)[0])
    out.sum().backward()
    assert x.grad is not None
    got = wrap(WithNoneLeaves(), (2, 2))(torch.ones(2, 2))
    assert got["aux"] is None and got["z"][0] is None
    torch.testing.assert_close(got["z"][1], torch.full((2, 2), 3.0))


def test_verify_gives_a_verdict_on_an_output_holding_none():
    verdict = interop.verify(_seeded(VAEEval).eval(), torch.randn(2, 6))
    assert verdict.outcome == "pass", verdict.summary


def test_only_none_is_still_refused():
    class Nothing(torch.nn.Module):
        def forward(self, x):
            return None

    with pytest.raises(ExportError, match="returns no tensor"):
        wrap(Nothing(), (2, 2))


def test_a_target_without_a_gradient_is_left_out_of_the_gradient_check():
    x = _seeded(lambda: torch.randn(3, 4), 2)
    y = torch.sign(_seeded(lambda: torch.randn(3, 4), 3))
    verdict = interop.verify(torch.nn.SoftMarginLoss(), x, y)
    assert not (verdict.category or "").startswith("not_comparable"), verdict.summary
    # the input's gradient is what is checked: Aidge 0.10.1 has no ReduceMean backward
    assert verdict.outcome in ("pass", "fail", "error") and verdict.attribution != "unknown", verdict.summary


def test_an_aidge_error_on_a_graph_onnx_refuses_is_the_exports():
    # ONNX forbids Softmax on a 0-d tensor; Aidge says "Softmax input empty". Before: aidge_error [aidge]
    verdict = interop.verify(torch.nn.Softmax(dim=0), torch.tensor(0.5))
    assert verdict.outcome == "error" and verdict.attribution == "export", verdict.summary
    assert "onnx's checker" in verdict.summary or "onnxruntime" in verdict.summary


def test_an_aidge_crash_on_a_graph_onnx_refuses_is_the_exports():
    # an unbatched AvgPool1d: the exporter's AveragePool on a 2-D input, which ONNX refuses; Aidge
    # reads out of bounds and dies (SIGSEGV on 0.10.1). Before: crash [aidge]
    verdict = interop.verify(torch.nn.AvgPool1d(3), torch.randn(2, 9))
    if verdict.outcome != "crash":
        pytest.skip(f"Aidge did not crash this time ({verdict.summary}): its out-of-bounds read varies")
    assert verdict.attribution == "export", verdict.summary


def test_an_aidge_error_on_a_graph_onnx_runs_stays_aidges():
    # a 1-D MaxPool with pads: aidge_onnx loads a GenericOperator, onnxruntime runs the graph
    verdict = interop.verify(torch.nn.MaxPool1d(3, padding=1), torch.randn(1, 2, 8), backward=False)
    assert verdict.outcome == "error" and verdict.attribution == "aidge", verdict.summary
