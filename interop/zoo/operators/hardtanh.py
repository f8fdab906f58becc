"""Hardtanh: ``torch.nn.Hardtanh(min_val, max_val)`` -> ONNX Clip -> Aidge Clip.

Takes Aidge's Clip attribute names (``min``, ``max``), as its JSON configuration does.
"""
from __future__ import annotations

import torch


class Hardtanh(torch.nn.Hardtanh):
    def __init__(self, min: float = -1.0, max: float = 1.0):
        super().__init__(min_val=min, max_val=max)
