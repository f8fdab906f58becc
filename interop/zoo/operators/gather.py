"""Gather: ``torch.index_select(x, dim, indices)`` with constant indices -> ONNX Gather ->
Aidge Gather."""
from __future__ import annotations

import torch


class Gather(torch.nn.Module):
    def __init__(self, dim: int, indices):
        super().__init__()
        self.dim = dim
        self.register_buffer("indices", torch.tensor(list(indices), dtype=torch.int64))

    def forward(self, x):
        return torch.index_select(x, self.dim, self.indices)
