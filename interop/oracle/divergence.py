"""The one first-diverging-node finder: where, node by node, does Aidge start to compute
something else than the reference?

- forward: :func:`first_diverging_output`, the first node, in the ONNX graph's order, one of whose
  outputs (as Aidge computed it) differs from the reference's value of the same name (onnxruntime
  on the same graph). The bridge's first-call check (:mod:`interop.bridge.value_check`) and the
  reproducers' reduction (:mod:`interop.reproducers`) collect the two sides their own
  way (an Aidge graph that has just run; a bundle run in a child) and ask this function.
- backward: :func:`first_diverging_backward`, walking from the outputs back, the first node whose
  input gradients differ from :func:`node_vjp`, a float64 reference of that node alone.

Both compare with the oracle's one comparator (:func:`interop.oracle.compare.compare_tensors`).
The layer-by-layer comparison against a torch model (``interop.diagnostics.divergence``) asks
another question (which torch module) and reads this module's comparator too.

Imports neither torch nor Aidge; onnx only inside :func:`node_vjp`. Never prints.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

from .compare import Mismatch, compare_tensors

__all__ = ["Divergence", "first_diverging_output", "gradient_differs", "node_vjp", "first_diverging_backward",
           "VJPTooLarge", "VJP_MAX_ELEMENTS"]


@dataclasses.dataclass(frozen=True)
class Divergence:
    """Where the forward diverges: ``node_index`` in the ONNX graph's node list, its ``output``
    position, ``line`` (one line for a message: shapes, or how many elements and the worst
    difference) and the comparator's ``mismatch``."""

    node_index: int
    output: int
    line: str
    mismatch: Mismatch


def first_diverging_output(nodes: Sequence[Any], outputs_of: Mapping[int, Sequence[Any]],
                           reference: Mapping[str, Any], *, rtol: float | None = None, atol: float | None = None,
                           against: str = "onnxruntime") -> Divergence | None:
    """The first node of ``nodes`` (an ONNX graph's nodes, in order) one of whose outputs differs
    from ``reference`` (value name -> the reference's value): ``outputs_of`` maps a node's index to
    the values Aidge gave its outputs, in order (None: not readable, not compared); a node absent
    from it (Aidge fused or dropped it) is skipped. ``rtol``/``atol``: the case's tolerance, or the
    oracle's table for the dtypes when None. None when every compared output matches."""
    for k, node in enumerate(nodes):
        outs = outputs_of.get(k)
        if outs is None:
            continue
        for i, (name, got) in enumerate(zip(node.output, outs)):
            want = reference.get(name) if name else None
            if want is None or got is None:
                continue
            got, want = np.asarray(got), np.asarray(want)
            mismatch = compare_tensors(got, want, rtol, atol, equal_nan=True)
            if mismatch is None:
                continue
            if mismatch.n_mismatched is None:
                line = f"output {i} shape {list(got.shape)}, {against} {list(want.shape)}"
            else:
                worst = "" if mismatch.max_abs is None else f", max |diff| {float(mismatch.max_abs):.6g}"
                line = f"output {i}: {mismatch.n_mismatched} of {mismatch.n_total} elements differ from {against}{worst}"
            return Divergence(k, i, line, mismatch)
    return None


def gradient_differs(actual: Any, expected: Any, rtol: float, atol: float) -> bool:
    """Whether a gradient Aidge computed differs from its float64 reference (shapes, then values)."""
    return compare_tensors(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                           rtol, atol, equal_nan=True) is not None


#: the most elements the differentiated inputs of one node may hold: the reference evaluates the
#: node twice per element (central differences), about 1 ms each for a small node on onnx.reference
VJP_MAX_ELEMENTS = 4096


class VJPTooLarge(ValueError):
    """The node's differentiated inputs hold more than :data:`VJP_MAX_ELEMENTS` elements."""


