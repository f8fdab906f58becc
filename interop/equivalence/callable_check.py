"""The check behind :func:`~interop.equivalence.verdict.verify`, run in this process (the child,
under verify): :func:`check_callable` wraps the callable, compares the forward on :data:`CALLS`
calls, then the input and parameter gradients, attributes what differs and raises on the first
difference (:class:`~interop.equivalence.tester.EquivalenceError`, the bridge's errors)."""
from __future__ import annotations

from typing import Any

from ..case_notes import note
from ..stages import stage
from .callable_module import _SEED, _differentiable, _fresh, _grad_mask, as_module, other_inputs
from .policy import compared_parameters, difference, output_gradients, rounding_note
from ..backends import FORWARD_ONLY_BACKENDS
from ..errors import BackwardNotApplicableError, NotComparableError, OutputShapeError
from ..oracle.attribution import attribute_backward, attribute_forward, float64_copy
from ..oracle.compare import mismatch_figures
from ..oracle.onnxruntime import run_onnxruntime

#: calls compared in the forward (at least two: state carried between calls shows)
CALLS = 2


def _fail(name: str, call: int, what: str, mismatches, attribution: str, why: str):
    from .tester import EquivalenceError

    detail = "\n".join(m.message for m in mismatches)
    message = (f"[{name}, call {call}] {what} differs between model1 (torch) and model2 (AidgeModule) "
               f"[seed {_SEED}]\n{detail}\nattribution: {attribution} ({why})")

    exc = EquivalenceError(message, test=name, epoch=call, what=what, seed=_SEED,
                           mismatch=mismatch_figures(mismatches[0]))
    exc.attribution = attribution
    return exc


def _backward_wanted(backward: bool | None, backend: str) -> bool:
    """``backward`` resolved: None is True except on a forward-only backend, where True
    raises :class:`~interop.errors.BackwardNotApplicableError`."""
    if backend not in FORWARD_ONLY_BACKENDS:
        return True if backward is None else bool(backward)
    if backward:
        raise BackwardNotApplicableError(f"verify(backward=True): backend {backend!r} runs inference only (no "
                                         "backward); pass backward=False or leave it unset")
    return False


def check_callable(fn, args=(), kwargs=None, *, backward: bool | None = None, backend: str = "cpu",
                   tolerance: Any = None, name: str = "verify", exporter: str | None = None,
                   parameter_grads: bool = True) -> dict:
    """The check behind :func:`verify`, in this process: raises on the first difference
    (:class:`~interop.equivalence.tester.EquivalenceError` with ``attribution`` and
    ``mismatch`` attributes) or the bridge's error; returns ``{"backward_checked": bool,
    "exporter": route}``. ``backward=None``: input gradients too, except on a forward-only
    backend. ``exporter``: :func:`interop.wrap`'s. An exception raised once the model is
    wrapped carries the route in its ``export_route`` attribute. ``parameter_grads`` (with
    ``backward``; default on, as in every verdict since issue 45): the gradient of every
    parameter of ``fn`` (a module) that the Aidge graph holds is compared too, each mismatch
    attributed against torch's float64 gradient; the result says ``"parameters_checked"`` (how
    many)."""
    from ..bridge.onnx_export_state import preserved_state

    backward = _backward_wanted(backward, backend)
    kwargs = dict(kwargs or {})
    module, tensors = as_module(fn, args, kwargs)
    if not tensors:
        raise TypeError("verify(): the callable takes no tensor argument (nothing to feed the Aidge graph)")
    if backend not in FORWARD_ONLY_BACKENDS:
        return _check(module, tensors, backward, backend, tolerance, name, exporter, parameter_grads)
    with preserved_state(module):  # inference only: eval mode on both sides, the caller's modes restored
        module.eval()
        return _check(module, tensors, False, backend, tolerance, name, exporter, False)


def _check(module, tensors, backward: bool, backend: str, tolerance: Any, name: str, exporter: str | None,
           parameter_grads: bool = False) -> dict:
    from ..bridge import wrap

    from ..bridge.value_check import checks_deferred

    # this check compares every call itself and attributes what differs: the module's own value
    # check and the refusal of known Aidge defects would stop what it measures
    with checks_deferred():
        aidge = wrap(module, example_inputs=[x.detach() for x in tensors], backend=backend, exporter=exporter)
    rounding: list[str] = []  # what differed by float32 rounding only, kept when a later step fails
    try:
        with checks_deferred():
            result = _check_wrapped(module, aidge, tensors, backward, tolerance, name, parameter_grads and backward,
                                    rounding=rounding)
    except BaseException as exc:
        exc.export_route = aidge.exporter
        exc.precision_notes = tuple(rounding)  # the verdict of the failure says them too (verdict_from)
        note("precision", rounding)  # and the case's record (interop.case_notes)
        raise
    note("precision", rounding)
    return {**result, "exporter": aidge.exporter}


