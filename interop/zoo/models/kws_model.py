"""Keyword-spotting DS-CNN on 49x10 MFCC features, 12 classes.

Input ``(N, 1, 49, 10)`` float32 (49 frames x 10 MFCC coefficients); output ``(N, 12)``
(logits).

Architecture: the DS-CNN of Zhang et al., "Hello Edge: Keyword Spotting on
Microcontrollers" (2017, ARM-software/ML-KWS-for-MCU), as used by the MLPerf Tiny
keyword-spotting benchmark (``keras_model.py``, ``model_name == 'ds_cnn'``): a 10x4 conv with
stride 2 (64 filters) + BatchNorm + ReLU, four depthwise-separable blocks (3x3 depthwise
+ BN + ReLU, 1x1 pointwise to 64 + BN + ReLU), average pooling over the whole 25x5 map and a
dense layer to 12 classes. Differences, on purpose: TF's asymmetric ``'same'`` padding of the
first conv is replaced by symmetric padding (5, 1), which gives the same 25x5 output; the
dropout layers are left out (a random mask cannot be compared between two frameworks);
the final softmax is left to the loss (the model returns logits).
Exports to ONNX ``Conv`` (depthwise: ``group == 64``), ``BatchNormalization``, ``Relu``,
``AveragePool``, ``Flatten``, ``Gemm``.
"""
from __future__ import annotations

import torch
from torch import nn

NUM_CLASSES = 12
FILTERS = 64


class _DSBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pointwise = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(x)))


class KWSDSCNN(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES, filters: int = FILTERS, blocks: int = 4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, filters, kernel_size=(10, 4), stride=2, padding=(5, 1), bias=False)  # -> 25x5
        self.bn1 = nn.BatchNorm2d(filters)
        self.blocks = nn.Sequential(*[_DSBlock(filters) for _ in range(blocks)])
        self.pool = nn.AvgPool2d(kernel_size=(25, 5))
        self.fc = nn.Linear(filters, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.blocks(x)
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)
