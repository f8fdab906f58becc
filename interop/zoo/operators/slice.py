"""Slice: ``x[starts:ends:steps]`` on ``dim`` (Aidge ``axes``) -> ONNX Slice -> Aidge Slice."""
from __future__ import annotations

import torch


class Slice(torch.nn.Module):
    def __init__(self, starts, ends, dim, steps=None):
        super().__init__()
        steps = steps or (1,) * len(starts)
        if not len(starts) == len(ends) == len(dim) == len(steps):
            raise ValueError("starts, ends, axes and steps must have the same length")
        if any(s <= 0 for s in steps):
            raise ValueError(f"steps must be positive (torch slicing), got {list(steps)}")
        self.slices = list(zip(dim, starts, ends, steps))

    def forward(self, x):
        index = [slice(None)] * x.dim()
        for d, s, e, st in self.slices:
            index[d] = slice(s, e, st)
        return x[tuple(index)]
