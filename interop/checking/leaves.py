"""The leaf modules of :func:`interop.check.check`'s passes 2 and 3: each leaf's first call in a
torch forward (:func:`_leaf_calls`, in a forked child), a leaf that writes its input in place
compared on clones (:func:`_on_cloned_inputs`), the second verdict of a leaf whose forward differs
(:func:`backward_verdict`: does Aidge's backward run?), and the model whose blocked leaves give
torch's values (:func:`_with_stand_ins`)."""
from __future__ import annotations

import copy
from typing import Any, Sequence

from ..stages import stage
from .inputs import ModelError, _died, _first_line, _not_picklable, _shapes_text


def _leaf_calls(model, inputs) -> list[dict[str, Any]]:
    """Each leaf module's first call in a torch forward of a copy of ``model`` (the caller's
    model is not run: a BatchNorm in training mode keeps its statistics): path, module (the
    copy's), its positional arguments (tensors detached and cloned *before* the call: an in-place
    leaf, ``ReLU(inplace=True)``, overwrites them), its output and how many times the forward
    called it."""
    import torch

    model = copy.deepcopy(model)
    calls: dict[str, dict[str, Any]] = {}
    pending: dict[str, list] = {}
    hooks = []

    def before(path):
        def hook(module, args):
            if path not in calls and path not in pending:
                pending[path] = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
        return hook

    def keep(path):
        def hook(module, args, output):
            if path in calls:
                calls[path]["count"] += 1
                return
            calls[path] = {"path": path, "module": module, "count": 1, "args": pending.pop(path),
                           "output": output.detach().clone() if isinstance(output, torch.Tensor) else None}
        return hook

    for path, module in model.named_modules():
        if path and not any(True for _ in module.children()):
            hooks.append(module.register_forward_pre_hook(before(path)))
            hooks.append(module.register_forward_hook(keep(path)))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in hooks:
            h.remove()
    return list(calls.values())


def _leaf_calls_isolated(model, inputs, timeout: float | None) -> list[dict[str, Any]]:
    """:func:`_leaf_calls` in a forked child under ``timeout`` (the model's forward is the user's
    code: before, a forward that slept hung the check here, one that raised was a traceback); a
    forward that raises, dies or does not finish is a :class:`ModelError`. Calls that cannot be
    pickled (a module holding a lambda) are captured again here: the child's forward finished."""
    from ..equivalence.isolation import run_isolated

    what = f"the model's torch forward on {_shapes_text(inputs)} (capturing its leaves' inputs)"
    try:
        return run_isolated(_leaf_calls, model, inputs, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - sorted below
        if _not_picklable(exc):
            return _leaf_calls(model, inputs)
        raise (_died(exc, what, timeout) or ModelError(f"{what} raised {_first_line(exc)}")) from None


def _writes_in_place_isolated(module, args, timeout: float | None) -> bool:
    """:func:`_writes_in_place` in a forked child under ``timeout`` (False when it does not finish)."""
    from ..equivalence.isolation import run_isolated

    try:
        return bool(run_isolated(_writes_in_place, module, args, timeout=timeout))
    except Exception:  # noqa: BLE001 - a leaf torch cannot run: its verdict says it
        return False


def _writes_in_place(module, args) -> bool:
    """Whether a torch call of (a copy of) ``module`` writes into a tensor argument
    (``ReLU(inplace=True)``): its version counter moves."""
    import torch

    probe = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
    before = [a._version if isinstance(a, torch.Tensor) else None for a in probe]
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            copy.deepcopy(module)(*probe)
    except Exception:  # noqa: BLE001 - torch's own failure on the leaf: its verdict says it
        return False
    return any(isinstance(a, torch.Tensor) and a._version != v for a, v in zip(probe, before))


def _on_cloned_inputs(module):
    """``module`` called on clones of its tensor arguments: torch's in-place write (``ReLU(inplace=True)``)
    lands on the clone, never on the inputs verify compares against (a graph input that requires
    grad cannot be written in place). The export reads the clone as an identity."""
    import torch

    class OnClonedInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.module = module

        def forward(self, *args):
            return self.module(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])

    wrapper = OnClonedInputs()
    wrapper.training = module.training  # the wrapper's own flag only: the leaf keeps its mode
    return wrapper


