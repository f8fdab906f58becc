"""A small ResNet of basic blocks, with BatchNorm and a 1x1-convolution shortcut.

Input ``(N, 3, 16, 16)`` float32; output ``(N, 10)`` (logits).

Architecture: He et al., "Deep Residual Learning for Image Recognition" (2016), the
CIFAR-style ResNet built of ``BasicBlock`` s as in torchvision's ``resnet.py``: a 3x3 stem
conv + BatchNorm + ReLU, one identity block at 8 channels, one down-sampling block to 16
channels whose shortcut is a strided 1x1 conv + BatchNorm ("option B"), global average
pooling and a linear classifier. Widths and depth are cut down to keep the suite fast.
Exports to ONNX ``Conv``, ``BatchNormalization``, ``Relu``, ``Add``,
``GlobalAveragePool``, ``Flatten``, ``Gemm``.
"""
from __future__ import annotations

import torch
from torch import nn

NUM_CLASSES = 10


class BasicBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN, plus the shortcut, then ReLU (torchvision's BasicBlock)."""

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.shortcut = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.shortcut is None else self.shortcut(x)
        return torch.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES, width: int = 8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.layer1 = BasicBlock(width, width)
        self.layer2 = BasicBlock(width, 2 * width, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2 * width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)
