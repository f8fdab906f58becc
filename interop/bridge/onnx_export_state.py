"""The torch model's state around an export (:mod:`interop.bridge.onnx_export`): its parameters,
buffers, modes and plain Python attributes restored after the block that ran the model
(:func:`preserved_state`, :func:`attributes_preserved`), the buffers a forward updates that are
not a normalisation layer's running statistics (:func:`_stateful_buffers`), and the model's
state tensors by torch name (:func:`_state_tensors`)."""
from __future__ import annotations

import contextlib

import torch
from torch.nn.modules.batchnorm import _NormBase


@contextlib.contextmanager
def preserved_state(model: torch.nn.Module, changed: list | None = None):
    """Restore the parameters, buffers and train/eval mode of every submodule on exit, and the
    plain Python attributes of each (:func:`_attributes_snapshot`: a cache the forward fills,
    as transformers' LeViT fills its attention-bias cache in eval mode); the names of the
    tensors the block changed go to ``changed`` when given."""
    modes = {name: m.training for name, m in model.named_modules()}
    saved = {name: t.detach().clone() for name, t in _state_tensors(model).items()}
    attributes = _attributes_snapshot(model)
    try:
        yield
    finally:
        _restore_attributes(attributes)
        with torch.no_grad():
            for name, tensor in _state_tensors(model).items():
                if name in saved and not _unchanged(tensor, saved[name]):
                    if changed is not None:
                        changed.append(name)
                    tensor.copy_(saved[name])  # only when changed: keeps autograd versions intact
        for name, m in model.named_modules():
            if name in modes:
                m.training = modes[name]


#: a module's own bookkeeping: parameters, buffers and submodules are restored by value above
#: (their containers kept), ``training`` by mode; the hook dictionaries are torch's
_MODULE_SLOTS = frozenset({"_parameters", "_buffers", "_modules", "training", "_non_persistent_buffers_set"})
_CONTAINERS = (dict, list, set)


def _attributes_snapshot(model: torch.nn.Module) -> list:
    """``(module, attributes, contents)`` of every submodule: its ``__dict__`` entries (the plain
    Python attributes, by identity) and a shallow copy of each dict, list or set among them (by
    content). What a forward leaves there (a cache filled in eval mode holding a tensor of the
    export's autograd graph: LeViT's ``attention_bias_cache``, which made the tool's second
    export refuse it, "Cannot insert a Tensor that requires grad as a constant") is undone by
    :func:`_restore_attributes`; the bridge's calls of the model leave no trace in it."""
    out = []
    for m in model.modules():
        attrs = {k: v for k, v in vars(m).items() if k not in _MODULE_SLOTS}
        contents = {k: (type(v), v.copy()) for k, v in attrs.items()
                    if isinstance(v, _CONTAINERS) and not k.startswith("_") or type(v) in _CONTAINERS}
        out.append((m, attrs, contents))
    return out


def _restore_attributes(snapshot: list) -> None:
    for m, attrs, contents in snapshot:
        now = vars(m)
        for k in [k for k in now if k not in _MODULE_SLOTS and k not in attrs]:
            del now[k]  # an attribute the block added
        for k, v in attrs.items():
            if now.get(k, _MISSING) is not v:
                now[k] = v  # rebound (LeViT's train(True) gives its cache a new dict)
            if k in contents:
                kind, before = contents[k]
                if _changed_container(v, before):
                    v.clear()
                    if isinstance(v, dict):
                        v.update(before)
                    elif isinstance(v, list):
                        v.extend(before)
                    else:
                        v.update(before)


_MISSING = object()


@contextlib.contextmanager
def attributes_preserved(model: torch.nn.Module):
    """The plain Python attributes of every submodule of ``model`` restored on exit
    (:func:`_attributes_snapshot`), parameters and buffers left alone: for a torch call of the
    model that must leave no cache behind (the value check's reference)."""
    snapshot = _attributes_snapshot(model)
    try:
        yield
    finally:
        _restore_attributes(snapshot)


def _changed_container(now, before) -> bool:
    if len(now) != len(before):
        return True
    if isinstance(now, dict):
        return any(k not in before or before[k] is not v for k, v in now.items())
    if isinstance(now, list):
        return any(a is not b for a, b in zip(now, before))
    return now != before


def _stateful_buffers(model: torch.nn.Module, changed: list[str]) -> list[str]:
    """The buffers among ``changed`` that the forward itself updates, beyond the running statistics
    of a normalisation layer in training mode (exported as ONNX's training-mode outputs; what Aidge
    does with them is the suite's BatchNorm finding, not a frozen graph)."""
    params = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    stats = {f"{prefix}.{b}" if prefix else b for prefix, m in model.named_modules() if isinstance(m, _NormBase)
             for b in ("running_mean", "running_var", "num_batches_tracked")}
    return sorted({n for n in changed if n not in params and n not in stats})


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
