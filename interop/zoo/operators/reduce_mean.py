"""ReduceMean: ``torch.mean(x, dim, keepdim)`` -> ONNX ReduceMean -> Aidge ReduceMean (axes, keep_dims)."""
from __future__ import annotations

import torch


class ReduceMean(torch.nn.Module):
    def __init__(self, dim=None, keepdim: bool = True):
        super().__init__()
        self.dim = tuple(dim) if dim is not None else None
        self.keepdim = keepdim

    def forward(self, x):
        if self.dim is None:
            return torch.mean(x, dim=tuple(range(x.dim())), keepdim=self.keepdim)
        return torch.mean(x, dim=self.dim, keepdim=self.keepdim)
