"""Softplus: ``torch.nn.Softplus(beta)`` -> ONNX Softplus (with Mul/Div around it when
beta != 1) -> Aidge Softplus (a meta-operator)."""
from __future__ import annotations

import torch


class Softplus(torch.nn.Softplus):
    pass
