"""Split: ``torch.split(x, split, dim)`` (several outputs) -> ONNX Split -> Aidge Split."""
from __future__ import annotations

import torch


class Split(torch.nn.Module):
    def __init__(self, split, dim: int = 0):
        super().__init__()
        self.split = list(split)
        self.dim = dim

    def forward(self, x):
        if sum(self.split) != x.shape[self.dim]:
            raise ValueError(f"split sizes {self.split} do not add up to dimension {self.dim} of size {x.shape[self.dim]}")
        return tuple(torch.split(x, self.split, dim=self.dim))
