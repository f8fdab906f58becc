"""The one shared tensor comparator of the interop suite (tensors; containers of
tensors are walked by :mod:`interop.oracle.outputs`, tolerances come from
:mod:`interop.oracle.tolerance`).

Every verdict "does Aidge compute what PyTorch computes?" goes through this module,
so that the equivalence tests, the benchmark prechecks and the divergence
localisation all agree on what *close* means and all print the same diagnostics.

Semantics (close to :func:`torch.testing.assert_close`, with stricter reporting):

* shapes must match exactly; dtypes may differ (values are compared and the
  tolerance is the looser of the two dtypes' defaults, see :func:`default_tolerances`);
* integers and bools are compared **exactly**, in integer arithmetic (never through
  float64, so ``2**60 + 1 != 2**60``); mixed integer / float compares as float with the
  float's tolerance;
* complex values are compared on their real and imaginary parts separately;
* closeness of finite values is ``|actual - expected| <= atol + rtol * |expected|``;
* NaN positions must match when ``equal_nan`` (otherwise any NaN is a mismatch);
  infinities must match exactly, sign included;
* the reported worst element is the failing element with the largest excess over its
  allowed tolerance, and the statistics are computed over failing elements only.

Accepted inputs: torch tensors (any device, any layout the CPU can densify), numpy
arrays, numpy and python scalars, and Aidge tensors (``aidge_core.Tensor``).  Neither
torch nor aidge_core is imported by this module: a torch tensor can only exist if torch
was imported by the caller, and Aidge tensors are recognised by their class.

This module never prints and never touches the ``warnings`` filters.
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .tolerance import _dtype_name, default_tolerances

__all__ = [
    "mismatch_figures",
    "Mismatch",
    "default_tolerances",
    "compare_tensors",
    "assert_tensors_close",
    "is_tensor_like",
    "to_numpy",
]

# --------------------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------------------


def _is_torch_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _is_aidge_tensor(x: Any) -> bool:
    return any(
        cls.__name__ == "Tensor" and cls.__module__.split(".")[0] == "aidge_core"
        for cls in type(x).__mro__
    )


def is_tensor_like(x: Any) -> bool:
    """True for the leaves :func:`compare_tensors` accepts (tensors, arrays, scalars)."""
    return (
        isinstance(x, (np.ndarray, np.generic, numbers.Number))
        or _is_torch_tensor(x)
        or _is_aidge_tensor(x)
    )


def _torch_to_numpy(t: Any) -> tuple[np.ndarray, str]:
    import torch  # already imported: t is a torch tensor

    tol_name = str(t.dtype)[len("torch."):]
    t = t.detach()
    if t.device.type == "meta":
        raise TypeError("cannot compare a tensor on the 'meta' device: it holds no data")
    if t.is_quantized:
        t = t.dequantize()
        tol_name = "float32"
    if t.layout != torch.strided:
        t = t.to_dense()
    t = t.cpu().resolve_conj().resolve_neg()
    try:
        return t.numpy(), tol_name
    except TypeError:  # bfloat16, float8, complex32...: no numpy dtype
        if t.is_complex():
            return t.to(torch.complex64).numpy(), tol_name
        if t.is_floating_point():
            return t.to(torch.float32).numpy(), tol_name  # exact widening
        raise TypeError(f"cannot compare torch tensors of dtype {t.dtype}") from None


def _to_numpy_with_tol(x: Any) -> tuple[np.ndarray, str]:
    """``(array, dtype name used for the default tolerance)``."""
    if _is_torch_tensor(x):
        arr, tol_name = _torch_to_numpy(x)
    elif isinstance(x, np.ndarray):
        arr, tol_name = x, _dtype_name(x.dtype)
    elif isinstance(x, np.generic):
        arr = np.asarray(x)
        tol_name = _dtype_name(arr.dtype)
    elif isinstance(x, numbers.Number) and not isinstance(x, np.generic):
        if isinstance(x, bool):
            arr = np.asarray(x, dtype=np.bool_)
        elif isinstance(x, numbers.Integral):
            arr = np.asarray(int(x))
        elif isinstance(x, numbers.Real):
            arr = np.asarray(float(x), dtype=np.float64)
        else:
            arr = np.asarray(complex(x), dtype=np.complex128)
        tol_name = _dtype_name(arr.dtype)
    elif _is_aidge_tensor(x):
        try:
            arr = np.array(x)
        except Exception as exc:  # e.g. no backend / data not on the host
            raise TypeError(
                f"cannot read the Aidge tensor as a numpy array ({exc}); "
                "is it on a CPU backend?"
            ) from exc
        tol_name = _dtype_name(arr.dtype)
    else:
        raise TypeError(
            "expected a torch tensor, numpy array, Aidge tensor or scalar, "
            f"got {type(x).__module__}.{type(x).__qualname__}"
        )
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"cannot compare values of dtype {arr.dtype}")
    return arr, tol_name


def to_numpy(x: Any) -> np.ndarray:
    """Host numpy copy/view of a tensor-like (bfloat16/float8 widen to float32)."""
    return _to_numpy_with_tol(x)[0]


# --------------------------------------------------------------------------------------
# Result type
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """Why two tensors (or two output structures) are not close.

    For a value mismatch all fields are set.  For a shape or structure mismatch the
    statistics (``n_mismatched`` ... ``worst_expected``) are ``None``; ``rtol``/``atol``
    are ``None`` for structure mismatches.  ``str(mismatch)`` is the full message.
    """

    path: str
    message: str
    n_mismatched: int | None
    n_total: int | None
    max_abs: float | None
    max_rel: float | None
    worst_index: tuple[int, ...] | None
    worst_actual: Any
    worst_expected: Any
    rtol: float | None
    atol: float | None

    def __str__(self) -> str:
        return self.message


def mismatch_figures(mismatch) -> dict:
    """The comparator's figures of one :class:`~interop.oracle.compare.Mismatch`, as JSON
    values: where, how many elements, the worst one and the tolerances."""
    def plain(value):
        try:
            return value.item() if hasattr(value, "item") else value
        except (ValueError, TypeError):
            return repr(value)

    return {"path": mismatch.path, "n_mismatched": mismatch.n_mismatched, "n_total": mismatch.n_total,
            "max_abs": plain(mismatch.max_abs), "max_rel": plain(mismatch.max_rel),
            "worst_index": list(mismatch.worst_index) if mismatch.worst_index is not None else None,
            "worst_actual": plain(mismatch.worst_actual), "worst_expected": plain(mismatch.worst_expected),
            "rtol": mismatch.rtol, "atol": mismatch.atol}


# --------------------------------------------------------------------------------------
# Element-wise core
# --------------------------------------------------------------------------------------


class _Part:
    """Result of comparing one real-valued part (flat arrays)."""

    __slots__ = ("bad", "excess", "abs_diff", "rel_diff", "n_nan", "n_inf")

    def __init__(self, bad, excess, abs_diff, rel_diff, n_nan=0, n_inf=0):
        self.bad = bad  # bool mask over all elements
        self.excess = excess  # over bad elements: float (inf for NaN/Inf mismatches)
        self.abs_diff = abs_diff  # over bad elements: float (nan when undefined)
        self.rel_diff = rel_diff  # over bad elements: float
        self.n_nan = n_nan
        self.n_inf = n_inf


def _relative(abs_diff: np.ndarray, expected_abs: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = abs_diff / expected_abs
    rel = np.where(np.isinf(abs_diff), np.inf, rel)
    rel = np.where(expected_abs == 0, np.where(abs_diff == 0, 0.0, np.inf), rel)
    return np.where(np.isnan(abs_diff), np.nan, rel)


def _compare_float(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> _Part:
    """a, e: flat real float arrays of the same dtype."""
    with np.errstate(all="ignore"):
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        any_nan = nan_a | nan_e
        nan_bad = (nan_a != nan_e) if equal_nan else any_nan
        inf_any = (np.isinf(a) | np.isinf(e)) & ~any_nan
        inf_bad = inf_any & (a != e)
        abs_diff = np.abs(a - e)
        allowed = atol + rtol * np.abs(e)
        finite = ~(any_nan | inf_any)
        value_bad = finite & ~(abs_diff <= allowed)
        bad = nan_bad | inf_bad | value_bad
        sel = bad
        d = abs_diff[sel]
        excess = np.where((nan_bad | inf_bad)[sel], np.inf, d - allowed[sel])
        rel = _relative(d, np.abs(e[sel]))
    return _Part(bad, excess, d, rel, int(np.count_nonzero(nan_bad)), int(np.count_nonzero(inf_bad)))


def _int_equal(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Exact element-wise equality of two integer/bool arrays (no float conversion)."""
    if a.dtype == e.dtype:
        return a == e
    common = np.result_type(a.dtype, e.dtype)
    if common.kind in "biu":
        return a.astype(common) == e.astype(common)
    # signed vs uint64: no common integer type
    signed, unsigned = (a, e) if a.dtype.kind == "i" else (e, a)
    nonneg = signed >= 0
    return nonneg & (np.where(nonneg, signed, 0).astype(np.uint64) == unsigned)


