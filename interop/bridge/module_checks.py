"""The checks of an :class:`~interop.bridge.module.AidgeModule`'s calls, as two of the classes it is
made of: :class:`_ShapeGuard` (a call at new input shapes or dtypes refused before Aidge runs when
the compiled graph cannot take them: the torch model exported again at the call's shapes and the
graphs compared) and :class:`_ValueCheck` (the first-call value check: torch's computation of the
same call on the module's own weights, :class:`_Reference`, against Aidge's outputs and gradients),
with :class:`_export_modes`, the torch model in the modes it was exported in meanwhile."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch.utils import _pytree as pytree
import onnx.helper

from ..errors import ExportError, ShapeSpecializedError
from . import value_check as vc
from .onnx_export_graph import default_input_names, graph_differences
from .onnx_export_state import attributes_preserved


class _ShapeGuard:
    """:class:`~interop.bridge.module.AidgeModule`'s shape guard (a mixin: the module's state is
    the module's own)."""

    def _check_signature(self, inputs: Sequence[torch.Tensor]) -> list | None:
        """Called by the runner before it runs new input shapes or dtypes: refuse what the
        compiled graph cannot take, before Aidge runs; return the output shapes torch gives
        at these input shapes (the runner's shape guard), cached per shape set."""
        self._check_dtypes(inputs)
        shapes = tuple(tuple(x.shape) for x in inputs)
        if shapes not in self._shapes_checked:
            why = self._shape_difference(inputs)
            self._shapes_checked[shapes] = (why, self._torch_output_shapes(inputs) if why is None else None)
        why, expected = self._shapes_checked[shapes]
        if why is not None:
            raise ShapeSpecializedError(
                f"this AidgeModule was wrapped at input shapes {self._input_sizes}; at {list(shapes)} the "
                f"model's ONNX graph is not the same ({why}): the model bakes an input shape into its graph "
                f"(e.g. x.view(x.size(0), -1)), so Aidge would compute with the wrapped shapes. Wrap the "
                f"model again at these shapes: wrap(model, {list(shapes)})")
        return expected

    def _check_dtypes(self, inputs: Sequence[torch.Tensor]) -> None:
        for i, (x, dtype) in enumerate(zip(inputs, self._input_dtypes)):
            if x.dtype != dtype and not (x.is_floating_point() and dtype.is_floating_point):
                raise TypeError(f"input {i} has dtype {x.dtype}, but this AidgeModule was wrapped with "
                                f"{dtype} for it (the Aidge graph is compiled for that type)")

    def _torch_output_shapes(self, inputs: Sequence[torch.Tensor]) -> list | None:
        pending = self._pending_shapes  # the value check already ran torch on this very call
        if pending is not None and pending[0] == tuple(tuple(x.shape) for x in inputs):
            return list(pending[1])
        if self._torch_shapes is None:
            return None
        return [tuple(s) for s in self._torch_shapes([x.detach().to("cpu") for x in inputs])]

    def _shape_difference(self, inputs: Sequence[torch.Tensor]) -> str | None:
        """Export the torch model at the new shapes (the call's own inputs) and compare with the
        wrapped graph: None when equal. torch's own error when torch rejects the shapes."""
        if self._reexport is None:
            return None
        try:
            other = self._reexport([x.detach().to("cpu") for x in inputs])
        except ExportError as exc:
            cause = exc.__cause__
            if isinstance(cause, Exception):
                # torch rejects these shapes: the error torch raises for them, not ours
                cause.add_note(f"(raised by the torch model while checking the new input shapes "
                               f"{[tuple(x.shape) for x in inputs]} of an AidgeModule)")
                raise cause from None
            raise
        return graph_differences(self._exported.proto, other.proto)


