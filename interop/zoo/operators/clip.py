"""Clip: ``torch.clamp(x, min, max)`` -> ONNX Clip -> Aidge Clip (ReLU6 is min 0, max 6)."""
from __future__ import annotations

import torch


class Clip(torch.nn.Module):
    def __init__(self, min: float | None = None, max: float | None = None):
        super().__init__()
        if min is None and max is None:
            raise ValueError("Clip needs min or max")
        self.min = min
        self.max = max

    def forward(self, x):
        return torch.clamp(x, self.min, self.max)
