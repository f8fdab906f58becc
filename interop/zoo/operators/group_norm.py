"""GroupNorm: ``torch.nn.GroupNorm`` -> ONNX (opset 18) Reshape + InstanceNormalization +
Reshape + Mul + Add -> Aidge InstanceNorm and friends (ONNX GroupNormalization is opset 21)."""
from __future__ import annotations

import torch

from ._specs import data_shape


class GroupNorm(torch.nn.GroupNorm):
    def __init__(self, num_groups, num_channels, eps: float = 1e-5, affine: bool = True):
        super().__init__(num_groups, num_channels, eps=eps, affine=affine)
        if affine:
            with torch.no_grad():
                self.weight.uniform_(0.5, 1.5)
                self.bias.uniform_(-0.5, 0.5)


def specs_to_kwargs(specs: list[dict]) -> dict:
    return {"num_channels": data_shape(specs)[1]}
