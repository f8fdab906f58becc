"""InstanceNorm: ``torch.nn.InstanceNorm2d`` -> ONNX InstanceNormalization -> Aidge InstanceNorm."""
from __future__ import annotations

import torch

from ._specs import channels


class InstanceNorm(torch.nn.InstanceNorm2d):
    def __init__(self, num_features, eps: float = 1e-5, affine: bool = True):
        super().__init__(num_features, eps=eps, affine=affine)
        if affine:
            with torch.no_grad():
                self.weight.uniform_(0.5, 1.5)
                self.bias.uniform_(-0.5, 0.5)


def specs_to_kwargs(specs: list[dict]) -> dict:
    return channels(specs, min_rank=4)
