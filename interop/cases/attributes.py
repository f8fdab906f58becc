"""Aidge attribute -> torch keyword: the conversions and the table
(:data:`SUPPORTED_ATTRS`) the JSON configurations are mapped through.

An operator maps the attributes of its JSON cases through this table; an attribute in
neither the table nor the operator's ``ignored_attrs`` is a configuration error. No torch
or Aidge import here.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

__all__ = ["SUPPORTED_ATTRS"]


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"expected an integer, got {v!r}")
    return v


def _float(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"expected a number, got {v!r}")
    return float(v)


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if v in (0, 1):
        return bool(v)
    raise ValueError(f"expected a boolean, got {v!r}")


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"expected a string, got {v!r}")
    return v


def _ints(v: Any) -> tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ValueError(f"expected a list of integers, got {v!r}")
    return tuple(v)


def _floats(v: Any) -> tuple[float, ...]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (float(v),)
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise ValueError(f"expected a list of numbers, got {v!r}")
    return tuple(float(x) for x in v)


def _symmetric_padding(v: Any) -> tuple[int, ...]:
    """Aidge ``padding_dims`` ``[begin_1, .., begin_n, end_1, .., end_n]`` -> torch
    ``padding=(p_1, .., p_n)``; torch convolutions and poolings only pad symmetrically."""
    dims = _ints(v)
    if len(dims) % 2:
        raise ValueError(f"padding_dims needs begin and end values (an even count), got {list(dims)}")
    n = len(dims) // 2
    begin, end = dims[:n], dims[n:]
    if begin != end:
        raise ValueError(f"torch pads symmetrically; padding_dims {list(dims)} has begin {list(begin)} "
                         f"!= end {list(end)}")
    return begin


def _one_minus(v: Any) -> float:
    """ONNX/Aidge BatchNorm ``momentum`` (weight of the running value) -> torch ``momentum``
    (weight of the batch value)."""
    m = _float(v)
    if not 0.0 <= m <= 1.0:
        raise ValueError(f"momentum must lie in [0, 1], got {m}")
    return 1.0 - m


#: Aidge attribute name -> (torch keyword, conversion). An operator maps the attributes of
#: its JSON cases through this table; an attribute in neither the table nor the
#: operator's ``ignored_attrs`` is a configuration error.
SUPPORTED_ATTRS: Mapping[str, tuple[str, Callable[[Any], Any]]] = {
    # convolution / pooling
    "kernel_dims": ("kernel_size", _ints),
    "stride_dims": ("stride", _ints),
    "dilation_dims": ("dilation", _ints),
    "dilations": ("dilation", _ints),
    "padding_dims": ("padding", _symmetric_padding),
    "output_padding": ("output_padding", _ints),
    "groups": ("groups", _int),
    "ceil_mode": ("ceil_mode", _bool),
    "count_include_pad": ("count_include_pad", _bool),
    # reductions, softmax, concat...
    "axes": ("dim", _ints),
    "axis": ("dim", _int),
    "keep_dims": ("keepdim", _bool),
    # activations
    "alpha": ("alpha", _float),
    "beta": ("beta", _float),
    "negative_slope": ("negative_slope", _float),
    "approximate": ("approximate", _str),
    "min": ("min", _float),
    "max": ("max", _float),
    # normalisations
    "epsilon": ("eps", _float),
    "momentum": ("momentum", _one_minus),
    "training_mode": ("training", _bool),
    "num_groups": ("num_groups", _int),
    "normalized_shape": ("normalized_shape", _ints),
    "affine": ("affine", _bool),
    # arithmetic
    "rounding_mode": ("rounding_mode", _str),
    "exponent": ("exponent", _float),
    # shape manipulation
    "output_dims_order": ("dims", _ints),
    "shape": ("shape", _ints),
    "starts": ("starts", _ints),
    "ends": ("ends", _ints),
    "steps": ("steps", _ints),
    "split": ("split", _ints),
    "indices": ("indices", _ints),
    "start_dim": ("start_dim", _int),
    # padding (Aidge Pad: ONNX pads order [begin_1..begin_n, end_1..end_n])
    "pads": ("pads", _ints),
    "constant_value": ("value", _float),
    # resize
    "mode": ("mode", _str),
    "scale_factor": ("scale_factor", _floats),
    "align_corners": ("align_corners", _bool),
    # embedding
    "num_embeddings": ("num_embeddings", _int),
}


