"""``wrap()``: a torch.nn.Module that computes through Aidge, forward and backward.

How it works
------------
1. The torch model is exported to ONNX in memory (:mod:`interop.bridge.onnx_export`), its state
   and mode restored afterwards.
2. aidge_onnx imports the ONNX model; any node imported as a GenericOperator (no native
   Aidge operator) is an error at wrap time.
3. The graph is compiled for the backend; a :class:`aidge_core.SequentialScheduler` runs it.
4. Every torch parameter and buffer that became an Aidge Producer is mirrored in the
   :class:`AidgeModule` under its torch name, **sharing the Producer's memory**: what the
   Aidge optimiser writes is what ``named_parameters()`` shows, and what torch code writes
   into a mirrored parameter is what Aidge computes with.
5. ``forward`` goes through a :class:`torch.autograd.Function` whose backward sets the output
   gradients in Aidge, runs ``scheduler.backward()`` and hands the input and parameter
   gradients back to torch (so ``.grad`` accumulates as usual).
6. The optimiser step is separate: :meth:`AidgeModule.attach_optimizer` gives an Aidge SGD
   that updates the Producers (and therefore the mirrored parameters) when asked.
"""
from __future__ import annotations

import copy
import dataclasses
from time import perf_counter
from typing import Any, Sequence

import numpy as np
import torch
from torch.utils import _pytree as pytree

from . import runtime as rt
from ..errors import AidgeError, ExportError, ShapeSpecializedError, UnsupportedOperatorError, aidge_error_from
from .onnx_export import (ExportedModel, check_value_dependence, export_to_onnx, graph_differences,
                          preserved_state)

__all__ = ["wrap", "AidgeModule", "AidgeSGD", "normalize_input_sizes"]

_GENERIC_OPERATOR = "GenericOperatorOp"
#: from this many elements on, a contiguous float32 CPU input is shared with Aidge instead of
#: copied into the bridge's buffer (benchmarks/speed_bridge.py: at 2 MB the copy cost ~70 us,
#: sharing ~15 us; below 256 KB the copy is the cheaper one)
SHARE_INPUT_ELEMENTS = 65536


def normalize_input_sizes(input_sizes: Any) -> list[tuple[int, ...]]:
    """``(1, 16)`` -> ``[(1, 16)]``; ``[(1, 16), (1, 16)]`` stays a list of tuples."""
    if isinstance(input_sizes, torch.Size) or (
        isinstance(input_sizes, (tuple, list)) and all(isinstance(d, int) for d in input_sizes)
    ):
        return [tuple(int(d) for d in input_sizes)]
    if isinstance(input_sizes, (tuple, list)) and all(isinstance(s, (tuple, list, torch.Size)) for s in input_sizes):
        return [tuple(int(d) for d in s) for s in input_sizes]
    raise TypeError(f"input_sizes must be a shape like (1, 16) or a list of shapes, got {input_sizes!r}")


def wrap(
    torch_model: torch.nn.Module,
    input_sizes: Any = None,
    *,
    backend: str = "cpu",
    example_inputs: Sequence[torch.Tensor] | None = None,
    training: bool | None = None,
    verbose: bool = False,
    on_trace_warning: str = "error",
) -> "AidgeModule":
    """Export ``torch_model`` to ONNX (in memory), import it into Aidge and return an
    :class:`AidgeModule` on the same weights.

    ``input_sizes``: one shape ``(1, 16)`` or several ``[(1, 16), (1, 16)]``. Other shapes
    (another batch size) are accepted at call time when the model's graph does not depend on
    them: the first call with new shapes exports the model again at those shapes (once per
    shape set, cached) and compares the two graphs; a model that bakes a shape into its
    graph (``x.view(x.size(0), -1)``) raises :class:`~interop.errors.ShapeSpecializedError`
    instead of running Aidge on a wrong graph, and shapes torch itself rejects raise torch's
    own error. ``example_inputs`` replaces random float inputs (needed for integer inputs
    such as token ids). ``training=None`` exports in the model's current mode.
    ``verbose=True`` lets Aidge log to the console. ``on_trace_warning``: when torch's tracer
    warns in the model's own code and an export on other values of the same shapes gives
    another graph (``if x.sum() > 0``), the trace depends on the data:
    :class:`~interop.errors.TracingError` naming the model's lines (``"error"``, default), a
    ``TracingWarning`` (``"warn"``) or nothing (``"ignore"``).
    Outputs keep the torch model's structure (tensor, tuple, list, dict, nested).

    Side effects: none. The caller's model keeps its mode, weights and buffers (BatchNorm
    running statistics included), nothing is written to disk or printed, and global
    warning filters and RNG state are left untouched.
    """
    if example_inputs is None:
        if input_sizes is None:
            raise TypeError("wrap() needs input_sizes or example_inputs")
        gen = torch.Generator().manual_seed(0)  # never touches the global RNG
        example_inputs = [torch.randn(s, generator=gen) for s in normalize_input_sizes(input_sizes)]
    example_inputs = [torch.as_tensor(x).detach().cpu() for x in example_inputs]
    rt.load_backend(backend)
    exported = export_to_onnx(torch_model, example_inputs, training=training)
    check_value_dependence(torch_model, example_inputs, exported, on_trace_warning)
    out_spec = _output_structure(torch_model, example_inputs, exported)
    with rt.quiet_aidge(verbose):
        graph = _import_graph(exported)
        _compile(graph, backend, [list(x.shape) for x in example_inputs])
    return AidgeModule(torch_model, exported, graph, backend=backend, verbose=verbose,
                       example_inputs=example_inputs, out_spec=out_spec,
                       reexport=lambda inputs: export_to_onnx(torch_model, inputs, training=exported.training))


