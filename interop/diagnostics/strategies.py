"""Hypothesis strategies for tensors that hunt for edge cases on purpose.

:func:`tensors` draws torch tensors whose values mix ordinary numbers with the values
kernels get wrong: zeros (both signs), constants (a whole tensor of one value), the
extremes of the dtype, the smallest normal and the subnormal values, and NaN / +-Inf when
asked (``allow_nan`` / ``allow_infinity``). Hypothesis shrinks a failing tensor towards
the smallest shape and the simplest values (zeros first), so a failure reads as a minimal
example.

    from hypothesis import given
    from interop.diagnostics.strategies import tensors

    @given(tensors(shape=(2, 3), dtype=torch.float32, allow_nan=True))
    def test_relu(x): ...
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = ["tensors", "edge_values", "shapes", "SUPPORTED_DTYPES"]

# torch dtype -> numpy dtype used to draw the values
_NUMPY = {
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.bfloat16: np.float32,  # drawn as float32 inside bfloat16's range, then rounded
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.uint8: np.uint8,
    torch.bool: np.bool_,
}
SUPPORTED_DTYPES = tuple(_NUMPY)


def shapes(min_dims: int = 1, max_dims: int = 4, min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Tensor shapes (tuples); shrink towards fewer and shorter dimensions."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def _float_info(dtype: torch.dtype) -> torch.finfo:
    return torch.finfo(dtype)


def edge_values(dtype: torch.dtype = torch.float32, *, allow_nan: bool = False, allow_infinity: bool = False,
                allow_subnormal: bool = True, min_value: float | None = None,
                max_value: float | None = None) -> list:
    """The edge values of ``dtype`` inside ``[min_value, max_value]``, simplest first."""
    if dtype == torch.bool:
        return [False, True]
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        values = [0, 1, -1, info.max, info.min, info.max - 1, info.min + 1]
    else:
        info = _float_info(dtype)
        tiny = float(info.tiny)  # smallest normal
        values = [0.0, -0.0, 1.0, -1.0, 0.5, float(info.eps), float(info.max), -float(info.max),
                  tiny, -tiny]
        if allow_subnormal:
            sub = float(info.smallest_normal) * float(info.eps)  # smallest subnormal (one ulp of 0)
            values += [sub, -sub, tiny / 2, -tiny / 2]
        if allow_infinity:
            values += [float("inf"), float("-inf")]
        if allow_nan:
            values += [float("nan")]
    out = []
    for v in values:
        is_nan = isinstance(v, float) and v != v
        if not is_nan and ((min_value is not None and v < min_value) or (max_value is not None and v > max_value)):
            continue
        if (not dtype.is_floating_point and dtype != torch.bool
                and not (torch.iinfo(dtype).min <= v <= torch.iinfo(dtype).max)):
            continue
        if repr(v) not in {repr(o) for o in out}:  # repr keeps -0.0 apart from 0.0
            out.append(v)
    return out


def _elements(dtype: torch.dtype, allow_nan: bool, allow_infinity: bool, allow_subnormal: bool,
              min_value: float | None, max_value: float | None) -> st.SearchStrategy:
    edges = edge_values(dtype, allow_nan=allow_nan, allow_infinity=allow_infinity,
                        allow_subnormal=allow_subnormal, min_value=min_value, max_value=max_value)
    if dtype == torch.bool:
        return st.booleans()
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        lo = info.min if min_value is None else max(info.min, int(np.ceil(min_value)))
        hi = info.max if max_value is None else min(info.max, int(np.floor(max_value)))
        ordinary = st.integers(lo, hi)
    else:
        width = {torch.float16: 16, torch.float64: 64}.get(dtype, 32)
        lo, hi = min_value, max_value
        if dtype == torch.bfloat16:  # keep float32 draws inside bfloat16's finite range
            big = float(torch.finfo(torch.bfloat16).max)
            lo = -big if lo is None else max(lo, -big)
            hi = big if hi is None else min(hi, big)
        ordinary = st.floats(min_value=lo, max_value=hi, allow_nan=allow_nan and lo is None and hi is None,
                             allow_infinity=allow_infinity and (lo is None or hi is None),
                             allow_subnormal=allow_subnormal, width=width)
    # ordinary numbers first: hypothesis shrinks one_of towards its first branch, and a
    # small ordinary number (0, 1, 2.5) reads better in a minimal failing example
    return st.one_of(ordinary, st.sampled_from(edges)) if edges else ordinary


def _to_tensor(arr: np.ndarray, dtype: torch.dtype, device: str | torch.device) -> torch.Tensor:
    t = torch.from_numpy(np.ascontiguousarray(arr))
    return t.to(dtype=dtype, device=device)


def tensors(
    shape: Sequence[int] | st.SearchStrategy | None = None,
    dtype: torch.dtype | st.SearchStrategy = torch.float32,
    elements: st.SearchStrategy | None = None,
    *,
    allow_nan: bool = False,
    allow_infinity: bool = False,
    allow_subnormal: bool = True,
    min_value: float | None = None,
    max_value: float | None = None,
    device: str | torch.device = "cpu",
) -> st.SearchStrategy[torch.Tensor]:
    """A strategy of torch tensors with edge cases on purpose.

    ``shape``: a fixed shape, a strategy of shapes, or ``None`` (1 to 4 dimensions of 1 to 5).
    ``dtype``: a torch dtype (:data:`SUPPORTED_DTYPES`) or a strategy of them.
    ``elements``: a hypothesis strategy for the values, replacing the default mix of edge
    values (:func:`edge_values`) and ordinary numbers. NaN and infinities appear only when
    ``allow_nan`` / ``allow_infinity``; subnormals unless ``allow_subnormal=False``;
    ``min_value`` / ``max_value`` bound every drawn value (NaN excepted).

    Whole-tensor patterns are drawn too: all zeros, and a constant (every element the same
    edge or ordinary value), besides element-wise mixes.
    """
    shape_st = shapes() if shape is None else shape if isinstance(shape, st.SearchStrategy) \
        else st.just(tuple(int(d) for d in shape))
    dtype_st = dtype if isinstance(dtype, st.SearchStrategy) else st.just(dtype)

    @st.composite
    def draw(draw_) -> torch.Tensor:
        dt = draw_(dtype_st)
        if dt not in _NUMPY:
            raise ValueError(f"tensors(): unsupported dtype {dt}; supported: {list(SUPPORTED_DTYPES)}")
        shp = draw_(shape_st)
        elems = elements if elements is not None else _elements(
            dt, allow_nan, allow_infinity, allow_subnormal, min_value, max_value)
        np_dtype = _NUMPY[dt]
        pattern = draw_(st.sampled_from(("zeros", "constant", "mixed")) if elements is None
                        else st.sampled_from(("constant", "mixed")))
        if pattern == "zeros" and (min_value is None or min_value <= 0) and (max_value is None or max_value >= 0):
            arr = np.zeros(shp, dtype=np_dtype)
        elif pattern == "constant":
            arr = np.full(shp, draw_(elems), dtype=np_dtype)
        else:
            arr = draw_(hnp.arrays(np_dtype, shp, elements=elems))
        return _to_tensor(arr, dt, device)

    return draw()