class _ValueCheck:
    """:class:`~interop.bridge.module.AidgeModule`'s first-call value check, torch's side of it and
    the comparisons (a mixin: the module's state is the module's own)."""

    def _reference(self, inputs, *, grad: bool, dtype: torch.dtype | None = None) -> "_Reference":
        """torch's computation of a call on this module's own weights (``torch.func.functional_call``
        of the exported torch module, in the modes it was exported in, the RNG forked): the torch
        model's own state is not read, so weights changed on either side since ``wrap`` do not
        count as a mismatch. ``grad``: kept differentiable with respect to the inputs that require
        grad and the trainable parameters. ``dtype``: floating values cast (the float64 tie-break)."""
        def cast(t: torch.Tensor) -> torch.Tensor:
            t = t.detach()
            if t.device.type != "cpu":
                t = t.to("cpu")
            return t.to(dtype) if dtype is not None and t.is_floating_point() else t

        train = set(self._train_names)
        state: dict[str, torch.Tensor] = {}
        for name, p in self.named_parameters():
            t = cast(p)
            state[name] = t.requires_grad_(True) if grad and name in train and t.is_floating_point() else t
        for name, b in self.named_buffers():
            state[name] = cast(b).clone()  # a training forward updates BatchNorm's statistics: on a copy
        xs = []
        for x, wrapped in zip(inputs, self._input_dtypes):
            t = cast(x).clone()
            if dtype is None and t.is_floating_point() and t.dtype != wrapped:
                t = t.to(wrapped)  # what the graph computes on: the input in the dtype it was wrapped with
            xs.append(t.requires_grad_(True) if grad and x.requires_grad and t.is_floating_point() else t)
        model = self._reference_model
        # attributes_preserved: a cache the forward fills (LeViT's attention biases in eval mode) is
        # neither left in the caller's model nor read by a later reference on other weights
        with _export_modes(model, self._reference_modes), torch.random.fork_rng(devices=[]), \
                torch.set_grad_enabled(grad), attributes_preserved(model):
            out = torch.func.functional_call(model, state, tuple(xs))
        return _Reference([leaf for leaf in pytree.tree_leaves(out) if leaf is not None], xs, state, grad)

    def _output_names(self, n: int) -> list[str]:
        if self._out_spec is not None and not self._one_tensor_out:
            try:
                marks = list(range(n))
                if self._none_leaves is not None:
                    it = iter(marks)
                    marks = [None if none else next(it) for none in self._none_leaves]
                paths, _ = pytree.tree_flatten_with_path(pytree.tree_unflatten(marks, self._out_spec))
                return [f"output {pytree.keystr(path)}" for path, leaf in paths if leaf is not None]
            except Exception:  # noqa: BLE001 - only for the message
                pass
        return [f"output [{k}]" if n > 1 else "output" for k in range(n)]

    def _feeds(self, inputs) -> dict[str, np.ndarray]:
        """The call's inputs as onnxruntime takes them for the exported graph (its declared types)."""
        declared = {i.name: i.type.tensor_type.elem_type for i in self._exported.proto.graph.input}
        feeds = {}
        for name, x in zip(default_input_names(self._n_inputs), inputs):
            value = x.detach().cpu().numpy()
            if name in declared and declared[name]:
                value = value.astype(onnx.helper.tensor_dtype_to_np_dtype(declared[name]), copy=False)
            feeds[name] = value
        return feeds

    def _check_outputs(self, inputs, outputs, reference: "_Reference") -> None:
        """Aidge's outputs of this call against torch's: ValueMismatchError on the first that differs."""
        expected = reference.leaves
        if len(expected) != len(outputs):
            return  # the export's outputs are not torch's leaves (checked at wrap): nothing to pair
        found = vc.check_leaves("forward", [], outputs, expected,
                                lambda: self._reference(inputs, grad=False, dtype=torch.float64).leaves)
        if found is None:
            return
        k, figures = found
        what = self._output_names(len(outputs))[k]
        feeds = self._feeds(inputs)
        attribution, why = vc.attribute(self._exported.proto, feeds, [o.detach() for o in outputs],
                                        [e.detach() for e in expected],
                                        lambda: self._reference(inputs, grad=False, dtype=torch.float64).leaves)
        if attribution == "precision":
            return  # float32 rounding on both ONNX runtimes, decided against torch float64: no mismatch
        node = aidge_node = None
        where = ""
        if self._backend == "cpu":
            with self._runner.lock:
                found_node = vc.first_diverging_node(self._exported.proto, self._graph, feeds)
            if found_node is not None:
                node, aidge_node = found_node
                where = (f"; the first node whose Aidge output differs from onnxruntime's on the same ONNX graph: "
                         f"ONNX node {node.name or node.output[0]!r} ({node.op_type}), Aidge node "
                         f"{aidge_node.name()!r} ({aidge_node.type()})")
        self._values_checked.discard(tuple((tuple(x.shape), x.dtype) for x in inputs))
        raise vc.ValueMismatchError(
            f"AidgeModule: {what} differs from torch's on the first call at input shapes "
            f"{[tuple(x.shape) for x in inputs]} ({vc.describe(figures)}); {why}{where}. Aidge's value is not "
            f"returned.", phase="forward", what=what, attribution=attribution,
            node=aidge_node.name() if aidge_node is not None else None,
            operator=aidge_node.type() if aidge_node is not None else None,
            onnx_node=(node.name or node.op_type) if node is not None else None,
            values=[o.detach() for o in outputs], mismatch=figures)

    def _check_gradients(self, reference: "_Reference", grad_outputs, in_grads, p_grads, key: tuple) -> None:
        """Aidge's input and parameter gradients of this backward against torch's for the same
        output gradients: ValueMismatchError on the first that differs, before torch sees them."""
        inputs = [x for x in reference.inputs]

        def torch_grads(ref: "_Reference", dtype=None):
            pairs = [(o, g if dtype is None else g.to(dtype)) for o, g in zip(ref.leaves, grad_outputs)
                     if g is not None and isinstance(o, torch.Tensor) and o.requires_grad]
            wrt = [x for x in ref.inputs if x.requires_grad] + [ref.state[n] for n in self._train_names]
            if not pairs or not wrt:
                return [None] * len(wrt)
            grads = torch.autograd.grad([o for o, _ in pairs], wrt, [g.detach().cpu() for _, g in pairs],
                                        allow_unused=True)
            return [g if g is not None else torch.zeros_like(w) for g, w in zip(grads, wrt)]

        names = [f"input grad [{i}]" for i, x in enumerate(inputs) if x.requires_grad]
        names += [f"grad of {n}" for n in self._train_names]
        actual = [g for g, x in zip(in_grads, inputs) if x.requires_grad] + list(p_grads)
        expected = torch_grads(reference)

        def exact():
            plain = [x.detach() for x in inputs]
            for x, r in zip(plain, inputs):
                x.requires_grad_(r.requires_grad)
            return torch_grads(self._reference(plain, grad=True, dtype=torch.float64), torch.float64)

        found = vc.check_leaves("backward", names, actual, expected, exact)
        if found is None:
            self._grads_checked.add(key)
            return
        k, figures = found
        raise vc.ValueMismatchError(
            f"AidgeModule: {names[k]} differs from torch's on the first backward at input shapes "
            f"{[tuple(x.shape) for x in inputs]} ({vc.describe(figures)}); torch's float64 gradient does not side "
            f"with Aidge. Aidge's gradients are not returned.", phase="backward", what=names[k], attribution="aidge",
            values=[g.detach() if g is not None else None for g in actual], mismatch=figures)


class _Reference:
    """torch's computation of one call: its output leaves, the inputs and state it ran on."""

    __slots__ = ("leaves", "inputs", "state", "grad")

    def __init__(self, leaves, inputs, state, grad: bool):
        self.leaves, self.inputs, self.state, self.grad = leaves, inputs, state, grad


class _export_modes:
    """Each submodule of ``model`` in the mode it was exported in (``modes``: name -> training),
    restored on exit; nothing is touched when the modes are already those."""

    def __init__(self, model: torch.nn.Module, modes: dict[str, bool] | None):
        self._model, self._modes, self._saved = model, modes, None

    def __enter__(self):
        if self._modes:
            current = {name: m.training for name, m in self._model.named_modules()}
            if any(current.get(name, mode) != mode for name, mode in self._modes.items()):
                self._saved = current
                for name, m in self._model.named_modules():
                    if name in self._modes:
                        m.training = self._modes[name]
        return self

    def __exit__(self, *exc) -> bool:
        if self._saved is not None:
            for name, m in self._model.named_modules():
                if name in self._saved:
                    m.training = self._saved[name]
        return False
