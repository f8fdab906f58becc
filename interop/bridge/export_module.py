"""The ``export_cpp`` backend, torch side: :class:`ExportCppModule`, a ``torch.nn.Module``
whose forward calls the compiled ``model_forward`` of Aidge's C++ export in-process
(ctypes, preallocated buffers), with every output in torch's layout and structure.

The export is forward only and inference only: its weights are baked into the library at
export time, it has no backward (a backward through it raises
:class:`~interop.errors.BackwardNotApplicableError`) and its input shapes are fixed.
"""
from __future__ import annotations

import ctypes
import time
from typing import Sequence
import functools

import numpy as np
import torch
from torch.utils import _pytree as pytree

from ..errors import AidgeError, BackwardNotApplicableError, ShapeSpecializedError
from .export_cpp import CompiledExport
from .module_params import _register

__all__ = ["ExportCppModule", "BACKEND"]

BACKEND = "export_cpp"

_NP_DTYPES = {"float": np.float32, "float32": np.float32, "int64_t": np.int64, "int32_t": np.int32,
              "int8_t": np.int8, "uint8_t": np.uint8, "double": np.float64}
_TORCH_TO_NP = {torch.float32: np.float32, torch.int64: np.int64, torch.int32: np.int32, torch.float64: np.float64}
#: layout name -> permutation from torch's (channel-first) order to that layout
_TO_LAYOUT = {"NHWC": (0, 2, 3, 1), "HWC": (1, 2, 0), "NWC": (0, 2, 1)}


class _NoBackward(torch.autograd.Function):
    """Outputs that carry a grad_fn whose backward says the export has none."""

    @staticmethod
    def forward(ctx, n_outputs: int, *tensors):
        return tuple(t.clone() for t in tensors[-n_outputs:])

    @staticmethod
    def backward(ctx, *grads):
        raise BackwardNotApplicableError(
            "backward is not applicable on backend 'export_cpp': Aidge's C++ export computes the forward only")


