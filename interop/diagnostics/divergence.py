"""Where do two models start to disagree? The first diverging layer, torch <-> torch or torch <-> Aidge.

:func:`localize_divergence` runs both models on the same input, records every layer's
inputs and outputs and compares them layer by layer with the shared comparator
(:mod:`interop.equivalence` (the comparator)), the reference being ``model_a``. It returns a
:class:`~interop.diagnostics.divergence_report.DivergenceReport` (a headline, the first
diverging layer, a table of every matched layer: see that module for how it reads).
``inputs=ok`` means the layer received matching inputs, so the error starts inside it;
``inputs=DIFF`` means the difference entered before it.

Layers are the leaf modules of the torch model(s), in the order they run.

* torch <-> torch: forward hooks on both models; ``module_map`` maps a layer name of
  ``model_a`` to its name in ``model_b`` when they differ.
* torch <-> :class:`~interop.bridge.AidgeModule`: each torch layer is matched with the Aidge
  node(s) it became. The exported ONNX node names carry the torch module scope
  (``/blocks/blocks.0/mlp/mlp.0/Gemm``: each segment is a module name cut after its last
  non-numeric atom, see torch.onnx's ``_unqualified_variable_name``), which is resolved
  against the torch model's module names (through ``module_map`` when the AidgeModule was
  wrapped from a model with other names); Aidge names a node after its ONNX node (or its
  first output), and every Aidge node's outputs stay readable after a forward. Nodes Aidge
  removed (Flatten) pass their input through. (These export and import facts, measured on
  Aidge 0.10.1: ``docs/aidge-notes.md#exporting-from-torch-to-onnx`` and the next section.)

Layers found on one side only are listed; when no layer matches, the report says so
instead of blaming a layer. Nothing is printed; both models keep their state and mode.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from .. import equivalence as compare  # the comparator (interop.equivalence re-exports it)
from ..oracle.tolerance import tolerance_for
from ..bridge.runtime import aidge_onnx
from ..bridge.onnx_export_state import preserved_state
from .divergence_report import DivergenceReport, LayerDivergence, hint_line
from .model_io import call_model, clone_tensors, iter_tensors

__all__ = [
    "localize_divergence",
    "first_divergence_hint",
]

# ONNX ops that Aidge may drop or that only reshape: their output is their first input.
_PASSTHROUGH = {"Flatten", "Identity", "Reshape", "Dropout", "Squeeze", "Unsqueeze"}


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def localize_divergence(
    model_a: Any,
    model_b: Any,
    x: Any,
    rtol: float | None = None,
    atol: float | None = None,
    module_map: Mapping[str, str] | None = None,
    tolerance: Any = None,
) -> DivergenceReport:
    """Compare ``model_a`` (the reference) and ``model_b`` layer by layer on input ``x``.

    ``x``: a tensor, a tuple (``model(*x)``) or, for torch models, a dict (``model(**x)``).
    ``module_map``: ``{layer name in model_a: name in model_b}`` for renamed layers (for an
    AidgeModule: the module name in the torch model it was wrapped from).
    Tolerance: ``tolerance`` (a :class:`~interop.oracle.tolerance.Tolerance`, the policy
    ModelTester and the asv precheck use), else the comparator's float32 default;
    ``rtol``/``atol`` override it explicitly.
    Returns a :class:`DivergenceReport`; call ``report.raise_if_diverged()`` to assert.
    """
    module_map = dict(module_map or {})
    a_is_aidge, b_is_aidge = _is_aidge(model_a), _is_aidge(model_b)
    if a_is_aidge and b_is_aidge:
        raise TypeError("localize_divergence: both models are AidgeModules; compare each with the torch "
                        "model they were wrapped from")
    policy = tolerance_for(tolerance, "float32")
    rtol = float(policy.rtol if rtol is None else rtol)
    atol = float(policy.atol if atol is None else atol)
    name_a = f"model_a ({_kind(model_a)})"
    name_b = f"model_b ({_kind(model_b)})"
    if not (a_is_aidge or b_is_aidge):
        side_a = _run_torch(model_a, x)
        side_b = _run_torch(model_b, x)
        return _compare_torch_torch(side_a, side_b, module_map, rtol, atol, name_a, name_b)
    torch_model, aidge_model = (model_b, model_a) if a_is_aidge else (model_a, model_b)
    side_t = _run_torch(torch_model, x)
    side_g = _run_aidge(aidge_model, x)
    return _compare_torch_aidge(side_t, side_g, module_map, rtol, atol, name_a, name_b,
                                aidge_is_reference=a_is_aidge)


def first_divergence_hint(torch_model: Any, aidge_model: Any, inputs: Any,
                          rtol: float | None = None, atol: float | None = None, tolerance: Any = None) -> str:
    """One line naming the first diverging layer and its Aidge node(s), for failure messages.

    ``""`` when no layer exceeds tolerance. Never raises: a localisation problem becomes
    the text of the hint.
    """
    try:
        return hint_line(localize_divergence(torch_model, aidge_model, inputs, rtol=rtol, atol=atol,
                                             tolerance=tolerance))
    except Exception as exc:  # a hint must never hide the failure it decorates
        return f"First diverging layer: not localised ({type(exc).__name__}: {exc})"



# --------------------------------------------------------------------------------------
# Recording a torch model
# --------------------------------------------------------------------------------------


def _is_aidge(model: Any) -> bool:
    return any(cls.__name__ == "AidgeModule" and cls.__module__.startswith("interop.")
               for cls in type(model).__mro__)


def _kind(model: Any) -> str:
    return f"Aidge {type(model).__name__}" if _is_aidge(model) else f"torch {type(model).__name__}"


@dataclasses.dataclass
class _Call:
    """One call of a leaf module."""

    name: str
    index: int  # 0 for the first call of the module, 1 for the second...
    type: str
    inputs: list[torch.Tensor]
    outputs: list[torch.Tensor]

    @property
    def key(self) -> tuple[str, int]:
        return self.name, self.index

    @property
    def label(self) -> str:
        base = self.name or "<root>"
        return base if self.index == 0 else f"{base} (call {self.index + 1})"


@dataclasses.dataclass
class _TorchSide:
    calls: list[_Call]
    output: Any
    module_names: list[str]
    leaf_types: dict[str, str]


def _leaves(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    return {name: m for name, m in model.named_modules() if next(iter(m.children()), None) is None}


def _run_torch(model: torch.nn.Module, x: Any) -> _TorchSide:
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"localize_divergence: expected a torch.nn.Module, got {type(model).__name__}")
    leaves = _leaves(model)
    calls: list[_Call] = []
    counts: dict[str, int] = {}
    pending: dict[int, list[tuple[str, list[torch.Tensor]]]] = {}
    handles = []

    def pre_hook(name):
        def hook(module, args, kwargs):
            tensors = [t.detach().clone() for _, t in iter_tensors((args, kwargs))]
            pending.setdefault(id(module), []).append((name, tensors))
        return hook

    def post_hook(name):
        def hook(module, args, kwargs, output):
            _, inputs = pending[id(module)].pop()
            k = counts.get(name, 0)
            counts[name] = k + 1
            outs = [t.detach().clone() for _, t in iter_tensors(output)]
            calls.append(_Call(name, k, type(module).__name__, inputs, outs))
        return hook

    try:
        for name, m in leaves.items():
            handles.append(m.register_forward_pre_hook(pre_hook(name), with_kwargs=True))
            handles.append(m.register_forward_hook(post_hook(name), with_kwargs=True))
        with preserved_state(model), torch.no_grad():
            output = clone_tensors(call_model(model, clone_tensors(x)))
    finally:
        for h in handles:
            h.remove()
    names = [n for n, _ in model.named_modules()]
    return _TorchSide(calls, output, names, {n: type(m).__name__ for n, m in leaves.items()})


def _compare_pairs(expected: Sequence[torch.Tensor | np.ndarray], actual: Sequence[torch.Tensor | np.ndarray | None],
                   rtol: float, atol: float):
    """Compare paired tensors (reshaping ``actual`` when only the shape differs).

    Returns ``(max_abs, max_rel, first mismatch or None, compared: bool, note)``.
    """
    max_abs = max_rel = 0.0
    first = None
    compared = False
    notes = []
    for e, a in zip(expected, actual):
        if a is None:
            continue
        e_np, a_np = compare.to_numpy(e), compare.to_numpy(a)
        if e_np.shape != a_np.shape:
            if e_np.size != a_np.size:
                notes.append(f"shapes {tuple(e_np.shape)} vs {tuple(a_np.shape)}")
                continue
            notes.append(f"reshaped {tuple(a_np.shape)} -> {tuple(e_np.shape)}")
            a_np = a_np.reshape(e_np.shape)
        compared = True
        m = compare.compare_tensors(a_np, e_np, rtol, atol, equal_nan=True)
        if m is not None and first is None:
            first = m
        ab, rel = compare.max_errors(a_np, e_np)
        max_abs, max_rel = max(max_abs, ab), max(max_rel, rel)
    return max_abs, max_rel, first, compared, "; ".join(notes)


def _pair_up(reference: Sequence[Any], candidates: Sequence[Any]) -> list[Any]:
    """For each reference tensor, its counterpart: same position when the counts agree,
    else the last candidate holding as many elements (None when there is none)."""
    if len(reference) == len(candidates):
        return list(candidates)
    out = []
    for r in reference:
        size = _size(r)
        same = [c for c in candidates if c is not None and _size(c) == size]
        out.append(same[-1] if same else None)
    return out


def _size(t: Any) -> int:
    return int(t.numel()) if isinstance(t, torch.Tensor) else int(np.asarray(t).size)


def _final_outputs(actual: Any, expected: Any, rtol: float, atol: float) -> list[compare.Mismatch]:
    return compare.compare_outputs(actual, expected, rtol, atol, equal_nan=True)


def _compare_torch_torch(a: _TorchSide, b: _TorchSide, module_map: Mapping[str, str], rtol: float, atol: float,
                         name_a: str, name_b: str) -> DivergenceReport:
    b_calls = {c.key: c for c in b.calls}
    used = set()
    rows, only_a = [], []
    for call in a.calls:
        key = (module_map.get(call.name, call.name), call.index)
        other = b_calls.get(key)
        if other is None:
            only_a.append(f"{call.label} ({call.type})")
            continue
        used.add(key)
        ab, rel, mismatch, compared, note = _compare_pairs(call.outputs, _pair_up(call.outputs, other.outputs),
                                                           rtol, atol)
        if not compared:
            only_a.append(f"{call.label} ({call.type}; outputs not comparable: {note})")
            continue
        _, _, in_mismatch, in_compared, _ = _compare_pairs(call.inputs, _pair_up(call.inputs, other.inputs),
                                                          rtol, atol)
        counterpart = f"{name_b.split(' ')[0]} layer {other.label!r} ({other.type})"
        rows.append(LayerDivergence(call.label, call.type, counterpart, ab, rel, mismatch is not None,
                                    (in_mismatch is None) if in_compared else None, note, mismatch))
    only_b = [f"{c.label} ({c.type})" for c in b.calls if c.key not in used]
    return DivergenceReport(name_a, name_b, rtol, atol, rows, only_a, only_b,
                            _final_outputs(b.output, a.output, rtol, atol))


# --------------------------------------------------------------------------------------
# Recording an AidgeModule and mapping its nodes to torch layers
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class _AidgeSide:
    am: Any
    output: Any
    inputs: list[np.ndarray]


def _run_aidge(am: Any, x: Any) -> _AidgeSide:
    if isinstance(x, Mapping):
        raise TypeError("localize_divergence: an AidgeModule takes positional inputs, not a dict")
    inputs = list(x) if isinstance(x, (tuple, list)) else [x]
    # the mirrored parameters/buffers share memory with Aidge's Producers: restoring them
    # undoes whatever a training-mode graph updates (BatchNorm running statistics)
    with preserved_state(am), torch.no_grad():
        output = clone_tensors(call_model(am, clone_tensors(x)))
    arrays = [t.detach().cpu().to(torch.float32).numpy() if t.is_floating_point() else t.detach().cpu().numpy()
              for t in inputs]
    return _AidgeSide(am, output, arrays)


_SUFFIX = re.compile(r"^(.*)_(\d+)$")


def _scope_segments(node_name: str) -> list[str]:
    parts = node_name.split("/")
    return [p for p in parts[1:-1] if p] if node_name.startswith("/") else []


def _resolve_segment(seg: str, current: str, names: Sequence[str]) -> str | None:
    def candidates(s: str, inside: bool) -> list[str]:
        found = [n for n in names if n and (n == s or n.endswith("." + s))]
        if inside and current:
            found = [n for n in found if n.startswith(current + ".")]
        return found

    for s in (seg, _SUFFIX.sub(r"\1", seg)):
        for inside in (True, False):
            found = candidates(s, inside)
            if found:
                depth = min(n.count(".") for n in found)
                closest = [n for n in found if n.count(".") == depth]
                return closest[0] if len(closest) == 1 else None
        if not _SUFFIX.match(seg):
            break
    return None


def _resolve_scope(node_name: str, names: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """The module path an ONNX node belongs to and the chain of scope segments (for calls)."""
    segments = _scope_segments(node_name)
    if not segments:
        return None
    current = ""
    for seg in segments:
        found = _resolve_segment(seg, current, names)
        if found is None:
            return None
        current = found
    return current, tuple(segments)


class _AidgeGraphMap:
    """The exported ONNX graph, the Aidge nodes it became, and the values after a forward."""

    def __init__(self, side: _AidgeSide):
        to_aidge = aidge_onnx().utils.onnx_to_aidge_name
        proto = side.am.onnx_model
        self.nodes = list(proto.graph.node)
        self.initializers = {i.name for i in proto.graph.initializer}
        self.graph_outputs = {o.name for o in proto.graph.output}
        data_inputs = [i.name for i in proto.graph.input if i.name not in self.initializers]
        self.input_values = dict(zip(data_inputs, side.inputs))
        self.producer: dict[str, tuple[int, int]] = {}
        self.consumers: dict[str, list[int]] = {}
        for i, node in enumerate(self.nodes):
            for k, out in enumerate(node.output):
                if out:
                    self.producer[out] = (i, k)
            for inp in node.input:
                if inp:
                    self.consumers.setdefault(inp, []).append(i)
        aidge_nodes: dict[str, list[Any]] = {}
        for n in side.am.graph.get_nodes():
            aidge_nodes.setdefault(n.name(), []).append(n)
        # Each ONNX node -> the Aidge node named after it (or after its first output).
        wanted: dict[str, list[int]] = {}
        choice: dict[int, str] = {}
        for i, node in enumerate(self.nodes):
            for cand in [to_aidge(node.name)] + [to_aidge(o) for o in node.output if o]:
                if cand in aidge_nodes:
                    choice[i] = cand
                    wanted.setdefault(cand, []).append(i)
                    break
        self.aidge_of: dict[int, Any] = {}
        self.ambiguous: set[int] = set()
        for cand, idxs in wanted.items():
            if len(idxs) == 1 and len(aidge_nodes[cand]) == 1:
                self.aidge_of[idxs[0]] = aidge_nodes[cand][0]
            else:
                self.ambiguous.update(idxs)

    def value(self, tensor: str, depth: int = 0) -> np.ndarray | None:
        if tensor in self.input_values:
            return self.input_values[tensor]
        if tensor not in self.producer or depth > 16:
            return None
        i, k = self.producer[tensor]
        node = self.aidge_of.get(i)
        if node is not None:
            try:
                return np.array(node.get_operator().get_output(k), copy=True)
            except Exception:
                return None
        onnx_node = self.nodes[i]
        if onnx_node.op_type in _PASSTHROUGH and onnx_node.input and i not in self.ambiguous:
            return self.value(onnx_node.input[0], depth + 1)
        return None

    def group_tensors(self, members: Sequence[int]) -> tuple[list[str], list[str]]:
        """(output tensors leaving the group, data tensors entering it), in graph order."""
        inside = set(members)
        outs, ins = [], []
        for i in members:
            node = self.nodes[i]
            for out in node.output:
                if out and (out in self.graph_outputs or any(c not in inside for c in self.consumers.get(out, []))):
                    outs.append(out)
            for inp in node.input:
                if not inp or inp in self.initializers or inp in ins:
                    continue
                prod = self.producer.get(inp)
                if prod is not None and (prod[0] in inside or self.nodes[prod[0]].op_type == "Constant"):
                    continue
                ins.append(inp)
        return outs, ins

    def describe(self, members: Sequence[int]) -> str:
        names = []
        for i in members:
            node = self.aidge_of.get(i)
            if node is not None:
                names.append(f"{node.name()} ({node.type()})")
            elif self.nodes[i].op_type == "Constant":
                continue
            elif i in self.ambiguous:
                names.append(f"[{self.nodes[i].name}: ambiguous Aidge name]")
            else:
                names.append(f"[{self.nodes[i].name}: no Aidge node]")
        return ", ".join(names) if names else "no Aidge node"


def _compare_torch_aidge(t: _TorchSide, g: _AidgeSide, module_map: Mapping[str, str], rtol: float, atol: float,
                         name_a: str, name_b: str, aidge_is_reference: bool) -> DivergenceReport:
    gmap = _AidgeGraphMap(g)
    # ONNX scopes name modules of the model the AidgeModule was wrapped from: translate.
    scope_to_torch = {module_map.get(n, n): n for n in t.module_names if n}
    scope_names = list(scope_to_torch)
    groups: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    unattributed: list[int] = []
    for i, node in enumerate(gmap.nodes):
        resolved = _resolve_scope(node.name, scope_names)
        if resolved is None or scope_to_torch[resolved[0]] not in t.leaf_types:
            unattributed.append(i)
            continue
        groups.setdefault((scope_to_torch[resolved[0]], resolved[1]), []).append(i)
    # The k-th group of a module (in graph order) is its k-th call.
    by_call: dict[tuple[str, int], list[int]] = {}
    counter: dict[str, int] = {}
    for (module, _chain), members in sorted(groups.items(), key=lambda kv: kv[1][0]):
        k = counter.get(module, 0)
        counter[module] = k + 1
        by_call[(module, k)] = members

    rows, only_torch, used = [], [], set()
    for call in t.calls:
        members = by_call.get(call.key)
        if members is None:
            only_torch.append(f"{call.label} ({call.type})")
            continue
        used.add(call.key)
        outs, ins = gmap.group_tensors(members)
        counterpart = f"Aidge node(s) {gmap.describe(members)}"
        aidge_outs = [gmap.value(o) for o in outs]
        aidge_ins = [gmap.value(i) for i in ins]
        if aidge_is_reference:
            ref_out = [a for a in aidge_outs if a is not None]
            ref_in = [a for a in aidge_ins if a is not None]
            ab, rel, mismatch, compared, note = _compare_pairs(ref_out, _pair_up(ref_out, call.outputs), rtol, atol)
            _, _, in_mismatch, in_compared, _ = _compare_pairs(ref_in, _pair_up(ref_in, call.inputs), rtol, atol)
        else:
            ab, rel, mismatch, compared, note = _compare_pairs(call.outputs, _pair_up(call.outputs, aidge_outs),
                                                               rtol, atol)
            _, _, in_mismatch, in_compared, _ = _compare_pairs(call.inputs, _pair_up(call.inputs, aidge_ins),
                                                              rtol, atol)
        if not compared:
            only_torch.append(f"{call.label} ({call.type}; {counterpart} unreadable{': ' + note if note else ''})")
            continue
        rows.append(LayerDivergence(call.label, call.type, counterpart, ab, rel, mismatch is not None,
                                    (in_mismatch is None) if in_compared else None, note, mismatch))
    only_aidge = []
    for i in unattributed:
        node = gmap.aidge_of.get(i)
        if node is not None and node.type() != "Producer":
            only_aidge.append(f"{node.name()} ({node.type()})")
    for key, members in by_call.items():
        if key not in used:
            only_aidge.append(f"{gmap.describe(members)} (scope {key[0]!r}, never called in torch)")
    torch_name, aidge_name = (name_b, name_a) if aidge_is_reference else (name_a, name_b)
    only_in = {torch_name: only_torch, aidge_name: only_aidge}
    if aidge_is_reference:
        mismatches = _final_outputs(t.output, g.output, rtol, atol)
    else:
        mismatches = _final_outputs(g.output, t.output, rtol, atol)
    return DivergenceReport(name_a, name_b, rtol, atol, rows, only_in[name_a], only_in[name_b], mismatches)
