"""torch.nn.Module -> ONNX ModelProto, in memory and without side effects.

Two routes (``exporter=``, see :data:`EXPORTERS`): torch's TorchScript exporter
(``dynamo=False``) and its dynamo exporter (``dynamo=True``, torch 2.13's default, through
``onnxscript``); ``"auto"`` tries them in :data:`AUTO_ORDER` and keeps the first that exports.

Facts this module relies on (torch 2.13, see docs/exporters.md and docs/aidge-notes.md,
"Exporting from torch to ONNX"):
- the TorchScript exporter is several times faster than the dynamo one (docs/exporters.md),
  but cannot export what goes through ``scaled_dot_product_attention`` or ``aten::diff``
  (``nn.TransformerEncoderLayer``, GPT-2): the dynamo route exports those;
- an EVAL export merges initializers holding identical values unless
  ``keep_initializers_as_inputs=True``, which would break the parameter mapping;
- a TRAINING export runs a forward pass that updates BatchNorm running statistics, so the
  model's whole state (parameters, buffers, mode) is snapshotted and restored.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import threading
import warnings
from pathlib import Path
from typing import Sequence

import onnx
import torch

from ..errors import ExportError, StatefulModelError, TracingError
from ..exporters import (AUTO_ORDER, EXPORTER_CHOICES, EXPORTER_ENV, EXPORTERS, check_exporter,  # noqa: F401
                         default_exporter, export_routes, note_routes)
from .events import crash_phase

__all__ = ["ExportedModel", "export_to_onnx", "EXPORTERS", "EXPORTER_CHOICES", "AUTO_ORDER", "check_exporter", "preserved_state", "attributes_preserved", "materialize_lazy", "has_lazy_state", "graph_differences", "check_value_dependence",
           "TracingWarning", "TRACE_WARNING_POLICIES", "default_exporter", "EXPORTER_ENV", "export_routes",
           "note_routes", "unused_graph_inputs",
           "default_input_names", "proto_with_state"]

#: what ``wrap(on_trace_warning=...)`` accepts
TRACE_WARNING_POLICIES = ("error", "warn", "ignore")

OPSET_VERSION = 18

#: held for the whole of each export: torch's exporter, the warning filters it is run under
#: and the stdout silencing are process-wide state (six threads wrapping at once used to fail
#: 14-16 of 24 exports spuriously and leave ``sys.stdout`` a StringIO and fd 1 a deleted file)
_EXPORT_LOCK = threading.RLock()


@dataclasses.dataclass
class ExportedModel:
    """An ONNX model plus what is needed to map it back onto the torch model."""

    proto: onnx.ModelProto
    input_names: list[str]
    output_names: list[str]
    #: ONNX initializer name -> torch state name (``fc1.weight``, ``bn.running_mean``)
    initializer_to_state: dict[str, str]
    #: ONNX node name -> (torch module path, torch module type) when known
    node_scopes: dict[str, str]
    training: bool
    #: torch's TracerWarnings of the export, ``(file, line, message)``: the trace depends on
    #: input values there (a Python bool or int taken from a tensor), so the graph holds one
    #: branch or one value only
    trace_warnings: list[tuple[str, int, str]] = dataclasses.field(default_factory=list)
    #: exported with each submodule in its own mode (they were mixed; ``training`` is the
    #: top module's flag)
    mixed_modes: bool = False
    #: the route that made this graph (one of :data:`EXPORTERS`)
    exporter: str = "torchscript"
    #: routes tried before it that failed (``exporter="auto"``): route -> torch's error
    failed_routes: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def export_training(self) -> bool | None:
        """The ``training`` argument that exports the model again the same way."""
        return None if self.mixed_modes else self.training


@contextlib.contextmanager
def preserved_state(model: torch.nn.Module, changed: list | None = None):
    """Restore the parameters, buffers and train/eval mode of every submodule on exit, and the
    plain Python attributes of each (:func:`_attributes_snapshot`: a cache the forward fills,
    as transformers' LeViT fills its attention-bias cache in eval mode); the names of the
    tensors the block changed go to ``changed`` when given."""
    modes = {name: m.training for name, m in model.named_modules()}
    saved = {name: t.detach().clone() for name, t in _state_tensors(model).items()}
    attributes = _attributes_snapshot(model)
    try:
        yield
    finally:
        _restore_attributes(attributes)
        with torch.no_grad():
            for name, tensor in _state_tensors(model).items():
                if name in saved and not _unchanged(tensor, saved[name]):
                    if changed is not None:
                        changed.append(name)
                    tensor.copy_(saved[name])  # only when changed: keeps autograd versions intact
        for name, m in model.named_modules():
            if name in modes:
                m.training = modes[name]


#: a module's own bookkeeping: parameters, buffers and submodules are restored by value above
#: (their containers kept), ``training`` by mode; the hook dictionaries are torch's
_MODULE_SLOTS = frozenset({"_parameters", "_buffers", "_modules", "training", "_non_persistent_buffers_set"})
_CONTAINERS = (dict, list, set)


def _attributes_snapshot(model: torch.nn.Module) -> list:
    """``(module, attributes, contents)`` of every submodule: its ``__dict__`` entries (the plain
    Python attributes, by identity) and a shallow copy of each dict, list or set among them (by
    content). What a forward leaves there (a cache filled in eval mode holding a tensor of the
    export's autograd graph: LeViT's ``attention_bias_cache``, which made the tool's second
    export refuse it, "Cannot insert a Tensor that requires grad as a constant") is undone by
    :func:`_restore_attributes`; the bridge's calls of the model leave no trace in it."""
    out = []
    for m in model.modules():
        attrs = {k: v for k, v in vars(m).items() if k not in _MODULE_SLOTS}
        contents = {k: (type(v), v.copy()) for k, v in attrs.items()
                    if isinstance(v, _CONTAINERS) and not k.startswith("_") or type(v) in _CONTAINERS}
        out.append((m, attrs, contents))
    return out


def _restore_attributes(snapshot: list) -> None:
    for m, attrs, contents in snapshot:
        now = vars(m)
        for k in [k for k in now if k not in _MODULE_SLOTS and k not in attrs]:
            del now[k]  # an attribute the block added
        for k, v in attrs.items():
            if now.get(k, _MISSING) is not v:
                now[k] = v  # rebound (LeViT's train(True) gives its cache a new dict)
            if k in contents:
                kind, before = contents[k]
                if _changed_container(v, before):
                    v.clear()
                    if isinstance(v, dict):
                        v.update(before)
                    elif isinstance(v, list):
                        v.extend(before)
                    else:
                        v.update(before)


_MISSING = object()


@contextlib.contextmanager
def attributes_preserved(model: torch.nn.Module):
    """The plain Python attributes of every submodule of ``model`` restored on exit
    (:func:`_attributes_snapshot`), parameters and buffers left alone: for a torch call of the
    model that must leave no cache behind (the value check's reference)."""
    snapshot = _attributes_snapshot(model)
    try:
        yield
    finally:
        _restore_attributes(snapshot)


def _changed_container(now, before) -> bool:
    if len(now) != len(before):
        return True
    if isinstance(now, dict):
        return any(k not in before or before[k] is not v for k, v in now.items())
    if isinstance(now, list):
        return any(a is not b for a, b in zip(now, before))
    return now != before


def _stateful_buffers(model: torch.nn.Module, changed: list[str]) -> list[str]:
    """The buffers among ``changed`` that the forward itself updates, beyond the running statistics
    of a normalisation layer in training mode (exported as ONNX's training-mode outputs; what Aidge
    does with them is the suite's BatchNorm finding, not a frozen graph)."""
    from torch.nn.modules.batchnorm import _NormBase

    params = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    stats = {f"{prefix}.{b}" if prefix else b for prefix, m in model.named_modules() if isinstance(m, _NormBase)
             for b in ("running_mean", "running_var", "num_batches_tracked")}
    return sorted({n for n in changed if n not in params and n not in stats})


def _unchanged(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape:
        return False
    if torch.equal(a, b):
        return True
    # NaN != NaN: a buffer holding NaN is unchanged when NaN sits at the same places
    return a.dtype.is_floating_point and torch.allclose(a, b, rtol=0.0, atol=0.0, equal_nan=True)


def _state_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        out.setdefault(name, p)
    for name, b in model.named_buffers(remove_duplicate=False):
        if b is not None:
            out.setdefault(name, b)
    return out


def _plain(text: str) -> str:
    """``text`` without terminal colour codes (the dynamo exporter's errors carry them)."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text).strip()


@crash_phase("export")
def export_to_onnx(
    model: torch.nn.Module,
    example_inputs: Sequence[torch.Tensor],
    *,
    training: bool | None = None,
    input_names: Sequence[str] | None = None,
    exporter: str = "torchscript",
) -> ExportedModel:
    """Export ``model`` to an in-memory ONNX model (opset 18) through the ``exporter`` route
    (``"torchscript"``, ``"dynamo"``, or ``"auto"``: each of :data:`AUTO_ORDER` until one
    exports; the routes that failed first are kept in :attr:`ExportedModel.failed_routes`).
    When every route tried fails, :class:`~interop.errors.ExportError` names each route and
    torch's error (``exporter`` attribute: the last route tried).

    ``training=None`` follows the model's modes: ``model.training`` when every submodule is in
    that mode; a model whose submodules are in mixed modes (a wrapper in training mode around
    a network put in eval mode) is exported with each submodule in its own mode, as torch
    computes it (``TrainingMode.PRESERVE``; exporting it all in ``model.training`` gave
    Dropout in training mode to a BERT that torch ran in eval mode). Initializers are renamed ``param_<i>`` so
    that names can never collide after Aidge's name mangling (``encoder.1`` and
    ``encoder_1`` would); the mapping back to torch state names is returned.

    torch's TracerWarnings raised in the model's own code (not in torch's) are returned in
    :attr:`ExportedModel.trace_warnings` (see :func:`check_value_dependence`). Nothing is
    printed: the exporter's stdout is captured. One export at a time in the process (a lock):
    while one runs, what other threads print is discarded with the exporter's output.
    """
    routes = AUTO_ORDER if check_exporter(exporter) == "auto" else (exporter,)
    with _EXPORT_LOCK:
        materialize_lazy(model, example_inputs)
    failed: dict[str, str] = {}
    for route in routes:
        try:
            with _EXPORT_LOCK:
                exported = _export_to_onnx(model, example_inputs, training=training, input_names=input_names,
                                           route=route)
        except StatefulModelError:
            raise  # the model's own state: no other route can export it right
        except ExportError as exc:
            failed[route] = _plain(str(exc.__cause__ or exc))
            if route == routes[-1]:
                note_routes([(None, dict(failed), None)])
                if len(failed) > 1:
                    text = "; ".join(f"{r} route: {e}" for r, e in failed.items())
                    exc = ExportError(f"torch.onnx.export failed for {_model_name(model)} on every route "
                                      f"({', '.join(failed)}): {text}", exporter=route)
                    exc.failed_routes = failed
                    raise exc from exc.__cause__
                raise
            continue
        exported.failed_routes = failed
        note_routes([(route, dict(failed), len(exported.proto.graph.node))])
        return exported
    raise AssertionError("unreachable")


def has_lazy_state(model: torch.nn.Module) -> bool:
    """Whether ``model`` holds a parameter or buffer a lazy module has not materialised yet
    (``nn.LazyLinear`` before its first call)."""
    from torch.nn.parameter import is_lazy

    return any(is_lazy(t) for t in (*model.parameters(), *model.buffers()))


def materialize_lazy(model: torch.nn.Module, example_inputs: Sequence[torch.Tensor]) -> bool:
    """Materialise the lazy modules of ``model`` (``nn.LazyLinear``, ``nn.LazyConv2d``,
    ``nn.LazyBatchNorm2d``...) by one torch call on ``example_inputs``, as the model's own
    first call would: in its own modes, under ``torch.no_grad()`` and a forked RNG (the draws
    of the new weights come from the caller's RNG stream, which is then restored, so a later
    call of the caller's draws what it would have). What the call itself changes is undone:
    every tensor that existed before it, and each materialised tensor as it was just before its
    module's first forward (a LazyBatchNorm in training mode keeps its initial running
    statistics). True when something was materialised. Without this, a lazy module had no
    export ("Attempted to use an uninitialized parameter") and ``verify`` no verdict."""
    from torch.nn.modules.lazy import LazyModuleMixin
    from torch.nn.parameter import is_lazy

    if not has_lazy_state(model):
        return False
    before = {name: t.detach().clone() for name, t in _state_tensors(model).items() if not is_lazy(t)}
    materialised: dict[int, dict[str, torch.Tensor]] = {}

    def snapshot(module, args):  # runs after the lazy module's own pre-hook materialised it
        if id(module) not in materialised:
            materialised[id(module)] = {n: t.detach().clone() for n, t in
                                        (*module.named_parameters(recurse=False), *module.named_buffers(recurse=False))
                                        if t is not None}

    handles = [m.register_forward_pre_hook(snapshot) for m in model.modules()
               if isinstance(m, LazyModuleMixin) and m.has_uninitialized_params()]
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad(), _silenced_stdout():
            model(*example_inputs)
    except Exception as exc:  # noqa: BLE001 - torch's own failure, said as the export's
        raise ExportError(f"{_model_name(model)} holds lazy modules, and torch's call that materialises them "
                          f"fails: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
    finally:
        for h in handles:
            h.remove()
    with torch.no_grad():
        for name, t in _state_tensors(model).items():
            if name in before and not _unchanged(t, before[name]):
                t.copy_(before[name])
        for m in model.modules():
            for n, value in materialised.get(id(m), {}).items():
                t = getattr(m, n, None)
                if isinstance(t, torch.Tensor) and not is_lazy(t) and not _unchanged(t, value):
                    t.copy_(value)
    if has_lazy_state(model):
        left = [n for n, t in _state_tensors(model).items() if is_lazy(t)]
        raise ExportError(f"{_model_name(model)}: one torch call left lazy state unmaterialised "
                          f"({', '.join(left[:5])}): not exportable")
    return True


@crash_phase("export")  # the body, under the export lock
def _export_to_onnx(model, example_inputs, *, training, input_names, route) -> ExportedModel:
    mixed = False
    if training is None:
        training = model.training
        mixed = any(m.training != training for m in model.modules())
    names = list(input_names) if input_names else default_input_names(len(example_inputs))
    mode = (torch.onnx.TrainingMode.PRESERVE if mixed
            else torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL)
    buffer = io.BytesIO()
    # fork_rng: a TRAINING export runs the model (Dropout draws): the caller's RNG is restored.
    # Grad enabled whatever the caller's mode: torch takes the path a normal call takes (under
    # torch.no_grad() an eval-mode nn.TransformerEncoderLayer takes its fused fast path,
    # aten::_transformer_encoder_layer_fwd, which has no ONNX export).
    printed = io.StringIO()
    mutated: list[str] = []
    with preserved_state(model, mutated), warnings.catch_warnings(record=True) as caught, \
            torch.random.fork_rng(devices=[]), _silenced_stdout(), _quiet_torch_onnx_logging(), \
            contextlib.redirect_stderr(printed):
        # catch_warnings restores the caller's filters on exit: nothing global is changed.
        # stdout: on some failures the exporter prints the whole TorchScript graph; stderr: on a
        # failed torch.export the dynamo route prints the graph it traced (36 lines for a forward
        # that branches on a value): kept, and attached to the ExportError as a note, never printed.
        warnings.simplefilter("always")
        try:
            with torch.enable_grad():
                if route == "dynamo":
                    proto = _dynamo_export(model, example_inputs, names, training, mixed)
                else:
                    torch.onnx.export(
                        model,
                        tuple(example_inputs),
                        buffer,
                        dynamo=False,
                        opset_version=OPSET_VERSION,
                        do_constant_folding=False,
                        keep_initializers_as_inputs=True,
                        training=mode,
                        input_names=names,
                        verbose=False,
                    )
        except Exception as exc:  # torch raises many types here
            error = ExportError(f"torch.onnx.export failed for {_model_name(model)} ({route} route): "
                                f"{_plain(str(exc))}", exporter=route)
            said = printed.getvalue().strip()
            if said:
                lines = said.splitlines()
                error.add_note(f"what the exporter printed ({len(lines)} lines, the last 40):\n"
                               + "\n".join(lines[-40:]))
            raise error from exc
    stale = _stateful_buffers(model, mutated)
    if stale:
        raise StatefulModelError(
            f"the forward of {_model_name(model)} changes its buffer(s) {', '.join(stale)} when it runs: the exported "
            "graph holds their values at export time, so every later call would be computed with stale buffers and "
            "differ from torch's, silently: refused (keep such state outside the module, or pass it as an input)",
            buffers=stale, exporter=route)
    # Only the model's own code counts: torch's library code traces value checks of its own
    # (BatchNorm's batch-size check in training mode) that do not change the graph.
    traced = [(w.filename, w.lineno, str(w.message)) for w in caught
              if issubclass(w.category, torch.jit.TracerWarning) and not _in_torch(w.filename)]
    if route == "torchscript":
        proto = onnx.load_from_string(buffer.getvalue())
    state_names = set(_state_tensors(model))
    mapping = _rename_initializers(proto, state_names)
    _write_state_into_initializers(proto, mapping, _state_tensors(model))
    graph_inputs = {i.name for i in proto.graph.initializer}
    inputs = [i.name for i in proto.graph.input if i.name not in graph_inputs]
    outputs = [o.name for o in proto.graph.output]
    scopes = {n.name: n.name for n in proto.graph.node}
    return ExportedModel(proto, inputs, outputs, mapping, scopes, training, traced, mixed, exporter=route)


def _dynamo_export(model, example_inputs, names, training: bool, mixed: bool) -> onnx.ModelProto:
    """torch's dynamo exporter (``torch.export`` + onnxscript's torchlib), opset 18, then
    onnxscript's optimiser with the model's state held as named graph inputs
    (:func:`optimize_keeping_state`: torch's own ``optimize=True`` would fold or fuse parameters
    into new constants, and the parameter mapping back to torch needs them as they are).
    The model runs in the mode it is exported for (``torch.export`` traces the module as it
    is: there is no ``training=`` argument on this route); :func:`preserved_state` restores
    the modes."""
    if not mixed:
        model.train(training)
    try:
        import onnxscript  # noqa: F401 - torch's dynamo route needs it; say so by name
    except ImportError as exc:
        raise RuntimeError("the dynamo route needs the onnxscript package (requirements/cpu.txt pins it)") from exc
    program = torch.onnx.export(model, tuple(example_inputs), dynamo=True, opset_version=OPSET_VERSION,
                                input_names=names, optimize=False, verbose=False, report=False,
                                external_data=False,
                                custom_translation_table={
                                    torch.ops.aten._native_batch_norm_legit_functional.default: batch_norm_functional})
    optimize_keeping_state(program.model, set(_state_tensors(model)))
    return lower_castlike(program.model_proto)


def batch_norm_functional(input, weight=None, bias=None, running_mean=None, running_var=None,
                          training=False, momentum=0.9, eps=1e-05):
    """The dynamo route's translation of ``aten::_native_batch_norm_legit_functional`` (what
    ``torch.export`` makes of a BatchNorm with running statistics): in training mode an ONNX
    ``BatchNormalization`` with ``training_mode=1`` (the batch's statistics, as torch computes
    and as the TorchScript route writes it); otherwise torchlib's own translation. Why:
    torchlib (onnxscript 0.7.2) sets ``training = False`` before translating whatever torch says
    ("a temporary fix" for onnxruntime), so a train-mode BatchNorm was exported as an inference
    one normalising with the running statistics: zoo ResNet in train mode was 0.93 off on this
    route (docs/exporters.md). Outputs: the normalised tensor, the batch mean and inverse standard
    deviation (torch's saved statistics, which no exported graph reads), the updated running
    mean and variance (ONNX's own training outputs; the graph never returns them: the bridge's
    torch side keeps torch's running statistics)."""
    from onnxscript import opset18 as op
    from onnxscript.function_libs.torch_lib.ops import core

    if not training or running_mean is None or running_var is None:
        return core.aten__native_batch_norm_legit_functional(input, weight, bias, running_mean, running_var,
                                                             training, momentum, eps)
    channels = op.Shape(input, start=1, end=2)
    if weight is None:
        weight = op.Expand(op.CastLike(op.Constant(value_floats=[1.0]), input), channels)
    if bias is None:
        bias = op.Expand(op.CastLike(op.Constant(value_floats=[0.0]), input), channels)
    norm, new_mean, new_var = op.BatchNormalization(input, weight, bias, running_mean, running_var,
                                                    epsilon=eps, momentum=1.0 - momentum, training_mode=1)
    axes = [k for k in range(len(input.shape)) if k != 1]
    mean = op.ReduceMean(input, op.Constant(value_ints=axes), keepdims=0)
    centred = op.Sub(input, op.ReduceMean(input, op.Constant(value_ints=axes), keepdims=1))
    var = op.ReduceMean(op.Mul(centred, centred), op.Constant(value_ints=axes), keepdims=0)
    rstd = op.Reciprocal(op.Sqrt(op.Add(var, op.CastLike(op.Constant(value_float=eps), var))))
    return norm, mean, rstd, new_mean, new_var


def optimize_keeping_state(model_ir, state_names: set[str]) -> None:
    """onnxscript's optimiser (constant folding, its rewrite rules, dead-node removal: what
    ``torch.onnx.export(optimize=True)`` runs) on ``model_ir`` (an ``onnx_ir.Model``, in place),
    with every initializer that is torch state (``state_names``: parameters and buffers) held as
    a named graph input meanwhile, its value hidden: nothing can fold a parameter into a new
    constant or fuse a BatchNorm into a convolution (which lost train mode and the mapping back
    to torch), while the shape arithmetic folds away. Without it the dynamo graph kept nodes Aidge
    cannot take: an empty Slice in ``nn.TransformerEncoderLayer`` (``Start (3) < End (2)``),
    SplitToSequence in GPT-2. The state comes back as initializers of the same names."""
    import onnxscript.optimizer

    graph = model_ir.graph
    held = []
    for name in [n for n in graph.initializers if n in state_names]:
        value = graph.initializers.pop(name)
        held.append((value, value.const_value))
        value.const_value = None
        graph.inputs.append(value)
    try:
        onnxscript.optimizer.optimize(model_ir)
    finally:
        for value, tensor in held:
            graph.inputs.remove(value)
            value.const_value = tensor
            graph.register_initializer(value)


def lower_castlike(proto: onnx.ModelProto) -> onnx.ModelProto:
    """Replace each ``CastLike(x, like)`` of ``proto`` by ``Cast(x, to=<like's element type>)``
    when ONNX shape inference knows that type (in place; returns ``proto``).

    Why: the dynamo route without its optimiser (see :func:`_dynamo_export`) casts every
    Python scalar with ``CastLike`` (``x + 1``, BatchNorm's momentum), and aidge_onnx 0.10.1
    has no CastLike: LeNet would export and ResNet not. torch's ``optimize=True`` removes them
    but also folds BatchNorm into the convolutions and transposes weights into new constants
    (measured on the zoo: every BatchNorm parameter then has no Aidge Producer, and a ResNet
    in train mode computed eval-mode BatchNorm). ``Cast`` to the type ``CastLike`` reads from
    its second input is the same computation (ONNX's definition of CastLike)."""
    from onnx import helper, shape_inference

    if not any(n.op_type == "CastLike" for n in proto.graph.node):
        return proto
    inferred = shape_inference.infer_shapes(proto)
    types = {v.name: v.type.tensor_type.elem_type for v in (*inferred.graph.value_info, *inferred.graph.input,
                                                            *inferred.graph.output)}
    types.update({i.name: i.data_type for i in proto.graph.initializer})
    for node in proto.graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    types[node.output[0]] = attr.t.data_type
    nodes = []
    for node in proto.graph.node:
        to = types.get(node.input[1]) if node.op_type == "CastLike" and len(node.input) == 2 else None
        if to:
            node = helper.make_node("Cast", [node.input[0]], list(node.output), name=node.name, to=to)
        nodes.append(node)
    del proto.graph.node[:]
    proto.graph.node.extend(nodes)
    return proto


@contextlib.contextmanager
def _quiet_torch_onnx_logging():
    """The dynamo exporter logs through ``logging`` (torch's own handler prints them on stderr:
    "torchvision is not installed. Skipping torchvision::nms"): its loggers are muted for the
    export (under the export lock) and restored."""
    import logging

    loggers = [logging.getLogger(name) for name in ("torch.onnx", "torch.export", "torch._dynamo", "torch.fx", "torch.__trace",
                                                      "torch._subclasses",  # fake_tensor: a failed meta kernel's traceback
                                                      "onnxscript", "onnx_ir")]
    saved = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)  # children at NOTSET inherit it
    try:
        yield
    finally:
        for lg, level in zip(loggers, saved):
            lg.setLevel(level)


def _model_name(model: torch.nn.Module) -> str:
    """The class name of the model the user gave (a BoundModule exports the model it binds)."""
    return type(getattr(model, "_target", model)).__name__


def check_value_dependence(model: torch.nn.Module, example_inputs: Sequence[torch.Tensor],
                           exported: ExportedModel, on_trace_warning: str = "error") -> None:
    """Decide whether a trace that torch warned about depends on input *values*.

    The tracer warns whenever the model turns a traced tensor into a Python value; that
    value may come from a shape (``if x.shape[1] != 3``: the same for every input of that
    shape, and new shapes are re-exported and compared anyway) or from the data
    (``if x.sum() > 0``: another input takes another branch). The model is exported a second
    time on other values of the same shapes (floats negated, integers reversed along their
    last dimension) and the two graphs compared: when they differ, ``on_trace_warning``
    decides: ``"error"`` raises :class:`~interop.errors.TracingError` naming the model's
    lines, ``"warn"`` emits a :class:`TracingWarning`, ``"ignore"`` keeps the first graph.
    """
    if on_trace_warning not in TRACE_WARNING_POLICIES:
        raise ValueError(f"on_trace_warning must be one of {TRACE_WARNING_POLICIES}, got {on_trace_warning!r}")
    if not exported.trace_warnings or on_trace_warning == "ignore":
        return
    other = [(-x if x.is_floating_point() else x.flip(-1)) if x.dim() else -x for x in example_inputs]
    try:
        second = export_to_onnx(model, other, training=exported.export_training, exporter=exported.exporter)
        difference = graph_differences(exported.proto, second.proto)
    except ExportError as exc:
        difference = f"the export on other values fails: {exc}"
    if difference is None:
        return
    where = "; ".join(f"{file}:{line}: {msg.splitlines()[0]}" for file, line, msg in exported.trace_warnings)
    text = (f"the trace of {_model_name(model)} depends on input values ({where}); exported again on other "
            f"values of the same shapes, {difference}: the ONNX graph holds only the branch or value taken "
            "for the example input, so other inputs would get silently wrong results")
    if on_trace_warning == "error":
        raise TracingError(text + "; pass on_trace_warning='warn' or 'ignore' to wrap() to accept it",
                           locations=exported.trace_warnings)
    warnings.warn(text, TracingWarning, stacklevel=3)


_TORCH_DIR = str(Path(torch.__file__).resolve().parent)


def _in_torch(filename: str) -> bool:
    try:
        return str(Path(filename).resolve()).startswith(_TORCH_DIR)
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def _silenced_stdout():
    """Discard what is written to stdout during the block, Python's and the C++ runtime's
    (the exporter prints the whole TorchScript graph with ``std::cout`` on some failures):
    file descriptor 1 points at a temporary file for the block, then is restored."""
    import ctypes
    import os
    import sys
    import tempfile

    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no real stdout (embedded): Python's only
        with contextlib.redirect_stdout(io.StringIO()):
            yield
        return
    libc = ctypes.CDLL(None)
    with tempfile.TemporaryFile() as sink, contextlib.redirect_stdout(io.StringIO()):
        os.dup2(sink.fileno(), 1)
        try:
            yield
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)


