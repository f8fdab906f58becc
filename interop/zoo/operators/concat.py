"""Concat: ``torch.cat`` of the inputs along ``dim`` -> ONNX Concat -> Aidge Concat."""
from __future__ import annotations

import torch


class Concat(torch.nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, *inputs):
        return torch.cat(inputs, dim=self.dim)
