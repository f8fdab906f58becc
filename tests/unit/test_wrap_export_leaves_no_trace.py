"""Issue 45: the bridge's exports (and the value check's torch reference) leave no trace in the
model. transformers' LeViT fills ``LevitAttention.attention_bias_cache`` in eval mode with a
tensor of the export's autograd graph; the tool's second export (the trace-dependence check)
then failed, "Cannot insert a Tensor that requires grad as a constant", and ``wrap`` raised a
false TracingError. A real LeViT configuration, random weights, offline (no download).
Before (4e189b7 and up to this change): ``TracingError: the trace of LevitModel depends on input
values``; now: wrapped, Aidge's values checked against torch, the caches as they were."""
from __future__ import annotations

import pytest
import torch

from interop import wrap

pytest.importorskip("aidge_core")
levit = pytest.importorskip("transformers.models.levit")


def _tiny_levit():
    config = levit.LevitConfig(image_size=32, patch_size=16, hidden_sizes=[16, 24, 32], num_attention_heads=[1, 2, 2],
                               depths=[1, 1, 1], key_dim=[8, 8, 8], mlp_ratio=[2, 2, 2], attention_ratio=[2, 2, 2],
                               num_channels=3)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return levit.LevitModel(config).eval()


def _caches(model):
    return [dict(m.attention_bias_cache) for m in model.modules() if hasattr(m, "attention_bias_cache")]


def test_levit_wraps_and_its_cache_is_left_as_it_was():
    model = _tiny_levit()
    assert _caches(model) and all(c == {} for c in _caches(model))
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    am = wrap(model, example_inputs=[x], example_kwargs={"return_dict": False}, exporter="torchscript")
    assert all(c == {} for c in _caches(model)), "the export left LeViT's attention-bias cache filled"
    last, pooled = am(x, return_dict=False)  # the first call: checked against torch by the module itself
    assert all(c == {} for c in _caches(model)), "the value check's torch reference left the cache filled"
    with torch.no_grad():
        want_last, want_pooled = model(x, return_dict=False)
    torch.testing.assert_close(last, want_last, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(pooled, want_pooled, rtol=1e-4, atol=1e-4)


def test_a_cache_filled_by_the_caller_is_kept():
    model = _tiny_levit()
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        model(x)  # the caller's own eval call fills the cache: the bridge must not empty it either
    before = _caches(model)
    assert all(list(c) == ["cpu"] for c in before)
    wrap(model, example_inputs=[x], example_kwargs={"return_dict": False}, exporter="torchscript")
    after = _caches(model)
    assert all(a["cpu"] is b["cpu"] for a, b in zip(after, before))
