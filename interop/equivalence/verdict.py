"""``verify(fn, *args, **kwargs) -> Verdict``: does Aidge compute what torch computes for any
torch callable (a module or a function)?

Tensor arguments (found anywhere in ``args``/``kwargs``: lists and dicts are walked) become
graph inputs; everything else is a constant of the graph. In an isolated child process
(:func:`interop.equivalence.isolation.run_isolated`: a crash is a verdict, category
``crash`` with the signal) the callable is wrapped (:func:`interop.wrap`), then:

1. forward on two calls, the given inputs then a second set of the same shapes (the float
   values permuted with a fixed seed: same value range, other positions), so that state
   carried from one call to the next is caught; each call's outputs are compared with
   torch's under the one equivalence policy (:func:`interop.equivalence.policy.difference`:
   tolerance, gradients torch gives none of, parameters compared; asv's precheck and
   ModelTester's step decide through it too);
2. when ``backward`` and the forward matched: the input gradients of the second call (a
   seeded random output gradient), compared the same way.

On a forward-only backend (``backend="export_cpp"``: Aidge's generated C++, inference only)
the callable runs in eval mode on both sides (its modes are restored afterwards), step 2 does
not apply (``backward`` defaults to False there; ``backward=True`` raises
:class:`~interop.errors.BackwardNotApplicableError`).

Every forward mismatch is attributed (:mod:`interop.oracle.attribution`): ``aidge``,
``export``, ``precision`` or ``unknown``; a gradient mismatch against the float64 gradient.

The check itself (:func:`check_callable`) raises what ModelTester raises
(:class:`~interop.equivalence.tester.EquivalenceError`, the bridge's errors), with an
``attribution`` attribute, so the pytest suites run it under the expected-failure guard;
:func:`verify` turns the outcome into a :class:`Verdict`. Nothing is printed; the caller's
module keeps its mode and weights (the check runs in the child).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..case_notes import note
from ..stages import stage
from .policy import compared_parameters, difference, output_gradients, rounding_note

__all__ = ["Verdict", "verify", "check_callable", "has_tensor_argument", "as_module", "OUTCOMES"]

#: what a verdict can say
OUTCOMES = ("pass", "fail", "error", "crash")
#: calls compared in the forward (at least two: state carried between calls shows)
CALLS = 2
_SEED = 0


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`verify`.

    ``outcome``: ``pass`` / ``fail`` (values differ) / ``error`` (an exception: export,
    import, compile, a missing kernel...) / ``crash`` (the child died: ``signal``).
    ``category``, ``phase``, ``attribution``: what the records, the expected-failure guard and
    the report say of the same failure, decided by the one decider
    (:func:`interop.categories.failure_facts`); None on a pass. ``category``: the suite's
    category. ``phase``: where it failed (None where nothing says: a crash whose stack names no
    bridge phase). ``attribution``: ``aidge`` / ``export`` / ``precision`` / ``unknown`` for a
    failure (None on a pass): ``unknown`` also where the rule blames nobody (the record's None: a
    test-strategy failure such as ``not_comparable``, a process killed from outside, an
    unclassified failure) and for a crash or a hang outside Aidge's phases (nothing says Aidge's
    code was running); an Aidge error or crash on a graph that onnx's checker or onnxruntime
    refuses too is ``export`` (:func:`verify` asks them). ``mismatch``: the comparator's figures of the first
    mismatching tensor (``path``, ``n_mismatched``, ``n_total``, ``max_abs``, ``max_rel``,
    ``rtol``, ``atol``). ``summary``: one line; ``message``: the whole failure text.
    """

    outcome: str
    category: str | None = None
    attribution: str | None = None
    phase: str | None = None
    operator: str | None = None
    node: str | None = None
    mismatch: dict | None = None
    summary: str = ""
    message: str = ""
    signal: str | None = None
    backward_checked: bool = False
    #: torch's route to ONNX that made the graph Aidge ran (``"torchscript"``/``"dynamo"``),
    #: None when no route exported (or the child died before saying)
    exporter: str | None = None
    #: what differed by float32 rounding only (the oracle's attribution ``precision``): no
    #: mismatch, so the verdict went on; one line each
    precision: tuple[str, ...] = ()
    #: when the verdict is not a pass on ``exporter="auto"``: route -> this verdict's outcome on it,
    #: for the route the check took and, where ``wrap(exporter="auto")`` moves on to another one
    #: (it does when Aidge refuses the first route's graph), that route too. Empty otherwise
    routes: dict = dataclasses.field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def defect(self) -> dict | None:
        """Which known Aidge defect this failure is, as ``check``, the records and the ledger name
        it (:func:`interop.registry.identify.identify`): ``{"id", "title", "component", "evidence",
        "registered"}``; None for a pass or a failure not blamed on Aidge."""
        if self.passed or self.attribution != "aidge":
            return None
        from ..registry.identify import identify

        first = (self.message.strip().splitlines() or [""])[0]
        return identify({"category": self.category, "phase": self.phase, "error": first,
                         "aidge_operator": self.operator})

    def __str__(self) -> str:
        found = self.defect
        return self.summary if found is None else f"{self.summary} [{found['id']}: {found['title']}]"


