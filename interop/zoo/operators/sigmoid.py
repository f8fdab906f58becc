"""Sigmoid: ``torch.sigmoid`` -> ONNX Sigmoid -> Aidge Sigmoid."""
from __future__ import annotations

import torch


class Sigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)
