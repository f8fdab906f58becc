"""The Aidge side of ``wrap()`` before anything runs: the ONNX import (GenericOperator nodes
refused), the compilation for a backend, and the check that compile computed every output
dims it can (:func:`check_dims_forwarded`)."""
from __future__ import annotations

import copy

from ..errors import AidgeError, UnsupportedOperatorError, aidge_error_from
from ..import_gaps import generic_nodes_message
from . import runtime as rt
from .events import crash_phase
from .onnx_export_graph import ExportedModel
from .ort import aidge_node_indices

__all__ = ["generic_nodes", "check_dims_forwarded", "mark_dynamic_dims", "compile_with_own_dtypes"]

_GENERIC_OPERATOR = "GenericOperatorOp"


@crash_phase("import")
def _import_graph(exported: ExportedModel):
    onnx_import = rt.aidge_onnx().onnx_import
    core = rt.aidge_core()
    try:
        # The importer renames the ModelProto it is given: hand it a copy.
        graph = onnx_import.convert_onnx_to_aidge(copy.deepcopy(exported.proto))
    except Exception as exc:
        raise aidge_error_from(exc, "import") from exc
    generic = generic_nodes(graph)
    if generic:
        # in the ONNX graph's order (get_nodes() is a set: its order changed from run to run, and with
        # it the node the error names first, which decides the ledger's defect)

        order = aidge_node_indices(exported.proto)
        generic.sort(key=lambda n: (order.get(n.name(), len(order)), n.name()))
        first = generic[0]
        raise UnsupportedOperatorError(
            "import",
            generic_nodes_message([(n.name(), n.type()) for n in generic]),
            operator=first.type(),
            node=first.name(),
        )
    core.remove_flatten(graph)
    return graph


def generic_nodes(graph) -> list:
    """Nodes that aidge_onnx imported as GenericOperator (no native Aidge operator)."""
    return [n for n in graph.get_nodes() if type(n.get_operator()).__name__ == _GENERIC_OPERATOR]


@crash_phase("compile")
def _compile(graph, backend: str, dims: list[list[int]], dtypes) -> None:
    """Compile ``graph`` for ``backend`` at input ``dims`` with the graph's own dtypes: the
    backend set, the input ``dtypes`` (torch dtypes) propagated by ``GraphView.forward_dtype``
    and the dims forwarded. Every tensor keeps the dtype the ONNX graph gives it.

    Never ``GraphView.compile(backend, float32)`` (measured on 0.10.1, docs/aidge-notes.md,
    "The graph's own dtypes"): it makes every operator's output float32, so integer data fed
    to it asks for kernels no graph has (Neg, Equal on int64: "missing or invalid registrar
    key: [int64 ...], [float32 ...]") and Reshape, Flatten and Unsqueeze copy int64 bytes
    into a float32 output silently; a float64 input would be computed in float32. Those were
    the suite's own false defects, not Aidge's.

    One exception, where it changes nothing: when ``forward_dtype`` cannot propagate and every
    input is float32, the graph is compiled ``GraphView.compile(backend, float32)`` as before
    2026-12-06 (measured: Aidge 0.10.1's Trilu has no dtype rule, so ``torch.tril`` of a float32
    tensor, right under the float32 compile, would be refused; with only float32 data fed, the
    float32 compile reinterprets no integer bytes). With an integer or other float input it stays
    a compile error naming the dtypes."""
    try:
        from .tensors import aidge_dtype

        compile_with_own_dtypes(graph, backend, dims, [aidge_dtype(d) for d in dtypes],
                                [str(d).replace("torch.", "") for d in dtypes])
    except Exception as exc:
        raise aidge_error_from(exc, "compile") from exc
    mark_dynamic_dims(graph)
    check_dims_forwarded(graph)


def compile_with_own_dtypes(graph, backend: str, dims: list[list[int]], aidge_dtypes: list, names: list[str]) -> None:
    """The compile itself, shared by :func:`_compile` and the reproducers' ``load_in_aidge``:
    ``aidge_dtypes`` propagated from the inputs (``names``: their dtype names, ``"float32"``...),
    ``GraphView.compile(backend, float32)`` only where that fails and every input is float32
    (see :func:`_compile`). Raises Aidge's own error, or a RuntimeError naming the dtypes."""
    graph.set_backend(backend)
    if graph.forward_dtype(aidge_dtypes):
        graph.forward_dims(dims)
    elif all(n == "float32" for n in names):
        graph.compile(backend, rt.aidge_core().dtype.float32, dims=dims)
    else:
        raise RuntimeError(f"GraphView.forward_dtype could not propagate the input dtypes {names} through the graph")


