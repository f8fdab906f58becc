"""The AidgeModule's own value check: on the first call at each input signature, Aidge's
outputs (and, in the backward that follows, its input and parameter gradients) are compared
with the torch computation of the same call, run on the AidgeModule's own weights. A
mismatch raises :class:`ValueMismatchError`, naming the output and, where onnxruntime can
say, the first ONNX node whose Aidge value diverges: never a returned value.

What "the same" means here is the comparator's (:mod:`interop.equivalence.compare`): the
torch.testing per-dtype table (:data:`TOLERANCES`, held equal to
:func:`interop.equivalence.tolerance.default_tolerances` by a unit test: this layer sits below
the equivalence package and cannot import it) and the float64 tie-break of
:func:`interop.equivalence.attribution.closer_than_torch` (Aidge no farther from torch's
float64 result than torch float32 is): a mismatch only the tie-break explains is float32
rounding, not an error.

Not checked (said in :attr:`AidgeModule.value_check`): a graph holding a random node
(``Dropout`` in a training export, ``RandomNormal``...: torch and Aidge draw other numbers),
and calls made inside :func:`checks_deferred` (a harness that compares every call itself:
:class:`~interop.equivalence.tester.ModelTester`, :func:`interop.verify`).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ..errors import InteropError
from .ort import aidge_node_indices, ort_session

__all__ = ["ValueMismatchError", "checks_deferred", "checks_are_deferred", "TOLERANCES", "random_nodes",
           "compare_values", "first_diverging_node", "within_float32_budget"]

#: (rtol, atol) per dtype: the comparator's table (torch.testing's), integers and bool exact
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}

#: ONNX ops whose output is drawn at random: torch and Aidge cannot agree on their values
RANDOM_OPS = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
                        "Multinomial"})


class ValueMismatchError(InteropError, RuntimeError):
    """An AidgeModule's output (``phase="forward"``) or gradient (``phase="backward"``) differs
    from torch's on the same call: raised instead of returning it.

    ``what``: the output or gradient (``output [0]``, ``input grad [1]``, ``grad of fc.weight``);
    ``attribution``: ``aidge`` (onnxruntime on the same ONNX agrees with torch), ``export``
    (onnxruntime computes what Aidge computes, or refuses the graph: the ONNX export is not the
    torch model) or ``unknown``; ``node`` / ``operator`` / ``onnx_node``: the first node whose
    Aidge output differs from onnxruntime's (forward, when found); ``values``: Aidge's flat
    outputs or gradients, for a harness that attributes them itself; ``mismatch``: the figures
    (``n_mismatched``, ``n_total``, ``max_abs``, ``rtol``, ``atol``)."""

    def __init__(self, message: str, *, phase: str, what: str, attribution: str = "unknown",
                 node: str | None = None, operator: str | None = None, onnx_node: str | None = None,
                 values: Sequence[Any] = (), mismatch: dict | None = None):
        super().__init__(message)
        self.phase = phase
        self.what = what
        self.attribution = attribution
        self.node = node
        self.operator = operator
        self.onnx_node = onnx_node
        self.values = list(values)
        self.mismatch = mismatch

    @property
    def category(self) -> str:
        return "gradients_differ" if self.phase == "backward" else "outputs_differ"


_DEFERRED = threading.local()


class checks_deferred:
    """Within this block, in this thread, AidgeModules skip their first-call value check and
    leave the signature unchecked (the next call outside the block checks it): for a harness
    that compares every call with torch itself and attributes what differs."""

    def __enter__(self) -> "checks_deferred":
        _DEFERRED.depth = getattr(_DEFERRED, "depth", 0) + 1
        return self

    def __exit__(self, *exc) -> bool:
        _DEFERRED.depth -= 1
        return False


def checks_are_deferred() -> bool:
    return getattr(_DEFERRED, "depth", 0) > 0


def random_nodes(proto) -> list[str]:
    """The nodes of ``proto`` whose values are drawn at random: a random op, or a Dropout of a
    training export (a Dropout with a ``training_mode`` input; the TorchScript and dynamo
    exports of an eval-mode Dropout have none or drop the node)."""
    found = []
    for node in proto.graph.node:
        if node.op_type in RANDOM_OPS or (node.op_type == "Dropout" and len(node.input) >= 3 and node.input[2]):
            found.append(node.name or node.op_type)
    return found


def _tolerance(*dtypes: torch.dtype) -> tuple[float, float]:
    pairs = [TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def compare_values(actual: torch.Tensor, expected: torch.Tensor, exact: torch.Tensor | None = None) -> dict | None:
    """None when ``actual`` (Aidge) is ``expected`` (torch) within the dtype's tolerance, or no
    farther from ``exact`` (torch float64) than torch is; else the figures of the mismatch."""
    actual = actual.detach().cpu()
    expected = expected.detach().cpu()
    if tuple(actual.shape) != tuple(expected.shape):
        return {"n_mismatched": None, "n_total": expected.numel(), "max_abs": None, "rtol": 0.0, "atol": 0.0,
                "shape": (tuple(actual.shape), tuple(expected.shape))}
    rtol, atol = _tolerance(actual.dtype, expected.dtype)
    if not (actual.is_floating_point() or expected.is_floating_point()):
        bad = actual.to(expected.dtype) != expected
        if not bad.any():
            return None
        return {"n_mismatched": int(bad.sum()), "n_total": expected.numel(), "max_abs": None, "rtol": 0.0, "atol": 0.0}
    a = actual.to(torch.float64)
    e = expected.to(torch.float64)
    nan_a, nan_e = torch.isnan(a), torch.isnan(e)
    diff = (a - e).abs()
    ok = (diff <= atol + rtol * e.abs()) | (nan_a & nan_e) | ((a == e) & ~nan_e)  # infinities: exactly
    if bool(ok.all()):
        return None
    if exact is not None and tuple(exact.shape) == tuple(expected.shape):
        x = exact.detach().cpu().to(torch.float64)
        err_a, err_t = (a - x).abs(), (e - x).abs()
        err_t = torch.where(torch.isnan(err_t), torch.full_like(err_t, float("inf")), err_t)
        fine = ok | (err_a <= err_t + atol + rtol * x.abs()) | (nan_a & torch.isnan(x))
        if bool(fine.all()):
            return None
    bad = ~ok
    finite = diff[bad & torch.isfinite(diff)]
    return {"n_mismatched": int(bad.sum()), "n_total": expected.numel(),
            "max_abs": float(finite.max()) if finite.numel() else float("nan"), "rtol": rtol, "atol": atol}


def within_float32_budget(actual, torch32, exact, rtol: float, atol: float) -> bool:
    """Whether ``actual``'s error against ``exact`` (torch float64) is of the order of the error
    torch float32 itself makes on the same tensor: its worst absolute error is at most twice torch
    float32's worst, plus ``atol``. The tensor-level test of float32 rounding, for two float32
    computations of the same graph (onnxruntime's and Aidge's) that differ from torch float32:
    other summation orders err by as much as torch does, on other elements (an EfficientNet on
    the dynamo route, Aidge 4.2e-5, onnxruntime 4.5e-5 and torch float32 4.8e-5 from float64,
    was blamed on the export); a defect errs by far more. ``rtol`` is unused (the signature is
    the comparator's). NaN must sit where the exact result has NaN, infinities exactly; shapes
    must agree."""
    a, t, e = (torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v).detach().cpu()
               .to(torch.float64) for v in (actual, torch32, exact))
    if not (a.shape == t.shape == e.shape):
        return False
    nan_e = torch.isnan(e)
    if not torch.equal(torch.isnan(a), nan_e):
        return False
    finite = ~nan_e & torch.isfinite(e)
    if not torch.equal(a[~finite & ~nan_e], e[~finite & ~nan_e]):
        return False
    if not bool(finite.any()):
        return True
    worst_a = float((a[finite] - e[finite]).abs().max())
    worst_t = float((t[finite] - e[finite]).abs().nan_to_num(nan=float("inf")).max())
    return worst_a <= 2.0 * worst_t + atol


def describe(figures: dict) -> str:
    if figures.get("shape"):
        got, want = figures["shape"]
        return f"shape {list(got)}, torch {list(want)}"
    if figures.get("max_abs") is None:
        return f"{figures['n_mismatched']} of {figures['n_total']} elements differ"
    return (f"{figures['n_mismatched']} of {figures['n_total']} elements differ, max |diff| {figures['max_abs']:.4g} "
            f"(rtol {figures['rtol']:g}, atol {figures['atol']:g})")


def run_onnxruntime(proto, feeds: dict[str, np.ndarray], outputs: Sequence[str] | None = None) -> list[np.ndarray]:
    """``proto``'s values ``outputs`` (None: its graph outputs) on ``feeds`` under onnxruntime
    (CPU, one thread, errors only). ImportError without onnxruntime; onnxruntime's own error
    when it refuses the graph."""
    import onnx

    model = proto
    if outputs is not None:
        model = onnx.ModelProto()
        model.CopyFrom(proto)
        present = {o.name for o in model.graph.output}
        for name in outputs:
            if name not in present:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
    session = ort_session(model)
    wanted = {i.name for i in session.get_inputs()}
    return list(session.run(list(outputs) if outputs is not None else None,
                            {k: v for k, v in feeds.items() if k in wanted}))


def first_diverging_node(proto, graph, feeds: dict[str, np.ndarray]):
    """``(onnx node, aidge node)``: the first node, in the ONNX graph's order, whose output in
    ``graph`` (an Aidge graph that has just run on ``feeds``) differs from onnxruntime's on the
    same ONNX graph; None when none does or onnxruntime cannot say."""
    by_onnx = {}
    names = aidge_node_indices(proto)
    for node in graph.get_nodes():
        k = names.get(node.name())
        if k is not None and node.type() != "Producer":
            by_onnx.setdefault(k, node)
    wanted = [(k, i, name) for k, node in enumerate(proto.graph.node) if k in by_onnx
              for i, name in enumerate(node.output) if name]
    try:
        values = run_onnxruntime(proto, feeds, [name for _, _, name in wanted])
    except Exception:  # noqa: BLE001 - no onnxruntime or it refuses the graph: not localised
        return None
    for (k, i, _), want in zip(wanted, values):
        anode = by_onnx[k]
        if i >= anode.get_nb_outputs():
            continue
        try:
            got = np.array(anode.get_operator().get_output(i), copy=True)
        except Exception:  # noqa: BLE001 - an output Aidge does not hold
            continue
        want = np.asarray(want)
        if got.shape != want.shape:
            return proto.graph.node[k], anode
        if compare_values(torch.from_numpy(got), torch.from_numpy(want)) is not None:
            return proto.graph.node[k], anode
    return None


def attribute(proto, feeds: dict[str, np.ndarray], aidge: Sequence[torch.Tensor],
              torch_out: Sequence[torch.Tensor],
              exact: Callable[[], Sequence[torch.Tensor | None]] | None = None) -> tuple[str, str]:
    """``(attribution, why)`` of a forward mismatch, from onnxruntime on the very ONNX Aidge ran.
    Where onnxruntime differs from torch too, ``exact()`` (torch's float64 values) decides before
    the export is blamed: Aidge and onnxruntime both within torch float32's own error
    (:func:`within_float32_budget`) is ``precision``, float32 rounding."""
    try:
        ort = run_onnxruntime(proto, feeds)
    except ImportError:
        return "unknown", "onnxruntime is not installed"
    except Exception as exc:  # noqa: BLE001 - onnxruntime refuses the graph
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return "export", f"onnxruntime refuses the exported ONNX graph too ({first[:200]}): the export is at fault"
    if len(ort) != len(torch_out):
        return "unknown", "onnxruntime's outputs are not the torch model's"
    off = [k for k, (o, t) in enumerate(zip(ort, torch_out)) if compare_values(torch.from_numpy(np.asarray(o)), t)]
    if off:
        if exact is not None and _all_rounding(aidge, ort, torch_out, exact):
            return "precision", ("onnxruntime and Aidge both differ from torch float32 by no more than torch float32 "
                                 "differs from torch's float64 result: float32 rounding, no one's defect")
        same = all(compare_values(a, torch.from_numpy(np.asarray(ort[k]))) is None for k, a in enumerate(aidge))
        return "export", ("onnxruntime on the same ONNX graph differs from torch too"
                          + (" and computes what Aidge computes" if same else "")
                          + ": the ONNX export is not the torch model (an attribute the exporter dropped?)")
    return "aidge", "onnxruntime on the same ONNX graph agrees with torch; Aidge does not"


def _all_rounding(aidge, ort, torch_out, exact) -> bool:
    try:
        exact_values = list(exact())
    except Exception:  # noqa: BLE001 - no float64 kernel: undecided
        return False
    if not (len(exact_values) == len(torch_out) == len(aidge) == len(ort)):
        return False
    for a, o, t, x in zip(aidge, ort, torch_out, exact_values):
        if x is None or not t.is_floating_point():
            if compare_values(a, t) is not None:
                return False
            continue
        rtol, atol = _tolerance(t.dtype)
        if not (within_float32_budget(a, t, x, rtol, atol)
                and within_float32_budget(torch.from_numpy(np.asarray(o)), t, x, rtol, atol)):
            return False
    return True


def check_leaves(phase: str, names: Sequence[str], actual: Sequence[torch.Tensor | None],
                 expected: Sequence[torch.Tensor | None], exact: Callable[[], Sequence[torch.Tensor | None]] | None):
    """The first ``(index, figures)`` whose ``actual`` differs from ``expected`` after the float64
    tie-break (``exact()``: torch's float64 values, computed only when something differs; may
    raise: then no tie-break); None when every one matches. A None on either side is skipped."""
    pending = []
    for k, (a, e) in enumerate(zip(actual, expected)):
        if a is None or e is None:
            continue
        figures = compare_values(a, e)
        if figures is not None:
            pending.append(k)
    if not pending:
        return None
    exact_values: Sequence[torch.Tensor | None] = ()
    if exact is not None and any(expected[k].is_floating_point() for k in pending):
        try:
            exact_values = list(exact())
        except Exception:  # noqa: BLE001 - no float64 kernel: no tie-break
            exact_values = ()
    for k in pending:
        x = exact_values[k] if k < len(exact_values) else None
        figures = compare_values(actual[k], expected[k], x)
        if figures is not None:
            return k, figures
    return None
