"""How the diagnostics call a model and walk its inputs and outputs.

One place for the conventions shared by :mod:`interop.diagnostics.contract`,
:mod:`interop.diagnostics.invariance` and :mod:`interop.diagnostics.divergence`:

* ``inputs`` is a tensor (``model(x)``), a tuple/list of tensors (``model(*x)``) or a dict
  (``model(**x)``, e.g. ``{"input_ids": ..., "attention_mask": ...}``);
* the batch dimension is dimension 0 of every tensor input;
* outputs are nested tuples/lists/dicts of tensors; leaves are addressed by the same
  paths as the shared comparator (``output``, ``output[0]``, ``output['logits']``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

import torch

__all__ = [
    "call_model",
    "map_tensors",
    "iter_tensors",
    "clone_tensors",
    "batch_size",
    "slice_batch",
    "describe_inputs",
]


def call_model(model: Callable, inputs: Any) -> Any:
    """``model(x)``, ``model(*x)`` or ``model(**x)`` depending on the type of ``inputs``."""
    if isinstance(inputs, Mapping):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


def map_tensors(fn: Callable[[torch.Tensor], Any], obj: Any) -> Any:
    """Apply ``fn`` to every tensor leaf of a nested structure, keeping the structure."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, Mapping):
        mapped = {k: map_tensors(fn, v) for k, v in obj.items()}
        try:
            return type(obj)(mapped)
        except Exception:  # a mapping type that cannot be rebuilt from a dict
            return mapped
    if isinstance(obj, tuple) and hasattr(type(obj), "_fields"):  # namedtuple
        return type(obj)(*(map_tensors(fn, v) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(map_tensors(fn, v) for v in obj)
    return obj


def iter_tensors(obj: Any, path: str = "output") -> Iterator[tuple[str, torch.Tensor]]:
    """``(path, tensor)`` for every tensor leaf, paths spelled like the comparator's."""
    if isinstance(obj, torch.Tensor):
        yield path, obj
    elif isinstance(obj, Mapping):
        for k, v in obj.items():
            yield from iter_tensors(v, f"{path}[{k!r}]")
    elif isinstance(obj, (tuple, list)):
        fields = getattr(type(obj), "_fields", None)
        for i, v in enumerate(obj):
            yield from iter_tensors(v, f"{path}.{fields[i]}" if fields else f"{path}[{i}]")


def clone_tensors(obj: Any) -> Any:
    """A detached copy of every tensor leaf (a later call cannot overwrite it)."""
    return map_tensors(lambda t: t.detach().clone(), obj)


def batch_size(inputs: Any) -> int | None:
    """Size of dimension 0 shared by the tensor inputs; None when there is none or they disagree."""
    sizes = {t.shape[0] for _, t in iter_tensors(inputs) if t.dim() > 0}
    return sizes.pop() if len(sizes) == 1 else None


def slice_batch(obj: Any, start: int, stop: int, n: int) -> Any:
    """``t[start:stop]`` for every tensor leaf whose dimension 0 is ``n``; others unchanged."""
    return map_tensors(lambda t: t[start:stop] if t.dim() > 0 and t.shape[0] == n else t, obj)


def describe_inputs(inputs: Any) -> str:
    parts = [f"{p}: {tuple(t.shape)} {str(t.dtype).replace('torch.', '')}"
             for p, t in iter_tensors(inputs, "x")]
    return ", ".join(parts) if parts else "no tensor input"