# --------------------------------------------------------------------------------------
# the callable as a module whose inputs are the tensor arguments
# --------------------------------------------------------------------------------------
def _flat_arguments(args, kwargs):
    from torch.utils import _pytree as pytree

    return pytree.tree_flatten((tuple(args), dict(kwargs)))


def has_tensor_argument(args, kwargs) -> bool:
    """Whether a call has a tensor among its arguments, nested or not: the graph inputs
    :func:`check_callable` feeds Aidge (without one it refuses the call)."""
    import torch

    return any(isinstance(leaf, torch.Tensor) for leaf in _flat_arguments(args, kwargs)[0])


def as_module(fn, args, kwargs):
    """``(module, tensors)``: ``module(*tensors)`` calls ``fn(*args, **kwargs)`` with the
    tensor leaves replaced by its inputs."""
    import torch
    from torch.utils import _pytree as pytree

    leaves, spec = _flat_arguments(args, kwargs)
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    tensors = [leaves[i] for i in positions]
    constants = [None if i in positions else leaf for i, leaf in enumerate(leaves)]

    class CallableModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if isinstance(fn, torch.nn.Module):
                self.fn = fn
            else:
                object.__setattr__(self, "fn", fn)

        def forward(self, *inputs):
            values = list(constants)
            for i, x in zip(positions, inputs):
                values[i] = x
            a, kw = pytree.tree_unflatten(values, spec)
            return self.fn(*a, **kw)

    module = CallableModule()
    if isinstance(fn, torch.nn.Module):
        # the wrapper's own flag only: module.train() would recurse into fn and change the
        # modes of its submodules (the caller's model, and what torch computes)
        module.training = fn.training
    return module, tensors


def other_inputs(tensors):
    """A second input set of the same shapes and dtypes: float tensors permuted with a
    fixed seed (same values, other positions; a single element is halved), others kept."""
    import torch

    gen = torch.Generator().manual_seed(_SEED + 1)
    out = []
    for x in tensors:
        if not x.is_floating_point():
            out.append(x)
        elif x.numel() <= 1:
            out.append(x.detach() * 0.5)
        else:
            flat = x.detach().reshape(-1)
            out.append(flat[torch.randperm(flat.numel(), generator=gen)].reshape(x.shape).clone())
    return out


def _grad_mask(tensors, backward: bool) -> list[bool]:
    wanted = [x.is_floating_point() and x.requires_grad for x in tensors]
    if backward and not any(wanted):
        wanted = [x.is_floating_point() for x in tensors]
    return [w and backward for w in wanted]


def _differentiable(module, tensors, mask) -> list[bool]:
    """``mask`` without the inputs torch refuses a gradient for (``SoftMarginLoss``'s target:
    "not differentiable with respect to argument 'target'"): left out of the gradient check,
    never a reason for no verdict. Probed only when torch refuses the whole mask."""
    import torch

    def accepted(m) -> bool:
        try:
            with torch.random.fork_rng(devices=[]):
                module(*_fresh(tensors, m))
            return True
        except RuntimeError as exc:
            text = str(exc)
            if "not differentiable with respect to argument" in text or (
                    "the derivative for" in text and "is not implemented" in text):
                return False
            return True  # another failure of torch's: the check itself reports it
        except Exception:  # noqa: BLE001 - idem
            return True

    if not any(mask) or accepted(mask):
        return mask
    return [m and accepted([k == i for k in range(len(mask))]) for i, m in enumerate(mask)]