class TracingWarning(UserWarning):
    """The export's trace depends on input values (``wrap(on_trace_warning="warn")``)."""


def graph_differences(a: onnx.ModelProto, b: onnx.ModelProto) -> str | None:
    """The first structural difference between two exports of one model (nodes with their
    attributes and constants, exporter-made constant initializers), or None when they are
    the same graph up to input/output shapes and parameter values."""
    nodes_a, nodes_b = list(a.graph.node), list(b.graph.node)
    for i, (na, nb) in enumerate(zip(nodes_a, nodes_b)):
        if _node_bytes(na) != _node_bytes(nb):
            return f"node {i} ({na.op_type} {na.name!r}) differs: {_short_node(na)} vs {_short_node(nb)}"
    if len(nodes_a) != len(nodes_b):
        return f"{len(nodes_a)} nodes vs {len(nodes_b)}"
    consts_a = {i.name: i for i in a.graph.initializer if i.name.startswith("const_")}
    consts_b = {i.name: i for i in b.graph.initializer if i.name.startswith("const_")}
    if set(consts_a) != set(consts_b):
        return f"constant initializers {sorted(consts_a)} vs {sorted(consts_b)}"
    for name, init in consts_a.items():
        if init.SerializeToString(deterministic=True) != consts_b[name].SerializeToString(deterministic=True):
            from onnx import numpy_helper

            return (f"constant {name} differs: {numpy_helper.to_array(init).tolist()} vs "
                    f"{numpy_helper.to_array(consts_b[name]).tolist()}")
    return None


