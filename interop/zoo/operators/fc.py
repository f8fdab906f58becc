"""FC: ``torch.nn.Linear`` -> ONNX Gemm -> Aidge FC (on 2-D inputs)."""
from __future__ import annotations

import torch

from ._specs import by_name, data_shape, shape


class FC(torch.nn.Linear):
    pass


def specs_to_kwargs(specs: list[dict]) -> dict:
    specs = by_name(specs)
    x = data_shape(specs, 2)
    w = shape(specs, "weight")
    if len(w) != 2 or w[1] != x[1]:
        raise ValueError(f"weight shape {w} must be [out_features, {x[1]}]")
    kwargs = {"in_features": x[1], "out_features": w[0], "bias": "bias" in specs}
    if "bias" in specs and shape(specs, "bias") != [w[0]]:
        raise ValueError(f"bias shape {shape(specs, 'bias')} must be [{w[0]}]")
    return kwargs


def aidge_types(kwargs) -> tuple[str, ...]:
    """torch exports a Linear with bias as Gemm (Aidge FC), one without as MatMul."""
    return ("FC",) if kwargs.get("bias", True) else ("MatMul",)
