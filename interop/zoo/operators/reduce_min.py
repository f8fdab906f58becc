"""ReduceMin: ``torch.amin(x, dim, keepdim)`` -> ONNX ReduceMin -> Aidge ReduceMin (axes, keep_dims)."""
from __future__ import annotations

import torch

from ._reduce import Reduce


class ReduceMin(Reduce):
    reduce = staticmethod(torch.amin)
