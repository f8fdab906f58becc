"""Abs: ``torch.abs`` -> ONNX Abs -> Aidge Abs."""
from __future__ import annotations

import torch


class Abs(torch.nn.Module):
    def forward(self, x):
        return torch.abs(x)
