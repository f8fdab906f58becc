"""LayerNorm: ``torch.nn.LayerNorm`` over the dimensions from ``dim`` (Aidge ``axis``) to
the last -> ONNX LayerNormalization -> Aidge LayerNorm."""
from __future__ import annotations

import torch

from ._specs import data_shape


class LayerNorm(torch.nn.LayerNorm):
    def __init__(self, input_shape, dim: int = -1, eps: float = 1e-5, affine: bool = True):
        rank = len(input_shape)
        if not -rank <= dim < rank:
            raise ValueError(f"axis {dim} out of range for an input of rank {rank}")
        super().__init__(tuple(input_shape)[dim:], eps=eps, elementwise_affine=affine)
        if affine:
            with torch.no_grad():
                self.weight.uniform_(0.5, 1.5)
                self.bias.uniform_(-0.5, 0.5)


def specs_to_kwargs(specs: list[dict]) -> dict:
    return {"input_shape": tuple(data_shape(specs))}
