"""The torch side of a wrapped model: :class:`AidgeModule` (parameters and buffers
mirrored on Aidge's Producers), the autograd node that runs forward and backward in Aidge,
and :class:`AidgeSGD`, Aidge's optimiser on those Producers; the warning of a torch optimiser
stepping the wrapped torch model's own parameters (:class:`WrappedParametersWarning`).

:class:`AidgeModule` is also made of the classes of :mod:`.module_params` (the mirrored
parameters and buffers, ``reload_weights``) and :mod:`.module_checks` (the shape guard and the
first-call value check's torch side); their names are importable from here too."""
from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref
from typing import Any, Sequence

import torch
from torch.utils import _pytree as pytree

from ..errors import AidgeError, aidge_error_from
from .export_validity import blame_invalid_export
from . import events
from .events import crash_phase
from . import runtime as rt
from . import value_check as vc
from .onnx_export_graph import ExportedModel, default_input_names, unused_graph_inputs
from .runner import _GraphRunner, _SchedulerHandle, read_tensor, write_tensor
from .module_checks import _ShapeGuard, _ValueCheck
from .module_params import _MirroredState, _register

__all__ = ["AidgeModule", "AidgeSGD", "WrappedParametersWarning"]


class _AidgeFunction(torch.autograd.Function):
    """Autograd node: forward and backward both computed by Aidge."""

    @staticmethod
    @crash_phase("forward")
    def forward(ctx, module: "AidgeModule", n_inputs: int, *args):
        inputs = args[:n_inputs]
        with module._runner.lock:  # the forward and the count that identifies it, together
            outputs = module._runner.forward(inputs)
            ctx.forward_id = module._runner.forward_count
        ctx.module = module
        ctx.n_inputs = n_inputs
        ctx.check_inputs = None
        if module._value_check_off is None and not vc.checks_are_deferred():
            key = tuple((tuple(x.shape), x.dtype) for x in inputs)
            if key not in module._grads_checked:  # kept for the gradient check: the caller may change them
                ctx.check_inputs = (key, [x.detach().clone() for x in inputs])
        ctx.inputs = [x.detach() for x in inputs]
        ctx.input_dtypes = [x.dtype for x in inputs]
        ctx.mark_non_differentiable(*[o for o in outputs if not o.is_floating_point()])
        return tuple(outputs)

    @staticmethod
    @crash_phase("backward")
    def backward(ctx, *grad_outputs):
        module: AidgeModule = ctx.module
        if module._backward_defects and not vc.checks_are_deferred():
            known = module._backward_defects[0]
            raise type(known)(str(known), known.defect, known.nodes)  # a fresh error for each backward
        with module._runner.lock:  # the recompute and the backward as one step
            return _AidgeFunction._backward(ctx, module, grad_outputs)

    @staticmethod
    @crash_phase("backward")
    def _backward(ctx, module: "AidgeModule", grad_outputs):
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
        if ctx.check_inputs is not None and module._value_check_off is None and not vc.checks_are_deferred():
            key, saved = ctx.check_inputs
            if key not in module._grads_checked:
                # the first backward at this signature: torch's computation of the same call (run now,
                # so that a forward no backward follows costs only the copy of its inputs) against
                # Aidge's gradients
                inputs = [x.requires_grad_(bool(ctx.needs_input_grad[2 + i]) and x.is_floating_point())
                          for i, x in enumerate(saved)]
                module._check_gradients(module._reference(inputs, grad=True), grad_outputs, in_grads, p_grads, key)
        return (None, None, *in_grads, *p_grads)


def _float_dtype(example_inputs: Sequence[torch.Tensor]) -> torch.dtype:
    """The floating-point dtype of the graph's inputs (float32 when it has none)."""
    return next((x.dtype for x in example_inputs if x.is_floating_point()), torch.float32)


