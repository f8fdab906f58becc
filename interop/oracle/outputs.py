"""Comparing whole outputs: nested containers (tuples, lists, dicts, named tuples,
dataclass-like records) of tensors, element by element through
:func:`interop.oracle.compare.compare_tensors`, and the non-finite check.

Neither torch nor aidge_core is imported here; this module never prints.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np

from .compare import (Mismatch, _compare_int, _describe, _float_work_dtype, _fmt_index, _relative, _to_numpy_with_tol,
                      _with_msg, compare_tensors, is_tensor_like, to_numpy)

__all__ = ["compare_outputs", "assert_outputs_close", "assert_finite", "max_errors"]


def _field_names(x: tuple) -> tuple[str, ...] | None:
    names = getattr(type(x), "_fields", None) or getattr(type(x), "__match_args__", None)
    if names and len(names) == len(x) and all(isinstance(n, str) for n in names):
        return tuple(names)
    return None


def _structure_mismatch(path: str, what: str) -> Mismatch:
    return Mismatch(
        path, f"Structure mismatch at {path}: {what}", None, None, None, None, None, None, None, None, None
    )


_CONTAINER_OR_PLAIN = (Mapping, list, tuple, str, type(None))


def _walk(actual: Any, expected: Any, path: str, check) -> Iterator[Mismatch]:
    """Pair up two nested structures; yields structure mismatches and ``check`` results."""
    a_leaf, e_leaf = is_tensor_like(actual), is_tensor_like(expected)
    if a_leaf and e_leaf:
        result = check(actual, expected, path)
        if result is not None:
            yield result
        return
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing:
            yield _structure_mismatch(path, f"missing key(s) in actual: {missing!r}")
        if extra:
            yield _structure_mismatch(path, f"unexpected extra key(s) in actual: {extra!r}")
        for k in expected:
            if k in actual:
                yield from _walk(actual[k], expected[k], f"{path}[{k!r}]", check)
        return
    seq = (list, tuple)
    if isinstance(expected, seq) and isinstance(actual, seq):
        if len(actual) != len(expected):
            yield _structure_mismatch(
                path,
                f"actual is {_describe(actual)}, expected {_describe(expected)}",
            )
            return
        names = _field_names(expected) if isinstance(expected, tuple) else None
        for i, (av, ev) in enumerate(zip(actual, expected)):
            sub = f"{path}.{names[i]}" if names else f"{path}[{i}]"
            yield from _walk(av, ev, sub, check)
        return
    if actual is None and expected is None:
        return
    if isinstance(expected, str) and isinstance(actual, str):
        if actual != expected:
            yield _structure_mismatch(path, f"actual {actual!r} != expected {expected!r}")
        return
    for x, known in ((actual, a_leaf), (expected, e_leaf)):
        if not (known or isinstance(x, _CONTAINER_OR_PLAIN)):
            raise TypeError(f"cannot compare a {type(x).__qualname__} at {path}")
    yield _structure_mismatch(path, f"actual is {_describe(actual)}, expected {_describe(expected)}")


def compare_outputs(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    name: str = "output",
) -> list[Mismatch]:
    """Compare nested outputs (tuples, lists, dicts, namedtuples of tensors/scalars).

    Returns every mismatch (empty list when all close): one per mismatching leaf, named
    by its path (``output[1]``, ``output['pooled']``, ``output.values``...), plus one per
    structure difference (container kinds, keys, lengths, tensor vs container).
    ``None`` and ``str`` leaves must be equal.
    """

    def check(a, e, path):
        return compare_tensors(a, e, rtol, atol, equal_nan, path=path)

    return list(_walk(actual, expected, name, check))


def assert_outputs_close(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                         equal_nan: bool = True, name: str = "output", msg: str | None = None) -> None:
    """Raise ``AssertionError`` listing every mismatch of :func:`compare_outputs`."""
    mismatches = compare_outputs(actual, expected, rtol, atol, equal_nan, name)
    if mismatches:
        head = f"{len(mismatches)} mismatch(es) in {name}:"
        body = "\n\n".join(m.message for m in mismatches)
        raise AssertionError(_with_msg(f"{head}\n\n{body}", msg))


def _nonfinite_report(x: Any, path: str) -> str | None:
    arr = to_numpy(x)
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return None
    flat = arr.reshape(-1)
    comps = (flat.real, flat.imag) if arr.dtype.kind == "c" else (flat,)
    nan = np.zeros(flat.shape, bool)
    pinf = np.zeros(flat.shape, bool)
    ninf = np.zeros(flat.shape, bool)
    for c in comps:
        nan |= np.isnan(c)
        pinf |= c == np.inf
        ninf |= c == -np.inf
    bad = nan | pinf | ninf
    if not bad.any():
        return None
    first = int(np.argmax(bad))
    return (
        f"Non-finite values at {path}: {int(nan.sum())} NaN, {int(pinf.sum())} +Inf, "
        f"{int(ninf.sum())} -Inf ({int(bad.sum())} / {flat.size} elements); "
        f"first at index {_fmt_index(first, arr.shape)}: {flat[first]!s}"
    )


def assert_finite(out: Any, name: str = "output") -> None:
    """Raise ``AssertionError`` if any tensor in the nested ``out`` holds NaN or Inf.

    The message names each offending path with its NaN / +Inf / -Inf counts and the
    first bad index.  Integer/bool tensors, ``None`` and strings are always fine.
    """
    reports: list[str] = []

    def visit(x: Any, path: str) -> None:
        if is_tensor_like(x):
            r = _nonfinite_report(x, path)
            if r:
                reports.append(r)
        elif isinstance(x, Mapping):
            for k, v in x.items():
                visit(v, f"{path}[{k!r}]")
        elif isinstance(x, (list, tuple)):
            names = _field_names(x) if isinstance(x, tuple) else None
            for i, v in enumerate(x):
                visit(v, f"{path}.{names[i]}" if names else f"{path}[{i}]")
        elif x is None or isinstance(x, str):
            return
        else:
            raise TypeError(f"cannot check {type(x).__qualname__} at {path}")

    visit(out, name)
    if reports:
        raise AssertionError("\n".join(reports))


def max_errors(actual: Any, expected: Any) -> tuple[float, float]:
    """``(max_abs, max_rel)`` error over all elements (rel measured against ``expected``).

    Equal elements (including NaN vs NaN and same-sign infinities) count as 0; any other
    NaN/Inf disagreement counts as ``inf``; a non-zero difference where expected is 0
    has relative error ``inf``.  Complex values use the modulus of the difference.
    Integers are subtracted exactly.  Empty tensors give ``(0.0, 0.0)``.  Shapes must
    match (``ValueError`` otherwise).
    """
    a, _ = _to_numpy_with_tol(actual)
    e, _ = _to_numpy_with_tol(expected)
    if a.shape != e.shape:
        raise ValueError(f"shapes do not match: actual {tuple(a.shape)} vs expected {tuple(e.shape)}")
    a, e = a.reshape(-1), e.reshape(-1)
    if a.size == 0:
        return 0.0, 0.0
    if {a.dtype.kind, e.dtype.kind} <= set("biu"):
        part = _compare_int(a, e, 0.0, 0.0)
        if not part.abs_diff.size:
            return 0.0, 0.0
        return float(part.abs_diff.max()), float(part.rel_diff.max())
    work = _float_work_dtype(a.dtype, e.dtype)
    if "c" in (a.dtype.kind, e.dtype.kind):
        work = np.dtype(np.clongdouble if work == np.longdouble else np.complex128)
    a, e = a.astype(work), e.astype(work)
    with np.errstate(all="ignore"):
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        abs_diff = np.abs(a - e).astype(np.float64 if work.kind != "f" else work)
        abs_diff = np.where(np.isnan(abs_diff), np.inf, abs_diff)
        abs_diff = np.where(same, 0.0, abs_diff)
        rel = _relative(abs_diff, np.abs(e))
        rel = np.where(same, 0.0, np.where(np.isnan(rel), np.inf, rel))
    return float(abs_diff.max()), float(rel.max())
