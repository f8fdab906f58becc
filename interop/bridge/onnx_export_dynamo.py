"""The dynamo route of the export (:mod:`interop.bridge.onnx_export`, ``exporter="dynamo"``):
torch's dynamo exporter (:func:`_dynamo_export`), its translation of a train-mode BatchNorm
(:func:`batch_norm_functional`), onnxscript's optimiser with the model's state held aside
(:func:`optimize_keeping_state`) and ``CastLike`` lowered to ``Cast`` for aidge_onnx
(:func:`lower_castlike`)."""
from __future__ import annotations

import onnx
import torch
from onnx import helper, shape_inference

from .onnx_export_graph import OPSET_VERSION
from .onnx_export_state import _state_tensors


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
