"""ReduceSum: ``torch.sum(x, dim, keepdim)`` -> ONNX ReduceSum -> Aidge ReduceSum (axes, keep_dims)."""
from __future__ import annotations

import torch

from ._reduce import Reduce


class ReduceSum(Reduce):
    reduce = staticmethod(torch.sum)
