"""Transpose: ``x.permute(dims)`` (Aidge ``output_dims_order``) -> ONNX Transpose -> Aidge Transpose."""
from __future__ import annotations

import torch


class Transpose(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = tuple(dims)

    def forward(self, x):
        return x.permute(self.dims)
