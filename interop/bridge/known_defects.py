"""Graph patterns an Aidge release is known to compute wrongly where the first-call value check
(:mod:`interop.bridge.value_check`) cannot see it: on later calls, or in a backward whose result
depends on an order that changes from one ``wrap`` to the next. One table,
:data:`KNOWN_DEFECTS`, each entry keyed to the Aidge releases it was measured on and to the
defect registry's entries it shows (:mod:`interop.registry`: the ids the ledger, ``check`` and
the expected-failure table use for the same defect).

``wrap`` looks the exported graph up here (:func:`defects_in`): by default a forward defect is
refused at ``wrap`` and a backward defect at the first backward (the forward of such a graph is
right), with :class:`KnownDefectError` naming the defect, the nodes and the row; with
``known_defects="warn"`` the module is built and a :class:`KnownDefectWarning` says what will be
wrong. A harness that compares every call with torch itself
(:func:`~interop.bridge.value_check.checks_deferred`) gets neither: it measures the defect.
"""
from __future__ import annotations

import dataclasses
from typing import Callable
from importlib import metadata

from ..errors import InteropError
from .. import registry

__all__ = ["KnownDefect", "KNOWN_DEFECTS", "KNOWN_DEFECT_POLICIES", "KnownDefectError", "KnownDefectWarning",
           "defects_in", "installed_release", "check_policy"]

#: what ``wrap(known_defects=...)`` accepts
KNOWN_DEFECT_POLICIES = ("refuse", "warn")

class KnownDefectError(InteropError, RuntimeError):
    """The graph holds a pattern the installed Aidge release computes wrongly (see
    :data:`KNOWN_DEFECTS`): refused instead of returning a wrong value. ``defect``: the
    :class:`KnownDefect`; ``nodes``: the ONNX nodes showing it; ``phase``, ``operator`` as the
    defect says."""

    def __init__(self, message: str, defect: "KnownDefect", nodes: list[str]):
        super().__init__(message)
        self.defect = defect
        self.nodes = nodes
        self.phase = defect.phase
        self.operator = defect.operator
        self.node = nodes[0] if nodes else None

    @property
    def category(self) -> str:
        return self.defect.category


class KnownDefectWarning(UserWarning):
    """``wrap(known_defects="warn")`` built a module whose graph holds a known Aidge defect."""


def _convtranspose_without_bias(proto, graph=None) -> list[str]:
    return [n.name or n.output[0] for n in proto.graph.node
            if n.op_type == "ConvTranspose" and (len(n.input) < 3 or not n.input[2])]


#: Aidge node types whose backward writes their input's gradient instead of adding to it (0.10.1)
_WRITING_BACKWARD = ("Transpose", "Gemm")


def _descends_from(node, ancestor) -> bool:
    """Whether ``node`` is reached from ``ancestor`` through its children (forward edges)."""
    target = node.name()  # node names are unique in a graph; the Python wrappers need not be
    seen, todo = set(), list(ancestor.get_children())
    while todo:
        current = todo.pop()
        key = current.name()
        if key == target:
            return True
        if key not in seen:
            seen.add(key)
            todo.extend(current.get_children())
    return False


def _fan_out_into_a_writing_backward(proto, graph=None) -> list[str]:
    """The Aidge nodes (a Producer: a weight; an Identity: a graph input; any node) whose output
    is read by two nodes or more, one of them a Transpose or a Gemm, unless the graph fixes the
    order that makes the sum right: a single such reader that descends from every other reader
    runs its backward first (it writes, the others then add). Read on the Aidge graph:
    aidge_onnx keeps a Gemm whose flags FC cannot take (``transA``, ``transB=0``) as a Gemm
    node, and TorchScript folds a transpose of the input into the Gemm's flags."""
    if graph is None:
        return []
    found = []
    for node in graph.get_nodes():
        children = list(node.get_children())
        writers = [c for c in children if c.type() in _WRITING_BACKWARD]
        if len(children) < 2 or not writers:
            continue
        others = [c for c in children if c.type() not in _WRITING_BACKWARD]
        if len(writers) == 1 and others and all(_descends_from(writers[0], c) for c in others):
            continue  # the writer's backward runs before every other reader's
        found.append(node.name())
    return sorted(found)


