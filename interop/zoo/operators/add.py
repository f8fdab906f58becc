"""Add: ``x + y`` on two inputs, broadcast -> ONNX Add -> Aidge Add."""
from __future__ import annotations

import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y
