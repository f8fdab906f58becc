"""Running a compiled Aidge graph from torch: :class:`_GraphRunner` (inputs, forward,
backward, gradient reads), the graph's data ports, the copies between torch and Aidge
tensors (:func:`read_tensor`, :func:`write_tensor`) and :class:`_SchedulerHandle`, the
scheduler as ``AidgeModule.scheduler`` hands it out."""
from __future__ import annotations

import dataclasses
import threading
from time import perf_counter
from typing import Any, Sequence

import numpy as np
import torch

from ..errors import AidgeError, OutputShapeError, aidge_error_from
from ..threads_policy import aidge_dynamic_teams
from . import events
from .events import crash_phase
from . import runtime as rt

__all__ = ["SHARE_INPUT_ELEMENTS", "read_tensor", "write_tensor", "unfinished_node"]

#: from this many elements on, a contiguous float32 CPU input is shared with Aidge instead of
#: copied into the bridge's buffer (tools/speed_bridge.py: at 2 MB the copy cost ~70 us,
#: sharing ~15 us; below 256 KB the copy is the cheaper one)
SHARE_INPUT_ELEMENTS = 65536


@dataclasses.dataclass
class _Port:
    node: Any
    index: int

    def input_tensor(self):
        return self.node.get_operator().get_input(self.index)

    def output_tensor(self):
        return self.node.get_operator().get_output(self.index)


def _data_ports(graph, n_inputs: int, input_names: Sequence[str] | None = None,
                unused: frozenset[str] = frozenset()) -> list[_Port | None]:
    """The graph's inputs fed by the torch model's inputs, in the model's order (None for a
    model input that no node of the ONNX graph reads: ``torch.ones_like(x)`` only uses
    ``x``'s shape, which the export bakes in, and aidge_onnx drops such an input).

    aidge_onnx names each port that an ONNX graph input feeds after that input
    (``Node.input_name``) and orders the graph's inputs as the ONNX graph's: when every one
    of ``input_names`` (the export's graph inputs) that some node reads is found, in that
    order, at the head of the graph's unconnected inputs, those ports are the inputs,
    whatever their category: a weight passed as an argument (``F.conv2d(x, w)``) lands on a
    Param port. Otherwise (a port renamed by a graph rewrite): unconnected inputs of
    category Data; when those are fewer than the model's inputs, unconnected optional data
    and optional-attribute inputs too (aidge_onnx imports Gather's indices, an Embedding's
    token ids, as an OptionalAttr input). The scheduler pairs the tensors it is given with
    the graph's ordered inputs, so the ports must come in that order."""
    core = rt.aidge_core()
    free = [(n, i) for n, i in graph.get_ordered_inputs() if n.get_parent(i) is None]
    if input_names is not None and len(input_names) == n_inputs:
        try:
            names = [n.input_name(i) for n, i in free]
        except Exception:  # noqa: BLE001  (a binding without the getter: categories below)
            names = None
        used = [name for name in input_names if name not in unused]
        if names is not None and names[:len(used)] == used:
            by_name = {name: _Port(*free[k]) for k, name in enumerate(used)}
            return [by_name.get(name) for name in input_names]
    ports = [_Port(n, i) for n, i in free if n.input_category(i) == core.InputCategory.Data]
    if len(ports) < n_inputs:
        extra = {core.InputCategory.Data, core.InputCategory.OptionalData, core.InputCategory.OptionalAttr}
        wider = [_Port(n, i) for n, i in free if n.input_category(i) in extra]
        if len(wider) == n_inputs:
            return wider
    return ports


