"""Pow: ``x ** y`` (two inputs, broadcast) or ``x ** exponent`` (a constant) -> ONNX Pow ->
Aidge Pow. The config maps the base onto a positive range (a negative base to a
non-integer power is NaN on both sides, which would test nothing)."""
from __future__ import annotations

import torch


class Pow(torch.nn.Module):
    def __init__(self, exponent: float | None = None):
        super().__init__()
        self.exponent = exponent

    def forward(self, x, *y):
        if self.exponent is not None:
            if y:
                raise TypeError("Pow with a constant exponent takes one input")
            return torch.pow(x, self.exponent)
        return torch.pow(x, y[0])
