"""Div: ``x / y`` on two inputs, broadcast -> ONNX Div -> Aidge Div (the config keeps the
denominator away from 0 with an input range)."""
from __future__ import annotations

import torch


class Div(torch.nn.Module):
    def forward(self, x, y):
        return x / y
