"""Where: ``torch.where(x > threshold, x, y)`` -> ONNX Greater + Where -> Aidge Greater + Where."""
from __future__ import annotations

import torch


class Where(torch.nn.Module):
    def __init__(self, threshold: float = 0.0):
        super().__init__()
        self.threshold = threshold

    def forward(self, x, y):
        return torch.where(x > self.threshold, x, y)
