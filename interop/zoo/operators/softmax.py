"""Softmax: ``torch.softmax(x, dim)`` -> ONNX Softmax -> Aidge Softmax."""
from __future__ import annotations

import torch


class Softmax(torch.nn.Softmax):
    pass
