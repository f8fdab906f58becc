"""The AidgeModule's own value check: on the first call at each input signature, Aidge's
outputs (and, in the backward that follows, its input and parameter gradients) are compared
with the torch computation of the same call, run on the AidgeModule's own weights. A
mismatch raises :class:`ValueMismatchError`, naming the output and, where onnxruntime can
say, the first ONNX node whose Aidge value diverges: never a returned value.

What "the same" means here is the oracle's (:mod:`interop.oracle`): its comparator and
per-dtype table, and its float64 tie-break (:func:`interop.oracle.within_float32_error`: Aidge
within the error torch float32 itself makes against torch's float64 result is float32 rounding,
not an error); a mismatch is attributed by the oracle's one rule
(:func:`interop.oracle.attribution.attribute_forward`).

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
from ..oracle.attribution import attribute_forward
from ..oracle.compare import compare_tensors
from ..oracle.divergence import first_diverging_output
from ..oracle.onnxruntime import run_onnxruntime
from ..oracle.precision import within_float32_error
from ..oracle.tolerance import default_tolerances
from .ort import aidge_node_indices

__all__ = ["ValueMismatchError", "checks_deferred", "checks_are_deferred", "random_nodes",
           "compare_values", "first_diverging_node"]

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


def compare_values(actual: torch.Tensor, expected: torch.Tensor, exact: torch.Tensor | None = None) -> dict | None:
    """None when ``actual`` (Aidge) is ``expected`` (torch) within the dtype's tolerance, or within
    the error torch float32 itself makes against ``exact`` (torch float64); else the figures of the
    mismatch. Both decisions are the oracle's."""
    actual = actual.detach().cpu()
    expected = expected.detach().cpu()
    rtol, atol = default_tolerances(actual.dtype, expected.dtype)
    found = compare_tensors(actual, expected, rtol, atol)
    if found is None:
        return None
    if found.n_mismatched is None:
        return {"n_mismatched": None, "n_total": expected.numel(), "max_abs": None, "rtol": 0.0, "atol": 0.0,
                "shape": (tuple(actual.shape), tuple(expected.shape))}
    if exact is not None and expected.is_floating_point() \
            and within_float32_error(actual, expected, exact.detach().cpu(), rtol, atol):
        return None
    if not (actual.is_floating_point() or expected.is_floating_point()):
        return {"n_mismatched": found.n_mismatched, "n_total": found.n_total, "max_abs": None, "rtol": 0.0,
                "atol": 0.0}
    return {"n_mismatched": found.n_mismatched, "n_total": found.n_total, "max_abs": float(found.max_abs),
            "rtol": rtol, "atol": atol}


def describe(figures: dict) -> str:
    if figures.get("shape"):
        got, want = figures["shape"]
        return f"shape {list(got)}, torch {list(want)}"
    if figures.get("max_abs") is None:
        return f"{figures['n_mismatched']} of {figures['n_total']} elements differ"
    return (f"{figures['n_mismatched']} of {figures['n_total']} elements differ, max |diff| {figures['max_abs']:.4g} "
            f"(rtol {figures['rtol']:g}, atol {figures['atol']:g})")


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
    wanted = [name for k, node in enumerate(proto.graph.node) if k in by_onnx for name in node.output if name]
    try:
        reference = dict(zip(wanted, run_onnxruntime(proto, feeds, wanted)))
    except Exception:  # noqa: BLE001 - no onnxruntime or it refuses the graph: not localised
        return None
    found = first_diverging_output(proto.graph.node, {k: _outputs(node) for k, node in by_onnx.items()}, reference)
    return None if found is None else (proto.graph.node[found.node_index], by_onnx[found.node_index])


def _outputs(node) -> list[np.ndarray | None]:
    """The values an Aidge node that has just run holds on its outputs (None: one it does not hold)."""
    op, out = node.get_operator(), []
    for i in range(node.get_nb_outputs()):
        try:
            out.append(np.array(op.get_output(i), copy=True))
        except Exception:  # noqa: BLE001 - an output Aidge does not hold
            out.append(None)
    return out


def attribute(proto, feeds: dict[str, np.ndarray], aidge: Sequence[torch.Tensor],
              torch_out: Sequence[torch.Tensor],
              exact: Callable[[], Sequence[torch.Tensor | None]] | None = None) -> tuple[str, str]:
    """``(attribution, why)`` of a forward mismatch: the oracle's one rule
    (:func:`interop.oracle.attribution.attribute_forward`), onnxruntime run on the very ONNX
    Aidge ran."""
    return attribute_forward(aidge_out=list(aidge), torch_out=list(torch_out), exact=exact,
                             onnx=lambda: run_onnxruntime(proto, feeds))


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
