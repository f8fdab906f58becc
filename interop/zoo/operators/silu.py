"""SiLU: ``F.silu`` -> ONNX Sigmoid + Mul -> Aidge Sigmoid + Mul."""
from __future__ import annotations

import torch


class SiLU(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)
