"""Sqrt: ``torch.sqrt`` -> ONNX Sqrt -> Aidge Sqrt (inputs mapped onto a positive range by the config)."""
from __future__ import annotations

import torch


class Sqrt(torch.nn.Module):
    def forward(self, x):
        return torch.sqrt(x)