def _output_structure(model: torch.nn.Module, example_inputs, exported: ExportedModel):
    """The pytree spec of the torch model's output (one forward on the example inputs, state
    and RNG restored); checked against the export's flat outputs."""
    with preserved_state(model), torch.random.fork_rng(devices=[]), torch.no_grad():
        out = model(*example_inputs)
    leaves, spec = pytree.tree_flatten(out)
    bad = [type(leaf).__name__ for leaf in leaves if not isinstance(leaf, torch.Tensor)]
    if bad:
        raise ExportError(f"{type(model).__name__} returns non-tensor leaves ({', '.join(bad)}): an ONNX graph "
                          "has tensor outputs only")
    if len(leaves) != len(exported.output_names):
        raise ExportError(f"{type(model).__name__} returns {len(leaves)} tensor(s) but its ONNX export has "
                          f"{len(exported.output_names)} output(s)")
    return spec


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
        details = ", ".join(f"{n.name()!r} (ONNX op {n.type()})" for n in generic)
        first = generic[0]
        raise UnsupportedOperatorError(
            "import",
            f"Aidge has no native operator for {len(generic)} node(s): {details}; "
            "they were imported as GenericOperator and cannot run",
            operator=first.type(),
            node=first.name(),
        )
    core.remove_flatten(graph)
    return graph


def generic_nodes(graph) -> list:
    """Nodes that aidge_onnx imported as GenericOperator (no native Aidge operator)."""
    return [n for n in graph.get_nodes() if type(n.get_operator()).__name__ == _GENERIC_OPERATOR]


def _compile(graph, backend: str, dims: list[list[int]]) -> None:
    core = rt.aidge_core()
    try:
        graph.compile(backend, core.dtype.float32, dims=dims)
    except Exception as exc:
        raise aidge_error_from(exc, "compile") from exc
    check_dims_forwarded(graph)


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


@dataclasses.dataclass
class _Port:
    node: Any
    index: int

    def input_tensor(self):
        return self.node.get_operator().get_input(self.index)

    def output_tensor(self):
        return self.node.get_operator().get_output(self.index)


def _data_ports(graph, n_inputs: int) -> list[_Port]:
    """The graph's data inputs: unconnected inputs of category Data; when those are fewer
    than the model's inputs, unconnected optional data and optional-attribute inputs too
    (aidge_onnx imports Gather's indices, an Embedding's token ids, as an OptionalAttr
    input)."""
    core = rt.aidge_core()
    free = [(n, i) for n, i in graph.get_ordered_inputs() if n.get_parent(i) is None]
    ports = [_Port(n, i) for n, i in free if n.input_category(i) == core.InputCategory.Data]
    if len(ports) < n_inputs:
        extra = {core.InputCategory.Data, core.InputCategory.OptionalData, core.InputCategory.OptionalAttr}
        wider = [_Port(n, i) for n, i in free if n.input_category(i) in extra]
        if len(wider) == n_inputs:
            return wider
    return ports


