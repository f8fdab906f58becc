"""Tanh: ``torch.tanh`` -> ONNX Tanh -> Aidge Tanh."""
from __future__ import annotations

import torch


class Tanh(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(x)
