"""How a model is called from the flat tensor inputs of its ONNX graph: :class:`CallBinding`
(the example call's arguments bound by the model's ``forward`` signature: tensors become
graph inputs, everything else constants of the graph) and :class:`BoundModule`, the module
``wrap`` exports when the call is more than ``model(*tensors)``.

Why a module of its own: torch's TorchScript exporter fills every parameter of the traced
``forward`` that the example does not give with its default, *positionally*
(``torch.onnx.utils._decide_input_format``). A Hugging Face model's forward
(``input_ids, attention_mask, ..., use_cache, **kwargs``) behind its decorators then fails
(``BertModel.forward() got multiple values for argument 'use_cache'``). ``BoundModule``'s
forward takes ``*tensors`` only, and calls the model with exactly the arguments the caller
gave, by name. It shares the model's submodules, parameters and buffers (the very dicts), so
state names, scopes and node names are the model's own.
"""
from __future__ import annotations

import inspect
from typing import Any, Mapping, Sequence

import torch
from torch.utils import _pytree as pytree

__all__ = ["CallBinding", "BoundModule", "needs_binding"]


def _signature(model: torch.nn.Module) -> inspect.Signature | None:
    try:
        return inspect.signature(model.forward)
    except (TypeError, ValueError):
        return None


def needs_binding(model: torch.nn.Module, n_inputs: int, kwargs: Mapping[str, Any] | None) -> bool:
    """Whether ``wrap`` must export through a :class:`BoundModule`: keyword arguments were
    given, or the forward has parameters after the example's positional inputs that the
    exporter would fill with their defaults (``**kwargs`` included)."""
    if kwargs:
        return True
    sig = _signature(model)
    if sig is None:
        return False
    rest = list(sig.parameters.values())[n_inputs:]
    return any(p.kind is not inspect.Parameter.VAR_POSITIONAL for p in rest)


class CallBinding:
    """A call ``model(*args, **kwargs)`` as flat tensor inputs plus constants.

    The arguments are bound by the forward's signature (``am(ids)`` and
    ``am(input_ids=ids)`` are the same call); the tensors, wherever they sit (lists and dicts
    are walked), are the graph's inputs in that order; every other value is a constant of the
    graph, and a later call must give the same constants."""

    def __init__(self, model: torch.nn.Module, args: Sequence[Any], kwargs: Mapping[str, Any] | None):
        self._sig = _signature(model)
        self._name = type(model).__name__
        arguments = self._arguments(args, kwargs or {})
        leaves, self._spec = pytree.tree_flatten(arguments)
        self.positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        self._constants = [None if i in self.positions else leaf for i, leaf in enumerate(leaves)]
        self.example_tensors = [leaves[i] for i in self.positions]

    def _arguments(self, args, kwargs):
        if self._sig is None:
            return (tuple(args), dict(kwargs))
        try:
            bound = self._sig.bind_partial(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self._name}.forward{self._sig}: {exc}") from None
        return ((), dict(bound.arguments))

    def describe(self) -> str:
        """The call's form, for error messages: ``BertModel(input_ids=<tensor (1, 8)>)``."""
        values = [None] * len(self._constants)
        for i, x in zip(self.positions, self.example_tensors):
            values[i] = _Shown(f"<tensor {tuple(x.shape)}>")
        for i, c in enumerate(self._constants):
            if i not in self.positions:
                values[i] = _Shown(repr(c))
        args, kwargs = pytree.tree_unflatten(values, self._spec)
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        return f"{self._name}({', '.join(parts)})"

    def tensors(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[torch.Tensor]:
        """The graph inputs of a call; TypeError when the call is not of the wrapped form
        (other arguments, or other constants)."""
        leaves, spec = pytree.tree_flatten(self._arguments(args, kwargs))
        if spec != self._spec or any(isinstance(leaves[i], torch.Tensor) != (i in self.positions)
                                     for i in range(len(leaves))):
            raise TypeError(f"this AidgeModule was wrapped for calls of the form {self.describe()}; a call with "
                            f"other arguments needs another graph: wrap(model, example_inputs=..., "
                            f"example_kwargs=...) with them")
        for i, constant in enumerate(self._constants):
            if i not in self.positions and not _same(leaves[i], constant):
                raise TypeError(f"this AidgeModule was wrapped with {constant!r} where this call gives "
                                f"{leaves[i]!r} ({self.describe()}): constants are part of the graph; wrap again "
                                f"with the new value")
        return [leaves[i] for i in self.positions]

    def call(self, model: torch.nn.Module, tensors: Sequence[torch.Tensor]):
        """``model`` called with the bound arguments, ``tensors`` in place of the inputs."""
        values = list(self._constants)
        for i, x in zip(self.positions, tensors):
            values[i] = x
        args, kwargs = pytree.tree_unflatten(values, self._spec)
        if self._sig is None:
            return model(*args, **kwargs)
        bound = inspect.BoundArguments(self._sig, kwargs)
        return model(*bound.args, **bound.kwargs)


class _Shown:
    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - values that do not compare: only the same object is the same
        return a is b


class BoundModule(torch.nn.Module):
    """``model`` as a module of ``*tensors``: the module ``wrap`` exports for a
    :class:`CallBinding`. Shares the model's submodules, parameters and buffers (the same
    dicts: the same state names), and its mode."""

    def __init__(self, model: torch.nn.Module, binding: CallBinding):
        super().__init__()
        self._modules = model._modules
        self._parameters = model._parameters
        self._buffers = model._buffers
        self._non_persistent_buffers_set = model._non_persistent_buffers_set
        object.__setattr__(self, "_target", model)
        object.__setattr__(self, "_binding", binding)
        self.training = model.training

    def forward(self, *tensors: torch.Tensor):
        return self._binding.call(self._target, tensors)
