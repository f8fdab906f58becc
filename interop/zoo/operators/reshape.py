"""Reshape: ``x.reshape(shape)`` (``-1`` and ``0`` as in ONNX: 0 copies the input dimension)
-> ONNX Reshape -> Aidge Reshape."""
from __future__ import annotations

import torch


class Reshape(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = tuple(shape)

    def forward(self, x):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(self.shape)]
        return x.reshape(shape)
