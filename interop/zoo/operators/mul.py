"""Mul: ``x * y`` on two inputs, broadcast -> ONNX Mul -> Aidge Mul."""
from __future__ import annotations

import torch


class Mul(torch.nn.Module):
    def forward(self, x, y):
        return x * y