class _GraphRunner:
    """Runs an Aidge graph: forward, backward, gradient reads. Not a torch object.

    CPU fast path (measured in ``benchmarks/speed_bridge.py``): the graph inputs are Aidge
    tensors allocated once per input signature (shapes and dtypes) and owned by Aidge; a
    torch view of each (``torch.from_numpy`` over the buffer) receives the caller's input
    with one ``copy_`` per call (which also converts float64 to float32 and gathers a
    non-contiguous input); a large contiguous float32 input of a call that no backward
    follows is shared instead (``SHARE_INPUT_ELEMENTS``). The scheduler then runs
    ``forward(False, inputs)``; dims are forwarded again only when the signature changes (or
    after :meth:`invalidate`). Outputs are copied out (the next forward reuses Aidge's
    buffers). ``last_forward_s`` / ``last_backward_s`` hold the time
    of the scheduler call alone: Aidge's own share of a call.
    """

    def __init__(self, graph, backend: str, n_inputs: int, verbose: bool):
        core = rt.aidge_core()
        self.graph = graph
        self.backend = backend
        self.device = torch.device("cuda" if backend == "cuda" else "cpu")
        self._cpu = self.device.type == "cpu"
        self.verbose = verbose
        self._quiet = rt.quiet_aidge(verbose)  # entered around every scheduler call
        ports = _data_ports(graph, n_inputs)
        if len(ports) != n_inputs:
            names = [f"{p.node.name()}#{p.index}" for p in ports]
            raise AidgeError("import", f"the Aidge graph has {len(ports)} data inputs {names}, "
                                       f"the torch model {n_inputs}")
        self.inputs = ports
        self.outputs = [_Port(n, i) for n, i in graph.get_ordered_outputs()]
        # Output tensors are created with their operator and resized in place, never replaced:
        # cache them (Operator.get_output costs ~45 us per call in the 0.10.1 bindings).
        self.output_tensors = [p.output_tensor() for p in self.outputs]
        self.scheduler = core.SequentialScheduler(graph)
        self.producers = {p.name(): p for p in core.producers(graph)}
        # Producer output tensors are stable after compile (updates happen in place): cache
        # them, the binding's get_operator()/get_output() round trip costs ~50 us each.
        self.producer_tensors = {name: p.get_operator().get_output(0) for name, p in self.producers.items()}
        self.forward_count = 0
        self.last_forward_s = 0.0
        self.last_backward_s = 0.0
        self.aidge_seconds = 0.0  # every scheduler call of this runner, summed
        self.backward_ran = False  # a backward ran since the latest forward
        self._signature: list[tuple[torch.Size, torch.dtype]] | None = None
        self._dims_stale = True  # forward dims on the next call
        self._graph_inputs: list[Any] | None = None
        self._in_tensors: list[Any] = []  # CPU: Aidge-owned graph inputs; CUDA: this call's inputs
        self._in_views: list[torch.Tensor] = []  # CPU: torch views of their memory
        #: called with the inputs before a new signature runs (AidgeModule's shape/dtype check)
        self.check_signature = None
        self._shared: list[Any] = []  # this call's Aidge inputs, shared ones included

    # -- inputs ----------------------------------------------------------------
    def _new_signature(self, inputs: Sequence[torch.Tensor], signature) -> None:
        """Check a new input signature and (CPU) allocate the Aidge inputs for it."""
        if self.check_signature is not None:
            self.check_signature(inputs)
        for i, x in enumerate(inputs):
            if 0 in x.shape:
                # Measured on 0.10.1: the scheduler runs without error and leaves the previous
                # call's outputs in place, so a silently stale result would come back.
                raise AidgeError("forward", f"input {i} has shape {tuple(x.shape)}: Aidge does not "
                                            "compute on empty tensors (it returns the previous outputs unchanged)")
        self.invalidate()
        if not self._cpu:
            return
        core = rt.aidge_core()
        tensors, views = [], []
        for x in inputs:
            dtype = torch.float32 if x.is_floating_point() else x.dtype
            t = core.Tensor(np.zeros(tuple(x.shape), dtype=torch.empty((), dtype=dtype).numpy().dtype))
            view = torch.from_numpy(np.asarray(t))
            if view.data_ptr() != np.asarray(t).ctypes.data or tuple(view.shape) != tuple(x.shape):
                raise AidgeError("forward", f"cannot view the Aidge input buffer of input {len(tensors)} "
                                            f"({tuple(x.shape)}, {dtype}) from torch")
            tensors.append(t)
            views.append(view)
        self._in_tensors, self._in_views = tensors, views
        self._signature = signature

    def invalidate(self) -> None:
        """Forward dims again on the next call (after a new signature, a failure, or when
        someone else may have run the graph with other shapes)."""
        self._signature = None
        self._dims_stale = True
        self._graph_inputs = None

    def load_inputs(self, inputs: Sequence[torch.Tensor], share: bool = False) -> list[Any]:
        """Put ``inputs`` where the next scheduler call reads them (CPU: one ``copy_`` each into
        the Aidge-owned buffers; with ``share``, a large contiguous float32 input is shared
        instead); returns the Aidge tensors to hand the scheduler. Only a call that no
        backward will follow may share: Aidge's backward reads the forward's inputs, and the
        caller may modify theirs in between."""
        signature = [(x.shape, x.dtype) for x in inputs]
        if signature != self._signature:
            self._new_signature(inputs, signature)
        if self._cpu:
            tensors = self._in_tensors
            for i, (view, x) in enumerate(zip(self._in_views, inputs)):
                if share and x.numel() >= SHARE_INPUT_ELEMENTS and x.dtype is torch.float32 and x.is_contiguous() \
                        and x.device.type == "cpu" and not x.is_neg():
                    # large input: point Aidge at the caller's memory (one from_data_ptr, ~15 us)
                    # rather than copying it (~35 us per MB); kept alive until the next call
                    from .tensors import torch_tensor_to_aidge

                    if tensors is self._in_tensors:
                        tensors = list(tensors)
                    tensors[i] = torch_tensor_to_aidge(x.detach())
                else:
                    view.copy_(x.detach())
            self._shared = tensors  # the graph reads shared inputs until the next call
            return tensors
        from .tensors import torch_tensor_to_aidge

        self._in_tensors = [torch_tensor_to_aidge(_as_graph_input(x, self.device)) for x in inputs]
        self._signature = signature
        return self._in_tensors

    def run_forward(self, tensors: list[Any]) -> None:
        """The scheduler's forward on loaded inputs: ``forward(False, tensors)``, the call the
        benchmarks time as Aidge's; dims are forwarded only after :meth:`invalidate`.
        (Connecting the inputs costs nothing measurable: Aidge points its own graph-input
        tensors at their memory, no copy.)"""
        self.scheduler.forward(self._dims_stale, tensors)
        self._dims_stale = False

    def graph_inputs(self) -> list[Any]:
        """The graph's own input tensors (their ``.grad`` is the input gradient). The scheduler
        keeps these objects and repoints them at each call's data, so they are cached:
        ``Operator.get_input`` costs ~160 us in the 0.10.1 bindings."""
        if self._graph_inputs is None:
            self._graph_inputs = [p.input_tensor() for p in self.inputs]
        return self._graph_inputs

    # -- forward -------------------------------------------------------------
    def forward(self, inputs: Sequence[torch.Tensor], share: bool = False) -> list[torch.Tensor]:
        tensors = self.load_inputs(inputs, share)
        with self._quiet:
            start = perf_counter()
            try:
                self.run_forward(tensors)
            except Exception as exc:
                self.invalidate()
                raise self._error(exc, "forward") from exc
            self.last_forward_s = perf_counter() - start
        self.aidge_seconds += self.last_forward_s
        self.forward_count += 1
        self.backward_ran = False
        # Output buffers are reused by the next forward: copy them out.
        return [read_tensor(t) for t in self.output_tensors]

    def _error(self, exc: Exception, phase: str) -> AidgeError:
        """The AidgeError of a failed scheduler call, naming the node that failed."""
        node = self.failing_node(phase)
        if node is None:
            return aidge_error_from(exc, phase)
        return aidge_error_from(exc, phase, node=node.name(), operator=node.type())

    def failing_node(self, phase: str):
        """The node the scheduler was running when it raised: the first node of the static
        schedule (reversed for backward; Producers skipped) that its record of the run does
        not hold (the scheduler records a node once it has run). None when unknown."""
        try:
            order = list(self.scheduler.get_sequential_static_scheduling())
            done = (self.scheduler.get_forward_scheduling() if phase == "forward"
                    else self.scheduler.get_backward_scheduling())
            finished = {e.node.name() for e in done}
        except Exception:  # noqa: BLE001  (no scheduling recorded: unknown)
            return None
        for node in (order if phase == "forward" else reversed(order)):
            if node.type() != "Producer" and node.name() not in finished:
                return node
        return None

    def set_output_grads(self, grad_outputs: Sequence[torch.Tensor | None]) -> None:
        """Write the output gradients into Aidge (None: zeros), resizing them if needed."""
        for out, grad in zip(self.output_tensors, grad_outputs):
            g = out.grad
            if list(g.dims) != list(out.dims):
                g.resize(list(out.dims))
            write_tensor(g, grad)

    # -- backward ------------------------------------------------------------
    def backward(self, grad_outputs: Sequence[torch.Tensor | None], param_names: Sequence[str]):
        with self._quiet:
            self.set_output_grads(grad_outputs)
            # Aidge accumulates into every gradient it computes: start from zero.
            for name in param_names:
                write_tensor(self.producer_tensors[name].grad, None)
            input_tensors = self.graph_inputs()
            for t in input_tensors:
                if t is not None and t.has_grad():
                    write_tensor(t.grad, None)
            start = perf_counter()
            try:
                self.scheduler.backward()
            except Exception as exc:
                raise self._error(exc, "backward") from exc
            self.last_backward_s = perf_counter() - start
            self.aidge_seconds += self.last_backward_s
            self.backward_ran = True
            input_grads = [read_tensor(t.grad) for t in input_tensors]
            param_grads = [read_tensor(self.producer_tensors[n].grad) for n in param_names]
        return input_grads, param_grads