def _check_wrapped(module, aidge, tensors, backward: bool, tolerance: Any, name: str,
                   parameter_grads: bool = False, rounding: list[str] | None = None) -> dict:
    import torch
    from torch.utils import _pytree as pytree

    from ..bridge.onnx_export_graph import default_input_names

    mask = _grad_mask(tensors, backward)
    with stage("torch"):
        mask = _differentiable(module, tensors, mask)
        _check_deterministic(module, tensors, name)  # after the export: a crash in torch's trace is the export's
    exported = aidge._exported  # AidgeModule and ExportCppModule: the ONNX export Aidge imported
    second = other_inputs(tensors)
    try:
        with stage("torch"), torch.no_grad(), torch.random.fork_rng(devices=[]):
            module(*second)
    except Exception:  # noqa: BLE001 - torch rejects the permuted values: call again with the first
        second = [x.detach() for x in tensors]
    calls = [tensors, second]
    torch_out = aidge_out = inputs = None
    rounding = [] if rounding is None else rounding  # what differed by float32 rounding only (attribution precision)
    for call, inputs in enumerate(calls[:CALLS], 1):
        t_in, a_in = _fresh(inputs, mask), _fresh(inputs, mask)
        try:
            with stage("torch"), torch.random.fork_rng(devices=[]):
                torch_out = module(*t_in)
        except Exception as exc:  # noqa: BLE001 - torch itself: the case, not Aidge
            raise NotComparableError(
                f"{name}: torch's own call fails on copies of the inputs that carry only their values (call "
                f"{call}): {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}. The callable "
                f"depends on more than its inputs' values (their memory layout?), which an ONNX graph cannot "
                f"express: no verdict on Aidge") from exc
        try:
            with stage("aidge forward"):
                aidge_out = aidge(*a_in)
        except OutputShapeError as exc:
            # the bridge's shape guard: attributed like any other forward mismatch (onnxruntime on
            # the same ONNX gives the same shape as torch, or not), on the outputs it stopped
            leaves, spec = pytree.tree_flatten(torch_out)
            aidge_out = pytree.tree_unflatten(list(exc.outputs), spec) if len(leaves) == len(exc.outputs) else exc.outputs
        t_leaves, a_leaves = _tensor_leaves(torch_out), _tensor_leaves(aidge_out)
        with stage("compare"):
            found = difference("output", aidge_out, torch_out, tolerance)
        if found:
            tol = found.tolerance
            plain = [x.detach() for x in inputs]

            def exact(plain=plain):
                with torch.no_grad():
                    out = float64_copy(module)(*[x.double() if x.is_floating_point() else x for x in plain])
                return _tensor_leaves(out)

            with stage("attribution"):
                attribution, why = attribute_forward(
                    aidge_out=[x.detach() for x in a_leaves], torch_out=[x.detach() for x in t_leaves], exact=exact,
                    # the very proto Aidge imported, each input bound by the name the export gave it
                    # (an input the export dropped is skipped, never shifted onto the next name)
                    onnx=lambda plain=plain: run_onnxruntime(exported.proto, plain,
                                                             input_names=default_input_names(len(plain))),
                    rtol=tol.rtol, atol=tol.atol)
            if attribution == "precision":
                # float32 rounding is no mismatch: noted, and the verdict goes on (the next call,
                # the backward), so that a real blocker behind it is reported
                rounding.append(rounding_note(f"output (call {call})", found))
                continue
            raise _fail(name, call, "output", found.mismatches, attribution, why)
    params = compared_parameters(module, aidge) if parameter_grads else []
    if not any(mask) and not params:
        return {"backward_checked": False, "precision": rounding}
    # backward on a fresh forward of the last inputs
    for _, p, _ in params:
        p.grad = None
    t_in, a_in = _fresh(inputs, mask), _fresh(inputs, mask)
    with stage("torch"), torch.random.fork_rng(devices=[]):
        t_leaves = _tensor_leaves(module(*t_in))
    with stage("aidge forward"):
        a_leaves = _tensor_leaves(aidge(*a_in))
    grads = output_gradients(t_leaves)
    pairs = [(o, g) for o, g in zip(t_leaves, grads) if g is not None]
    if not pairs:
        return {"backward_checked": False, "precision": rounding}
    with stage("torch backward"):
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    with stage("aidge backward"):
        torch.autograd.backward([a for a, g in zip(a_leaves, grads) if g is not None], [g for _, g in pairs])
    for i, (t, a, m) in enumerate(zip(t_in, a_in, mask)):
        if not m:
            continue
        with stage("compare"):
            found = difference(f"input grad [{i}]", a.grad, t.grad, tolerance, gradient=True)
        if found:
            with stage("attribution"):
                attribution, why = attribute_backward(aidge_grad=found.actual, torch_grad=t.grad,
                                                      exact_grad=_exact_grad(module, inputs, mask, grads, i),
                                                      rtol=found.tolerance.rtol, atol=found.tolerance.atol)
            if attribution == "precision":
                rounding.append(rounding_note(found.what, found))
                continue
            raise _fail(name, CALLS, found.what, found.mismatches, attribution, why)
    for pname, p, held in params:
        with stage("compare"):
            found = difference(f"grad of {pname.removeprefix('fn.')}", held.grad, p.grad, tolerance, gradient=True)
        if found:
            with stage("attribution"):
                attribution, why = attribute_backward(aidge_grad=found.actual, torch_grad=p.grad,
                                                      exact_grad=_exact_param_grad(module, inputs, grads, pname),
                                                      rtol=found.tolerance.rtol, atol=found.tolerance.atol)
            if attribution == "precision":
                rounding.append(rounding_note(found.what, found))
                continue
            raise _fail(name, CALLS, found.what, found.mismatches, attribution, why)
    return {"backward_checked": True, "parameters_checked": len(params), "precision": rounding}