class _GraphRunner:
    """Runs an Aidge graph: forward, backward, gradient reads. Not a torch object.

    CPU fast path (measured in ``tools/speed_bridge.py``): the graph inputs are Aidge
    tensors allocated once per input signature (shapes and dtypes) and owned by Aidge; a
    torch view of each (``torch.from_numpy`` over the buffer) receives the caller's input
    with one ``copy_`` per call (which also converts a floating input to the graph's float dtype and gathers a
    non-contiguous input); a large contiguous float32 input of a call that no backward
    follows is shared instead (``SHARE_INPUT_ELEMENTS``). The scheduler then runs
    ``forward(False, inputs)``; dims are forwarded again only when the signature changes (or
    after :meth:`invalidate`). Outputs are copied out (the next forward reuses Aidge's
    buffers). ``last_forward_s`` / ``last_backward_s`` hold the time
    of the scheduler call alone: Aidge's own share of a call.
    """

    def __init__(self, graph, backend: str, n_inputs: int, verbose: bool,
                 input_names: Sequence[str] | None = None, unused_inputs: frozenset[str] = frozenset(),
                 float_dtype: torch.dtype = torch.float32):
        core = rt.aidge_core()
        self.graph = graph
        self.backend = backend
        self.device = torch.device("cuda" if backend == "cuda" else "cpu")
        #: the dtype floating-point inputs are handed to Aidge in (the graph's compile dtype)
        self.float_dtype = float_dtype
        self._cpu = self.device.type == "cpu"
        self.verbose = verbose
        self._quiet = rt.quiet_aidge(verbose)  # entered around every scheduler call
        ports = _data_ports(graph, n_inputs, input_names, unused_inputs)
        if len(ports) != n_inputs:
            names = [f"{p.node.name()}#{p.index}" for p in ports]
            raise AidgeError("import", f"the Aidge graph has {len(ports)} data inputs {names}, "
                                       f"the torch model {n_inputs}")
        #: the model inputs the graph reads (indices into the model's inputs), their ports
        self.used = [k for k, p in enumerate(ports) if p is not None]
        self.inputs = [p for p in ports if p is not None]
        self._all_used = len(self.used) == n_inputs
        self.outputs = [_Port(n, i) for n, i in graph.get_ordered_outputs()]
        # Output tensors are created with their operator and resized in place, never replaced:
        # cache them (Operator.get_output costs ~45 us per call in the 0.10.1 bindings).
        self.output_tensors = [p.output_tensor() for p in self.outputs]
        try:
            with self._quiet:
                # a MetaOperator without a kernel for the graph's dtype fails here, not at compile
                self.scheduler = core.SequentialScheduler(graph)
        except Exception as exc:
            raise aidge_error_from(exc, "compile") from exc
        self.producers = {p.name(): p for p in core.producers(graph)}
        # Producer output tensors are stable after compile (updates happen in place): cache
        # them, the binding's get_operator()/get_output() round trip costs ~50 us each.
        self.producer_tensors = {name: p.get_operator().get_output(0) for name, p in self.producers.items()}
        #: one call at a time: the inputs, the outputs and the activations a backward reads are
        #: the graph's own buffers (two threads calling one AidgeModule got each other's outputs)
        self.lock = threading.RLock()
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
        #: called with the inputs before a new signature runs (AidgeModule's shape/dtype check);
        #: returns the output shapes torch gives at that signature (None: unknown)
        self.check_signature = None
        #: the output shapes torch gives at the current signature: an Aidge output of another
        #: shape is an OutputShapeError, never returned (None: not checked)
        self.expected_shapes: list[tuple[int, ...]] | None = None
        self._shared: list[Any] = []  # this call's Aidge inputs, shared ones included

    # -- inputs ----------------------------------------------------------------
    def _new_signature(self, inputs: Sequence[torch.Tensor], signature) -> None:
        """Check a new input signature and (CPU) allocate the Aidge inputs for it."""
        self.expected_shapes = None
        if self.check_signature is not None:
            self.expected_shapes = self.check_signature(inputs)
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
        for x in (inputs[k] for k in self.used):
            dtype = self.float_dtype if x.is_floating_point() else x.dtype
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
        if not self._all_used:
            inputs = [inputs[k] for k in self.used]
        if self._cpu:
            tensors = self._in_tensors
            for i, (view, x) in enumerate(zip(self._in_views, inputs)):
                if share and x.numel() >= SHARE_INPUT_ELEMENTS and x.dtype is self.float_dtype and x.is_contiguous() \
                        and x.device.type == "cpu" and not x.is_neg():
                    # large input: point Aidge at the caller's memory (one from_data_ptr, ~15 us)
                    # rather than copying it (~35 us per MB); kept alive until the next call
                    from .tensors import torch_tensor_to_aidge

                    if tensors is self._in_tensors:
                        tensors = list(tensors)
                    tensors[i] = torch_tensor_to_aidge(x.detach())
                else:
                    view.copy_(x.detach() if x.requires_grad else x)
            self._shared = tensors  # the graph reads shared inputs until the next call
            return tensors
        from .tensors import torch_tensor_to_aidge

        self._in_tensors = [torch_tensor_to_aidge(_as_graph_input(x, self.device, self.float_dtype)) for x in inputs]
        self._signature = signature
        return self._in_tensors

    @crash_phase("forward")  # the innermost frame of a crash in a kernel: a dump cut short still names it
    def run_forward(self, tensors: list[Any]) -> None:
        """The scheduler's forward on loaded inputs: ``forward(False, tensors)``, the call the
        benchmarks time as Aidge's; dims are forwarded only after :meth:`invalidate`.
        (Connecting the inputs costs nothing measurable: Aidge points its own graph-input
        tensors at their memory, no copy.)"""
        with aidge_dynamic_teams():  # the library's OpenMP default, for Aidge's kernels only
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
    @crash_phase("forward")  # the scheduler calls
    def forward(self, inputs: Sequence[torch.Tensor], share: bool = False) -> list[torch.Tensor]:
        with self.lock:
            return self._forward(inputs, share)

    @crash_phase("forward")
    def _forward(self, inputs: Sequence[torch.Tensor], share: bool) -> list[torch.Tensor]:
        if events.listening:
            events.emit(events.CallMade(self, "forward", inputs))
        tensors = self.load_inputs(inputs, share)
        with self._quiet:
            start = perf_counter()
            try:
                self.run_forward(tensors)
            except Exception as exc:
                self.invalidate()
                if events.listening:
                    events.emit(events.CallFailed(self))
                raise self._error(exc, "forward") from exc
            self.last_forward_s = perf_counter() - start
        self.aidge_seconds += self.last_forward_s
        self.forward_count += 1
        self.backward_ran = False
        # Output buffers are reused by the next forward: copy them out. An output whose dims
        # cannot be (negative, after an out-of-bounds computation) is Aidge's failure, said so.
        try:
            outputs = [read_tensor(t) for t in self.output_tensors]
        except (ValueError, RuntimeError):
            outputs = self._read_outputs_one_by_one()
        expected = self.expected_shapes
        if expected is not None and [o.shape for o in outputs] != expected:  # torch.Size == tuple
            self._check_output_shapes(inputs, outputs)
        return outputs

    def _read_outputs_one_by_one(self) -> list[torch.Tensor]:
        """The outputs, read one by one: an output whose dims cannot be read (negative, after an
        out-of-bounds computation) is Aidge's failure, said so."""
        outputs = []
        for i, t in enumerate(self.output_tensors):
            try:
                outputs.append(read_tensor(t))
            except (ValueError, RuntimeError) as exc:
                self.invalidate()
                raise AidgeError("forward", f"output #{i} cannot be read back (dims {_dims_of(t)}): {exc}") from exc
        return outputs

    def _check_output_shapes(self, inputs: Sequence[torch.Tensor], outputs: list[torch.Tensor]) -> None:
        """The shape guard: every output has the shape torch gives for these inputs, or an
        :class:`OutputShapeError` naming the output, its Aidge node and the input shapes
        (the wrong-sized outputs are kept on the error as ``outputs``, for attribution)."""
        for i, (out, want) in enumerate(zip(outputs, self.expected_shapes)):
            if want is not None and tuple(out.shape) != want:
                self.invalidate()
                node = self.outputs[i].node
                error = OutputShapeError(
                    "forward", f"Shapes do not match at output: actual {tuple(out.shape)} vs expected {want} (output "
                               f"#{i}, input shapes {[tuple(x.shape) for x in inputs]}): Aidge's output has another "
                               f"shape than torch's; the bridge stops it instead of returning a wrong-sized tensor",
                    operator=node.type(), node=node.name())
                error.outputs = outputs
                if events.listening:
                    events.emit(events.CallFailed(self))
                raise error

    def _error(self, exc: Exception, phase: str) -> AidgeError:
        """The AidgeError of a failed scheduler call, naming the node that failed."""
        node = self.failing_node(phase)
        if node is None:
            return aidge_error_from(exc, phase)
        return aidge_error_from(exc, phase, node=node.name(), operator=node.type())

    def failing_node(self, phase: str):
        """The node the scheduler was running when it raised (:func:`unfinished_node`)."""
        return unfinished_node(self.scheduler, phase)

    def set_output_grads(self, grad_outputs: Sequence[torch.Tensor | None]) -> None:
        """Write the output gradients into Aidge (None: zeros), resizing them if needed."""
        for out, grad in zip(self.output_tensors, grad_outputs):
            g = out.grad
            if list(g.dims) != list(out.dims):
                g.resize(list(out.dims))
            write_tensor(g, grad)

    # -- backward ------------------------------------------------------------
    @crash_phase("backward")
    def backward(self, grad_outputs: Sequence[torch.Tensor | None], param_names: Sequence[str]):
        with self.lock, self._quiet:
            if events.listening:
                events.emit(events.CallMade(self, "backward", grad_outputs))
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
                with aidge_dynamic_teams():
                    self.scheduler.backward()
            except Exception as exc:
                if events.listening:
                    events.emit(events.CallFailed(self))
                raise self._error(exc, "backward") from exc
            self.last_backward_s = perf_counter() - start
            self.aidge_seconds += self.last_backward_s
            self.backward_ran = True
            input_grads = [read_tensor(t.grad) for t in input_tensors]
            if not self._all_used:  # an input no node reads has a zero gradient
                by_index = dict(zip(self.used, input_grads))
                input_grads = [by_index[k] if k in by_index else torch.zeros(shape, device=self.device)
                               for k, (shape, _dtype) in enumerate(self._signature)]
            param_grads = [read_tensor(self.producer_tensors[n].grad) for n in param_names]
        return input_grads, param_grads


