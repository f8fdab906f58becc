"""MatMul: ``torch.matmul(a, b)`` (2-D, batched, broadcast) -> ONNX MatMul -> Aidge MatMul."""
from __future__ import annotations

import torch


class MatMul(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