def _as_graph_input(x: torch.Tensor, device: torch.device) -> torch.Tensor:
    x = x.detach()
    if x.device.type != device.type:
        x = x.to(device)
    if x.is_floating_point() and x.dtype != torch.float32:
        x = x.float()
    return x.contiguous()


def read_tensor(t) -> torch.Tensor:
    """A torch copy of an Aidge tensor (outputs and gradients are overwritten by the next
    call). CPU: one memcpy; CUDA: through :func:`aidge_tensor_to_torch`."""
    if t.backend == "cpu":
        return torch.from_numpy(np.array(t, copy=True))
    from .tensors import aidge_tensor_to_torch

    return aidge_tensor_to_torch(t, copy=True)


def write_tensor(t, value: torch.Tensor | None) -> None:
    """Write ``value`` (None: zeros) into the existing Aidge tensor ``t``, in place."""
    if t.backend == "cpu":
        view = np.asarray(t)
        if value is None:
            view.fill(0)
            return
        value = value.detach()
        if value.dtype is not torch.float32 or value.device.type != "cpu":
            value = value.to("cpu", torch.float32)
        view[...] = value.numpy()
        return
    from .tensors import torch_tensor_to_aidge

    dims = [int(d) for d in t.dims]
    source = torch.zeros(dims, device="cuda") if value is None else value.detach().float().contiguous()
    t.copy_from(torch_tensor_to_aidge(source.to("cuda")))


