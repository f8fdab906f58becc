"""Aidge as an ONNX backend: :class:`AidgeBackend` / :class:`AidgeBackendRep`, the
``onnx.backend.base`` interface (``prepare``, ``run``, ``run_model``, ``supports_device``) over
aidge_onnx and an Aidge backend (``cpu``; ``cuda`` where :func:`interop.bridge.cuda.cuda_available`
says it runs).

Any ONNX model, not only one torch exported: onnx's own backend tests
(``tests/test_onnx_backend.py``, docs/onnx-conformance.md), a model from a zoo, a user's file::

    from interop.bridge.onnx_backend import AidgeBackend

    rep = AidgeBackend.prepare(onnx.load("model.onnx"))      # import (GenericOperator refused)
    outputs = rep.run([x])                                   # compile at x's dims, forward
    outputs = AidgeBackend.run_model(model, [x])             # both at once
    onnx.backend.test.BackendTest(AidgeBackend, __name__)    # onnx's own runner takes it as is

The graph runs with its own dtypes: ``prepare`` imports (the ModelProto is copied: aidge_onnx
renames the one it is given), ``run`` compiles at the inputs' dims and dtypes through the
bridge's one compile (:func:`interop.bridge.graph.compile_with_own_dtypes`, never a second copy
of it; a float32 compile only where Aidge cannot propagate dtypes and every input is float32),
then checks that every output dims could be computed (:func:`~interop.bridge.graph.check_dims_forwarded`)
and forwards. The graph is compiled again when the inputs' dims or dtypes change.

Every failure is an :class:`interop.errors.AidgeError` with its phase (``import``, ``compile``,
``forward``), Aidge's own words, the operator and the node where known: the same errors (and so
the same categories) as :func:`interop.wrap`. Nothing is printed (Aidge's console log is lowered
for each call); nothing is written.
"""
from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np
from onnx.backend.base import Backend, BackendRep
import onnx

from ..errors import AidgeError, UnsupportedOperatorError, aidge_error_from
from ..import_gaps import generic_nodes_message
from . import runtime as rt
from ..threads_policy import aidge_dynamic_teams
from .cuda import cuda_available

__all__ = ["AidgeBackend", "AidgeBackendRep", "prepare", "run_model", "supports_device"]

_DEVICES = {"CPU": "cpu", "CUDA": "cuda"}
#: numpy dtype names that aidge_core.dtype spells otherwise
_AIDGE_DTYPE_NAMES = {"bool": "boolean"}


def _aidge_backend(device: str) -> str:
    name = _DEVICES.get(str(device).split(":")[0].upper())
    if name is None:
        raise ValueError(f"AidgeBackend: unknown device {device!r} (CPU or CUDA)")
    return name


def _graph_input_names(model) -> list[str]:
    """The ONNX graph inputs a caller feeds: those that are no initializer, in the graph's order."""
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