def _node_bytes(node) -> bytes:
    """A node as the graph computes it: without ``metadata_props`` and ``doc_string`` (the
    dynamo route writes the traced FX node there, input shapes included, so two exports at
    other batch sizes would always differ)."""
    if not node.metadata_props and not node.doc_string:
        return node.SerializeToString(deterministic=True)
    bare = onnx.NodeProto()
    bare.CopyFrom(node)
    del bare.metadata_props[:]
    bare.doc_string = ""
    return bare.SerializeToString(deterministic=True)


def _short_node(node) -> str:
    from onnx import helper, numpy_helper

    attrs = []
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        if isinstance(value, onnx.TensorProto):
            value = numpy_helper.to_array(value).tolist()
        attrs.append(f"{attr.name}={value}")
    return f"{node.op_type}({', '.join(node.input)}){' ' + ', '.join(attrs) if attrs else ''}"


def _write_state_into_initializers(proto: onnx.ModelProto, mapping: dict[str, str],
                                   state: dict[str, torch.Tensor]) -> None:
    """Give every state initializer the model's (restored) value.

    A TRAINING export reads the buffers *after* its own forward pass: BatchNorm running
    statistics (and ``num_batches_tracked``) would otherwise reach Aidge already updated
    once by the export's example input, while the torch model has them restored.
    """
    from onnx import numpy_helper

    for init in proto.graph.initializer:
        name = mapping.get(init.name)
        if name is not None:
            init.CopyFrom(numpy_helper.from_array(state[name].detach().cpu().numpy(), init.name))