def _tensor_leaves(out) -> list:
    """The leaves of an output structure, its None leaves left out (an output holding None is
    exported as torch does, dropped, and given back as None: nothing to compare there)."""
    from torch.utils import _pytree as pytree

    return [leaf for leaf in pytree.tree_leaves(out) if leaf is not None]


def _exact_param_grad(module, inputs, grads, pname):
    """torch's float64 gradient of parameter ``pname`` (None when float64 is not available)."""
    import torch
    from torch.utils import _pytree as pytree

    try:
        clone = float64_copy(module)
        xs = [x.detach().double() if x.is_floating_point() else x for x in inputs]
        outs = _tensor_leaves(clone(*xs))
        pairs = [(o, g.double()) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return dict(clone.named_parameters())[pname].grad
    except Exception:  # noqa: BLE001
        return None


def _check_deterministic(module, tensors, name: str) -> None:
    """Raise :class:`~interop.errors.NotComparableError` when torch gives two different
    results for the same input under two RNG seeds (``nn.Dropout`` in training mode,
    ``torch.rand_like``...): a random callable has no single answer to compare Aidge with.
    A torch call that fails here is left to the check itself."""
    import torch
    from torch.utils import _pytree as pytree

    outs = []
    for seed in (_SEED + 11, _SEED + 12):
        try:
            with torch.no_grad(), torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                outs.append(pytree.tree_leaves(module(*[x.detach().clone() for x in tensors])))
        except Exception:  # noqa: BLE001 - the check reports torch's own failure
            return
    for a, b in zip(*outs):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
                and not torch.equal(a, b) and not (a.is_floating_point() and torch.allclose(a, b, 0, 0, equal_nan=True)):
            raise NotComparableError(
                f"{name}: torch gives different outputs for the same input under two random seeds (dropout in "
                f"training mode, a random operator): a random callable has no single result to compare Aidge's "
                f"with; call model.eval() or compare a deterministic function: no verdict on Aidge")


def _exact_grad(module, inputs, mask, grads, index):
    """torch's float64 gradient of input ``index`` (None when float64 is not available)."""
    import torch
    from torch.utils import _pytree as pytree

    try:
        xs = [x.detach().double().requires_grad_(m) if x.is_floating_point() else x
              for x, m in zip(inputs, mask)]
        outs = _tensor_leaves(float64_copy(module)(*xs))
        pairs = [(o, g.double()) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return xs[index].grad
    except Exception:  # noqa: BLE001
        return None