class AidgeBackendRep(BackendRep):
    """A prepared model: the imported Aidge graph, compiled at the first :meth:`run`'s inputs."""

    def __init__(self, graph, model, backend: str = "cpu"):
        self.graph = graph
        self.backend = backend
        self.input_names = _graph_input_names(model)
        self.output_names = [o.name for o in model.graph.output]
        self._signature = None
        self._scheduler = None
        self._ports = None

    def _compile(self, arrays: list[np.ndarray]) -> None:
        from .graph import check_dims_forwarded, compile_with_own_dtypes, mark_dynamic_dims
        from .runner import _data_ports

        core = rt.aidge_core()
        names = [a.dtype.name for a in arrays]
        try:
            dtypes = [getattr(core.dtype, _AIDGE_DTYPE_NAMES.get(n, n)) for n in names]
        except AttributeError as exc:
            raise AidgeError("compile", f"Aidge has no data type for the input dtypes {names}") from exc
        try:
            compile_with_own_dtypes(self.graph, self.backend, [list(a.shape) for a in arrays], dtypes, names)
        except Exception as exc:
            raise aidge_error_from(exc, "compile") from exc
        mark_dynamic_dims(self.graph)
        check_dims_forwarded(self.graph)
        self._ports = _data_ports(self.graph, len(arrays), self.input_names)
        self._scheduler = core.SequentialScheduler(self.graph)

    def run(self, inputs: Any, **kwargs) -> tuple:
        """The graph's outputs (numpy arrays, in the ONNX graph's output order) on ``inputs``: a
        sequence of arrays in the order of the graph inputs that are no initializer, a mapping
        name -> array, or one array."""
        arrays = self._arrays(inputs)
        with rt.quiet_aidge():
            signature = [(a.shape, a.dtype) for a in arrays]
            if signature != self._signature:
                self._signature = None
                self._compile(arrays)
                self._signature = signature
            self._forward([a for a, port in zip(arrays, self._ports) if port is not None])
            return tuple(self._outputs())

    def _forward(self, arrays: list[np.ndarray]) -> None:
        """The inputs as Aidge tensors and the scheduler's forward (the ``forward`` phase)."""
        from .runner import unfinished_node

        core = rt.aidge_core()
        tensors = []
        for k, a in enumerate(arrays):
            try:
                tensors.append(core.Tensor(a))
            except Exception as exc:  # noqa: BLE001 - Aidge's Tensor cannot hold this numpy dtype
                self._signature = None
                raise AidgeError("forward", f"aidge_core.Tensor cannot hold input #{k} (numpy dtype {a.dtype}): "
                                            f"{exc}") from exc
        try:
            with aidge_dynamic_teams():
                self._scheduler.forward(True, tensors)
        except Exception as exc:
            node = unfinished_node(self._scheduler, "forward")
            self._signature = None
            if node is None:
                raise aidge_error_from(exc, "forward") from exc
            raise aidge_error_from(exc, "forward", node=node.name(), operator=node.type()) from exc

    def _arrays(self, inputs: Any) -> list[np.ndarray]:
        if isinstance(inputs, dict):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise ValueError(f"AidgeBackendRep.run: no value for the graph input(s) {missing}")
            inputs = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray):
            inputs = [inputs]
        arrays = [np.ascontiguousarray(np.asarray(x)) for x in inputs]
        if len(arrays) != len(self.input_names):
            raise ValueError(f"AidgeBackendRep.run: {len(arrays)} input(s) given, the graph takes "
                             f"{len(self.input_names)} ({self.input_names})")
        return arrays

    def _outputs(self) -> list[np.ndarray]:
        out = []
        for i, (node, index) in enumerate(self.graph.get_ordered_outputs()):
            tensor = node.get_operator().get_output(index)
            try:
                out.append(np.array(tensor, copy=True))
            except Exception as exc:  # noqa: BLE001 - dims that cannot be read back: Aidge's failure
                raise AidgeError("forward", f"output #{i} cannot be read back (dims {list(tensor.dims)}): {exc}",
                                 operator=node.type(), node=node.name()) from exc
        return out


class AidgeBackend(Backend):
    """``onnx.backend.base.Backend`` over Aidge (see the module docstring)."""

    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs) -> AidgeBackendRep:
        """``model`` (a ModelProto, or serialized bytes) imported by aidge_onnx for ``device``;
        :class:`~interop.errors.UnsupportedOperatorError` when a node has no native Aidge operator
        (imported as GenericOperator), :class:`~interop.errors.AidgeError` (phase ``import``) when
        the import fails."""
        backend = _aidge_backend(device)
        if isinstance(model, (bytes, bytearray)):
            model = onnx.load_model_from_string(bytes(model))
        rt.load_backend(backend)
        graph = import_model(model)
        return AidgeBackendRep(graph, model, backend)

    @classmethod
    def run_model(cls, model, inputs: Any, device: str = "CPU", **kwargs) -> tuple:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs: Any, device: str = "CPU", outputs_info=None, **kwargs):
        raise NotImplementedError("AidgeBackend runs whole models (onnx's node tests are models too)")

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            backend = _aidge_backend(device)
        except ValueError:
            return False
        if backend == "cpu":
            return True

        return bool(cuda_available()[0])


def import_model(model):
    """The Aidge graph of ONNX ``model`` (a copy is imported), GenericOperator nodes refused."""
    from .graph import generic_nodes

    core, onnx_import = rt.aidge_core(), rt.aidge_onnx().onnx_import
    with rt.quiet_aidge():
        try:
            graph = onnx_import.convert_onnx_to_aidge(copy.deepcopy(model))
        except Exception as exc:
            raise aidge_error_from(exc, "import") from exc
        generic = generic_nodes(graph)
        if generic:
            generic.sort(key=lambda n: n.name())
            raise UnsupportedOperatorError(
                "import", generic_nodes_message([(n.name(), n.type()) for n in generic]),
                operator=generic[0].type(), node=generic[0].name())
        core.remove_flatten(graph)
    return graph


prepare = AidgeBackend.prepare
run_model = AidgeBackend.run_model
supports_device = AidgeBackend.supports_device
