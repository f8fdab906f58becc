"""Hardswish: ``F.hardswish`` -> ONNX HardSwish -> Aidge HardSwish."""
from __future__ import annotations

import torch


class Hardswish(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.hardswish(x)
