"""Hardsigmoid: ``F.hardsigmoid`` (alpha 1/6, beta 1/2) -> ONNX HardSigmoid -> Aidge HardSigmoid."""
from __future__ import annotations

import torch


class Hardsigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.hardsigmoid(x)
