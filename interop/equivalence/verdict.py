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

The check itself lives in :mod:`.callable_check` (:func:`check_callable`, run in the child) and the
callable made a module in :mod:`.callable_module` (:func:`~.callable_module.as_module`,
:func:`~.callable_module.other_inputs`); :class:`Verdict`, :func:`verify` and the verdict of a failure
(:func:`verdict_from`) are here.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from .. import categories
from ..errors import AidgeCrash
from ..exporters import check_exporter, default_exporter
from ..oracle.onnxruntime import graph_refusal, run_onnxruntime
from ..registry.identify import identify
from .callable_check import _backward_wanted, check_callable
from .callable_module import as_module
from .isolation import run_isolated

__all__ = ["Verdict", "verify", "OUTCOMES"]

#: what a verdict can say
OUTCOMES = ("pass", "fail", "error", "crash")


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
        first = (self.message.strip().splitlines() or [""])[0]
        return identify({"category": self.category, "phase": self.phase, "error": first,
                         "aidge_operator": self.operator})

    def __str__(self) -> str:
        found = self.defect
        return self.summary if found is None else f"{self.summary} [{found['id']}: {found['title']}]"


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
    from ..bridge.onnx_export import export_to_onnx
    from ..bridge.onnx_export_graph import default_input_names

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
    from .tester import EquivalenceError

    facts = categories.failure_facts(exc)  # read through its module: tests/unit/test_verify_verdict.py patches it there
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
