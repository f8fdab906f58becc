"""``wrap(model, sizes, backend="export_cpp")``: the torch model exported to ONNX, imported
into Aidge, generated as C++ and compiled (:mod:`.export_cpp`, cached), and returned as an
:class:`~.export_module.ExportCppModule`."""
from __future__ import annotations

from typing import Sequence

import torch

from ..env import read as read_env
from ..errors import BackwardNotApplicableError
from . import runtime as rt
from .export_cpp import DEFAULT_DFORMAT, build_export
from .export_module import ExportCppModule
from .graph import _import_graph
from .onnx_export import check_value_dependence, export_to_onnx

__all__ = ["wrap_export_cpp", "DFORMAT_ENV"]

#: the layout mode used when wrap() is given none (default: DEFAULT_DFORMAT, "torch")
DFORMAT_ENV = "INTEROP_EXPORT_DFORMAT"


def wrap_export_cpp(torch_model: torch.nn.Module, example_inputs: Sequence[torch.Tensor], *,
                    training: bool | None, verbose: bool, on_trace_warning: str,
                    dformat: str | None, output_structure, exporter: str = "auto") -> ExportCppModule:
    """See :func:`interop.bridge.wrapping.wrap`. The model is exported in eval mode: the
    export is inference only (``training=True``, or None on a model in train mode, raises
    :class:`~interop.errors.BackwardNotApplicableError`). ``output_structure(model, inputs,
    exported)``: the pytree spec of the model's output and its leaves (wrapping's, passed in)."""
    dformat = dformat or read_env(DFORMAT_ENV) or DEFAULT_DFORMAT
    if training or (training is None and torch_model.training):
        raise BackwardNotApplicableError(
            "backend 'export_cpp' runs inference only: call model.eval() or wrap(..., training=False) "
            "(Aidge's C++ export has no training mode and no backward)")
    exported = export_to_onnx(torch_model, example_inputs, training=False, exporter=exporter)
    check_value_dependence(torch_model, example_inputs, exported, on_trace_warning)
    out_spec, leaves = output_structure(torch_model, example_inputs, exported)
    with rt.quiet_aidge(verbose):
        graph = _import_graph(exported)  # the imported graph, as the other backends see it
    compiled = build_export(exported, example_inputs, dformat=dformat, verbose=verbose)
    return ExportCppModule(torch_model, compiled, graph, example_inputs=example_inputs, out_spec=out_spec,
                           out_leaves=[(tuple(t.shape), t.dtype) for t in leaves],
                           dformat=dformat, exported=exported)
