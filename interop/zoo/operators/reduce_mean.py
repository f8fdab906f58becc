"""ReduceMean: ``torch.mean(x, dim, keepdim)`` -> ONNX ReduceMean -> Aidge ReduceMean (axes, keep_dims)."""
from __future__ import annotations

import torch

from ._reduce import Reduce


class ReduceMean(Reduce):
    reduce = staticmethod(torch.mean)