class AidgeModule(_MirroredState, _ShapeGuard, _ValueCheck, torch.nn.Module):
    """A torch.nn.Module whose forward and backward run in Aidge.

    ``named_parameters()`` and ``named_buffers()`` mirror the wrapped torch model's names
    and shapes; mirrored tensors share memory with the Aidge Producers. State that has no
    Producer (a parameter the graph does not use, ``num_batches_tracked``) is a detached
    copy and is listed in :attr:`unmapped_state`.
    """

    def __init__(self, torch_model: torch.nn.Module, exported: ExportedModel, graph, *,
                 backend: str, verbose: bool, example_inputs: Sequence[torch.Tensor], out_spec=None,
                 reexport=None,
                 output_shapes: Sequence[tuple[int, ...]] | None = None, torch_shapes=None, binding=None,
                 reference_model: torch.nn.Module | None = None, reference_modes: dict[str, bool] | None = None,
                 backward_defects: Sequence[Exception] = (), none_leaves: Sequence[bool] | None = None):
        super().__init__()
        self._exported = exported
        self._graph = graph
        self._backend = backend
        self._n_inputs = len(example_inputs)
        names = default_input_names(self._n_inputs)  # as export_to_onnx named them
        self._input_sizes = [tuple(x.shape) for x in example_inputs]
        self._input_dtypes = [x.dtype for x in example_inputs]
        self._out_spec = out_spec  # the torch output's pytree structure (None: flat tuple)
        self._one_tensor_out = out_spec is not None and out_spec.is_leaf()  # a single tensor: no unflatten
        #: the output leaves that are None in torch (dropped by the export): given back as None
        self._none_leaves = list(none_leaves) if none_leaves and any(none_leaves) else None
        self._binding = binding  # CallBinding: how a call's arguments become the graph inputs
        self._reexport = reexport  # inputs -> ExportedModel of the torch model at their shapes
        # inputs -> the shapes of torch's outputs at their shapes (the shape guard's reference)
        self._torch_shapes = torch_shapes
        #: input shapes -> (why the graph differs there or None, torch's output shapes or None)
        self._shapes_checked: dict[tuple, tuple[str | None, list | None]] = {
            tuple(self._input_sizes): (None, [tuple(s) for s in output_shapes] if output_shapes is not None else None)}
        self._runner = _GraphRunner(graph, backend, self._n_inputs, verbose, names,
                                    unused_graph_inputs(exported.proto, names),
                                    float_dtype=_float_dtype(example_inputs))
        self._runner.check_signature = self._check_signature
        self._optimizer: AidgeSGD | None = None
        # the first-call value check (interop.bridge.value_check): the torch module exported (the
        # model, or the model bound to its call) and the mode of each of its submodules in the export
        object.__setattr__(self, "_reference_model", reference_model)  # not a submodule of this module
        self._reference_modes = reference_modes
        random = vc.random_nodes(exported.proto)
        self._value_check_off = (f"the graph holds random nodes ({', '.join(random[:3])}): torch and Aidge draw "
                                 f"other numbers" if random else
                                 "no torch reference" if reference_model is None else None)
        #: KnownDefectError of each known backward defect of the graph: raised by every backward
        #: (wrap(known_defects="refuse")), outside checks_deferred()
        self._backward_defects = list(backward_defects)
        self._values_checked: set = set()  # signatures whose outputs matched torch's on their first call
        self._grads_checked: set = set()  # ... and whose gradients matched torch's on their first backward
        self._last_checked: list | None = None  # the latest signature found fully checked (fast path)
        self._pending_shapes: tuple | None = None  # (input shapes, torch's output shapes) of the call being checked
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
        _watch_wrapped_parameters(self, torch_model)  # a torch optimiser over them is named, not silent
        if events.listening:
            events.emit(events.RunnerMade(self._runner, exported, tuple(self._trainable_producers)))
        state = dict(self.named_parameters())
        state.update(self.named_buffers())
        self._copied_tensors = {prod: state[name] for prod, name in exported.initializer_to_state.items()
                                if prod in self._copied_state}
        self._sync_from_aidge()

    # -- the torch side --------------------------------------------------------
    @crash_phase("forward")
    def forward(self, *inputs: torch.Tensor, **kwargs):
        try:
            return self._forward(*inputs, **kwargs)
        except AidgeError as exc:  # on an invalid export, the export's (interop.bridge.export_validity)
            raise blame_invalid_export(exc, self._exported)

    def _forward(self, *inputs: torch.Tensor, **kwargs):
        if self._binding is not None:
            inputs = tuple(self._binding.tensors(inputs, kwargs))
        elif kwargs:
            raise TypeError(f"this AidgeModule takes its {self._n_inputs} input(s) positionally (it was wrapped "
                            f"without keyword arguments), got keywords {sorted(kwargs)}")
        if len(inputs) != self._n_inputs:
            raise TypeError(f"AidgeModule expects {self._n_inputs} input(s), got {len(inputs)}")
        if self._copied_tensors:
            self._sync_to_aidge()
        needs_grad = torch.is_grad_enabled() and (
            any(p.requires_grad for p in self._train_params) or any(x.requires_grad for x in inputs))
        if self._value_check_off is None:
            signature = [(x.shape, x.dtype) for x in inputs]
            if signature != self._last_checked and not vc.checks_are_deferred():
                outputs = self._checked_call(inputs, needs_grad, signature)
                return self._structured(outputs)
        if needs_grad:
            outputs = _AidgeFunction.apply(self, self._n_inputs, *inputs, *self._train_params)
        else:
            outputs = self._runner.forward(inputs, share=True)
            if self._one_tensor_out:
                return outputs[0]
        return self._structured(outputs)

    def _structured(self, outputs):
        """The flat outputs in the torch model's structure (its None leaves put back)."""
        if self._out_spec is None:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        leaves = list(outputs)
        if self._none_leaves is not None:
            it = iter(leaves)
            leaves = [None if none else next(it) for none in self._none_leaves]
        return pytree.tree_unflatten(leaves, self._out_spec)

    # -- the first-call value check ------------------------------------------------
    @property
    def value_check(self) -> str:
        """``"on"``: the first call at each input signature compares Aidge's outputs (and the first
        backward there its input and parameter gradients) with torch's computation of the same
        call on this module's weights, and raises :class:`~interop.bridge.value_check.ValueMismatchError`
        instead of returning a differing value; else ``"off: <why>"``."""
        return "on" if self._value_check_off is None else f"off: {self._value_check_off}"

    def _checked_call(self, inputs, needs_grad: bool, signature: list):
        """A call at a signature not yet checked: torch's computation first (its output shapes
        also serve the shape guard), then Aidge's, compared before anything is returned."""
        self._check_dtypes(inputs)  # before torch runs: a wrong dtype is the caller's error, said so
        key = tuple((tuple(x.shape), x.dtype) for x in inputs)

        def run():
            if needs_grad:
                return _AidgeFunction.apply(self, self._n_inputs, *inputs, *self._train_params)
            return self._runner.forward(inputs, share=True)

        with self._runner.lock:
            if key in self._values_checked:  # checked by another call meanwhile
                self._last_checked = signature
                return run()
            try:
                reference = self._reference(inputs, grad=False)
            except Exception as exc:  # noqa: BLE001
                if [tuple(x.shape) for x in inputs] != self._input_sizes:
                    raise  # torch rejects these new shapes: its own error, as the shape guard gave it
                # torch ran these shapes at wrap: the reference's mechanics (functional_call on this
                # module's state) do not fit the model. Said by value_check, never a failed call.
                self._value_check_off = (f"torch's reference call failed ({type(exc).__name__}: "
                                         f"{str(exc).splitlines()[0] if str(exc) else ''})")
                return run()
            self._pending_shapes = (tuple(s for s, _ in key), [tuple(x.shape) for x in reference.leaves])
            try:
                outputs = run()
            finally:
                self._pending_shapes = None
            self._check_outputs(inputs, outputs, reference)
            self._values_checked.add(key)
            self._last_checked = signature
        return outputs

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

    @property
    def exporter(self) -> str:
        """torch's route to ONNX that made :attr:`onnx_model`: ``"torchscript"`` or ``"dynamo"``."""
        return self._exported.exporter

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

    @crash_phase("step")
    def step(self) -> None:
        if not self._nodes:
            # A model without trainable parameters (ReLU alone): nothing to update, as with
            # torch; Aidge's SGD::update() raises "no parameter to update!" instead.
            return
        with self.module._runner.lock, rt.quiet_aidge(self.module._runner.verbose):
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


