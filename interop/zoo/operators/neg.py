"""Neg: ``torch.neg`` -> ONNX Neg -> Aidge Neg."""
from __future__ import annotations

import torch


class Neg(torch.nn.Module):
    def forward(self, x):
        return torch.neg(x)
