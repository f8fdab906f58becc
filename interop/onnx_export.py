"""torch.nn.Module -> ONNX ModelProto, in memory and without side effects.

Facts this module relies on (torch 2.13, see shared/AIDGE_NOTES.md):
- the legacy TorchScript exporter (``dynamo=False``) is ~10x faster than the dynamo one;
- an EVAL export merges initializers holding identical values unless
  ``keep_initializers_as_inputs=True``, which would break the parameter mapping;
- a TRAINING export runs a forward pass that updates BatchNorm running statistics, so the
  model's whole state (parameters, buffers, mode) is snapshotted and restored.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import warnings
from typing import Sequence

import onnx
import torch

from .errors import ExportError

__all__ = ["ExportedModel", "export_to_onnx", "preserved_state"]

OPSET_VERSION = 18


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


@contextlib.contextmanager
def preserved_state(model: torch.nn.Module):
    """Restore the parameters, buffers and train/eval mode of every submodule on exit."""
    modes = {name: m.training for name, m in model.named_modules()}
    saved = {name: t.detach().clone() for name, t in _state_tensors(model).items()}
    try:
        yield
    finally:
        with torch.no_grad():
            for name, tensor in _state_tensors(model).items():
                if name in saved and not _unchanged(tensor, saved[name]):
                    tensor.copy_(saved[name])  # only when changed: keeps autograd versions intact
        for name, m in model.named_modules():
            if name in modes:
                m.training = modes[name]


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


def export_to_onnx(
    model: torch.nn.Module,
    example_inputs: Sequence[torch.Tensor],
    *,
    training: bool | None = None,
    input_names: Sequence[str] | None = None,
) -> ExportedModel:
    """Export ``model`` to an in-memory ONNX model (opset 18).

    ``training=None`` follows ``model.training``. Initializers are renamed ``param_<i>`` so
    that names can never collide after Aidge's name mangling (``encoder.1`` and
    ``encoder_1`` would); the mapping back to torch state names is returned.
    """
    if training is None:
        training = model.training
    names = list(input_names) if input_names else [f"input_{i}" for i in range(len(example_inputs))]
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    buffer = io.BytesIO()
    # fork_rng: a TRAINING export runs the model (Dropout draws): the caller's RNG is restored.
    with preserved_state(model), warnings.catch_warnings(), torch.random.fork_rng(devices=[]):
        # catch_warnings restores the caller's filters on exit: nothing global is changed.
        warnings.simplefilter("ignore")
        try:
            with torch.no_grad():
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
            raise ExportError(f"torch.onnx.export failed for {type(model).__name__}: {exc}") from exc
    proto = onnx.load_from_string(buffer.getvalue())
    state_names = set(_state_tensors(model))
    mapping = _rename_initializers(proto, state_names)
    _write_state_into_initializers(proto, mapping, _state_tensors(model))
    graph_inputs = {i.name for i in proto.graph.initializer}
    inputs = [i.name for i in proto.graph.input if i.name not in graph_inputs]
    outputs = [o.name for o in proto.graph.output]
    scopes = {n.name: n.name for n in proto.graph.node}
    return ExportedModel(proto, inputs, outputs, mapping, scopes, training)


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