def proto_with_state(exported: "ExportedModel", model: torch.nn.Module) -> onnx.ModelProto:
    """A copy of ``exported``'s ONNX graph whose state initializers hold ``model``'s current values
    (parameters and buffers by torch name): the graph as it computes after training steps, for a
    reference run (onnxruntime) on the weights the two sides hold now."""
    import onnx

    proto = onnx.ModelProto()
    proto.CopyFrom(exported.proto)
    state = _state_tensors(model)
    _write_state_into_initializers(proto, {k: v for k, v in exported.initializer_to_state.items() if v in state},
                                   state)
    return proto


def _rename_initializers(proto: onnx.ModelProto, state_names: set[str]) -> dict[str, str]:
    """Rename every initializer to ``param_<i>`` in place; return new name -> torch name.

    Initializers that are not torch state (constants created by the exporter) keep a
    ``const_<i>`` name and are absent from the mapping.
    """
    graph = proto.graph
    renames: dict[str, str] = {}
    mapping: dict[str, str] = {}
    for i, init in enumerate(graph.initializer):
        if init.name in state_names:
            new = f"param_{i}"
            mapping[new] = init.name
        else:
            new = f"const_{i}"
        renames[init.name] = new
        init.name = new
    for value in graph.input:
        if value.name in renames:
            value.name = renames[value.name]
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name in renames:
                node.input[k] = renames[name]
    for value in graph.output:
        if value.name in renames:
            value.name = renames[value.name]
    return mapping


def default_input_names(n: int) -> list[str]:
    """The ONNX names the export gives the model's ``n`` inputs, in the model's order."""
    return [f"input_{i}" for i in range(n)]


def unused_graph_inputs(proto, names: Sequence[str]) -> frozenset[str]:
    """Those of the model's input ``names`` that no node of the ONNX graph reads: the
    exporter drops such an input from the graph (``torch.ones_like(x)`` exports a constant)
    or keeps it unread."""
    read = {name for node in proto.graph.node for name in node.input}
    read |= {out.name for out in proto.graph.output}
    return frozenset(name for name in names if name not in read)