class _SchedulerHandle:
    """The runner's scheduler, each method call preceded by ``runner.invalidate()``."""

    __slots__ = ("_runner",)

    def __init__(self, runner: _GraphRunner):
        self._runner = runner

    def __getattr__(self, name: str):
        attr = getattr(self._runner.scheduler, name)
        if not callable(attr):
            return attr
        runner = self._runner

        def call(*args, **kwargs):
            runner.invalidate()
            return attr(*args, **kwargs)

        call.__name__ = name
        call.__doc__ = attr.__doc__
        return call

    def __repr__(self) -> str:
        return f"<scheduler handle of {self._runner.scheduler!r}>"


class _AidgeFunction(torch.autograd.Function):
    """Autograd node: forward and backward both computed by Aidge."""

    @staticmethod
    def forward(ctx, module: "AidgeModule", n_inputs: int, *args):
        inputs = args[:n_inputs]
        outputs = module._runner.forward(inputs)
        ctx.module = module
        ctx.n_inputs = n_inputs
        ctx.forward_id = module._runner.forward_count
        ctx.inputs = [x.detach() for x in inputs]
        ctx.input_dtypes = [x.dtype for x in inputs]
        ctx.mark_non_differentiable(*[o for o in outputs if not o.is_floating_point()])
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        module: AidgeModule = ctx.module
        runner = module._runner
        if runner.forward_count != ctx.forward_id or runner.backward_ran:
            # Aidge only keeps the activations of its latest forward: recompute this one. And
            # its backward accumulates into every intermediate gradient, which only a forward
            # resets: a second backward through the same forward (retain_graph=True) would
            # return accumulated, wrong gradients (measured on 0.10.1) without this forward.
            runner.forward(ctx.inputs)
            ctx.forward_id = runner.forward_count
        input_grads, param_grads = runner.backward(grad_outputs, module._trainable_producers)
        in_grads = [
            (g if g.dtype == dtype else g.to(dtype)) if ctx.needs_input_grad[2 + i] and dtype.is_floating_point
            else None
            for i, (g, dtype) in enumerate(zip(input_grads, ctx.input_dtypes))
        ]
        p_grads = [g if ctx.needs_input_grad[2 + ctx.n_inputs + i] else None for i, g in enumerate(param_grads)]
        return (None, None, *in_grads, *p_grads)