@dataclasses.dataclass(frozen=True)
class KnownDefect:
    """One pattern the Aidge releases ``releases`` compute wrongly. ``phase``: where the wrong
    value shows (``forward``: from the second call on; ``backward``); ``defects``: the registry ids
    of the defect (:mod:`interop.registry`); ``match(proto, graph)``: the nodes of the ONNX graph or
    of the imported Aidge graph that show it."""

    key: str
    releases: tuple[str, ...]
    phase: str
    operator: str
    what: str
    measured: str
    match: Callable[..., list[str]]
    defects: tuple[str, ...] = ()

    @property
    def category(self) -> str:
        return "gradients_differ" if self.phase == "backward" else "outputs_differ"


#: the table: every known pattern, keyed to the releases it was measured on
KNOWN_DEFECTS: tuple[KnownDefect, ...] = (
    KnownDefect(
        key="convtranspose-without-bias", releases=("0.10.0.post3", "0.10.1"), phase="forward",
        operator="ConvTranspose2D",
        what="a ConvTranspose without bias returns the right output on its first call and a wrong one on every "
             "later call, the first input again included (with a bias every call matches)",
        measured="measured 2026-12-03 on 0.10.1: nn.ConvTranspose2d(3, 2, 3, bias=False), three calls (x, x, x): "
                 "max |diff| 1.8e-7, 1.36, 2.72; MONAI LocalNet, SegResNetDS and a DCGAN generator are wrong from "
                 "their second call",
        match=_convtranspose_without_bias, defects=("D-e4df188f",)),
    KnownDefect(
        key="fan-out-into-transpose-or-gemm", releases=("0.10.1",), phase="backward", operator="Transpose|Gemm",
        what="a tensor read by a Transpose or a Gemm and by another node gets, in backward, the gradient of "
             "whichever consumer's backward runs last instead of the sum (the Transpose's and the Gemm's backward "
             "write the gradient instead of adding to it), and where the graph does not fix that order it changes "
             "from one wrap to the next: a weight shared through its transpose (a tied autoencoder), an input read "
             "transposed and by a residual",
        measured="measured 2026-12-03 on 0.10.1: the tied weight's gradient 1.69 off and a residual input's 1.0 "
                 "off in every process when the Transpose or Gemm runs first in the forward (interop.cases."
                 "shared_tensors, every route); a decoder reading enc.weight.t() after the encoder: wrong in 3 of 8 "
                 "wraps (dynamo); a tensor read by FC and Add only: right in 8 of 8",
        match=_fan_out_into_a_writing_backward, defects=("D-ab88b7ec", "D-5d77876e")),
)


def installed_release() -> str | None:
    """The installed aidge_core release (its distribution version), None when unknown."""
    try:
        return metadata.version("aidge_core")
    except metadata.PackageNotFoundError:
        return None


def defects_in(proto, release: str | None = None, graph=None) -> list[tuple[KnownDefect, list[str]]]:
    """``(defect, nodes)`` of every entry of :data:`KNOWN_DEFECTS` for ``release`` (default: the
    installed one) that ``proto`` (an ONNX ModelProto) or ``graph`` (its Aidge import) shows."""
    release = installed_release() if release is None else release
    found = []
    for defect in KNOWN_DEFECTS:
        if release in defect.releases:
            nodes = defect.match(proto, graph)
            if nodes:
                found.append((defect, nodes))
    return found


def describe(defect: KnownDefect, nodes: list[str], release: str | None) -> str:
    """The defect in words: what is wrong, where in this graph, how it was measured, its row."""
    shown = ", ".join(repr(n) for n in nodes[:4]) + (f" and {len(nodes) - 4} more" if len(nodes) > 4 else "")
    text = (f"Aidge {release} has a known defect this graph shows ({defect.key}, {defect.operator}, {defect.phase}; "
            f"at {shown}): {defect.what}. {defect.measured[0].upper()}{defect.measured[1:]}.")

    named = [d for d in (registry.by_id(i) for i in defect.defects) if d is not None]
    if named:
        text += " Registry: " + "; ".join(f"{d.id} ({d.title}, {d.component})" for d in named) + "."
    return text


def check_policy(policy: str) -> str:
    if policy not in KNOWN_DEFECT_POLICIES:
        raise ValueError(f"known_defects={policy!r}: expected one of {KNOWN_DEFECT_POLICIES}")
    return policy
