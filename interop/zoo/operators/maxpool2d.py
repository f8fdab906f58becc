"""MaxPool2D: ``torch.nn.MaxPool2d`` -> ONNX MaxPool -> Aidge MaxPooling2D."""
from __future__ import annotations

import torch


class MaxPool2D(torch.nn.MaxPool2d):
    pass
