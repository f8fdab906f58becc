"""The oracle's one attribution rule: who is to blame for a mismatch between Aidge and torch.

- ``precision``: float32 rounding, no one's defect. Aidge's value is within the error torch
  float32 itself makes against torch's float64 result (:func:`.precision.within_float32_error`).
- ``export``: onnxruntime, run on the very ONNX model Aidge imported, also disagrees with torch
  beyond rounding (or refuses the model): the lowering differs from torch, and Aidge computes
  what it was given.
- ``aidge``: onnxruntime agrees with torch on the same model, Aidge does not.
- ``unknown``: none of the above decides (no onnxruntime, no float64 reference).

The order, the same for every caller (``wrap``'s first-call check, ``verify``, ``check``, the
suites): precision first (a rounding difference is no defect whoever makes it, onnxruntime's
included: the precision test is the one float64 decision), then onnxruntime, whose own
difference from torch is judged by the same precision rule (within float32's own error it
agrees with torch). Before 2026-12-06
the bridge asked onnxruntime first and the suite precision first, each with its own copy of the
rule, and the suite asked float64 a second time by another rule before blaming the export. Backward mismatches have no ONNX graph to ask: the float64 gradient
is the only tie-break (``precision`` or ``aidge``).

Nothing here prints; onnxruntime runs with one thread and its log at error level.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

import numpy as np

from ..categories import ATTRIBUTIONS
from .outputs import compare_outputs
from .precision import within_float32_error
from .tolerance import default_tolerances
from .compare import to_numpy

__all__ = ["ATTRIBUTIONS", "attribute_forward", "attribute_backward", "is_rounding", "float64_copy",
           "invalid_graph_excuses", "NOT_EXCUSED_BY_AN_INVALID_GRAPH"]

#: the failure categories an invalid ONNX graph (onnx's checker or onnxruntime refuses it) does not
#: move off Aidge: a missing importer is Aidge's gap whatever else the graph holds (measured
#: 2026-12-07: logsumexp of a 0-d tensor exports a ReduceLogSumExp onnx's checker refuses, yet the
#: valid graph of the 5x5 sample is refused alike; onnx's own test_mvn fails onnx's checker and Aidge
#: has no MeanVarianceNormalization importer for any graph), and a crash or a hang is memory-unsafe
#: (an invalid graph is to be refused, not to kill the process: nonzero of a 0-d tensor)
NOT_EXCUSED_BY_AN_INVALID_GRAPH = frozenset({"unsupported_operator", "crash", "hang"})


def invalid_graph_excuses(category: str | None) -> bool:
    """Whether a failure of ``category`` on a graph onnx's checker or onnxruntime refuses is the
    export's (or the test's), not Aidge's: the one rule the bridge, the records and the triage apply."""
    return category not in NOT_EXCUSED_BY_AN_INVALID_GRAPH


def _tolerance_of(value: Any, rtol: float | None, atol: float | None) -> tuple[float, float]:
    if rtol is not None and atol is not None:
        return rtol, atol
    dtype = getattr(value, "dtype", "float32")
    d_rtol, d_atol = default_tolerances(dtype)
    return (d_rtol if rtol is None else rtol), (d_atol if atol is None else atol)


def is_rounding(actual: Sequence[Any], torch_out: Sequence[Any], exact_out: Sequence[Any] | None,
                rtol: float | None = None, atol: float | None = None) -> bool:
    """Whether every leaf of ``actual`` is within torch float32's own error of ``exact_out``
    (torch float64), leaf by leaf (a leaf torch's float64 run does not give, or an integer
    leaf, must match torch exactly). ``rtol``/``atol``: each leaf's dtype default when None."""
    if exact_out is None or not (len(exact_out) == len(torch_out) == len(actual)):
        return False
    for a, t, x in zip(actual, torch_out, exact_out):
        r, at = _tolerance_of(t, rtol, atol)
        if x is None or not getattr(t, "is_floating_point", lambda: True)():
            if compare_outputs(a, t, rtol=r, atol=at):
                return False
            continue
        if not within_float32_error(a, t, x, r, at):
            return False
    return True


def _mismatches(actual: Sequence[Any], expected: Sequence[Any], rtol: float | None, atol: float | None,
                name: str) -> list:
    """The comparator's mismatches of each leaf pair, each at the expected leaf's tolerance."""
    found = []
    for k, (a, e) in enumerate(zip(actual, expected)):
        r, at = _tolerance_of(e, rtol, atol)
        found += compare_outputs(a, e, rtol=r, atol=at, name=f"{name} [{k}]")
    return found


def _exact(exact: Callable[[], Sequence[Any]] | None):
    if exact is None:
        return None
    try:
        return list(exact())
    except Exception:  # noqa: BLE001 - no float64 kernel: the precision test does not decide
        return None


