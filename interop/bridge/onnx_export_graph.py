"""What an export gives (:mod:`interop.bridge.onnx_export`): :class:`ExportedModel`, the ONNX
graph (opset :data:`OPSET_VERSION`) with its mapping back onto the torch model, and what reads or
writes that graph: the structural comparison of two exports (:func:`graph_differences`), the
initializers renamed ``param_<i>`` / ``const_<i>`` and given the model's state
(:func:`_rename_initializers`, :func:`_write_state_into_initializers`, :func:`proto_with_state`),
the names of the model's inputs (:func:`default_input_names`, :func:`unused_graph_inputs`)."""
from __future__ import annotations

import dataclasses
from typing import Sequence

import onnx
import torch
from onnx import helper, numpy_helper

from .onnx_export_state import _state_tensors

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
    for init in proto.graph.initializer:
        name = mapping.get(init.name)
        if name is not None:
            init.CopyFrom(numpy_helper.from_array(state[name].detach().cpu().numpy(), init.name))


def proto_with_state(exported: "ExportedModel", model: torch.nn.Module) -> onnx.ModelProto:
    """A copy of ``exported``'s ONNX graph whose state initializers hold ``model``'s current values
    (parameters and buffers by torch name): the graph as it computes after training steps, for a
    reference run (onnxruntime) on the weights the two sides hold now."""
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
