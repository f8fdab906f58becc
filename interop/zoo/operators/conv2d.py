"""Conv2D: ``torch.nn.Conv2d`` -> ONNX Conv -> Aidge Conv2D (grouped: see the config)."""
from __future__ import annotations

import torch

from ._specs import conv_kwargs


def _check_kernel(kernel_size, weight_kernel):
    k = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * len(weight_kernel)
    if weight_kernel is not None and tuple(weight_kernel) != k:
        raise ValueError(f"kernel_dims {list(k)} disagree with the weight's kernel dims {list(weight_kernel)}")
    return k


class Conv2D(torch.nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, weight_kernel=None, **kwargs):
        super().__init__(in_channels, out_channels, _check_kernel(kernel_size, weight_kernel), **kwargs)


def specs_to_kwargs(specs: list[dict]) -> dict:
    return conv_kwargs(specs, spatial=2)
