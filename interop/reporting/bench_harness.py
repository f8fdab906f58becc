"""asv's harness, in the package: what the asv benchmarks share and what the report's timing pass
(:mod:`.timing_pass`) times with: the cases (from :mod:`interop.cases.catalog`, ids = pytest
ids), how a case becomes a torch/Aidge pair, the correctness precheck, thread pinning and the
Aidge/torch ratio. No benchmark is defined here. ``benchmarks/harness.py`` of a checkout is its
thin user (asv imports that one: it points ``INTEROP_CONFIG_DIR`` at the checkout's
configurations, says a skipped case on stderr and warms the fork server up, :func:`warm_up`);
this module itself sets no variable, prints nothing and does no work at import.

Life of a benchmark process: asv's fork server imports the benchmark modules once, then
forks one process per (benchmark, case, round); ``setup`` runs before *every* sample, so
:func:`pair` memoises per process everything expensive (export, import, compile, precheck)
and the outcome of a case that cannot be timed.

A case is timed only when it is correct: :func:`pair` first runs both sides on the same
seeded inputs and decides under the one equivalence policy the suites' verdict uses
(:func:`interop.equivalence.policy.difference`: outputs; for ``backward`` also the input
gradients and the gradient of every parameter the Aidge graph holds, by name, from the same
seeded output gradient). Then:

- a case Aidge cannot run in the benchmark's phase (a strict expected failure of the table
  for the installed Aidge release, on ``cpu``, in a phase up to that one, or the operator's
  declaration) is **not a parameter** at all (:func:`case_ids`): asv prints no ``n/a`` row
  for it. :func:`not_timed` lists those case-phases once, each with its table row's ledger
  defect id (``benchmarks/not_timed.py``: one ``track_`` benchmark, their count; run as a
  script it prints them grouped by defect and writes ``results/not-timed.json`` / ``.md``);
- unsupported case found only when built (``wrap``/backward raises
  ``UnsupportedOperatorError``/``AidgeNotImplementedError``, or a row of another backend):
  :class:`CaseSkipped` (a ``NotImplementedError``: asv reports the case as skipped), with
  its reason on stderr;
- outputs or gradients differ, or the operator under test is missing from the Aidge graph:
  :class:`PrecheckFailed` (asv reports the case as failed), never timed. The precheck compares
  with the case's own tolerance policy, as the suites do, so its calls run inside
  :func:`~interop.bridge.value_check.checks_deferred` (the AidgeModule's own first-call check,
  which raises ``ValueMismatchError``, would otherwise decide first, at the torch.testing
  tolerances); the bridge's check then runs once, outside any timed call, and where it
  refuses a value (a user of ``wrap`` gets that error) ``time_bridge`` of the case fails with
  its message while ``time_aidge`` and the ratio are timed;
- any other error propagates (asv reports it as failed).

Fairness: torch gets the thread count Aidge's OpenMP runtime has (``OMP_NUM_THREADS``,
set by asv.conf.json), recorded by the ``track_threads`` benchmark and in the asv
environment name; with ``INTEROP_BACKEND=cuda`` every timed call ends with a CUDA
synchronisation.

The cases, the precheck, the memoised pairs and the benchmark classes live here; this module is
also where the rest is imported from, by what each part does: :mod:`.bench_pair` (:class:`Pair`,
the ratio's rounds, :func:`pin_threads`) and :mod:`.bench_calls` (the calls a pair is made of,
:func:`warm_up`). Loaded by its path, it loads them by theirs (:func:`_beside`).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Callable

import torch

# absolute imports: benchmarks/harness.py loads this file by its path where the installed
# interop is another commit's (asv benchmarking an earlier commit)
import interop.bridge  # noqa: F401  (imported by asv's fork server: forks start warm)
from interop.bridge.value_check import ValueMismatchError, checks_deferred
from interop.cases.case import PHASES as _ALL_PHASES
from interop.cases.case import Case
from interop.cases.expected_failures import expected_failure
from interop.equivalence import policy, timing
from interop.errors import AidgeNotImplementedError, UnsupportedOperatorError
from interop.bridge.known_defects import KnownDefectError
from interop.cases import ConfigError, catalog
from interop.cases.architectures import architecture_cases


def _beside(name: str):
    """The part ``name`` of this harness loaded by its path from this file's folder, under
    ``<this module>_<name>``: where this file is loaded by its path (benchmarks/harness.py: the
    installed interop is another commit's, which may lack the part or hold its own), its parts
    are this file's neighbours too. Not one loader with benchmarks/harness.py's ``_load`` (which
    loads this file by path the same way), because that one runs before this file exists as a
    module (an earlier commit's installed interop has no loader to lend it), and while it loads
    this file ``benchmarks.harness`` is this file, so this file cannot import it either."""
    qualified = f"{__name__}_{name}"
    if qualified not in sys.modules:
        spec = importlib.util.spec_from_file_location(qualified, Path(__file__).resolve().with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module  # (a dataclass reads its module there)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(qualified, None)
            raise
    return sys.modules[qualified]


if __name__ == "interop.reporting.bench_harness":  # the package's module: its parts are the package's
    from interop.reporting import bench_calls as _calls, bench_pair as _pair
else:  # loaded by its path beside another commit's interop
    _calls, _pair = _beside("bench_calls"), _beside("bench_pair")
RATIO_BUDGET_S, RATIO_BLOCK_S, RATIO_MIN_ROUNDS, RATIO_MAX_ROUNDS = (
    _pair.RATIO_BUDGET_S, _pair.RATIO_BLOCK_S, _pair.RATIO_MIN_ROUNDS, _pair.RATIO_MAX_ROUNDS)
Pair, pin_threads = _pair.Pair, _pair.pin_threads
warm_up, raw_aidge_call, _seeded_inputs, _as_list, _architecture_call, _synced = (
    _calls.warm_up, _calls.raw_aidge_call, _calls._seeded_inputs, _calls._as_list, _calls._architecture_call,
    _calls._synced)

__all__ = ["BACKEND", "PHASES", "CaseSkipped", "PrecheckFailed", "Pair", "case_ids", "cases", "pair",
           "pin_threads", "benchmark_class", "export_build_class", "RATIO_UNIT", "NotTimed", "not_timed",
           "not_timed_entry", "BENCHMARKED", "only_cases", "warm_up", "on_skip"]

#: the Aidge backend under test (``cpu``; ``cuda`` on a GPU machine)
# read here, not through interop.env.read: this file is loaded by path beside another commit's interop
# (asv benchmarking an earlier commit), whose env module may predate read(); the values are the ones
# interop.env.VARIABLES declares, and env.check refuses a bad one before a suite runs
BACKEND = os.environ.get("INTEROP_BACKEND", "cpu").strip().lower() or "cpu"
PHASES = ("forward", "backward")
RATIO_UNIT = "aidge/torch"


#: called with the line that says a case is skipped (:func:`pair`), or None: nothing is said
#: (asv's benchmarks/harness.py sets it to a line on stderr)
on_skip: Callable[[str], None] | None = None


class CaseSkipped(NotImplementedError):
    """The case cannot run on this Aidge (asv marks a setup raising NotImplementedError as
    skipped)."""


class PrecheckFailed(AssertionError):
    """Aidge does not compute what torch computes for this case: it is not timed."""


# ---------------------------------------------------------------------------------------
# Cases: the catalog's Case objects, as pytest runs them
# ---------------------------------------------------------------------------------------
def _phases_up_to(phase: str) -> tuple[str, ...]:
    """The phases a benchmark of ``phase`` goes through (a backward benchmark never steps)."""
    return _ALL_PHASES[:_ALL_PHASES.index(phase) + 1]


def skip_reason(case: Case, phase: str) -> str | None:
    """Why ``case`` cannot be timed in ``phase``: its operator-wide skip, or the entry of
    the expected-failure table that stops a run through ``phase`` (the one lookup)."""
    if case.skip_reason:
        return f"skipped by its declaration: {case.skip_reason}"
    entry = expected_failure(case, BACKEND, _phases_up_to(phase))
    return f"expected failure: {entry.reason}" if entry is not None else None


def _config_error_case(name: str, exc: Exception) -> Case:
    """One bad configuration costs its own operator only: one failing benchmark case
    ``<Op>_config_error`` (as pytest's item of the same id) naming file, case and key."""
    def broken(exc=exc):
        raise exc

    return Case(id=f"{name}_config_error", op_class=broken, input_size=(1,), operator=name, backend=BACKEND)


def _operator_cases(backend: str = BACKEND) -> list[Case]:
    """Every operator case for ``backend``; one bad configuration costs its own operator only
    (:func:`_config_error_case`)."""
    out = []
    for name in catalog.OPERATOR_CONFIGS:
        try:
            out.extend(catalog.operator_cases([name], backend=backend))
        except ConfigError as exc:
            out.append(_config_error_case(name, exc))
    return out


def _kind_cases(kind: str, backend: str) -> list[Case]:
    if kind == "architecture":
        return architecture_cases(backend=backend)
    return _operator_cases(backend) if kind == "operator" else catalog.model_cases(backend=backend)


_CASES: dict[str, dict[str, Case]] = {}


def cases(kind: str) -> dict[str, Case]:
    """The cases of ``kind`` (``operator`` / ``model`` / ``architecture``) by id, in catalog order."""
    if kind not in _CASES:
        _CASES[kind] = {c.id: c for c in _kind_cases(kind, BACKEND)}
    return _CASES[kind]


def case_ids(kind: str, phase: str) -> list[str]:
    """Ids (the pytest ids) of the cases of ``kind`` that run ``phase`` on the ``cpu`` backend,
    whatever backend is benchmarked: asv keeps one benchmark list (``benchmarks.json``,
    rewritten by every discovery) for all its environments, so every backend must declare the
    same parameters. A case the benchmarked backend does not run in ``phase`` (every backward
    on ``export_cpp``) is skipped by :func:`pair` as not applicable. A case Aidge cannot run in
    ``phase`` (:func:`not_timed_entry`: a strict expected failure of the installed release's
    table) is left out: it would only print ``n/a`` rows; :func:`not_timed` lists it."""
    # The benchmarked backend's cases are built here, at import, in asv's fork server, so that
    # its forks start with them (a fork that built them would pay seconds per benchmark).
    listed = cases(kind).values()
    if BACKEND != "cpu":
        listed = _cpu_listing(kind)
    only = only_cases()
    return [c.id for c in listed if (phase == "forward" or c.test_backward) and (only is None or c.id in only)
            and not_timed_entry(c, phase) is None]


def only_cases() -> frozenset[str] | None:
    """``$INTEROP_BENCH_CASES`` (case ids, comma-separated): the only cases parametrised, or None
    (every case). ``nox -s bench-quick`` sets it, into a results folder of its own
    (``results/bench-quick``): asv prints every parameter of a benchmark it runs, ``n/a`` for
    those its ``--bench`` did not select (4,016 of the 4,199 lines of a smoke run before), and
    rewrites its results folder's ``benchmarks.json`` with the list it discovered."""
    raw = os.environ.get("INTEROP_BENCH_CASES", "").strip()
    return frozenset(c.strip() for c in raw.split(",") if c.strip()) if raw else None


# ---------------------------------------------------------------------------------------
# Cases Aidge cannot run: not parametrised, listed once (benchmarks/not_timed.py)
# ---------------------------------------------------------------------------------------
#: the (kind, phase) pairs the benchmark classes of operators.py, models.py, architectures.py time
BENCHMARKED = tuple((kind, phase) for kind in ("operator", "model", "architecture") for phase in PHASES)


@dataclasses.dataclass(frozen=True)
class NotTimed:
    """One case-phase left out of the timing benchmarks: Aidge cannot run it."""

    kind: str
    case_id: str
    #: the benchmark's phase (``forward`` / ``backward``)
    phase: str
    #: the ledger's defect id of the table row (``D-`` + 8 hex digits); None: an operator-wide
    #: declaration, or a row not yet triaged into a defect
    defect: str | None
    #: the Aidge operator the row names, the phase it fails in, its category
    operator: str
    fails_in: str
    category: str
    #: the row's data file and index (``interop/cases/expected/0.10.1/x.json#3``), or the declaration
    row: str
    reason: str

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def not_timed_entry(case: Case, phase: str) -> NotTimed | None:
    """Why ``case`` is no parameter of the ``phase`` benchmarks, or None (it is one).

    Left out: a case whose operator declares a skip, and a case a row of the expected-failure
    table for the installed Aidge release (``INTEROP_AIDGE_RELEASE`` to choose another) stops
    in a phase up to ``phase`` (:func:`~interop.cases.expected_failures.expected_failure`, the
    lookup pytest uses; every row is strict: a case that passes again fails the suites, so a
    fixed Aidge shows up there and the row goes, and the case is parametrised again). The rows
    of the ``cpu`` backend decide, whatever backend is benchmarked: asv keeps one benchmark
    list for every environment (:func:`case_ids`); another backend's own rows skip at
    :func:`pair` as before."""
    if case.skip_reason:
        return NotTimed(case.kind, case.id, phase, None, case.operator, phase, "declared_skip",
                        f"operator declaration ({case.operator})", f"skipped by its declaration: {case.skip_reason}")
    entry = expected_failure(case, "cpu", _phases_up_to(phase))
    if entry is None:
        return None
    row = f"{entry.file}#{entry.index}" if entry.file else "interop/cases/expected/"
    return NotTimed(case.kind, case.id, phase, entry.defect, entry.operator, entry.phase, entry.category, row,
                    f"expected failure: {entry.reason}")


def not_timed(kinds_phases=BENCHMARKED) -> list[NotTimed]:
    """Every case-phase of ``kinds_phases`` that :func:`case_ids` leaves out, in catalog order."""
    out = []
    for kind, phase in kinds_phases:
        listed = cases(kind).values() if BACKEND == "cpu" else _cpu_listing(kind)
        for case in listed:
            if phase == "forward" or case.test_backward:
                entry = not_timed_entry(case, phase)
                if entry is not None:
                    out.append(entry)
    return out


@functools.lru_cache(maxsize=None)
def _cpu_listing(kind: str) -> tuple[Case, ...]:
    """The ``cpu`` cases of ``kind``, built once per process (:func:`case_ids` lists the ids of
    every benchmark class from them when another backend is benchmarked)."""
    return tuple(_kind_cases(kind, "cpu"))


# ---------------------------------------------------------------------------------------
# Pairs
# ---------------------------------------------------------------------------------------
_PAIRS: dict[tuple[str, str, str], Pair | BaseException] = {}


def pair(kind: str, case_id: str, phase: str) -> Pair:
    """The memoised :class:`Pair` of a case and phase; raises :class:`CaseSkipped`,
    :class:`PrecheckFailed` or the construction error (memoised too)."""
    key = (kind, case_id, phase)
    if key not in _PAIRS:
        try:
            _PAIRS[key] = _build_pair(cases(kind)[case_id], phase)
        except CaseSkipped as exc:
            if on_skip is not None:
                on_skip(f"skipped {case_id} ({phase}, backend {BACKEND}): {exc}")
            _PAIRS[key] = exc
        except BaseException as exc:  # noqa: BLE001  (remembered, re-raised below)
            _PAIRS[key] = exc
    value = _PAIRS[key]
    if isinstance(value, BaseException):
        raise value
    return value


def _fail(case: Case, phase: str, found: policy.Difference) -> None:
    what = "the output" if found.what == "output" else f"a gradient ({found.what})"
    raise PrecheckFailed(f"{case.id} ({phase}, backend {BACKEND}): precheck failed, {what} of Aidge "
                         f"differs from torch ({found.tolerance}); not timed.\n{found.detail}")


def _build_pair(case: Case, phase: str) -> Pair:
    if phase != "forward" and not case.test_backward:  # listed from the cpu cases (case_ids)
        raise CaseSkipped(f"not applicable: backend {BACKEND} does not run {case.id}'s {phase}")
    reason = skip_reason(case, phase)
    if reason:
        raise CaseSkipped(reason)
    threads = pin_threads()
    device = "cuda" if BACKEND == "cuda" else "cpu"
    # as the suites build it: a fresh module, in its own mode, wrapped in that mode
    if case.kind == "architecture":
        model, example = _architecture_call(case)
        wrap_args, wrap_kwargs = (), {"example_inputs": example}
    else:
        model, example = case.build_model(), None
        wrap_args, wrap_kwargs = (case.input_sizes,), ({} if case.training is None else {"training": case.training})
    try:
        with checks_deferred():  # the precheck decides, with the case's tolerance (the suites do the same)
            aidge_model = interop.bridge.wrap(model, *wrap_args, backend=BACKEND, **wrap_kwargs)
    except (UnsupportedOperatorError, AidgeNotImplementedError) as exc:
        raise CaseSkipped(f"unsupported by Aidge: {exc}") from exc
    if case.aidge_types:
        from interop.cases.suite import assert_operator_in_graph

        try:
            assert_operator_in_graph(aidge_model, case.aidge_types, operator=case.id)
        except AssertionError as exc:
            raise PrecheckFailed(f"{case.id} ({phase}): {exc}; not timed") from exc
    model.to(device)
    inputs = [x.to(device) for x in (example if example is not None
                                     else _seeded_inputs(case.id, case.input_sizes, tuple(case.input_ranges)))]
    with checks_deferred():
        if phase == "forward":
            torch_call, bridge_call, grads = *_forward_calls(case, model, aidge_model, inputs), None
        else:
            torch_call, bridge_call, grads = _backward_calls(case, model, aidge_model, inputs)
    bridge_call = _bridge_checked_once(case, phase, bridge_call)
    aidge_call = raw_aidge_call(aidge_model, inputs, phase, grads)
    if device == "cuda":
        torch_call, aidge_call, bridge_call = _synced(torch_call), _synced(aidge_call), _synced(bridge_call)
    return Pair(case.id, phase, BACKEND, threads, torch_call, aidge_call, bridge_call, aidge_model)


def _bridge_checked_once(case: Case, phase: str, bridge_call: Callable[[], Any]) -> Callable[[], Any]:
    """``bridge_call`` after one call outside :func:`checks_deferred`: the AidgeModule's own
    first-call value check (and its refusal of a known backward defect) runs here, never in a
    timed call. Where it refuses (``ValueMismatchError``, ``KnownDefectError``: what a user of
    ``wrap`` gets, at the bridge's tolerances, which can be stricter than the case's), the
    returned call raises :class:`PrecheckFailed` with that message: ``time_bridge`` fails for
    this case alone."""
    try:
        bridge_call()
    except (ValueMismatchError, KnownDefectError) as exc:
        refused = PrecheckFailed(f"{case.id} ({phase}, backend {BACKEND}): the AidgeModule refuses the call "
                                 f"({type(exc).__name__}): {exc}; time_bridge not timed")

        def refuse():
            raise refused

        return refuse
    return bridge_call


def _forward_calls(case: Case, model, aidge_model, inputs):
    # No autograd graph on either side, without a grad-mode context per call: the
    # parameters stop requiring grad (both models are private to this process).
    model.requires_grad_(False)
    aidge_model.requires_grad_(False)
    found = policy.difference("output", _as_list(aidge_model(*inputs)), _as_list(model(*inputs)), case.tolerance)
    if found:
        _fail(case, "forward", found)
    return (lambda: model(*inputs)), (lambda: aidge_model(*inputs))


def _backward_calls(case: Case, model, aidge_model, inputs):
    """The precheck of a backward, under the one equivalence policy (:mod:`interop.equivalence.policy`:
    the suites' verdict decides the same way), and the timed calls."""
    # integer inputs (token ids) have no gradient
    x_torch = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
    x_aidge = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
    out_torch = _as_list(model(*x_torch))
    out_aidge = _as_list(aidge_model(*x_aidge))
    found = policy.difference("output", out_aidge, out_torch, case.tolerance)
    if found:
        _fail(case, "backward", found)
    grads = policy.output_gradients(out_torch)  # the suites' verdict's (seeded) output gradient
    torch.autograd.backward(out_torch, grads, retain_graph=True)
    try:
        torch.autograd.backward(out_aidge, grads, retain_graph=True)
    except AidgeNotImplementedError as exc:
        raise CaseSkipped(f"unsupported by Aidge: {exc}") from exc
    differences = [policy.difference(f"input grad [{i}]", a.grad, t.grad, case.tolerance, gradient=True)
                   for i, (t, a) in enumerate(zip(x_torch, x_aidge)) if t.requires_grad]
    differences += [policy.difference(f"grad of {n}", held.grad, p.grad, case.tolerance, gradient=True)
                    for n, p, held in policy.compared_parameters(model, aidge_model)]
    found = next((d for d in differences if d), None)
    if found:
        _fail(case, "backward", found)
    # Timed, torch: one backward through the retained graph of the forward above. The bridge:
    # one training step (forward + backward through the AidgeModule), because Aidge resets
    # its intermediate gradients only in a forward, so the bridge recomputes the forward of
    # a second backward through one graph anyway (tests/unit/test_bridge.py).

    def bridge_step():
        torch.autograd.backward(_as_list(aidge_model(*x_aidge)), grads)

    return (lambda: torch.autograd.backward(out_torch, grads, retain_graph=True), bridge_step, grads)


# ---------------------------------------------------------------------------------------
# The benchmark classes
# ---------------------------------------------------------------------------------------
class _CaseBenchmark:
    """Base of the generated classes (private: asv does not collect it). One instance per
    (case, phase): ``time_torch`` / ``time_aidge`` / ``time_bridge`` time one call of
    :attr:`Pair.torch_call` / :attr:`Pair.aidge_call` (Aidge's scheduler alone) /
    :attr:`Pair.bridge_call` (the AidgeModule call), and ``track_aidge_torch_ratio``
    measures torch and Aidge's scheduler in one process."""

    kind = ""
    phase = ""
    param_names = ["case"]
    # asv timing attributes: every sample is one call (asv re-runs setup before each,
    # a dict lookup here), at least 10 samples, up to 200 or 0.3 s after a 0.05 s warm-up,
    # in 2 processes per (benchmark, case) so that asv compare/continuous see the
    # process-to-process spread too. Measured on 2 cores: a full run of ~1000 case-phases
    # takes ~9 min (docs/benchmarks.md). tools/noise_floor.py measured rounds=4 and
    # repeat=(50, 2000, 0.5) too: neither reduced the run-to-run spread on the shared VM, so
    # these stay (docs/noise-floor.md; asv.conf.json's regressions_thresholds follow it).
    warmup_time = 0.05
    repeat = (10, 200, 0.3)
    rounds = 2
    timeout = 120

    def setup(self, case: str) -> None:
        self.pair = pair(self.kind, case, self.phase)
        pin_threads()

    def time_torch(self, case: str) -> None:
        self.pair.torch_call()

    def time_aidge(self, case: str) -> None:
        self.pair.aidge_call()

    def time_bridge(self, case: str) -> None:
        self.pair.bridge_call()

    def track_aidge_torch_ratio(self, case: str) -> float:
        return self.pair.ratio()

    track_aidge_torch_ratio.unit = RATIO_UNIT


def benchmark_class(kind: str, phase: str, name: str) -> type:
    """The asv benchmark class of every ``kind`` case running ``phase`` (params = case ids)."""
    ids = case_ids(kind, phase)
    doc = (f"{phase.capitalize()} of every {kind} case that runs it, torch and Aidge ({BACKEND}) "
           f"side by side; params are the pytest ids.")
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    if not ids:  # asv cannot check or run a benchmark without a parameter (INTEROP_BENCH_CASES can leave none)
        return type(name, (), {"kind": kind, "phase": phase, "params": [[]], "__module__": module,
                               "__doc__": doc + " No case here: no benchmark."})
    attrs = {"kind": kind, "phase": phase, "params": [ids], "__doc__": doc, "__module__": module}
    return type(name, (_CaseBenchmark,), attrs)


class _ExportBuildBenchmark:
    """Base of the generated ``ExportBuild`` classes: what building a case's model cost on the
    ``export_cpp`` backend, reported beside the timed forward, never inside it:
    ``track_generation_s`` (aidge-export-cpp generating the C++ project) and
    ``track_compile_s`` (g++ building it), measured when the model was built (the export cache
    keeps the figures). Declared on every backend, so that asv's one benchmark list is the
    same whichever backend discovered it; skipped (at once, nothing built) on the others."""

    kind = ""
    param_names = ["case"]
    number = 1
    repeat = 1
    rounds = 1
    timeout = 300

    def setup(self, case: str) -> None:
        if BACKEND != "export_cpp":
            raise CaseSkipped(f"backend {BACKEND}: no C++ export is built")
        self.pair = pair(self.kind, case, "forward")

    def track_generation_s(self, case: str) -> float:
        return timing.round_sig(self.pair.module.compiled.generation_s, 3)

    def track_compile_s(self, case: str) -> float:
        return timing.round_sig(self.pair.module.compiled.compile_s, 3)

    track_generation_s.unit = track_compile_s.unit = "seconds"


def export_build_class(kind: str, name: str) -> type:
    """The asv ``ExportBuild`` class of every ``kind`` case (params = the forward case ids); defined
    for the models only (benchmarks/models.py): on cpu each of its cases costs a fork to skip
    (~55 s for the ~520 operator cases), and an operator's build cost is in the cache anyway."""
    doc = (f"Backend export_cpp: generation and compile seconds of every {kind} case's C++ "
           f"export (skipped on other backends); params are the pytest ids.")
    ids = case_ids(kind, "forward")
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    if not ids:
        return type(name, (), {"kind": kind, "params": [[]], "__module__": module, "__doc__": doc + " No case here."})
    attrs = {"kind": kind, "params": [ids], "__doc__": doc, "__module__": module}
    return type(name, (_ExportBuildBenchmark,), attrs)