def node_vjp(node: Any, inputs: Mapping[str, np.ndarray], grad_outputs: Sequence[np.ndarray | None], *,
             wrt: Sequence[str] | None = None, eps: float = 1e-6, opset: int = 18,
             max_elements: int = VJP_MAX_ELEMENTS) -> dict[str, np.ndarray]:
    """A float64 reference of one ONNX node's vector-Jacobian product: for each floating input
    ``x`` (``wrt``: those named; default every floating input), ``d/dx sum_k <out_k(x), g_k>``
    with ``g_k = grad_outputs[k]`` (None: that output gets no gradient), by central differences
    (step ``eps`` scaled by ``max(1, |x_i|)``) on the node alone, run by onnx's own
    ``onnx.reference.ReferenceEvaluator`` in float64. What it cannot be: exact where the node is not
    differentiable at the point (ReLU at 0, a max with ties). Raises :class:`VJPTooLarge` beyond
    ``max_elements``."""
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    values = {k: np.asarray(v) for k, v in inputs.items()}
    floating = [k for k in node.input if k and k in values and np.issubdtype(values[k].dtype, np.floating)]
    names = [k for k in floating if wrt is None or k in wrt]
    total = sum(values[k].size for k in names)
    if total > max_elements:
        raise VJPTooLarge(f"node {node.name or node.op_type}: {total} input elements to differentiate, "
                          f"over the bound of {max_elements}")
    feeds = {k: (np.ascontiguousarray(v, dtype=np.float64) if k in floating else v) for k, v in values.items()
             if k in node.input}

    def info(name: str, array: np.ndarray):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)

    outputs = [o for o in node.output if o]
    graph = helper.make_graph([node], "one_node", [info(k, v) for k, v in feeds.items()],
                              [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    evaluator = ReferenceEvaluator(model)
    grads = [None if g is None else np.asarray(g, dtype=np.float64) for g in grad_outputs]

    def objective(point: dict[str, np.ndarray]) -> float:
        outs = evaluator.run(None, point)
        return float(sum(np.sum(np.asarray(o, dtype=np.float64) * g) for o, g in zip(outs, grads) if g is not None))

    out: dict[str, np.ndarray] = {}
    for name in names:
        x = feeds[name]
        grad = np.zeros_like(x)
        flat, gflat = x.reshape(-1), grad.reshape(-1)
        for i in range(flat.size):
            keep, step = flat[i], eps * max(1.0, abs(flat[i]))
            flat[i] = keep + step
            up = objective(feeds)
            flat[i] = keep - step
            down = objective(feeds)
            flat[i] = keep
            gflat[i] = (up - down) / (2 * step)
        out[name] = grad
    return out


def first_diverging_backward(steps: Sequence[Mapping[str, Any]], rtol: float, atol: float,
                             max_elements: int = VJP_MAX_ELEMENTS) -> dict[str, Any] | None:
    """The first node, walking the graph from its outputs back (``steps`` in that order), whose
    input gradients, as Aidge computed them, differ from :func:`node_vjp` given Aidge's own output
    gradients of that node and the input values it really received: the node where backward goes
    wrong, whatever came after it. A step: ``{"node": onnx.NodeProto, "inputs": {name: value},
    "grad_outputs": [Aidge's gradient of each output, or None], "grad_inputs": {name: Aidge's
    gradient of that input}}`` (inputs Aidge gives no gradient are not compared). Returns None when
    every node agrees, else ``{"onnx_node", "op_type", "input", "max_abs_diff", "expected",
    "actual", "checked"}``; a node over the size bound is skipped and named in ``skipped``."""
    checked, skipped = 0, []
    for step in steps:
        node = step["node"]
        wanted = [k for k, v in step.get("grad_inputs", {}).items() if v is not None]
        if not wanted:
            continue
        try:
            reference = node_vjp(node, step["inputs"], step["grad_outputs"], wrt=wanted, max_elements=max_elements)
        except VJPTooLarge:
            skipped.append(node.name or node.op_type)
            continue
        checked += 1
        for name in wanted:
            if name not in reference:
                continue
            actual = np.asarray(step["grad_inputs"][name], dtype=np.float64)
            expected = reference[name]
            if gradient_differs(actual, expected, rtol, atol):
                diff = float(np.max(np.abs(actual - expected))) if actual.shape == expected.shape else float("inf")
                return {"onnx_node": node.name, "op_type": node.op_type, "input": name, "max_abs_diff": diff,
                        "expected": expected, "actual": actual, "checked": checked, "skipped": skipped}
    return None