class _Binding:
    """``model_forward`` of one loaded library, with the output views of its static memory."""

    def __init__(self, compiled: CompiledExport, out_leaves: list[tuple[tuple[int, ...], torch.dtype]],
                 dformat: str, input_dims: list[tuple[int, ...]]):
        self.lib = ctypes.CDLL(str(compiled.library))
        self.fn = self.lib.model_forward
        self.fn.restype = None
        self.n_in = len(compiled.inputs)
        self.cells = [ctypes.c_void_p() for _ in compiled.outputs]
        self.fn.argtypes = [ctypes.c_void_p] * (self.n_in + len(self.cells))
        self.cell_ptrs = [ctypes.addressof(c) for c in self.cells]
        self.input_perm = [self._input_permutation(d, tuple(i["dims"]), dformat)
                           for d, i in zip(input_dims, compiled.inputs)]
        self.plan = _output_plan(compiled, out_leaves)
        self.views: list[np.ndarray] | None = None
        self.addresses: list[int] = []
        #: seconds inside model_forward itself, summed
        self.seconds = 0.0

    @staticmethod
    def _input_permutation(torch_dims, export_dims, dformat: str):
        """None when the export takes torch's layout; the channel-last permutation when its
        input dims are torch's in channel-last order. Layout mode ``default`` (channel-last at
        the boundary) checks that order first: with a (1, 8, 8, 8) input both read alike."""
        perm = _TO_LAYOUT.get({4: "NHWC", 3: "NWC"}.get(len(torch_dims), ""))
        channel_last = perm is not None and tuple(torch_dims[p] for p in perm) == tuple(export_dims)
        if dformat == "default" and channel_last:
            return perm
        if tuple(torch_dims) == tuple(export_dims):
            return None
        if channel_last:
            return perm
        raise AidgeError("compile", f"the export takes an input of dims {list(export_dims)} where torch passes "
                         f"{list(torch_dims)}: no known layout maps one onto the other")

    def prepared(self, inputs: Sequence[torch.Tensor]) -> tuple[list[int], list[torch.Tensor]]:
        """The data pointers ``model_forward`` takes for ``inputs`` (float32, contiguous, in
        the export's layout) and the tensors that own them (keep them alive)."""
        args, keep = [], []
        for x, perm in zip(inputs, self.input_perm):
            x = x.detach()
            if x.dtype != torch.float32:
                x = x.to(torch.float32)
            if perm is not None:
                x = x.permute(*perm)
            x = x.contiguous()
            keep.append(x)
            args.append(x.data_ptr())
        return args, keep

    def __call__(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        args, _alive = self.prepared(inputs)  # _alive: the input buffers, alive through the call
        start = time.perf_counter()
        self.fn(*args, *self.cell_ptrs)
        self.seconds += time.perf_counter() - start
        addresses = [self.cells[j].value for j, *_ in self.plan]
        if self.views is None or addresses != self.addresses:  # measured: never moves; checked anyway
            self.views = [_view(a, count, dtype) for a, (_, count, dtype, *_) in zip(addresses, self.plan)]
            self.addresses = addresses
        out = []
        for view, (_, _, _, export_shape, perm_back, torch_shape) in zip(self.views, self.plan):
            t = torch.from_numpy(view.copy()).reshape(export_shape)
            if perm_back is not None:
                t = t.permute(*perm_back).contiguous()
            out.append(t.reshape(torch_shape))
        return out


def _view(address: int, count: int, dtype) -> np.ndarray:
    """A numpy view of ``count`` elements at ``address`` (the export's static memory: the
    pointers ``model_forward`` returns are the same on every call)."""
    return np.frombuffer((ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(address), dtype=dtype)


def _output_plan(compiled: CompiledExport, out_leaves):
    """For each torch output leaf: (export output index, element count, numpy dtype,
    export dims, permutation back to torch's layout or None, torch shape). Export outputs
    that are no torch output (the MaxPool index tensors that layout mode ``torch`` lists) are
    skipped; anything that cannot be matched with certainty raises."""
    plan, used = [], set()
    start = 0
    for leaf_index, (shape, dtype) in enumerate(out_leaves):
        want = _TORCH_TO_NP.get(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        for j in range(start, len(compiled.outputs)):
            o = compiled.outputs[j]
            np_dtype = _NP_DTYPES.get(o["dtype"])
            if np_dtype == want and int(o["size"]) == count:
                dims = tuple(int(d) for d in o["dims"])
                plan.append((j, count, np_dtype, dims, _permutation_back(shape, dims, compiled.output_formats[j], o),
                             tuple(shape)))
                used.add(j)
                start = j + 1
                break
        else:
            raise AidgeError("compile", f"torch output {leaf_index} ({tuple(shape)}, {dtype}) has no counterpart among "
                             f"the export's outputs {[(o['name'], o['dims'], o['dtype']) for o in compiled.outputs]}")
    extra = [o for j, o in enumerate(compiled.outputs) if j not in used]
    if any(_NP_DTYPES.get(o["dtype"]) != np.int64 for o in extra):
        raise AidgeError("compile", f"the export has outputs that are no torch output: "
                         f"{[(o['name'], o['dims'], o['dtype']) for o in extra]}")
    return plan


def _permutation_back(torch_shape, dims, fmt, output) -> tuple[int, ...] | None:
    """None when the export's output is in torch's layout; the permutation from the export's
    layout back to torch's when its layout (the layer header's format) is channel-last;
    an error when the export's dims cannot be torch's tensor in a known layout."""
    torch_shape = tuple(torch_shape)
    perm = _TO_LAYOUT.get((fmt or "").upper())
    if perm is not None and len(perm) == len(torch_shape) and len(torch_shape) == len(dims):
        if tuple(torch_shape[p] for p in perm) == tuple(dims):
            return tuple(int(i) for i in np.argsort(perm))
    squeezed = [d for d in dims if d != 1] == [d for d in torch_shape if d != 1]
    if tuple(dims) == torch_shape or (len(dims) != len(torch_shape) and squeezed):
        return None  # the same elements in the same order (a rank-1 axis more or less)
    raise AidgeError("compile", f"export output {output['name']!r} has dims {list(dims)} in layout {fmt} where torch "
                     f"has {list(torch_shape)}: no known layout maps one onto the other")


class ExportCppModule(torch.nn.Module):
    """A torch.nn.Module whose forward runs Aidge's compiled C++ export of a torch model.

    ``named_parameters()`` / ``named_buffers()`` are frozen copies of the torch model's
    state at export time (the weights are compiled into the library; changing these
    copies changes nothing). Inputs must have the exported shapes; floating inputs are
    passed as float32. Outputs keep the torch model's structure.
    """

    def __init__(self, torch_model: torch.nn.Module, compiled: CompiledExport, graph, *,
                 example_inputs: Sequence[torch.Tensor], out_spec, out_leaves, dformat: str, exported=None):
        super().__init__()
        self._compiled = compiled
        self._exported = exported  # the ONNX export (ExportedModel) the graph was imported from
        self._graph = graph
        self._dformat = dformat
        self._input_sizes = [tuple(x.shape) for x in example_inputs]
        self._out_spec = out_spec
        self._binding = _Binding(compiled, out_leaves, dformat, self._input_sizes)

        for name, p in torch_model.named_parameters():
            _register(self, name, torch.nn.Parameter(p.detach().clone(), requires_grad=False))
        for name, b in torch_model.named_buffers():
            _register(self, name, b.detach().clone(), buffer=True)
        self.train(False)

    def forward(self, *inputs: torch.Tensor):
        if len(inputs) != len(self._input_sizes):
            raise TypeError(f"ExportCppModule expects {len(self._input_sizes)} input(s), got {len(inputs)}")
        shapes = [tuple(x.shape) for x in inputs]
        if shapes != self._input_sizes:
            raise ShapeSpecializedError(
                f"this export_cpp module was compiled for input shapes {self._input_sizes}, not {shapes}: "
                f"the C++ export fixes every shape at export time; wrap the model again at these shapes")
        outputs = self._binding(inputs)
        if torch.is_grad_enabled() and any(x.requires_grad for x in inputs):
            outputs = list(_NoBackward.apply(len(outputs), *inputs, *outputs))
        if self._out_spec is None:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        return pytree.tree_unflatten(outputs, self._out_spec)

    def train(self, mode: bool = True):
        if mode:
            raise BackwardNotApplicableError("an export_cpp module runs in inference mode only "
                                             "(Aidge's C++ export has no training)")
        return super().train(False)

    def raw_forward(self, inputs: Sequence[torch.Tensor]):
        """The compiled call alone, prepared outside it (what the benchmarks time, as they
        time the scheduler's own forward on the other backends): ``model_forward`` on
        ``inputs`` already converted to the export's layout, bound with
        ``functools.partial``; the outputs stay in the export's memory."""
        args, keep = self._binding.prepared(inputs)
        call = functools.partial(self._binding.fn, *args, *self._binding.cell_ptrs)
        call.keep_alive = keep  # noqa: B010  (the input buffers live as long as the call)
        return call

    @property
    def graph(self):
        """The Aidge graph as imported from the model's ONNX export (before the export
        adapted it): what :func:`interop.cases.suite.assert_operator_in_graph` reads."""
        return self._graph

    @property
    def onnx_model(self):
        """The exported ONNX ModelProto the export was generated from (None when not given)."""
        return self._exported.proto if self._exported is not None else None

    @property
    def exporter(self) -> str | None:
        """torch's route to ONNX that made the export's graph (``"torchscript"``/``"dynamo"``)."""
        return self._exported.exporter if self._exported is not None else None

    @property
    def backend(self) -> str:
        return BACKEND

    @property
    def compiled(self) -> CompiledExport:
        """Where the library lives, its inputs and outputs, generation and compile seconds."""
        return self._compiled

    @property
    def dformat(self) -> str:
        return self._dformat

    @property
    def aidge_time_s(self) -> float:
        """Seconds spent inside the compiled ``model_forward`` (the input copies and output
        copies around it excluded), summed since ``wrap``."""
        return self._binding.seconds

    def extra_repr(self) -> str:
        return f"backend='export_cpp', dformat={self._dformat!r}, inputs={self._input_sizes}"

    def __deepcopy__(self, memo):
        raise TypeError("an ExportCppModule cannot be deep-copied (it holds a loaded library); wrap() the torch "
                        "model again")
