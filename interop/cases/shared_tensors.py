"""A tensor that feeds two nodes, as architecture cases (issue 45): its gradient is the sum of
its consumers' shares, which a backward must add up.

- ``shared_TiedAutoencoder``: a weight shared by an encoder and a decoder, the encoder using it
  transposed (``F.linear(x, dec.weight.t(), b)``, then ``dec``): the weight is read by a
  Transpose and by the decoder's Gemm;
- ``shared_MixerResidual``: an MLP-Mixer token-mixing block on a 2-D input, ``x + mlp(x.t()).t()``:
  the input is read by a Transpose and by the residual Add.

Both are architecture cases (source ``architecture``, ids ``arch_shared_<Name>_<eval|train>``,
run by :func:`interop.cases.architectures.run_architecture_case`: forward on two calls, then the
input gradients and every parameter's gradient against torch's, each mismatch attributed), so
that a defect in the summing of gradients is a finding with its own expected-failure row.
Measured 2026-12-03 on Aidge 0.10.1, every route (torchscript, dynamo, auto), 5 fresh processes
each: the forward matches; the tied weight's gradient is off by 1.69 and the input's by 1.0 (the
residual's share is missing) in every process. Their Transpose runs first in the forward, so its
backward runs last: a Transpose read after the other consumer (the usual tied autoencoder, whose
decoder uses ``enc.weight.t()``) makes the outcome depend on the schedule Aidge builds, which
changes from one process to the next (interop.bridge.known_defects refuses both patterns).
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["SHARED_TENSORS", "shared_tensor_model", "SharedTensorCase"]

SEED = 0


class SharedTensorCase:
    """One model: ``build()`` (seeded, train mode) and ``inputs()`` (``(args, kwargs)``)."""

    def __init__(self, name: str, family: str, factory: Callable[[], Any], shape: tuple[int, ...]):
        self.name, self.family, self.factory, self.shape = name, family, factory, shape
        self.library = "torch"

    def build(self):
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED)
            return self.factory()

    def inputs(self) -> tuple[tuple, dict]:
        import torch

        gen = torch.Generator().manual_seed(SEED + 1)
        return (torch.randn(self.shape, generator=gen),), {}


def _tied_autoencoder():
    import torch
    import torch.nn.functional as F

    class TiedAutoencoder(torch.nn.Module):
        """Encoder and decoder share one weight: the encoder reads it transposed."""

        def __init__(self):
            super().__init__()
            self.dec = torch.nn.Linear(3, 6)
            self.enc_bias = torch.nn.Parameter(torch.randn(3))

        def forward(self, x):
            return self.dec(torch.tanh(F.linear(x, self.dec.weight.t(), self.enc_bias)))

    return TiedAutoencoder()


def _mixer_residual():
    import torch

    class MixerResidual(torch.nn.Module):
        """MLP-Mixer's token mixing on a (tokens, channels) input, with its residual."""

        def __init__(self):
            super().__init__()
            self.mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 4))

        def forward(self, x):
            return x + self.mlp(x.t()).t()

    return MixerResidual()


#: the cases: a shared weight, a residual input
SHARED_TENSORS: list[SharedTensorCase] = [
    SharedTensorCase("shared_TiedAutoencoder", "tensor feeding two nodes (a weight shared through its transpose)",
                     _tied_autoencoder, (2, 6)),
    SharedTensorCase("shared_MixerResidual", "tensor feeding two nodes (an input read transposed and by a residual)",
                     _mixer_residual, (4, 5)),
]


def shared_tensor_model(name: str) -> SharedTensorCase:
    for case in SHARED_TENSORS:
        if case.name == name:
            return case
    raise KeyError(f"no shared-tensor case {name!r}; known: {[c.name for c in SHARED_TENSORS]}")