def unfinished_node(scheduler, phase: str):
    """The node ``scheduler`` was running when it raised: the first node of the static schedule
    (reversed for backward; Producers skipped) that its record of the run does not hold (the
    scheduler records a node once it has run). None when unknown."""
    try:
        order = list(scheduler.get_sequential_static_scheduling())
        done = scheduler.get_forward_scheduling() if phase == "forward" else scheduler.get_backward_scheduling()
        finished = {e.node.name() for e in done}
    except Exception:  # noqa: BLE001  (no scheduling recorded: unknown)
        return None
    for node in (order if phase == "forward" else reversed(order)):
        if node.type() != "Producer" and node.name() not in finished:
            return node
    return None


def _as_graph_input(x: torch.Tensor, device: torch.device, float_dtype: torch.dtype = torch.float32) -> torch.Tensor:
    x = x.detach()
    if x.device.type != device.type:
        x = x.to(device)
    if x.is_floating_point() and x.dtype != float_dtype:
        x = x.to(float_dtype)
    return x.contiguous()


def _dims_of(t) -> str:
    try:
        return str(list(t.dims))
    except Exception:  # noqa: BLE001 - only for the message
        return "unknown"


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
        if value.device.type != "cpu":
            value = value.to("cpu")
        view[...] = value.numpy()  # numpy casts to the Aidge tensor's dtype
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