def _fresh(tensors, mask):
    return [x.detach().clone().requires_grad_(m) for x, m in zip(tensors, mask)]


# --------------------------------------------------------------------------------------
# the check (runs in the child)
# --------------------------------------------------------------------------------------
def _fail(name: str, call: int, what: str, mismatches, attribution: str, why: str):
    from .tester import EquivalenceError

    detail = "\n".join(m.message for m in mismatches)
    message = (f"[{name}, call {call}] {what} differs between model1 (torch) and model2 (AidgeModule) "
               f"[seed {_SEED}]\n{detail}\nattribution: {attribution} ({why})")
    from ..oracle.compare import mismatch_figures

    exc = EquivalenceError(message, test=name, epoch=call, what=what, seed=_SEED,
                           mismatch=mismatch_figures(mismatches[0]))
    exc.attribution = attribution
    return exc


def _backward_wanted(backward: bool | None, backend: str) -> bool:
    """``backward`` resolved: None is True except on a forward-only backend, where True
    raises :class:`~interop.errors.BackwardNotApplicableError`."""
    from ..backends import FORWARD_ONLY_BACKENDS

    if backend not in FORWARD_ONLY_BACKENDS:
        return True if backward is None else bool(backward)
    if backward:
        from ..errors import BackwardNotApplicableError

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
    from ..bridge.onnx_export import preserved_state
    from ..backends import FORWARD_ONLY_BACKENDS

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

    from ..bridge.onnx_export import default_input_names
    from ..errors import NotComparableError, OutputShapeError
    from ..oracle.attribution import attribute_backward, attribute_forward, float64_copy
    from ..oracle.onnxruntime import run_onnxruntime

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

    from ..oracle.attribution import float64_copy

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

    from ..errors import NotComparableError

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

    from ..oracle.attribution import float64_copy

    try:
        xs = [x.detach().double().requires_grad_(m) if x.is_floating_point() else x
              for x, m in zip(inputs, mask)]
        outs = _tensor_leaves(float64_copy(module)(*xs))
        pairs = [(o, g.double()) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return xs[index].grad
    except Exception:  # noqa: BLE001
        return None


# --------------------------------------------------------------------------------------
# the public function
# --------------------------------------------------------------------------------------
def verify(fn, *args, backward: bool | None = None, backend: str = "cpu", tolerance: Any = None,
           timeout: float | None = 120.0, isolate: bool = True, exporter: str | None = None, **kwargs) -> Verdict:
    """Run ``fn(*args, **kwargs)`` in torch and, wrapped, in Aidge, and say whether they
    agree (:class:`Verdict`). ``fn``: an ``nn.Module`` or a function; tensor arguments are
    the graph's inputs, the rest constants. ``backward``: also compare input gradients
    (inputs that require grad, else every float input) once the forward matched (default:
    yes, except on ``backend="export_cpp"``, which runs the forward only, in eval mode;
    ``backward=True`` there raises :class:`~interop.errors.BackwardNotApplicableError`).
    ``tolerance``: a :class:`~interop.oracle.tolerance.Tolerance` (default: the
    comparator's table for the output dtype). The check runs in a forked child
    (``isolate``), killed after ``timeout`` seconds (verdict ``crash``, category ``hang``).
    ``exporter``: torch's route to ONNX, as :func:`interop.wrap` takes it (``"torchscript"``,
    ``"dynamo"``, ``"auto"``; default ``$INTEROP_EXPORTER``, else ``"auto"``); the verdict's
    ``exporter`` says which route made the graph, and an ``export`` attribution names it.

    >>> import torch, interop
    >>> interop.verify(torch.relu, torch.randn(2, 3)).outcome
    'pass'
    """
    from .isolation import run_isolated

    from ..bridge.onnx_export import check_exporter

    backward = _backward_wanted(backward, backend)  # a usage error is raised here, not a verdict
    if exporter is not None:
        check_exporter(exporter)
    kwargs_ = dict(kwargs)
    try:
        if isolate:
            result = run_isolated(check_callable, fn, args, kwargs_, backward=backward, backend=backend,
                                  tolerance=tolerance, timeout=timeout, exporter=exporter)
        else:
            result = check_callable(fn, args, kwargs_, backward=backward, backend=backend, tolerance=tolerance,
                                    exporter=exporter)
    except Exception as exc:  # noqa: BLE001 - every failure is a verdict
        verdict = verdict_from(exc)
        if verdict.outcome in ("error", "crash") and verdict.attribution == "aidge" and verdict.phase != "export":
            # Aidge failed on a graph: before blaming it, ask onnxruntime about the same export
            verdict = _blame_a_refused_export(verdict, fn, args, kwargs_, exporter, isolate, timeout)
        return _with_wrap_s_route(verdict, fn, args, kwargs_, exporter, backend=backend, backward=backward,
                                  tolerance=tolerance, timeout=timeout, isolate=isolate)
    checked = result.get("backward_checked", False)
    route = result.get("exporter")
    params = result.get("parameters_checked", 0)
    grads = ""
    if checked:
        grads = ", input gradients match" + (f", and the gradients of {params} parameter(s)" if params else "")
    rounding = tuple(result.get("precision") or ())
    if rounding:
        grads += f" ({len(rounding)} value(s) within float32 rounding only: see precision)"
    return Verdict("pass", summary="pass: forward matches on 2 calls" + grads, backward_checked=checked, exporter=route,
                   precision=rounding)


def _route_wrap_takes(fn, args, kwargs, backend: str):
    """The route ``wrap(exporter="auto")`` takes for ``fn(*args, **kwargs)`` on its own (outside
    :func:`~interop.bridge.value_check.checks_deferred`, where it moves on from a graph Aidge
    refuses at wrap or on a trial forward)."""
    from ..bridge import wrap

    module, tensors = as_module(fn, args, dict(kwargs or {}))
    return wrap(module, example_inputs=[x.detach() for x in tensors], backend=backend, exporter="auto").exporter


def _with_wrap_s_route(verdict: Verdict, fn, args, kwargs, exporter: str | None, *, backend: str, backward: bool,
                       tolerance: Any, timeout: float | None, isolate: bool) -> Verdict:
    """A failing verdict on ``exporter="auto"`` says what each route gives: inside verify,
    ``auto`` keeps the first route that exports (the expected-failure table was measured so),
    while ``wrap`` moves on when Aidge refuses that route's graph. Where ``wrap`` would take
    another route, the check runs on it too and the verdict names both (:attr:`Verdict.routes`), so
    that ``verify`` and ``wrap`` never answer "does my model work?" differently unsaid."""
    from ..exporters import default_exporter
    from .isolation import run_isolated

    if verdict.passed or (exporter or default_exporter()) != "auto" or verdict.exporter is None:
        return verdict
    try:
        if isolate:
            taken = run_isolated(_route_wrap_takes, fn, args, kwargs, backend, timeout=timeout)
        else:
            taken = _route_wrap_takes(fn, args, kwargs, backend)
    except Exception:  # noqa: BLE001 - wrap refuses every route too: the verdict says it as it is
        return verdict
    if not taken or taken == verdict.exporter:
        return verdict
    other = verify(fn, *args, backward=backward, backend=backend, tolerance=tolerance, timeout=timeout,
                   isolate=isolate, exporter=taken, **kwargs)
    routes = {verdict.exporter: verdict.outcome, taken: other.outcome}
    said = (f"; wrap(exporter='auto') moves on to the {taken} route (Aidge refuses the {verdict.exporter} "
            f"route's graph when wrap tries it), where verify says: {other.summary}")
    return dataclasses.replace(verdict, routes=routes, summary=verdict.summary + said)


def onnxruntime_refusal(fn, args, kwargs, exporter: str | None) -> str | None:
    """onnx's checker's or onnxruntime's refusal of the ONNX export of ``fn(*args, **kwargs)``
    through ``exporter`` (the route whose graph Aidge was given), in its words; None when
    onnxruntime runs the graph, or cannot be asked (not installed, the export itself fails)."""
    from ..bridge.onnx_export import default_exporter, default_input_names, export_to_onnx
    from ..oracle.onnxruntime import graph_refusal, run_onnxruntime

    module, tensors = as_module(fn, args, dict(kwargs or {}))
    try:
        exported = export_to_onnx(module, [x.detach() for x in tensors], exporter=exporter or default_exporter())
    except Exception:  # noqa: BLE001 - no export to ask about
        return None
    refusal = graph_refusal(exported.proto)
    if refusal:
        return refusal
    try:
        run_onnxruntime(exported.proto, [x.detach() for x in tensors], input_names=default_input_names(len(tensors)))
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001
        return f"onnxruntime: {_first_line(exc)}"
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def _blame_a_refused_export(verdict: Verdict, fn, args, kwargs, exporter, isolate: bool, timeout) -> Verdict:
    """``verdict`` (an Aidge error or crash) attributed to the export when onnx's checker or
    onnxruntime refuses the very graph too, whatever the phase Aidge failed in."""
    from .isolation import run_isolated

    route = verdict.exporter or exporter
    try:
        if isolate:
            refusal = run_isolated(onnxruntime_refusal, fn, args, kwargs, route, timeout=timeout)
        else:
            refusal = onnxruntime_refusal(fn, args, kwargs, route)
    except Exception:  # noqa: BLE001 - the question itself failed (a crash of onnxruntime): undecided
        return verdict
    if not refusal:
        return verdict
    why = f"the exported ONNX graph is refused by {refusal}: the export is at fault, not Aidge"
    return dataclasses.replace(verdict, attribution="export",
                               summary=verdict.summary.replace("[aidge]", "[export]", 1) + f" ({why})",
                               message=f"{verdict.message}\n{why}")


def verdict_from(exc: BaseException) -> Verdict:
    """The :class:`Verdict` of a failed check (an exception from :func:`check_callable` or
    the isolation). An export error's text names the route(s) that failed; ``exporter`` is the
    route whose graph Aidge ran."""
    text = str(exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    verdict = _verdict_of_failure(exc, text, first)
    notes = getattr(exc, "precision_notes", None)
    return dataclasses.replace(verdict, exporter=getattr(exc, "export_route", None),
                               precision=tuple(notes) if isinstance(notes, (tuple, list)) else ())


def _verdict_of_failure(exc, text: str, first: str) -> Verdict:
    """The verdict of ``exc``: its category, phase and attribution from the one decider
    (:func:`interop.categories.failure_facts`, which the expected-failure guard, the records and
    the console reader read too); the outcome from what failed (a dead child: ``crash``; values
    that differ: ``fail``; any other exception: ``error``)."""
    from ..categories import failure_facts
    from ..errors import AidgeCrash
    from .tester import EquivalenceError

    facts = failure_facts(exc)
    category, phase = facts.category, facts.phase
    # a verdict names someone for every failure: the rule's None (nobody: a test-strategy failure, a process
    # killed from outside, an unclassified one) is said "unknown", as it always was here
    attribution = facts.attribution or "unknown"
    if isinstance(exc, AidgeCrash):
        return Verdict("crash", category, attribution, phase, summary=f"{category}: {first}", message=text,
                       signal=getattr(exc, "signal", None))
    if isinstance(exc, EquivalenceError):
        mismatch = getattr(exc, "mismatch", None)
        figures = ""
        if mismatch and mismatch.get("n_mismatched") is not None:
            figures = (f" ({mismatch['n_mismatched']}/{mismatch['n_total']} elements, max abs diff "
                       f"{mismatch['max_abs']:.3g})")
        return Verdict("fail", category, attribution, phase, mismatch=mismatch, message=text,
                       summary=f"{category} [{attribution}] {exc.what} at call {exc.epoch}{figures}")
    reason = getattr(exc, "attribution_reason", None)  # the bridge's: an invalid export (bridge.export_validity)
    said = f" ({reason})" if isinstance(reason, str) and reason else ""
    return Verdict("error", category, attribution, phase, getattr(exc, "operator", None), getattr(exc, "node", None),
                   summary=f"{category} [{attribution}]: {first[:200]}{said}", message=text + (f"\n{reason}" if said else ""))