def _backward_runs(module, args, backend: str = "cpu", exporter: str | None = None) -> dict:
    """In the child: ``module`` wrapped as :func:`~interop.verify` wraps it, one Aidge forward
    and one Aidge backward (a seeded output gradient of Aidge's output shapes); raises the
    bridge's error (a missing backward...). Gradients are not compared: this runs where the
    forward already differs, so torch's gradients are no reference."""
    import torch

    from ..bridge import wrap
    from ..bridge.value_check import checks_deferred
    from ..equivalence.policy import output_gradients
    from ..equivalence.callable_module import as_module
    from torch.utils import _pytree as pytree

    wrapped, tensors = as_module(module, args, {})
    with checks_deferred():
        aidge = wrap(wrapped, example_inputs=[x.detach() for x in tensors], backend=backend, exporter=exporter)
        fed = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in tensors]
        with stage("aidge forward"):
            outs = [o for o in pytree.tree_leaves(aidge(*fed)) if isinstance(o, torch.Tensor)]
        grads = output_gradients(outs)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
        if not pairs:
            return {"backward_run": False}
        with stage("aidge backward"):
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    return {"backward_run": True}


def backward_verdict(module, *args, timeout: float | None = 120.0):
    """The second verdict of a leaf whose forward differs from torch's: does Aidge's backward run
    on it (:func:`_backward_runs`, in a forked child as verify's)? A :class:`~interop.equivalence.verdict.Verdict`:
    ``pass`` (it runs; gradients not compared), else the bridge's error (phase ``backward``...)."""
    from ..equivalence.isolation import run_isolated
    from ..equivalence.verdict import Verdict, verdict_from

    try:
        result = run_isolated(_backward_runs, module, args, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - every failure is a verdict, as verify's
        return verdict_from(exc)
    if not result.get("backward_run"):
        return Verdict("pass", summary="no backward to run: no output takes a gradient")
    return Verdict("pass", summary="Aidge's backward runs (gradients not compared: the forward differs)",
                   backward_checked=False)


def _signature(call) -> tuple:
    import torch

    m = call["module"]
    shapes = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else repr(a) for a in call["args"])
    return (type(m).__name__, m.extra_repr(), m.training, shapes)


def _with_stand_ins(model, paths: Sequence[str], inputs: Sequence[Any], values: Sequence[Any]):
    """``(module, fed)``: a copy of ``model`` on ``inputs`` whose leaves at ``paths`` give torch's
    ``values`` instead: ``module(*fed)``. A value something downstream reads is an input of the
    graph (data, so gradients flow into it); one nothing reads (a replaced leaf feeding another
    replaced leaf) and the model's own inputs are constants: an example input the export drops
    because nothing reads it makes the bridge feed the next input into the wrong slot (measured:
    ``forward(x, v) = conv(v)`` fails with "Input#1 (pads) must be of type Int64")."""
    import torch

    current: list = []

    class StandIn(torch.nn.Module):
        def __init__(self, i: int):
            super().__init__()
            self.i = i

        def forward(self, *args, **kwargs):
            return current[self.i]

    class WithStandIns(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = copy.deepcopy(model)
            for i, path in enumerate(paths):
                parent_path, _, name = path.rpartition(".")
                parent = self.model.get_submodule(parent_path) if parent_path else self.model
                setattr(parent, name, StandIn(i))
            # plain attributes, not buffers: an unread buffer stays in the export as an initializer
            object.__setattr__(self, "own_inputs", [x.detach().clone() for x in inputs])
            object.__setattr__(self, "fixed", {})

        def _apply(self, fn, *args, **kwargs):
            # the plain attributes follow the module's dtype too: verify's float64 reference
            # (``.double()`` of a copy) decides a gradient difference against them, not against
            # float32 constants (which left it undecided, "unknown", where it is float32 rounding)
            super()._apply(fn, *args, **kwargs)
            object.__setattr__(self, "own_inputs", [fn(x) for x in self.own_inputs])
            object.__setattr__(self, "fixed", {i: fn(v) for i, v in self.fixed.items()})
            return self

        def forward(self, *fed):
            it = iter(fed)
            current[:] = [self.fixed[i] if i in self.fixed else next(it) for i in range(len(paths))]
            return self.model(*self.own_inputs)

    module = WithStandIns()
    probe = [v.detach().clone().requires_grad_(v.is_floating_point()) for v in values]
    from torch.utils import _pytree as pytree

    out = [o for o in pytree.tree_leaves(module(*probe)) if isinstance(o, torch.Tensor) and o.requires_grad]
    if out:
        torch.autograd.backward([o.sum() for o in out])
    read = [p.grad is not None for p in probe]
    module.fixed.update({i: v.detach().clone() for i, (v, r) in enumerate(zip(values, read)) if not r})
    return module, [v for v, r in zip(values, read) if r]
