"""Sub: ``x - y`` on two inputs, broadcast -> ONNX Sub -> Aidge Sub."""
from __future__ import annotations

import torch


class Sub(torch.nn.Module):
    def forward(self, x, y):
        return x - y
