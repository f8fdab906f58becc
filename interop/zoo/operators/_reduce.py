"""Shared body of the four Reduce* operator modules (they differ only by the torch function)."""
from __future__ import annotations

import torch


class Reduce(torch.nn.Module):
    """``reduce(x, dim, keepdim)``; ``dim=None`` reduces over every axis."""

    @staticmethod
    def reduce(x, dim, keepdim):  # overridden by each operator module
        raise NotImplementedError

    def __init__(self, dim=None, keepdim: bool = True):
        super().__init__()
        self.dim = tuple(dim) if dim is not None else None
        self.keepdim = keepdim

    def forward(self, x):
        dim = tuple(range(x.dim())) if self.dim is None else self.dim
        return self.reduce(x, dim=dim, keepdim=self.keepdim)
