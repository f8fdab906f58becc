"""A bundle's graph in Aidge: importing and compiling it as the bridge does (:func:`load_in_aidge`,
:class:`AidgeRefused`), every Aidge node's outputs (:func:`_aidge_values`), the map from Aidge's node
names to the ONNX nodes (:func:`_aidge_names`), and, for a backward mismatch, the first node whose
input gradients Aidge computes wrongly (:func:`backward_divergence`, :func:`_backward_node`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..bridge import runtime as rt
from ..bridge.ort import aidge_node_indices
from ..oracle.divergence import VJPTooLarge, first_diverging_backward, gradient_differs, node_vjp
from .layout import _c_order, _one_line

def _onnx_node_for(proto, aidge_name: str | None):
    """The ONNX node Aidge named ``aidge_name`` (see :func:`_aidge_names`), or None."""
    if not aidge_name:
        return None
    index = _aidge_names(proto).get(aidge_name)
    return None if index is None else proto.graph.node[index]


_aidge_names = aidge_node_indices  # the one map (interop.bridge.ort), under the name this module's readers use


class AidgeRefused(Exception):
    """:func:`load_in_aidge` could not take a graph: ``phase`` (import or compile) and the cause."""

    def __init__(self, phase: str, cause: BaseException | str):
        super().__init__(f"{phase}: {cause}")
        self.phase, self.cause = phase, cause


def load_in_aidge(proto, inputs: list[np.ndarray], *, faithful: bool = True, refuse_generic: bool = False):
    """``(graph, scheduler, feeds)``: ``proto`` imported by aidge_onnx (which renames it in place),
    compiled for the CPU as the bridge does (the graph's own dtypes; ``faithful=False``: float32, for a bundle
    written before 2026-12-06 that says FAITHFUL = False), and the inputs as Aidge tensors; :class:`AidgeRefused` when it cannot be (``refuse_generic``: a
    node imported as GenericOperator too). The caller holds ``quiet_aidge``."""
    core, aidge_onnx = rt.aidge_core(), rt.aidge_onnx()
    try:
        graph = aidge_onnx.convert_onnx_to_aidge(proto)
    except Exception as exc:  # noqa: BLE001
        raise AidgeRefused("import", exc) from exc
    if refuse_generic:
        from ..bridge.graph import generic_nodes

        generic = generic_nodes(graph)
        if generic:
            raise AidgeRefused("import", ", ".join(f"{n.type()} ({n.name()})" for n in generic[:4])
                               + " imported as GenericOperator")
    core.remove_flatten(graph)
    dims = [list(x.shape) for x in inputs]
    try:
        if faithful:  # the bridge's one compile, its float32 exception included
            from ..bridge.graph import compile_with_own_dtypes

            compile_with_own_dtypes(graph, "cpu", dims, [getattr(core.dtype, x.dtype.name) for x in inputs],
                                    [x.dtype.name for x in inputs])
        else:
            graph.compile("cpu", core.dtype.float32, dims=dims)
        scheduler = core.SequentialScheduler(graph)
    except Exception as exc:  # noqa: BLE001
        raise AidgeRefused("compile", exc) from exc
    feeds = [core.Tensor(_c_order(x if faithful or not np.issubdtype(x.dtype, np.floating) else x.astype(np.float32)))
             for x in inputs]
    return graph, scheduler, feeds


def _aidge_values(folder: Path, inputs, faithful: bool, calls: int = 1) -> dict[str, Any]:
    """Every Aidge node's outputs after ``calls`` forwards of ``folder/model.onnx`` on the same inputs
    (node name -> (type, outputs) of the last); when a phase raises, ``{"error": (phase, node name or
    None, message)}``: the node is the one the scheduler was running
    (:func:`interop.bridge.runner.unfinished_node`)."""
    import onnx

    from ..bridge.runner import unfinished_node

    with rt.quiet_aidge():
        try:
            _, scheduler, feeds = load_in_aidge(onnx.load(str(folder / "model.onnx")), inputs, faithful=faithful)
        except AidgeRefused as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else RuntimeError(exc.cause)
            return {"error": ("compile", None, _one_line(cause))}
        for _ in range(max(1, calls)):
            try:
                scheduler.forward(True, feeds)
            except Exception as exc:  # noqa: BLE001
                node = unfinished_node(scheduler, "forward")
                return {"error": ("forward", node.name() if node is not None else None, _one_line(exc))}
        order = [n for n in scheduler.get_sequential_static_scheduling() if n.type() != "Producer"]
        values = {}
        for node in order:
            op = node.get_operator()
            outs = []
            for i in range(node.get_nb_outputs()):
                try:
                    outs.append(np.array(op.get_output(i), copy=True))
                except Exception:  # noqa: BLE001
                    outs.append(None)
            values[node.name()] = (node.type(), outs)
    return values


def backward_divergence(folder: Path, rtol: float, atol: float) -> dict[str, Any] | None:
    """The first node, from the outputs back, whose input gradients Aidge computes wrongly, for a
    bundle with a backward (``test_data_set_0/grad_output_*.pb``): the bundle's graph imported and
    run forward then backward in Aidge (its output gradients the stored ones), and each node's
    input gradients compared with the float64 reference VJP of that ONNX node alone, given the
    input values and output gradients Aidge itself had there
    (:func:`interop.oracle.divergence.first_diverging_backward`; nodes over
    ``VJP_MAX_ELEMENTS`` skipped). An input that feeds several nodes is not compared: Aidge's
    gradient there is the sum over its consumers; when every node agrees, such a tensor whose
    gradient is not the sum of its consumers' references is returned instead
    (``gradient_sum``). None when all agree. The reduction
    calls it for a backward mismatch of several nodes that no forward value names
    (:func:`_backward_node`). Raises :class:`AidgeRefused` when Aidge cannot take the graph."""
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(folder / "model.onnx"))
    data = folder / "test_data_set_0"
    initializers = {t.name for t in proto.graph.initializer}
    names = [i.name for i in proto.graph.input if i.name not in initializers]
    read = lambda f: numpy_helper.to_array(onnx.load_tensor(str(data / f)))  # noqa: E731
    inputs = [read(f"input_{i}.pb") for i in range(len(names))]
    consumers: dict[str, int] = {}
    for n in proto.graph.node:
        for name in set(n.input):
            consumers[name] = consumers.get(name, 0) + 1
    steps, types, shared = [], {}, {}
    with rt.quiet_aidge():
        graph, scheduler, feeds = load_in_aidge(onnx.load(str(folder / "model.onnx")), inputs)
        scheduler.forward(True, feeds)
        for k, (node, i) in enumerate(graph.get_ordered_outputs()):
            out = node.get_operator().get_output(i)
            grad = out.grad
            if list(grad.dims) != list(out.dims):
                grad.resize(list(out.dims))
            path = data / f"grad_output_{k}.pb"
            np.asarray(grad)[...] = read(path.name) if path.is_file() else 0
        scheduler.backward()
        for node in reversed(scheduler.get_sequential_static_scheduling()):
            onode = _onnx_node_for(proto, node.name())
            if node.type() == "Producer" or onode is None or onode.op_type != node.type() and \
                    len(onode.input) != node.get_operator().nb_inputs():
                continue  # a node Aidge made of several ONNX nodes has no one ONNX node to compare with
            op = node.get_operator()
            count = min(len(onode.input), op.nb_inputs())
            types[onode.name] = node.type()
            for i in range(min(len(onode.input), op.nb_inputs())):
                name = onode.input[i]
                if name and consumers.get(name, 0) > 1 and op.get_input(i) is not None:
                    entry = shared.setdefault(name, {"grad": np.array(op.get_input(i).grad, copy=True), "steps": []})
                    entry["steps"].append({"node": onode, "inputs": {k: np.array(op.get_input(j), copy=True)
                                                                     for j, k in enumerate(onode.input[:op.nb_inputs()])
                                                                     if k and op.get_input(j) is not None},
                                           "grad_outputs": [np.array(op.get_output(j).grad, copy=True)
                                                            for j in range(op.nb_outputs())]})
            steps.append({"node": onode,
                          "inputs": {onode.input[i]: np.array(op.get_input(i), copy=True) for i in range(count)
                                     if onode.input[i] and op.get_input(i) is not None},
                          "grad_outputs": [np.array(op.get_output(i).grad, copy=True) for i in range(op.nb_outputs())],
                          # a tensor feeding several nodes holds the sum of their gradients: not this node's alone
                          "grad_inputs": {onode.input[i]: np.array(op.get_input(i).grad, copy=True) for i in range(count)
                                          if onode.input[i] and op.get_input(i) is not None
                                          and consumers.get(onode.input[i], 0) == 1}})
    found = first_diverging_backward(steps, rtol, atol)
    if found is None:
        return _shared_gradient_sum(shared, rtol, atol)
    return {"onnx_node": found["onnx_node"], "op_type": found["op_type"], "aidge_type": types.get(found["onnx_node"]),
            "input": found["input"], "max_abs_diff": found["max_abs_diff"], "checked": found["checked"],
            "skipped": found["skipped"]}


def _shared_gradient_sum(shared: dict[str, dict], rtol: float, atol: float) -> dict[str, Any] | None:
    """Where every node's own gradients agree: the first tensor feeding several nodes whose Aidge
    gradient differs from the sum of its consumers' reference VJPs (a consumer's contribution, which
    the walk cannot compare alone, or the sum itself is wrong: it does not say which), as
    ``{"tensor", "consumers", "max_abs_diff", "gradient_sum": True}``; None when they agree or a
    consumer is over the bound."""
    for name, entry in shared.items():
        try:
            total = sum(node_vjp(s["node"], s["inputs"], s["grad_outputs"], wrt=[name])[name] for s in entry["steps"])
        except (VJPTooLarge, KeyError):
            continue
        actual = entry["grad"].astype(np.float64)
        if gradient_differs(actual, total, rtol, atol):
            diff = float(np.max(np.abs(actual - total))) if actual.shape == np.shape(total) else float("inf")
            return {"tensor": name, "consumers": [s["node"].name for s in entry["steps"]], "max_abs_diff": diff,
                    "gradient_sum": True}
    return None


def _backward_node(folder: Path, meta: dict[str, Any], rtol: float, atol: float) -> dict[str, Any] | None:
    """A backward mismatch's first diverging node by the per-node reference
    (:func:`backward_divergence`), as a record's ``first_diverging``, or its wrong gradient sum over
    a shared tensor's consumers (``gradient_sum``: no one node to name); None when it names neither or
    cannot run (a help, not a need: the bundle stays as it is)."""
    line = str((meta.get("repro") or {}).get("line") or "")
    if not line.startswith("DEFECT PRESENT: backward,") or not (folder / "test_data_set_0" / "grad_output_0.pb").is_file():
        return None  # the bundle's own script fails on a gradient (not a forward call, not a backward error)
    try:
        found = backward_divergence(folder, rtol, atol)
    except Exception:  # noqa: BLE001
        return None
    if found is None or found.get("gradient_sum"):
        return found  # a wrong sum over a tensor's consumers: no one node to name
    return {"onnx_node": found["onnx_node"], "op_type": found["op_type"], "aidge_type": found.get("aidge_type"),
            "line": f"backward: the first node, from the outputs back, whose gradient of input {found['input']!r} "
                    f"differs from a float64 reference of that node alone given Aidge's own output gradients "
                    f"there (max |diff| {found['max_abs_diff']:.3g})"}