def mark_dynamic_dims(graph) -> None:
    """Make every node whose output dims compile could not forward (a node whose dims depend
    on values, such as a Resize with computed scales, and everything after it) forward its
    dims again at every run (``OperatorTensor.force_dynamic_dims``).

    Why (measured on 0.10.1, docs/aidge-notes.md, "Dims kept across calls"): at run time an
    operator forwards its own dims only when ``dims_forwarded()`` is false, and that checks
    that its tensors are defined, not that they still fit. After a first call, the nodes after
    a data-dependent Resize hold the first call's dims; ``GraphView.forward_dims`` at a new
    batch size cannot forward the Resize (its scales are computed) but forwards its children
    from the Resize's stale output dims, and they then run at the old sizes: a Conv after
    ``Upsample`` returned a batch-1 output for a batch-2 input, writing past its buffer
    (``corrupted double-linked list``)."""
    for node in graph.get_nodes():
        op = node.get_operator()
        if node.type() == "Producer" or not hasattr(op, "dims_forwarded") or not hasattr(op, "force_dynamic_dims"):
            continue
        if not op.dims_forwarded():
            op.force_dynamic_dims = True


#: node types whose output dims depend on the *values* of their first input
_DIMS_FROM_INPUT_0_VALUES = frozenset({"ConstantOfShape", "NonZero", "Range", "Shape"})


def check_dims_forwarded(graph, node_types: set[str] | None = None) -> None:
    """Raise :class:`AidgeError` (phase ``compile``) for a node whose output dims Aidge cannot
    compute although all its inputs are known.

    ``GraphView.compile`` may fail to compute a node's output dims and only *log* it (seen:
    ConvDepthWise2D with a channel multiplier, "Wrong input size ... Expected dims are
    [x, 6, x, x]"); the output then stays undefined and running the graph writes outside
    its buffers: a SIGSEGV, a SIGABRT in ``free()`` or a garbage output depending on the
    heap. A node whose dims were not forwarded (normal when they depend on data, e.g.
    ReduceMean's axes input) is asked again with data dependency allowed when all its
    inputs are defined and come from graph inputs or Producers; a plain ``False`` is the defect, reported the same way on every run
    (an exception there is inconclusive: e.g. a Resize whose scales come from nodes that
    have not run). ``node_types`` restricts the check to those node types.
    """
    for node in graph.get_nodes():
        op = node.get_operator()
        if node_types is not None and node.type() not in node_types:
            continue
        if not hasattr(op, "dims_forwarded") or op.dims_forwarded():
            continue
        inputs = [op.get_input(i) for i in range(node.get_nb_inputs())]
        if any(t is not None and t.undefined() for t in inputs):
            continue  # fed by nodes that have not run yet: dims come at forward time
        parents = [node.get_parent(i) for i in range(node.get_nb_inputs())]
        computed = [i for i, p in enumerate(parents) if p is not None and p.type() != "Producer"]
        if any(i > 0 for i in computed) or (computed and node.type() in _DIMS_FROM_INPUT_0_VALUES):
            # an input computed by a node that has not run holds no real values yet: asking
            # with data dependency would read them and leave wrong dims behind (seen: the
            # Reshape of an attention block, whose shape input is computed, then failed at
            # forward time). Input 0 computed by a node is fine for every other type: its
            # dims are known and only those are read (the channel-multiplier depthwise
            # convolution behind a ReLU or a 1x1 convolution: caught here, where it used to
            # crash the process or return an empty tensor).
            continue
        try:
            computed = op.forward_dims(True)
        except Exception:
            continue
        if not computed:
            dims = [list(t.dims) if t is not None else None for t in inputs]
            raise AidgeError("compile", f"Aidge cannot compute the output dims of node {node.name()!r} "
                             f"(type {node.type()}) from its input dims {dims}; GraphView.compile only logged "
                             "it, so running the graph would write outside the undefined output",
                             operator=node.type(), node=node.name())