class AidgeModule(torch.nn.Module):
    """A torch.nn.Module whose forward and backward run in Aidge.

    ``named_parameters()`` and ``named_buffers()`` mirror the wrapped torch model's names
    and shapes; mirrored tensors share memory with the Aidge Producers. State that has no
    Producer (a parameter the graph does not use, ``num_batches_tracked``) is a detached
    copy and is listed in :attr:`unmapped_state`.
    """

    def __init__(self, torch_model: torch.nn.Module, exported: ExportedModel, graph, *,
                 backend: str, verbose: bool, example_inputs: Sequence[torch.Tensor], out_spec=None,
                 reexport=None):
        super().__init__()
        self._exported = exported
        self._graph = graph
        self._backend = backend
        self._n_inputs = len(example_inputs)
        self._input_sizes = [tuple(x.shape) for x in example_inputs]
        self._input_dtypes = [x.dtype for x in example_inputs]
        self._out_spec = out_spec  # the torch output's pytree structure (None: flat tuple)
        self._reexport = reexport  # inputs -> ExportedModel of the torch model at their shapes
        self._shapes_checked: dict[tuple, str | None] = {tuple(self._input_sizes): None}
        self._runner = _GraphRunner(graph, backend, self._n_inputs, verbose)
        self._runner.check_signature = self._check_signature
        self._optimizer: AidgeSGD | None = None
        state_to_producer = {state: prod for prod, state in exported.initializer_to_state.items()
                             if prod in self._runner.producers}
        self.unmapped_state: list[str] = []
        self._copied_state: dict[str, Any] = {}  # CUDA: producer -> version of its mirror
        self._param_producer: dict[str, str] = {}
        for name, param in torch_model.named_parameters():
            tensor = self._mirror(state_to_producer.get(name), param)
            if tensor is None:
                self.unmapped_state.append(name)
                tensor = param.detach().clone()
            else:
                self._param_producer[name] = state_to_producer[name]
            _register(self, name, torch.nn.Parameter(tensor, requires_grad=param.requires_grad))
        for name, buf in torch_model.named_buffers():
            tensor = self._mirror(state_to_producer.get(name), buf)
            if tensor is None:
                self.unmapped_state.append(name)
                tensor = buf.detach().clone()
            _register(self, name, tensor, buffer=True)
        self.train(torch_model.training)  # after registration, so the containers follow too
        self._train_names = [n for n, p in self.named_parameters() if p.requires_grad and n in self._param_producer]
        self._trainable_producers = [self._param_producer[n] for n in self._train_names]
        self._train_params = [dict(self.named_parameters())[n] for n in self._train_names]
        state = dict(self.named_parameters())
        state.update(self.named_buffers())
        self._copied_tensors = {prod: state[name] for prod, name in exported.initializer_to_state.items()
                                if prod in self._copied_state}
        self._sync_from_aidge()

    def _check_signature(self, inputs: Sequence[torch.Tensor]) -> None:
        """Called by the runner before it runs new input shapes or dtypes: refuse what the
        compiled graph cannot take, before Aidge runs."""
        for i, (x, dtype) in enumerate(zip(inputs, self._input_dtypes)):
            if x.dtype != dtype and not (x.is_floating_point() and dtype.is_floating_point):
                raise TypeError(f"input {i} has dtype {x.dtype}, but this AidgeModule was wrapped with "
                                f"{dtype} for it (the Aidge graph is compiled for that type)")
        shapes = tuple(tuple(x.shape) for x in inputs)
        if shapes not in self._shapes_checked:
            self._shapes_checked[shapes] = self._shape_difference(inputs)
        why = self._shapes_checked[shapes]
        if why is not None:
            raise ShapeSpecializedError(
                f"this AidgeModule was wrapped at input shapes {self._input_sizes}; at {list(shapes)} the "
                f"model's ONNX graph is not the same ({why}): the model bakes an input shape into its graph "
                f"(e.g. x.view(x.size(0), -1)), so Aidge would compute with the wrapped shapes. Wrap the "
                f"model again at these shapes: wrap(model, {list(shapes)})")

    def _shape_difference(self, inputs: Sequence[torch.Tensor]) -> str | None:
        """Export the torch model at the new shapes (the call's own inputs) and compare with the
        wrapped graph: None when equal. torch's own error when torch rejects the shapes."""
        if self._reexport is None:
            return None
        try:
            other = self._reexport([x.detach().to("cpu") for x in inputs])
        except ExportError as exc:
            cause = exc.__cause__
            if isinstance(cause, Exception):
                # torch rejects these shapes: the error torch raises for them, not ours
                cause.add_note(f"(raised by the torch model while checking the new input shapes "
                               f"{[tuple(x.shape) for x in inputs]} of an AidgeModule)")
                raise cause from None
            raise
        return graph_differences(self._exported.proto, other.proto)

    def _sync_to_aidge(self) -> None:
        """CUDA only: push mirrored tensors that torch code changed into Aidge's Producers."""
        for prod, tensor in self._copied_tensors.items():
            if self._copied_state[prod] != tensor._version:
                write_tensor(self._runner.producer_tensors[prod], tensor)
                self._copied_state[prod] = tensor._version

    def _sync_from_aidge(self) -> None:
        """CUDA only: refresh mirrored tensors from Aidge's Producers (after an Aidge update)."""
        with torch.no_grad():
            for prod, tensor in self._copied_tensors.items():
                tensor.copy_(read_tensor(self._runner.producer_tensors[prod]))
                self._copied_state[prod] = tensor._version

    def _mirror(self, producer_name: str | None, source: torch.Tensor) -> torch.Tensor | None:
        if producer_name is None:
            return None
        aidge_tensor = self._runner.producer_tensors[producer_name]
        if tuple(int(d) for d in aidge_tensor.dims) != tuple(source.shape):
            return None
        if aidge_tensor.backend == "cpu":
            view = np.asarray(aidge_tensor)
            return torch.from_numpy(view) if view.dtype == np.float32 else None  # shares memory
        # CUDA: Aidge exposes no device pointer; a copy kept in sync by _sync_to_aidge /
        # _sync_from_aidge (see forward and AidgeSGD.step)
        self._copied_state[producer_name] = None
        return read_tensor(aidge_tensor)

    # -- the torch side --------------------------------------------------------
    def forward(self, *inputs: torch.Tensor):
        if len(inputs) != self._n_inputs:
            raise TypeError(f"AidgeModule expects {self._n_inputs} input(s), got {len(inputs)}")
        if self._copied_tensors:
            self._sync_to_aidge()
        needs_grad = torch.is_grad_enabled() and (
            any(p.requires_grad for p in self._train_params) or any(x.requires_grad for x in inputs))
        if needs_grad:
            outputs = _AidgeFunction.apply(self, self._n_inputs, *inputs, *self._train_params)
        else:
            outputs = tuple(self._runner.forward(inputs, share=True))
        if self._out_spec is None:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        return pytree.tree_unflatten(list(outputs), self._out_spec)

    # -- Aidge objects ------------------------------------------------------------
    @property
    def graph(self):
        """The compiled :class:`aidge_core.GraphView`."""
        return self._graph

    @property
    def scheduler(self):
        """The :class:`aidge_core.SequentialScheduler` that runs :attr:`graph`, behind a thin
        handle: every call through it (``forward(True, [tensor])`` with other shapes, ...)
        makes the module's next call forward its own dims again, which the bridge otherwise
        skips while its input shapes stay the same. Running :attr:`graph` by other means
        (your own scheduler): call :meth:`invalidate` before using the module again."""
        return _SchedulerHandle(self._runner)

    def invalidate(self) -> None:
        """Make the next call forward dims (see :attr:`scheduler`)."""
        self._runner.invalidate()

    @property
    def backend(self) -> str:
        return self._backend

    @property
    def aidge_time_s(self) -> float:
        """Seconds this module has spent inside Aidge's scheduler (every forward and backward,
        recomputed forwards included), summed since ``wrap``: the difference around a call is
        Aidge's own share of it, the rest of the call's wall time is the bridge's. CUDA: the
        scheduler call is not synchronised, so this is the launch time there."""
        return self._runner.aidge_seconds

    @property
    def onnx_model(self):
        """The exported ONNX ModelProto (initializers renamed ``param_<i>``)."""
        return self._exported.proto

    def aidge_producer(self, state_name: str):
        """The Aidge Producer node holding torch parameter/buffer ``state_name``."""
        for prod, state in self._exported.initializer_to_state.items():
            if state == state_name and prod in self._runner.producers:
                return self._runner.producers[prod]
        raise KeyError(f"{state_name!r} has no Aidge Producer (unmapped: {self.unmapped_state})")

    def aidge_gradients(self) -> dict[str, torch.Tensor]:
        """Gradients currently held by Aidge's Producers, by torch parameter name (copies)."""
        return {n: read_tensor(self._runner.producer_tensors[p].grad)
                for n, p in zip(self._train_names, self._trainable_producers)}

    # -- optimiser --------------------------------------------------------------
    def attach_optimizer(self, lr: float = 0.01, momentum: float = 0.0, dampening: float = 0.0,
                         weight_decay: float = 0.0) -> "AidgeSGD":
        """Attach an Aidge SGD optimiser over the trainable parameters; returns it."""
        self._optimizer = AidgeSGD(self, lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay)
        return self._optimizer

    @property
    def optimizer(self) -> "AidgeSGD | None":
        return self._optimizer

    def optimizer_step(self) -> None:
        """Run one step of the attached Aidge optimiser (uses each parameter's ``.grad``)."""
        if self._optimizer is None:
            raise RuntimeError("no optimiser attached: call attach_optimizer(lr=..., momentum=...) first")
        self._optimizer.step()

    def extra_repr(self) -> str:
        return f"backend={self._backend!r}, inputs={self._input_sizes}, nodes={len(self._graph.get_nodes())}"

    def __deepcopy__(self, memo):
        raise TypeError("an AidgeModule cannot be deep-copied (its tensors live in Aidge); wrap() the torch model again")


