"""Who is to blame for a mismatch between Aidge and torch: Aidge, the torch -> ONNX export,
or floating-point precision.

- ``export``: onnxruntime, run on the very ONNX model Aidge imported, also disagrees with
  torch (or rejects the model): the lowering (or ONNX's semantics) differs from torch, so
  Aidge computes what it was given.
- ``precision``: torch recomputed in float64 (the "exact" result) says Aidge is no farther
  from it than torch float32 is: element by element ``|aidge - exact| <= |torch - exact| +
  atol + rtol * |exact|`` with the verdict's own tolerance. The mismatch is a tolerance
  question, not a defect.
- ``aidge``: onnxruntime agrees with torch on the same model, Aidge does not.
- ``unknown``: none of the above decides (no onnxruntime, no float64 reference...).

The precision test comes first (a float32 rounding difference is no defect whoever makes
it), then onnxruntime; where onnxruntime differs from torch too, float64 decides once more
before the export is blamed: Aidge and onnxruntime both within the error torch float32 itself
makes on that tensor (:func:`~interop.bridge.value_check.within_float32_budget`) is
``precision``. Backward mismatches have no ONNX graph to ask: the float64 gradient
is the only tie-break (``precision`` or ``aidge``).

Nothing here prints; onnxruntime runs with one thread and its log at error level.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

import numpy as np

from ..categories import ATTRIBUTIONS
from .compare import to_numpy
from .outputs import compare_outputs

__all__ = ["ATTRIBUTIONS", "attribute_forward", "attribute_backward", "run_onnxruntime", "closer_than_torch"]



def run_onnxruntime(proto, input_names: Sequence[str], inputs: Sequence[Any]) -> list[np.ndarray]:
    """The outputs of ``proto`` (an ONNX ModelProto) on ``inputs`` under onnxruntime (CPU,
    one thread). Raises ImportError without onnxruntime, onnxruntime's error when it rejects
    the model."""
    from ..bridge.ort import ort_session

    session = ort_session(proto)
    wanted = {i.name for i in session.get_inputs()}
    feed = {name: to_numpy(x) for name, x in zip(input_names, inputs) if name in wanted}
    return list(session.run(None, feed))


def closer_than_torch(actual: Any, torch32: Any, exact: Any, rtol: float, atol: float) -> bool:
    """Whether ``actual`` (Aidge) is, element by element, no farther from ``exact`` (torch
    float64) than ``torch32`` is, within ``atol + rtol * |exact|``. NaN must sit where the
    exact result has NaN; shapes must agree."""
    a = to_numpy(actual).astype(np.float64)
    t = to_numpy(torch32).astype(np.float64)
    e = to_numpy(exact).astype(np.float64)
    if not (a.shape == t.shape == e.shape):
        return False
    with np.errstate(all="ignore"):
        nan_e = np.isnan(e)
        if not np.array_equal(np.isnan(a), nan_e):
            return False
        finite = ~nan_e & np.isfinite(e)
        if not np.array_equal(a[~finite & ~nan_e], e[~finite & ~nan_e]):  # infinities exact
            return False
        err_a = np.abs(a[finite] - e[finite])
        err_t = np.abs(t[finite] - e[finite])
        err_t = np.where(np.isnan(err_t), np.inf, err_t)
        return bool(np.all(err_a <= err_t + atol + rtol * np.abs(e[finite])))


def _precision(aidge_out: Sequence[Any], torch_out: Sequence[Any], exact_out: Sequence[Any] | None,
               rtol: float, atol: float) -> bool:
    if exact_out is None or len(exact_out) != len(torch_out):
        return False
    return all(closer_than_torch(a, t, e, rtol, atol) for a, t, e in zip(aidge_out, torch_out, exact_out))


def attribute_forward(*, aidge_out: Sequence[Any], torch_out: Sequence[Any], exact: Callable[[], Sequence[Any]],
                      onnx: Callable[[], Sequence[Any]] | None, rtol: float, atol: float) -> tuple[str, str]:
    """``(attribution, why)`` of a forward mismatch. ``*_out``: the flat output leaves;
    ``exact()``: torch's outputs in float64 (may raise: then no precision verdict);
    ``onnx()``: onnxruntime's outputs on the exported model (may raise: the model is
    rejected)."""
    try:
        exact_out = list(exact())
    except Exception:  # noqa: BLE001 - no float64 kernel: the precision test does not decide
        exact_out = None
    if _precision(aidge_out, torch_out, exact_out, rtol, atol):
        return "precision", "Aidge is no farther from torch's float64 result than torch float32 is"
    if onnx is None:
        return "unknown", "onnxruntime not run"
    try:
        ort_out = list(onnx())
    except ImportError:
        return "unknown", "onnxruntime is not installed"
    except Exception as exc:  # noqa: BLE001 - onnxruntime rejects the exported model
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return "export", f"onnxruntime rejects the exported ONNX model too: {first[:200]}"
    differs = compare_outputs(ort_out, list(torch_out), rtol=rtol, atol=atol, name="onnxruntime output")
    from ..bridge.value_check import within_float32_budget

    if differs and exact_out is not None and len(exact_out) == len(torch_out) == len(aidge_out) == len(ort_out) \
            and all(within_float32_budget(x, t, e, rtol, atol) for a, o, t, e in zip(aidge_out, ort_out, torch_out,
                                                                                     exact_out) for x in (a, o)):
        return "precision", ("onnxruntime and Aidge both differ from torch float32 by no more than torch float32 "
                             "differs from torch's float64 result: float32 rounding, not the export")
    if differs:
        also = compare_outputs(list(aidge_out), ort_out, rtol=rtol, atol=atol, name="output")
        tail = ("; Aidge agrees with onnxruntime" if not also
                else "; Aidge differs from onnxruntime as well")
        return "export", (f"onnxruntime on the same ONNX model differs from torch too "
                          f"({differs[0].message.splitlines()[0]}){tail}")
    return "aidge", "onnxruntime on the same ONNX model agrees with torch; Aidge does not"


def attribute_backward(*, aidge_grad: Any, torch_grad: Any, exact_grad: Any | None,
                       rtol: float, atol: float) -> tuple[str, str]:
    """``(attribution, why)`` of an input-gradient mismatch: the float64 torch gradient as
    the tie-break."""
    if exact_grad is not None and closer_than_torch(aidge_grad, torch_grad, exact_grad, rtol, atol):
        return "precision", "Aidge's gradient is no farther from torch's float64 gradient than torch float32's is"
    if exact_grad is None:
        return "unknown", "no float64 gradient to compare with"
    return "aidge", "torch's float64 gradient agrees with torch float32; Aidge's does not"


def float64_copy(module):
    """A float64 deep copy of ``module`` (its own parameters), or the module itself when it
    holds no state."""
    clone = copy.deepcopy(module)
    return clone.double()