def _compare_int(a: np.ndarray, e: np.ndarray, rtol: float, atol: float) -> _Part:
    """Exact comparison of flat integer/bool arrays, in python integer arithmetic."""
    bad = ~_int_equal(a, e)
    a_obj = a[bad].astype(object)
    e_obj = e[bad].astype(object)
    if a.dtype.kind == "b":
        a_obj = np.array([int(v) for v in a_obj], dtype=object)
    if e.dtype.kind == "b":
        e_obj = np.array([int(v) for v in e_obj], dtype=object)
    diff = np.abs(a_obj - e_obj) if a_obj.size else np.zeros(0, dtype=object)
    e_abs = np.abs(e_obj) if e_obj.size else np.zeros(0, dtype=object)
    if rtol or atol:
        allowed = np.array([atol + rtol * v for v in e_abs], dtype=object)
        close = np.array([d <= al for d, al in zip(diff, allowed)], dtype=bool)  # int <= float: exact
        idx = np.flatnonzero(bad)
        bad = bad.copy()
        bad[idx[close]] = False
        diff, e_abs, allowed = diff[~close], e_abs[~close], allowed[~close]
        excess = np.array([float(d - al) for d, al in zip(diff, allowed)], dtype=np.float64)
    else:
        excess = diff  # python ints: exact ranking
    abs_f = np.array([float(d) for d in diff], dtype=np.float64)
    rel = np.array(
        [(d / v) if v else (0.0 if d == 0 else math.inf) for d, v in zip(diff, e_abs)],
        dtype=np.float64,
    )
    return _Part(bad, excess, abs_f, rel)


