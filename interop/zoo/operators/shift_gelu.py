"""ShiftGELU: Aidge's ``SDShiftGELU`` (custom ONNX op ``SDShiftGELU``, Python factory
``aidge_core.SDShiftGELU(input_scale, output_scale)``) is an integer-only, shift-based
approximation of GELU on quantised values. PyTorch has no equivalent operator and no ONNX
export of one, so there is no reference to compare with: the config skips it."""
from __future__ import annotations

import torch


class ShiftGELU(torch.nn.Module):
    def __init__(self, **_aidge_attributes):
        raise NotImplementedError("PyTorch has no ShiftGELU (Aidge SDShiftGELU) equivalent")
