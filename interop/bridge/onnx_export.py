"""torch.nn.Module -> ONNX ModelProto, in memory and without side effects.

Two routes (``exporter=``, see :data:`interop.exporters.EXPORTERS`): torch's TorchScript exporter
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

This module holds the export itself (:func:`export_to_onnx`, under :data:`_EXPORT_LOCK`; the
TorchScript route, the lazy modules materialised first, the quiet it runs in) and the value
dependence check (:func:`check_value_dependence`). The rest lives, by what each part does, in
:mod:`.onnx_export_state` (the model's state restored around an export),
:mod:`.onnx_export_graph` (:class:`ExportedModel` and what reads or writes its ONNX graph) and
:mod:`.onnx_export_dynamo` (the dynamo route).
"""
from __future__ import annotations

import contextlib
import ctypes
import io
import logging
import os
import re
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Sequence

import onnx
import torch

from ..errors import ExportError, StatefulModelError, TracingError
from ..exporters import AUTO_ORDER, check_exporter, note_routes
from .events import crash_phase
from .onnx_export_state import _state_tensors, _stateful_buffers, _unchanged, preserved_state
from .onnx_export_graph import (OPSET_VERSION, ExportedModel, _rename_initializers, _write_state_into_initializers,
                                default_input_names, graph_differences)
from .onnx_export_dynamo import _dynamo_export

__all__ = ["export_to_onnx", "materialize_lazy", "has_lazy_state", "check_value_dependence", "TracingWarning",
           "TRACE_WARNING_POLICIES"]

#: what ``wrap(on_trace_warning=...)`` accepts
TRACE_WARNING_POLICIES = ("error", "warn", "ignore")

#: held for the whole of each export: torch's exporter, the warning filters it is run under
#: and the stdout silencing are process-wide state (six threads wrapping at once used to fail
#: 14-16 of 24 exports spuriously and leave ``sys.stdout`` a StringIO and fd 1 a deleted file)
_EXPORT_LOCK = threading.RLock()


def _plain(text: str) -> str:
    """``text`` without terminal colour codes (the dynamo exporter's errors carry them)."""
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


@contextlib.contextmanager
def _quiet_torch_onnx_logging():
    """The dynamo exporter logs through ``logging`` (torch's own handler prints them on stderr:
    "torchvision is not installed. Skipping torchvision::nms"): its loggers are muted for the
    export (under the export lock) and restored."""
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
