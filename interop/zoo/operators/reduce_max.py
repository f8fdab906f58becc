"""ReduceMax: ``torch.amax(x, dim, keepdim)`` -> ONNX ReduceMax -> Aidge ReduceMax (axes, keep_dims)."""
from __future__ import annotations

import torch

from ._reduce import Reduce


class ReduceMax(Reduce):
    reduce = staticmethod(torch.amax)