# -- an optimiser over the wrapped torch model's own parameters ------------------------------
class WrappedParametersWarning(UserWarning):
    """A torch optimiser steps the parameters of a torch model that was wrapped, while they hold
    no gradient and the :class:`AidgeModule` made from it holds Aidge's: the step changes
    nothing (``wrap()`` copies the weights; optimise ``aidge_model.parameters()``)."""


#: a wrapped torch model's parameter -> [(weakref to its AidgeModule, the parameter's name)]
_WRAPPED_PARAMETERS = None
_WATCH_LOCK = threading.Lock()
_STEP_HOOK = None  # the one process-wide optimiser step pre-hook, registered by the first wrap


def _watch_wrapped_parameters(module: AidgeModule, torch_model: torch.nn.Module) -> None:
    """Note the torch model's trainable parameters that ``module`` mirrors, for
    :func:`_check_optimiser_step` (weak references: neither side is kept alive)."""
    global _WRAPPED_PARAMETERS, _STEP_HOOK
    if isinstance(torch_model, AidgeModule) or not module._train_names:
        return
    own = dict(torch_model.named_parameters())
    with _WATCH_LOCK:
        if _WRAPPED_PARAMETERS is None:
            from torch.utils.weak import WeakIdKeyDictionary
            _WRAPPED_PARAMETERS = WeakIdKeyDictionary()
        ref = weakref.ref(module)
        for name in module._train_names:
            entries = [e for e in _WRAPPED_PARAMETERS.get(own[name], []) if e[0]() is not None]
            _WRAPPED_PARAMETERS[own[name]] = entries + [(ref, name)]
        if _STEP_HOOK is None:
            from torch.optim.optimizer import register_optimizer_step_pre_hook
            _STEP_HOOK = register_optimizer_step_pre_hook(_check_optimiser_step)


