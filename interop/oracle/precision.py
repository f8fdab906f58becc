"""The oracle's float64 tie-break: is a difference float32's own rounding?

When Aidge's value is not torch float32's within the dtype's tolerance, torch recomputed in
float64 (the "exact" result) decides. One rule, for a whole tensor, used by every verdict
(``wrap``'s first-call check, ``verify``, the suites, ``check``, the reproducers):

    Aidge's worst error against float64  <=  2 x torch float32's worst error against float64
                                             + rtol x max |exact|  +  atol

with NaN where the exact result has NaN and infinities exactly. Why a tensor-level budget and
not element by element (the rule before 2026-12-06): two float32 computations of the same graph
sum in other orders and err by as much as torch does, on other elements. Element by element,
an element torch happens to get exact leaves Aidge no room at all. Measured: timm ``repvgg_a0``
(outputs near 17,700) has Aidge 5.9e-7 relative error against float64, onnxruntime 5.0e-7 and
torch float32 itself 4.1e-7, yet the element-wise rule called it a mismatch and ``wrap`` raised
on a correct answer; an EfficientNet on the dynamo route (Aidge 4.2e-5, onnxruntime 4.5e-5,
torch float32 4.8e-5 from float64) was blamed on the export. The ``rtol x max |exact|`` term
scales the dtype's own relative tolerance to the output's magnitude: a sum's rounding error
grows with its terms, not with the (possibly near-zero) element it lands in. A defect errs by
far more than either term (a wrong kernel is off by the value's own scale).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .compare import to_numpy

__all__ = ["within_float32_error", "float_error"]

#: how many times torch float32's own worst error another float32 computation may make
ROUNDING_FACTOR = 2.0


def float_error(value: Any, exact: Any) -> float | None:
    """The worst absolute error of ``value`` against ``exact`` over the elements where ``exact``
    is finite (None: shapes differ)."""
    v = to_numpy(value).astype(np.float64)
    e = to_numpy(exact).astype(np.float64)
    if v.shape != e.shape:
        return None
    finite = np.isfinite(e)
    if not finite.any():
        return 0.0
    with np.errstate(all="ignore"):
        err = np.abs(v[finite] - e[finite])
    return float(np.nan_to_num(err, nan=np.inf).max())


def within_float32_error(actual: Any, torch32: Any, exact: Any, rtol: float, atol: float) -> bool:
    """Whether ``actual``'s error against ``exact`` (torch float64) is of the order of the error
    ``torch32`` (torch float32) makes on the same tensor: the module's rule, with the dtype's
    ``rtol`` and ``atol``. NaN must sit where the exact result has NaN, infinities exactly;
    shapes must agree. Integer and boolean values have no rounding: they must be equal."""
    a = to_numpy(actual)
    t = to_numpy(torch32)
    e = to_numpy(exact)
    if not (a.shape == t.shape == e.shape):
        return False
    if not (np.issubdtype(e.dtype, np.inexact) or np.issubdtype(a.dtype, np.inexact)):
        return bool(np.array_equal(a, e))
    a, t, e = (x.astype(np.complex128 if np.iscomplexobj(x) else np.float64) for x in (a, t, e))
    nan_e = np.isnan(e)
    if not np.array_equal(np.isnan(a), nan_e):
        return False
    finite = ~nan_e & np.isfinite(e)
    if not np.array_equal(a[~finite & ~nan_e], e[~finite & ~nan_e]):
        return False
    if not finite.any():
        return True
    with np.errstate(all="ignore"):
        worst_a = float(np.abs(a[finite] - e[finite]).max())
        worst_t = float(np.nan_to_num(np.abs(t[finite] - e[finite]), nan=np.inf).max())
        scale = float(np.abs(e[finite]).max())
    return worst_a <= ROUNDING_FACTOR * worst_t + rtol * scale + atol
