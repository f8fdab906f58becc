"""GlobalAveragePool: ``torch.nn.AdaptiveAvgPool2d(1)`` -> ONNX GlobalAveragePool -> Aidge
GlobalAveragePooling."""
from __future__ import annotations

import torch


class GlobalAveragePool(torch.nn.AdaptiveAvgPool2d):
    def __init__(self):
        super().__init__(1)
