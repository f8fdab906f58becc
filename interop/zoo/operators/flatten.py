"""Flatten: ``torch.flatten(x, start_dim)`` -> ONNX Flatten (start_dim 1) or Reshape ->
Aidge Flatten/Reshape."""
from __future__ import annotations

import torch


class Flatten(torch.nn.Module):
    def __init__(self, start_dim: int = 1):
        super().__init__()
        self.start_dim = start_dim

    def forward(self, x):
        return torch.flatten(x, self.start_dim)


def aidge_types(kwargs) -> tuple[str, ...]:
    """ONNX Flatten only for start_dim 1; other start dims export as Reshape."""
    return ("Flatten",) if kwargs.get("start_dim", 1) == 1 else ("Reshape",)
