"""Resize: ``F.interpolate(x, scale_factor, mode, align_corners)`` -> ONNX Resize -> Aidge Resize."""
from __future__ import annotations

import torch


class Resize(torch.nn.Module):
    def __init__(self, scale_factor, mode: str = "nearest", align_corners: bool | None = None):
        super().__init__()
        if mode not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"mode {mode!r} is not one of nearest, bilinear, bicubic")
        self.scale_factor = tuple(scale_factor)
        self.mode = mode
        self.align_corners = align_corners if mode != "nearest" else None

    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=self.scale_factor, mode=self.mode,
                                               align_corners=self.align_corners)
