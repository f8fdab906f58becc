"""Reciprocal: ``torch.reciprocal`` -> ONNX Reciprocal -> Aidge Reciprocal (inputs kept away from 0 by the config)."""
from __future__ import annotations

import torch


class Reciprocal(torch.nn.Module):
    def forward(self, x):
        return torch.reciprocal(x)
