"""GELU: ``torch.nn.GELU(approximate)``. ONNX has no Gelu before opset 20: at opset 18 the
exact form exports as Div + Erf + Add + Mul, the tanh form as Pow/Mul/Add + Tanh, and Aidge
runs that decomposition (its graph holds Erf, resp. Tanh)."""
from __future__ import annotations

import torch


class GELU(torch.nn.GELU):
    pass


def aidge_types(kwargs) -> tuple[str, ...]:
    return ("Tanh",) if kwargs.get("approximate", "none") == "tanh" else ("Erf",)
