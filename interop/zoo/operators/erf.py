"""Erf: ``torch.erf`` -> ONNX Erf -> Aidge Erf."""
from __future__ import annotations

import torch


class Erf(torch.nn.Module):
    def forward(self, x):
        return torch.erf(x)
