"""ReLU: ``torch.relu`` -> ONNX Relu -> Aidge ReLU."""
from __future__ import annotations

import torch


class ReLU(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
