"""A small MobileNet (v1) of depthwise-separable blocks.

Input ``(N, 3, 32, 32)`` float32; output ``(N, 10)`` (logits).

Architecture: Howard et al., "MobileNets: Efficient Convolutional Neural Networks for
Mobile Vision Applications" (2017): a strided 3x3 stem conv + BatchNorm + ReLU, then
depthwise-separable blocks (3x3 depthwise conv + BN + ReLU, 1x1 pointwise conv + BN + ReLU),
global average pooling and a linear classifier. Width multiplier and depth are cut down
(8 -> 16 -> 32 -> 32 channels) to keep the suite fast.
Exports to ONNX ``Conv`` (``group == channels`` for the depthwise ones, Aidge
``ConvDepthWise2D``), ``BatchNormalization``, ``Relu``, ``GlobalAveragePool``, ``Gemm``.
"""
from __future__ import annotations

import torch
from torch import nn

NUM_CLASSES = 10


class DepthwiseSeparable(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, 3, stride=stride, padding=1,
                                   groups=in_channels, bias=False)
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(x)))


class MobileNetV1(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)  # 32 -> 16
        self.bn1 = nn.BatchNorm2d(8)
        self.blocks = nn.Sequential(
            DepthwiseSeparable(8, 16),
            DepthwiseSeparable(16, 32, stride=2),   # 16 -> 8
            DepthwiseSeparable(32, 32),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.blocks(x)
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)
