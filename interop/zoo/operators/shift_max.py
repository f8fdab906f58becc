"""ShiftMax: Aidge's ``SDShiftmax`` (custom ONNX op ``SDShiftmax``, Python factory
``aidge_core.SDShiftmax(input_scale, output_scale, shift, axis)``) is an integer-only,
shift-based approximation of softmax on quantised values. PyTorch has no equivalent
operator and no ONNX export of one, so there is no reference to compare with: the config
skips it."""
from __future__ import annotations

import torch


class ShiftMax(torch.nn.Module):
    def __init__(self, **_aidge_attributes):
        raise NotImplementedError("PyTorch has no ShiftMax (Aidge SDShiftmax) equivalent")