def attribute_forward(*, aidge_out: Sequence[Any], torch_out: Sequence[Any],
                      exact: Callable[[], Sequence[Any]] | None,
                      onnx: Callable[[], Sequence[Any]] | None, rtol: float | None = None,
                      atol: float | None = None) -> tuple[str, str]:
    """``(attribution, why)`` of a forward mismatch. ``*_out``: the flat output leaves;
    ``exact()``: torch's outputs in float64 (may raise: then no precision verdict);
    ``onnx()``: onnxruntime's outputs on the exported model (may raise: the model is
    refused)."""
    aidge_out, torch_out = list(aidge_out), list(torch_out)
    exact_out = _exact(exact)
    if is_rounding(aidge_out, torch_out, exact_out, rtol, atol):
        return "precision", ("Aidge is within the error torch float32 itself makes against torch's float64 "
                             "result: float32 rounding, no one's defect")
    if onnx is None:
        return "unknown", "onnxruntime not run"
    try:
        ort_out = list(onnx())
    except ImportError:
        return "unknown", "onnxruntime is not installed"
    except Exception as exc:  # noqa: BLE001 - onnxruntime refuses the exported model
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return "export", f"onnxruntime refuses the exported ONNX model too: {first[:200]}"
    if len(ort_out) != len(torch_out):
        return "unknown", "onnxruntime's outputs are not the torch model's"
    differs = _mismatches(ort_out, torch_out, rtol, atol, "onnxruntime output")
    if not differs:
        return "aidge", "onnxruntime on the same ONNX model agrees with torch; Aidge does not"
    if is_rounding(ort_out, torch_out, exact_out, rtol, atol):
        # onnxruntime's difference from torch is float32 rounding (the same rule as Aidge's): the
        # export computes what torch computes, Aidge does not (measured 2026-12-07: a train-mode
        # dense autoencoder, nine BatchNorm1d, onnxruntime 6.1e-5 from torch float32, 3.6e-5 from
        # float64, torch float32 itself 5.1e-5; Aidge 1.39 off; before, this was blamed on the export)
        return "aidge", ("onnxruntime on the same ONNX model agrees with torch within float32 rounding; "
                         "Aidge does not")
    # Aidge is not within float32's own error (decided above), so this is no rounding whatever
    # onnxruntime's error: the export is blamed only because onnxruntime differs from torch too
    agrees = not _mismatches(aidge_out, ort_out, rtol, atol, "output")
    if not agrees:
        aidge_off, ort_off = _worst(aidge_out, ort_out), _worst(ort_out, torch_out)
        if aidge_off is not None and ort_off is not None and aidge_off > FARTHER * ort_off:
            # all three differ, and Aidge is far from onnxruntime on the very graph it ran while
            # onnxruntime is near torch: Aidge does not compute what the graph says (measured
            # 2026-12-07, Anomaly_train: onnxruntime 4.3e-5 from float64, 3.6x torch float32's
            # 1.2e-5, so not "rounding" by the rule; Aidge 1.39 off: its training-mode BatchNorm)
            return "aidge", (f"Aidge is {aidge_off:.3g} from onnxruntime on the same ONNX model, which is itself "
                             f"only {ort_off:.3g} from torch: Aidge does not compute what the graph says")
    tail = "; Aidge agrees with onnxruntime" if agrees else "; Aidge differs from onnxruntime as well"
    return "export", (f"onnxruntime on the same ONNX model differs from torch too "
                      f"({differs[0].message.splitlines()[0]}){tail}: the ONNX export is not the torch model")


#: when Aidge, onnxruntime and torch all differ, Aidge is blamed when it is this many times farther
#: from onnxruntime (on the graph Aidge ran) than onnxruntime is from torch: an order of magnitude,
#: so that an export that is wrong (onnxruntime far from torch) is never passed off on Aidge
FARTHER = 10


def _worst(a_out: Sequence[Any], b_out: Sequence[Any]) -> float | None:
    """The largest absolute difference over every leaf pair of the same shape (None: none comparable)."""
    worst = None
    for a, b in zip(a_out, b_out):
        x, y = to_numpy(a), to_numpy(b)
        if x.shape != y.shape or x.size == 0:
            return None
        d = np.abs(x.astype(np.float64) - y.astype(np.float64))
        if np.isnan(d).any():
            return None
        worst = max(worst or 0.0, float(d.max()))
    return worst


def attribute_backward(*, aidge_grad: Any, torch_grad: Any, exact_grad: Any | None,
                       rtol: float | None = None, atol: float | None = None) -> tuple[str, str]:
    """``(attribution, why)`` of a gradient mismatch: the float64 torch gradient as the
    tie-break."""
    if exact_grad is None:
        return "unknown", "no float64 gradient to compare with"
    if is_rounding([aidge_grad], [torch_grad], [exact_grad], rtol, atol):
        return "precision", ("Aidge's gradient is within the error torch float32's gradient makes against "
                             "torch's float64 gradient: float32 rounding")
    return "aidge", "torch's float64 gradient agrees with torch float32; Aidge's does not"


def float64_copy(module):
    """A float64 deep copy of ``module`` (its own parameters), or the module itself when it
    holds no state."""
    clone = copy.deepcopy(module)
    return clone.double()