def _float_work_dtype(*dtypes: np.dtype) -> np.dtype:
    if any(dt == np.longdouble and dt != np.float64 for dt in dtypes) or any(
        dt == np.clongdouble and dt != np.complex128 for dt in dtypes
    ):
        return np.dtype(np.longdouble)
    return np.dtype(np.float64)


def _compare_arrays(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool):
    """Compare flat arrays. Returns ``(parts, part_names)``."""
    kinds = {a.dtype.kind, e.dtype.kind}
    if kinds <= set("biu"):
        return [_compare_int(a, e, rtol, atol)], [None]
    work = _float_work_dtype(a.dtype, e.dtype)
    if "c" in kinds:
        parts = []
        for getter in (np.real, np.imag):
            pa = np.asarray(getter(a)).astype(work) if a.dtype.kind == "c" else (
                a.astype(work) if getter is np.real else np.zeros(a.shape, work)
            )
            pe = np.asarray(getter(e)).astype(work) if e.dtype.kind == "c" else (
                e.astype(work) if getter is np.real else np.zeros(e.shape, work)
            )
            parts.append(_compare_float(pa, pe, rtol, atol, equal_nan))
        return parts, ["real part", "imaginary part"]
    return [_compare_float(a.astype(work), e.astype(work), rtol, atol, equal_nan)], [None]


# --------------------------------------------------------------------------------------
# Formatting helpers
# --------------------------------------------------------------------------------------


def _fmt_num(x: Any) -> str:
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return str(int(x))
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return f"{x:.6g}"


def _fmt_tol(x: float) -> str:
    return f"{x:g}"


def _fmt_index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _fmt_pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.3g}%"


def _at(path: str) -> str:
    return f" at {path}" if path else ""


def _describe(x: Any) -> str:
    if isinstance(x, numbers.Number):
        return f"a scalar ({type(x).__name__})"
    if is_tensor_like(x):
        try:
            return f"a tensor of shape {tuple(_to_numpy_with_tol(x)[0].shape)}"
        except TypeError:
            return f"a {type(x).__name__}"
    if x is None:
        return "None"
    if isinstance(x, Mapping):
        return f"a {type(x).__name__} with keys {list(x.keys())!r}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a {type(x).__name__}"


# --------------------------------------------------------------------------------------
# Public comparison API
# --------------------------------------------------------------------------------------


def _resolve_tolerances(rtol, atol, tol_a: str, tol_e: str) -> tuple[float, float]:
    if rtol is None or atol is None:
        d_rtol, d_atol = default_tolerances(tol_a, tol_e)
        rtol = d_rtol if rtol is None else rtol
        atol = d_atol if atol is None else atol
    rtol, atol = float(rtol), float(atol)
    if not (rtol >= 0 and atol >= 0):  # also rejects NaN
        raise ValueError(f"tolerances must be non-negative, got rtol={rtol}, atol={atol}")
    return rtol, atol


