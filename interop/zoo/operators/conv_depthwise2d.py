"""ConvDepthwise2D: ``torch.nn.Conv2d(groups=in_channels)`` -> ONNX Conv(group=C) -> Aidge
ConvDepthWise2D. ``out_channels = multiplier * in_channels`` (weight ``[out, 1, kh, kw]``)."""
from __future__ import annotations

import torch

from ._specs import conv_kwargs
from .conv2d import _check_kernel


class ConvDepthwise2D(torch.nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, weight_kernel=None, groups=None, **kwargs):
        if groups != in_channels:
            raise ValueError(f"a depthwise convolution has one group per input channel: weight [out, 1, kh, kw] "
                             f"(got groups={groups}, in_channels={in_channels})")
        super().__init__(in_channels, out_channels, _check_kernel(kernel_size, weight_kernel), groups=groups, **kwargs)


def specs_to_kwargs(specs: list[dict]) -> dict:
    kwargs = conv_kwargs(specs, spatial=2)
    kwargs.setdefault("groups", 1)
    return kwargs
