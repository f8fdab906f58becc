"""Conv1D: ``torch.nn.Conv1d`` -> ONNX Conv -> Aidge Conv1D."""
from __future__ import annotations

import torch

from ._specs import conv_kwargs
from .conv2d import _check_kernel


class Conv1D(torch.nn.Conv1d):
    def __init__(self, in_channels, out_channels, kernel_size, weight_kernel=None, **kwargs):
        super().__init__(in_channels, out_channels, _check_kernel(kernel_size, weight_kernel), **kwargs)


def specs_to_kwargs(specs: list[dict]) -> dict:
    return conv_kwargs(specs, spatial=1)