def compare_tensors(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    *,
    path: str = "",
) -> Mismatch | None:
    """Compare two tensor-likes; ``None`` when close, else a :class:`Mismatch`.

    Never raises for a mismatch (only ``TypeError``/``ValueError`` for unusable input).
    ``rtol``/``atol`` default (each independently) to :func:`default_tolerances` of the
    two dtypes.  ``path`` names the tensor in the message (e.g. ``"output[1]"``).
    """
    a, tol_a = _to_numpy_with_tol(actual)
    e, tol_e = _to_numpy_with_tol(expected)
    rtol, atol = _resolve_tolerances(rtol, atol, tol_a, tol_e)

    if a.shape != e.shape:
        message = (
            f"Shapes do not match{_at(path)}: actual {tuple(a.shape)} vs expected {tuple(e.shape)}"
        )
        return Mismatch(path, message, None, None, None, None, None, None, None, rtol, atol)

    shape = tuple(e.shape)
    n_total = int(e.size)
    if n_total == 0:
        return None
    af, ef = a.reshape(-1), e.reshape(-1)
    parts, names = _compare_arrays(af, ef, rtol, atol, equal_nan)

    bad_any = parts[0].bad if len(parts) == 1 else parts[0].bad | parts[1].bad
    n_bad = int(np.count_nonzero(bad_any))
    if n_bad == 0:
        return None

    # Worst element: the largest excess over the allowed tolerance, over all parts.
    worst = None  # (excess, flat index, part number)
    best_abs = None  # (abs diff, flat index, part number)
    best_rel = None
    for k, part in enumerate(parts):
        if not part.excess.size:
            continue
        idx = np.flatnonzero(part.bad)
        j = int(np.argmax(part.excess))
        if worst is None or part.excess[j] > worst[0]:
            worst = (part.excess[j], int(idx[j]), k)
        if not np.all(np.isnan(part.abs_diff)):
            j = int(np.nanargmax(part.abs_diff))
            if best_abs is None or part.abs_diff[j] > best_abs[0]:
                best_abs = (float(part.abs_diff[j]), int(idx[j]), k)
        if not np.all(np.isnan(part.rel_diff)):
            j = int(np.nanargmax(part.rel_diff))
            if best_rel is None or part.rel_diff[j] > best_rel[0]:
                best_rel = (float(part.rel_diff[j]), int(idx[j]), k)
    assert worst is not None
    worst_flat, worst_part = worst[1], worst[2]
    worst_index = _fmt_index(worst_flat, shape)
    worst_actual_np, worst_expected_np = af[worst_flat], ef[worst_flat]
    max_abs = best_abs[0] if best_abs else math.nan
    max_rel = best_rel[0] if best_rel else math.nan

    def where(best):
        if best is None:
            return ""
        s = f" at index {_fmt_index(best[1], shape)}"
        return s + (f" ({names[best[2]]})" if names[best[2]] else "")

    lines = [
        f"Tensors are not close{_at(path)}!",
        "",
        f"Mismatched elements: {n_bad} / {n_total} ({_fmt_pct(n_bad, n_total)})",
    ]
    if len(parts) == 2:
        lines.append(
            f"Mismatched in real part: {int(np.count_nonzero(parts[0].bad))}, "
            f"in imaginary part: {int(np.count_nonzero(parts[1].bad))}"
        )
    n_nan = sum(p.n_nan for p in parts)
    n_inf = sum(p.n_inf for p in parts)
    if n_nan or n_inf:
        lines.append(f"Non-finite mismatches: {n_nan} NaN, {n_inf} Inf")
    part_note = f" ({names[worst_part]})" if names[worst_part] else ""
    lines += [
        f"Worst mismatch at index {worst_index}{part_note}: "
        f"actual {worst_actual_np!s}, expected {worst_expected_np!s}",
        f"Greatest absolute difference: {_fmt_num(max_abs)}{where(best_abs)} "
        "(over mismatched elements)",
        f"Greatest relative difference: {_fmt_num(max_rel)}{where(best_rel)} "
        "(over mismatched elements)",
        f"Tolerance: rtol={_fmt_tol(rtol)}, atol={_fmt_tol(atol)}",
    ]
    if a.dtype != e.dtype or tol_a != tol_e:
        lines.append(f"Dtypes: actual {tol_a}, expected {tol_e}")
    return Mismatch(
        path=path,
        message="\n".join(lines),
        n_mismatched=n_bad,
        n_total=n_total,
        max_abs=max_abs,
        max_rel=max_rel,
        worst_index=worst_index,
        worst_actual=worst_actual_np.item(),
        worst_expected=worst_expected_np.item(),
        rtol=rtol,
        atol=atol,
    )


def _with_msg(message: str, msg: str | None) -> str:
    return f"{msg}\n\n{message}" if msg else message


def assert_tensors_close(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str | None = None,
) -> None:
    """Raise ``AssertionError`` (message from :func:`compare_tensors`) unless close."""
    mismatch = compare_tensors(actual, expected, rtol, atol, equal_nan)
    if mismatch is not None:
        raise AssertionError(_with_msg(mismatch.message, msg))


