"""LeNet-5 on a 1x32x32 image, 10 classes.

Input ``(N, 1, 32, 32)`` float32; output ``(N, 10)`` (logits).

Architecture: LeCun et al., "Gradient-based learning applied to document recognition"
(1998): conv 5x5 (6) -> pool -> conv 5x5 (16) -> pool -> FC 120 -> FC 84 -> FC 10, in
the modern form of the PyTorch "Neural Networks" tutorial (ReLU activations and 2x2 max
pooling instead of the original scaled tanh and trainable sub-sampling).
Exports to ONNX ``Conv``, ``Relu``, ``MaxPool``, ``Flatten``, ``Gemm``.
"""
from __future__ import annotations

import torch
from torch import nn

NUM_CLASSES = 10


class LeNet(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=5)     # 32 -> 28
        self.pool1 = nn.MaxPool2d(2)                     # 28 -> 14
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)    # 14 -> 10
        self.pool2 = nn.MaxPool2d(2)                     # 10 -> 5
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool1(torch.relu(self.conv1(x)))
        x = self.pool2(torch.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)