class AidgeSGD:
    """SGD computed by ``aidge_learning.SGD`` on the Producers of an :class:`AidgeModule`.

    ``step()`` hands each mirrored parameter's torch ``.grad`` to Aidge and runs Aidge's
    update; the new weights are visible through ``named_parameters()`` (shared memory).
    Semantics match ``torch.optim.SGD(lr, momentum, dampening, weight_decay)``.
    """

    def __init__(self, module: AidgeModule, *, lr: float, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0):
        learning = rt.aidge_learning()
        self.module = module
        self.lr = lr
        self.momentum = momentum
        self._opt = learning.SGD(momentum, dampening, weight_decay)
        self._nodes = [module._runner.producers[p] for p in module._trainable_producers]
        self._opt.set_parameters(self._nodes)
        self._opt.set_learning_rate_scheduler(learning.constant_lr(lr))

    def zero_grad(self) -> None:
        self.module.zero_grad(set_to_none=True)

    def step(self) -> None:
        if not self._nodes:
            # A model without trainable parameters (ReLU alone): nothing to update, as with
            # torch; Aidge's SGD::update() raises "no parameter to update!" instead.
            return
        with rt.quiet_aidge(self.module._runner.verbose):
            module = self.module
            module._sync_to_aidge()
            tensors = module._runner.producer_tensors
            for name, param in zip(module._trainable_producers, module._train_params):
                write_tensor(tensors[name].grad, param.grad)
            try:
                self._opt.update()
            except Exception as exc:
                raise aidge_error_from(exc, "step") from exc
            if module._copied_tensors:
                module._sync_from_aidge()


def _register(root: torch.nn.Module, dotted: str, tensor: torch.Tensor, buffer: bool = False) -> None:
    """Register ``tensor`` at ``dotted`` (``block.0.conv.weight``), creating containers."""
    *path, leaf = dotted.split(".")
    module = root
    for part in path:
        child = module._modules.get(part)
        if child is None:
            child = torch.nn.Module()
            module._modules[part] = child
        module = child
    if buffer:
        module.register_buffer(leaf, tensor)
    else:
        module.register_parameter(leaf, tensor)
