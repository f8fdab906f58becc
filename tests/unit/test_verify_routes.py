"""verify and wrap never answer "does my model work?" differently unsaid: where verify's check
(which keeps the first route that exports, as the expected-failure table was measured) fails on a
route whose graph wrap(exporter="auto") moves past, the verdict says what each route gives."""
from __future__ import annotations

import torch

import interop


def _encoder_layer():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                                 batch_first=True).eval()
        return model, torch.randn(2, 5, 16)


def test_a_failing_verdict_says_the_route_wrap_takes_and_its_outcome():
    model, x = _encoder_layer()
    verdict = interop.verify(model, x, backward=False, isolate=False)
    # measured 2026-12-06 on Aidge 0.10.1: the TorchScript graph's Reshape is refused at run time
    assert verdict.outcome == "error" and verdict.exporter == "torchscript", verdict
    assert interop.wrap(model, example_inputs=[x]).exporter == "dynamo"
    assert verdict.routes == {"torchscript": "error", "dynamo": "pass"}, verdict.routes
    assert "wrap(exporter='auto') moves on to the dynamo route" in verdict.summary


def test_an_explicit_route_or_a_pass_says_nothing_more():
    model, x = _encoder_layer()
    assert interop.verify(model, x, backward=False, isolate=False, exporter="torchscript").routes == {}
    assert interop.verify(torch.relu, torch.randn(3), isolate=False).routes == {}
