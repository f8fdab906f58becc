"""Exp: ``torch.exp`` -> ONNX Exp -> Aidge Exp."""
from __future__ import annotations

import torch


class Exp(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x)
