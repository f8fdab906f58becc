"""A small multi-layer perceptron: Linear -> ReLU -> Linear -> ReLU -> Linear.

Input ``(N, 16)`` float32; output ``(N, 4)`` (unnormalised scores).

Architecture: the textbook fully-connected network (Rumelhart, Hinton & Williams 1986;
the "Perceptron" of the aidge_interop_torch examples), sized to run in milliseconds.
Exports to ONNX ``Gemm`` + ``Relu`` (Aidge ``FC`` + ``ReLU``).
"""
from __future__ import annotations

import torch
from torch import nn

IN_FEATURES = 16
HIDDEN = 32
OUT_FEATURES = 4


class Perceptron(nn.Module):
    def __init__(self, in_features: int = IN_FEATURES, hidden: int = HIDDEN, out_features: int = OUT_FEATURES):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)
