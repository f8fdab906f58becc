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

Modules: :mod:`~interop.bridge.wrapping` (``wrap``), :mod:`~interop.bridge.onnx_export`
(step 1), :mod:`~interop.bridge.graph` (steps 2-3), :mod:`~interop.bridge.module`
(``AidgeModule``, ``AidgeSGD``: steps 4-6), :mod:`~interop.bridge.runner` (the scheduler
calls and the tensor copies around them), :mod:`~interop.bridge.tensors` (exact torch <->
Aidge tensor conversion), :mod:`~interop.bridge.runtime` (Aidge's imports and console
level), :mod:`~interop.bridge.cuda` (the CUDA probes); the third backend, ``export_cpp``
(Aidge's generated C++): :mod:`~interop.bridge.export_wrapping` (its ``wrap``),
:mod:`~interop.bridge.export_cpp` (generation, compilation, cache) and
:mod:`~interop.bridge.export_module` (``ExportCppModule``: the compiled forward through ctypes).

The package is imported lazily (as :mod:`interop` is): importing it, or its light modules
(:mod:`~interop.bridge.events`, :mod:`~interop.bridge.capture`), loads no torch and no Aidge;
the names below load their module on first access.
"""
from __future__ import annotations

from .._lazy import lazy_attributes

__all__ = ["wrap", "AidgeModule", "AidgeSGD", "ExportCppModule", "normalize_input_sizes"]

_EXPORTS = {
    "wrap": "wrapping",
    "normalize_input_sizes": "wrapping",
    "AidgeModule": "module",
    "AidgeSGD": "module",
    "ExportCppModule": "export_module",
    # also here: the names other modules of the library use from interop.bridge
    "_compile": "graph",
    "_import_graph": "graph",
    "check_dims_forwarded": "graph",
    "generic_nodes": "graph",
    "SHARE_INPUT_ELEMENTS": "runner",
    "read_tensor": "runner",
    "write_tensor": "runner",
}
_SUBMODULES = ("binding", "capture", "cuda", "events", "export_cpp", "export_module", "export_validity",
               "export_wrapping", "graph", "known_defects", "module", "module_checks", "module_params", "onnx_backend",
               "onnx_export", "onnx_export_dynamo", "onnx_export_graph", "onnx_export_state", "ort", "runner",
               "runtime", "single_node", "tensors", "value_check", "wrapping")

__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