def _check_optimiser_step(optimizer, args, kwargs) -> None:
    """Before any torch optimiser's step: warn when it holds parameters of a wrapped torch model
    that have no gradient while the AidgeModule made from it holds Aidge's gradients and is not
    among the optimiser's parameters (the step would silently change nothing)."""
    if not _WRAPPED_PARAMETERS:
        return None
    held = [p for group in optimizer.param_groups for p in group["params"]]
    found: dict[AidgeModule, list] = {}
    with _WATCH_LOCK:
        for p in held:
            for ref, name in _WRAPPED_PARAMETERS.get(p, ()):
                module = ref()
                if module is not None:
                    found.setdefault(module, []).append((name, p))
    held_ids = {id(p) for p in held}
    for module, params in found.items():
        if any(p.grad is not None for _, p in params):
            continue  # torch's own backward reached the torch model: a torch training, not Aidge's
        if any(id(p) in held_ids for p in module._train_params):
            continue  # the optimiser steps the AidgeModule's parameters too
        if all(p.grad is None for p in module._train_params):
            continue  # no gradient from Aidge waiting either
        names = [name for name, _ in params]
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        warnings.warn(
            f"this {type(optimizer).__name__} steps the parameters of the torch model that was wrapped ({shown}), "
            f"which hold no gradient: the step changes nothing. wrap() copies the weights; the AidgeModule's "
            f"backward runs in Aidge and leaves its gradients on the AidgeModule's own parameters. Optimise "
            f"those: torch.optim.{type(optimizer).__name__}(aidge_model.parameters(), ...) (or "
            f"aidge_model.attach_optimizer(lr=...)); model.load_state_dict(aidge_model.state_dict()) copies the "
            f"trained weights back into the torch model.", WrappedParametersWarning, stacklevel=_caller_level())
    return None


def _caller_level() -> int:
    """warnings.warn's stacklevel naming the first frame outside torch and this file (the
    caller's ``optimizer.step()``), counted from the function that calls warnings.warn."""
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    frame, level = sys._getframe(2), 2
    while frame is not None and (frame.f_code.co_filename.startswith(torch_dir)
                                 or frame.f_code.co_filename == __file__):
        frame, level = frame.f_back, level + 1
    return level

