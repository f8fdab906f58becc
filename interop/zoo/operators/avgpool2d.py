"""AvgPool2D: ``torch.nn.AvgPool2d`` -> ONNX AveragePool -> Aidge AvgPooling2D."""
from __future__ import annotations

import torch


class AvgPool2D(torch.nn.AvgPool2d):
    pass
