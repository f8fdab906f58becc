"""Pad: ``F.pad`` -> ONNX Pad -> Aidge Pad. Keywords use Aidge's (and ONNX's) conventions:
``pads = [begin_1, .., begin_n, end_1, .., end_n]`` over all dimensions, ``mode`` one of
``constant``, ``reflect``, ``edge`` (torch's ``replicate``), ``wrap`` (torch's ``circular``)."""
from __future__ import annotations

import torch

_TORCH_MODE = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}


class Pad(torch.nn.Module):
    def __init__(self, pads, mode: str = "constant", value: float = 0.0):
        super().__init__()
        if mode not in _TORCH_MODE:
            raise ValueError(f"mode {mode!r} is not one of {sorted(_TORCH_MODE)}")
        if len(pads) % 2:
            raise ValueError(f"pads needs begin and end values, got {list(pads)}")
        n = len(pads) // 2
        begin, end = pads[:n], pads[n:]
        # F.pad order: last dimension first, (begin, end) pairs; leading zero pairs dropped
        order = []
        for b, e in reversed(list(zip(begin, end))):
            order += [b, e]
        while len(order) > 2 and order[-2:] == [0, 0]:
            order = order[:-2]
        if mode != "constant" and len(order) > 2 * max(1, n - 2):
            raise ValueError(f"torch pads only the spatial dimensions in {mode!r} mode (pads {list(pads)})")
        self.pad = tuple(order)
        self.mode = _TORCH_MODE[mode]
        self.value = value

    def forward(self, x):
        if self.mode == "constant":
            return torch.nn.functional.pad(x, self.pad, mode="constant", value=self.value)
        return torch.nn.functional.pad(x, self.pad, mode=self.mode)
