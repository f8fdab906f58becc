"""``ModelTester``: matched forward / loss / backward / gradient / SGD-step checks between two
models (a torch reference and usually an :class:`~interop.bridge.AidgeModule`), with timings.

Every verdict goes through :mod:`interop.oracle.compare`; every timing through :mod:`interop.equivalence.timing`.

:class:`ModelTester` and :class:`EquivalenceError` live here; the rest, by what each part does, in
:mod:`.tester_replay` (the replay command, :data:`~.tester_replay.REPLAY_CONTEXT`), :mod:`.tester_aidge_time`
(Aidge's own seconds in a model and the timing line's other fields) and :mod:`.tester_steppers` (each
model's SGD step).
"""
from __future__ import annotations

import contextlib
import datetime
import logging
import math
import os
from typing import Any

import torch

from ..bridge.value_check import checks_deferred
from ..case_notes import note
from ..errors import CudaUnavailableError
from ..stages import stage
from ..threads_policy import slowdown_advice  # the OpenMP pool and the load: docs/openmp-threads.md
from . import timing
from .benchlog import append_jsonl, resolve_log_path
from . import policy
from .policy import rounding_note
from ..oracle.attribution import attribute_backward, attribute_forward, float64_copy
from ..oracle.compare import mismatch_figures
from ..oracle.onnxruntime import run_onnxruntime
from ..oracle.tolerance import tolerance_for
from .tester_replay import replay_command
from .tester_aidge_time import _aidge_seconds, _aidge_version, _own_seconds, _test_workers
from .tester_steppers import _stepper_for

#: interleaved blocks per model and timed epoch of :meth:`ModelTester._repeat_timed_calls`
#: (measured with tools/tester_noise.py, docs/noise-floor.md: 8 blocks kept the ratio of
#: microsecond cases steadier than 2 under load)
REPEAT_BLOCKS = 8

__all__ = ["ModelTester", "EquivalenceError"]

logger = logging.getLogger("interop.equivalence.tester")


class EquivalenceError(AssertionError):
    """Two models disagree. Carries what differed, where (test, epoch) and the seed, and who is
    to blame when the oracle could say (``attribution``: ``aidge`` or ``export``, see
    :mod:`interop.oracle.attribution`; None: not decided, Aidge's by the category's rule)."""

    #: the comparator's figures of the first mismatch (:func:`mismatch_figures`), when known
    mismatch: dict | None = None

    def __init__(self, message: str, *, test: str, epoch: int | None, what: str, seed: int,
                 mismatch: dict | None = None, attribution: str | None = None):
        self.test, self.epoch, self.what, self.seed = test, epoch, what, seed
        self.mismatch = mismatch
        self.attribution = attribution
        super().__init__(message)

    @property
    def phase(self) -> str | None:
        """``forward`` (output, loss), ``backward`` (gradients), ``step`` (weights after the
        step), ``export`` (initial weights, parameter names), None (a speed check)."""
        what = self.what or ""
        if what.startswith("weights after"):
            return "step"
        if what.startswith(("input grad", "grad")):
            return "backward"
        if what.startswith(("output", "loss")):
            return "forward"
        if what.startswith(("initial weights", "parameter")):
            return "export"
        return None

    @property
    def category(self) -> str:
        """Decided from what differs and how (the comparator's figures: no element statistics
        means the shapes or the structure differ)."""
        what = self.what or ""
        shape = bool(self.mismatch) and self.mismatch.get("n_mismatched") is None
        if what.endswith(" speed"):
            return "slowdown_vs_torch"
        if what.startswith(("initial weights", "parameter")):
            return "export_error (test strategy)"
        if shape and not what.startswith(("output", "loss")):
            return "shape_mismatch (test strategy)"
        if what.startswith("weights after"):
            return "training_diverges"
        if what.startswith(("input grad", "grad")):
            return "gradients_differ"
        return "output_shape_differs" if shape else "outputs_differ"


class ModelTester:
    """Compare ``model1`` (the reference, usually torch) with ``model2`` (usually Aidge).

    One step (:meth:`unit_test`): forward both on the same inputs and compare outputs; when
    ``test_backward``: MSE loss against ``label`` (compared), backward on both, compare input
    gradients and the gradient of every parameter model2 holds (by name), SGD-step both models (``learning_rate``;
    an :class:`AidgeModule` steps with its attached Aidge optimiser) and check the weights
    still agree. :meth:`test_multiple_step` repeats this for ``epochs`` epochs on seeded
    random inputs and records timings (the first ``bench_warmup`` epochs excluded). Every
    comparison is decided by the one equivalence policy (:mod:`interop.equivalence.policy`,
    as pytest's verdict and asv's precheck decide): a gradient model1 does not give is not
    compared, one model2 does not give is zeros; the seed is :func:`~interop.equivalence.policy.seed_for`
    the name.

    Tolerance: ``tolerance`` (a :class:`~interop.oracle.tolerance.Tolerance`, the one a
    case declares in the catalog), else the comparator's float32 default ``(rtol 1.3e-6,
    atol 1e-5)``; ``relative_precision`` / ``absolute_precision`` override it explicitly.

    Failures raise :class:`EquivalenceError` (an ``AssertionError``) naming the test, the
    epoch, what differed, the seed and a command that replays it. ``INTEROP_SEED`` overrides
    the seed (which otherwise derives from ``name``).

    Timing: ``benchmark=True`` records forward and backward times per model. In every timed
    epoch (after the first ``bench_warmup``), before the checked calls, each model repeats
    the step's timed calls on copies of the epoch's inputs (forward in the checked call's
    grad mode; loss; backward) until its timed calls (both phases) add up to
    ``bench_min_total_ms`` over the test and number at least ``bench_min_samples``, at most
    ``bench_max_samples`` (spread over the timed epochs, in :data:`REPEAT_BLOCKS` interleaved
    blocks per model); the checked call is one sample more.
    The repetitions never step, and the models' buffers (BatchNorm running statistics),
    parameter ``.grad`` and torch's RNG state are restored after them, so the comparisons
    see what they would see without them. The figures are medians (:class:`PhaseSamples
    <interop.equivalence.timing.PhaseSamples>`): ``ratio = median2 / median1``. When
    ``max_slowdown_ratio`` is not None, asserts that ratio stays under it for every phase
    whose model1 median is at least ``bench_min_time_ms``. ``bench_print=True`` emits the
    summary line on the ``interop.equivalence.tester`` logger (INFO) rather than printing. A JSON line per
    test goes to :attr:`BENCH_LOG_FILE`, resolved by :func:`resolve_log_path` (``None``
    disables it).
    """

    BENCH_LOG_FILE: str | None = "benchmarks.jsonl"
    BENCH_LOG_DIR: str | None = None

    def __init__(self, model1, model2, name='', test_backward=True, epochs=10, relative_precision=None,
                 absolute_precision=None, learning_rate=0.01, cuda=False, benchmark=True,
                 max_slowdown_ratio=10.0, bench_warmup=2, bench_print=True, bench_min_time_ms=0.1,
                 tolerance=None, bench_min_total_ms=20.0, bench_max_samples=500, bench_min_samples=20):
        self.model1 = model1
        self.model2 = model2
        self.name = name or f"{type(model1).__name__}_vs_{type(model2).__name__}"
        self.test_backward = test_backward
        self.epochs = epochs
        #: the tolerance policy of every comparison (a case's declared one; default: the
        #: comparator's float32 table); explicit precisions override it
        self.tolerance = tolerance_for(tolerance, "float32")
        self.rtol = self.tolerance.rtol if relative_precision is None else relative_precision
        self.atol = self.tolerance.atol if absolute_precision is None else absolute_precision
        self.learning_rate = learning_rate
        self.cuda = cuda
        self.benchmark = benchmark
        self.max_slowdown_ratio = max_slowdown_ratio
        self.bench_warmup = bench_warmup
        self.bench_print = bench_print
        self.bench_min_time_ms = bench_min_time_ms
        #: per model, the timed calls of the test (both phases) add up to at least this (ms)...
        self.bench_min_total_ms = bench_min_total_ms
        #: ... and take at least this many samples (a millisecond model reaches the time in a few)...
        self.bench_min_samples = bench_min_samples
        #: ... but never more than this many
        self.bench_max_samples = bench_max_samples
        self.seed = policy.seed_for(self.name)
        #: what every comparison of the step is decided under (interop.equivalence.policy): the case's
        #: tolerance policy, or the explicit precisions for every dtype
        self._policy = tolerance if relative_precision is None and absolute_precision is None else (self.rtol, self.atol)
        self.epoch: int | None = None
        #: the differences the oracle called float32 rounding (attribution ``precision``): no
        #: mismatch, one line each (what, epoch, the figures)
        self.precision: list[str] = []
        self._times = {"forward": timing.PhaseSamples(), "backward": timing.PhaseSamples()}
        self._steppers: tuple[Any, Any] | None = None
        if cuda and not torch.cuda.is_available():
            raise CudaUnavailableError("ModelTester(cuda=True) but torch.cuda.is_available() is False")

    # -- failures -------------------------------------------------------------------
    def _fail(self, what: str, detail: str, headline: str | None = None, mismatch: dict | None = None,
              attribution: str | None = None) -> None:
        epoch = "" if self.epoch is None else f", epoch {self.epoch}"
        headline = headline or (f"{what} differs between model1 ({type(self.model1).__name__}) "
                                f"and model2 ({type(self.model2).__name__})")
        message = (f"[{self.name}{epoch}] {headline} [seed {self.seed}]\n{detail}\n"
                   f"Replay: {replay_command(self.seed)}")
        raise EquivalenceError(message, test=self.name, epoch=self.epoch, what=what, seed=self.seed,
                               mismatch=mismatch, attribution=attribution)

    def _check(self, what: str, actual, expected, localize_inputs=None, gradient: bool = False,
               attribute=None) -> None:
        """model2's ``actual`` against model1's ``expected``, decided by the one equivalence policy
        (:func:`interop.equivalence.policy.difference`; ``gradient``: its gradient rule); a
        difference is attributed by the oracle's one rule (``attribute(found)``: ``(attribution,
        why)``, when model2 is an AidgeModule): float32 rounding is no mismatch (kept in
        :attr:`precision`), any other fails naming who is to blame."""
        with stage("compare"):
            found = policy.difference(what, actual, expected, self._policy, gradient=gradient)
        if not found:
            return
        attribution = why = None
        if attribute is not None and self._attributable():
            with stage("attribution"):
                attribution, why = attribute(found)
            if attribution == "precision":
                line = rounding_note(what if self.epoch is None else f"{what} (epoch {self.epoch})", found)
                self.precision.append(line)
                note("precision", [line])  # the case's record says it (interop.case_notes)
                return
        detail = found.detail
        if why:
            detail = f"{detail}\nattribution: {attribution} ({why})"
        if localize_inputs is not None:
            hint = self._divergence_hint(localize_inputs)
            detail = f"{detail}\n{hint}" if hint else detail
        self._fail(what, detail, mismatch=mismatch_figures(found.mismatches[0]), attribution=attribution)

    def _attributable(self) -> bool:
        """The oracle's attribution needs torch on one side and the ONNX graph Aidge ran on the other."""
        from ..bridge import AidgeModule

        return isinstance(self.model2, AidgeModule) and isinstance(self.model1, torch.nn.Module) \
            and not isinstance(self.model1, AidgeModule) and not self.cuda

    def _attribute_output(self, inputs, out1, out2):
        """``attribute`` of a forward difference: torch float64 on a copy of model1, onnxruntime on
        model2's ONNX graph holding model1's current weights (the two sides' weights are equal: the
        previous step checked them)."""
        from torch.utils import _pytree as pytree

        from ..bridge.onnx_export_graph import default_input_names, proto_with_state

        plain = [x.detach().cpu() for x in inputs]
        leaves = lambda out: [x.detach() for x in pytree.tree_leaves(out) if x is not None]  # noqa: E731

        def exact():
            with torch.no_grad(), torch.random.fork_rng(devices=[]):
                return leaves(float64_copy(self.model1)(*[x.double() if x.is_floating_point() else x for x in plain]))

        def onnx():
            return run_onnxruntime(proto_with_state(self.model2._exported, self.model1), [x.numpy() for x in plain],
                                   input_names=default_input_names(len(plain)))

        return lambda found: attribute_forward(aidge_out=leaves(out2), torch_out=leaves(out1), exact=exact, onnx=onnx,
                                               rtol=found.tolerance.rtol, atol=found.tolerance.atol)

    def _attribute_gradient(self, inputs, label, input_index: int | None = None, pname: str | None = None):
        """``attribute`` of a gradient difference: torch's float64 gradient of the same loss (a
        float64 copy of model1, the same inputs and label) as the tie-break."""
        from torch.utils import _pytree as pytree

        def exact_grad():
            try:
                clone = float64_copy(self.model1)
                xs = [x.detach().cpu().double().requires_grad_(input_index == k) if x.is_floating_point() else x
                      for k, x in enumerate(inputs)]
                with torch.random.fork_rng(devices=[]):
                    out = clone(*xs)
                labels = [t.double() for t in pytree.tree_leaves(label)] if label is not None else None
                self._loss(out, labels if labels is None or len(labels) > 1 else labels[0]).backward()
                return xs[input_index].grad if input_index is not None else dict(clone.named_parameters())[pname].grad
            except Exception:  # noqa: BLE001 - no float64 kernel: the tie-break does not decide
                return None

        return lambda found: attribute_backward(aidge_grad=found.actual, torch_grad=found.expected,
                                                exact_grad=exact_grad(), rtol=found.tolerance.rtol,
                                                atol=found.tolerance.atol)

    def _divergence_hint(self, inputs) -> str:
        """When model2 is an AidgeModule: the first diverging layer and its Aidge node(s)."""
        from ..bridge import AidgeModule

        if not isinstance(self.model2, AidgeModule) or isinstance(self.model1, AidgeModule):
            return ""
        from ..diagnostics import first_divergence_hint

        return first_divergence_hint(self.model1, self.model2, [x.detach() for x in inputs],
                                     rtol=self.rtol, atol=self.atol, tolerance=self.tolerance)

    # -- one step ----------------------------------------------------------------------
    def unit_test(self, input_tensors, label, record_timing=False) -> None:
        """One forward (and backward + SGD step when ``test_backward``) on both models."""
        try:
            # this tester compares every call itself and says what differs: the AidgeModule's own
            # first-call value check (interop.bridge.value_check) would stop the call before it can
            with checks_deferred():
                self._unit_test(input_tensors, label, record_timing)
        except EquivalenceError:
            raise
        except Exception as exc:
            # an Aidge error (not implemented, crash...) keeps its type for categorisation;
            # the note says where it happened and how to replay it
            epoch = "" if self.epoch is None else f", epoch {self.epoch}"
            exc.add_note(f"[{self.name}{epoch}] seed {self.seed}; replay: {replay_command(self.seed)}")
            raise

    def _unit_test(self, input_tensors, label, record_timing) -> None:
        inputs = _as_list(input_tensors)
        device = "cuda" if self.cuda else "cpu"
        inputs = [x.to(device) for x in inputs]
        grad_inputs = self.test_backward and all(x.is_floating_point() for x in inputs)
        if record_timing:
            with stage("timed repeats"):
                self._repeat_timed_calls(inputs, label, grad_inputs)
        in1 = [x.detach().clone().requires_grad_(grad_inputs) for x in inputs]
        in2 = [x.detach().clone().requires_grad_(grad_inputs) for x in inputs]

        grad_ctx = contextlib.nullcontext() if self.test_backward else torch.no_grad()
        with grad_ctx:
            with stage("torch"):
                out1, t1 = timing.timed(lambda: self.model1(*in1), cuda=self.cuda)
            before = _aidge_seconds(self.model2)
            with stage("aidge forward"):
                out2, t2 = timing.timed(lambda: self.model2(*in2), cuda=self.cuda)
        if record_timing:
            self._record("forward", t1, t2, before)
        self._check("output", out2, out1, localize_inputs=inputs, attribute=self._attribute_output(inputs, out1, out2))
        if not self.test_backward:
            return

        loss1, loss2 = self._loss(out1, label), self._loss(out2, label)
        self._check("loss", loss2.detach(), loss1.detach())

        step1, step2 = self._optimizers()
        step1.zero_grad(set_to_none=True)
        step2.zero_grad(set_to_none=True)
        with stage("torch backward"):
            _, b1 = timing.timed(loss1.backward, cuda=self.cuda)
        before = _aidge_seconds(self.model2)
        with stage("aidge backward"):
            _, b2 = timing.timed(loss2.backward, cuda=self.cuda)
        if record_timing:
            self._record("backward", b1, b2, before)
        if grad_inputs:
            for i, (a, b) in enumerate(zip(in1, in2)):
                self._check(f"input grad [{i}]", b.grad, a.grad, gradient=True,
                            attribute=self._attribute_gradient(inputs, label, input_index=i))
        params1 = dict(self.model1.named_parameters())
        params2 = dict(self.model2.named_parameters())
        if set(params1) != set(params2):
            self.check_weights("parameters", params1, params2)  # reports the name difference
        for pname, p1, p2 in policy.compared_parameters(self.model1, self.model2):
            self._check(f"grad of {pname}", p2.grad, p1.grad, gradient=True,
                        attribute=self._attribute_gradient(inputs, label, pname=pname))
        with stage("torch"):
            step1.step()
        with stage("aidge step"):
            step2.step()
        self.check_weights("weights after the SGD step", params1, params2)

    def _loss(self, out, label):
        """The sum of the MSE losses of every output leaf (tensor, tuple, list, dict, nested)
        against its label."""
        from torch.utils import _pytree as pytree

        outs = pytree.tree_leaves(out)
        labels = _as_list(label) if len(outs) > 1 or isinstance(out, (tuple, list)) else [label]
        if len(labels) != len(outs):
            raise ValueError(f"[{self.name}] {len(outs)} output(s) but {len(labels)} label(s)")
        # each label on its output's device: an AidgeModule on backend "cuda" answers CPU inputs with
        # CUDA outputs (measured on an H200, 2026-12-04: 280 of 523 operator cases stopped here)
        return sum(torch.nn.functional.mse_loss(o, y.to(o.device)) for o, y in zip(outs, labels))

    def _record(self, phase: str, t1: float, t2: float, aidge_before: float | None) -> None:
        self._times[phase].add(1, t1)
        self._times[phase].add(2, t2, _own_seconds(self.model2, aidge_before))

    # -- repeated timed calls -----------------------------------------------------------
    def _repeat_timed_calls(self, inputs, label, grad_inputs) -> None:
        """More samples of this step's timed calls, before the checked ones (see the class
        docstring): model1 and model2 in alternating blocks, each block until the model's
        timed calls reach their share of ``bench_min_total_ms`` (and of ``bench_min_samples``)
        or of ``bench_max_samples``. State the repetitions touch is restored afterwards."""
        timed_epochs = max(1, self.epochs - self.bench_warmup)
        budget = self.bench_min_total_ms / 1e3 / timed_epochs / REPEAT_BLOCKS
        cap = max(0, self.bench_max_samples // timed_epochs - 1)  # the checked call is one more
        caps = [cap // REPEAT_BLOCKS + (1 if b < cap % REPEAT_BLOCKS else 0) for b in range(REPEAT_BLOCKS)]
        if not caps[0] or budget <= 0:
            return
        floor = math.ceil(max(0.0, self.bench_min_samples / timed_epochs - 1) / REPEAT_BLOCKS)
        phases = ("forward", "backward") if self.test_backward else ("forward",)
        epoch = {w: sum(self._times[p].total(w) for p in phases) for w in (1, 2)}
        with timing.restored_state((self.model1, self.model2), self.cuda):
            for block_cap in caps:
                for which in (1, 2):
                    self._repeat_block(which, inputs, label, grad_inputs, budget, block_cap, epoch,
                                       min(floor, block_cap))

    def _repeat_block(self, which, inputs, label, grad_inputs, budget, cap, epoch, floor) -> None:
        model = self.model1 if which == 1 else self.model2
        phases = ("forward", "backward") if self.test_backward else ("forward",)
        start = sum(self._times[p].total(which) for p in phases)
        grad_ctx = contextlib.nullcontext() if self.test_backward else torch.no_grad()
        for n in range(cap):
            spent = sum(self._times[p].total(which) for p in phases)
            if n >= floor and (spent - start >= budget or spent - epoch[which] >= budget * REPEAT_BLOCKS):
                break  # this block's share is spent, or the epoch's (a slow call overshoots a block's)
            x = [t.detach().clone().requires_grad_(grad_inputs) for t in inputs]  # as in1 / in2
            with grad_ctx:
                before = _aidge_seconds(model) if which == 2 else None
                out, t = timing.timed(lambda: model(*x), cuda=self.cuda)
            self._times["forward"].add(which, t, _own_seconds(model, before) if which == 2 else None)
            if not self.test_backward:
                continue
            loss = self._loss(out, label)
            before = _aidge_seconds(model) if which == 2 else None
            _, t = timing.timed(loss.backward, cuda=self.cuda)
            self._times["backward"].add(which, t, _own_seconds(model, before) if which == 2 else None)

    def check_weights(self, what: str = "weights", params1=None, params2=None) -> None:
        """Both models hold the same parameters (names and values, compared by name)."""
        params1 = dict(self.model1.named_parameters()) if params1 is None else params1
        params2 = dict(self.model2.named_parameters()) if params2 is None else params2
        if set(params1) != set(params2):
            self._fail("parameter names", f"only in model1: {sorted(set(params1) - set(params2))}; "
                                          f"only in model2: {sorted(set(params2) - set(params1))}")
        for pname, p1 in params1.items():
            self._check(f"{what}: {pname}", params2[pname].detach(), p1.detach())

    def _optimizers(self):
        if self._steppers is None:
            self._steppers = (_stepper_for(self.model1, self.learning_rate),
                              _stepper_for(self.model2, self.learning_rate))
        return self._steppers

    # -- several steps -------------------------------------------------------------------
    def test_multiple_step(self, input_sizes, label_sizes=None) -> None:
        """``epochs`` steps on seeded random inputs of ``input_sizes`` (and labels of
        ``label_sizes``, inferred from a first forward when omitted)."""
        from ..bridge import normalize_input_sizes

        sizes = normalize_input_sizes(input_sizes)
        gen = torch.Generator().manual_seed(self.seed)
        if self.test_backward and label_sizes is None:
            with torch.no_grad():
                probe = self.model1(*[torch.zeros(s) for s in sizes])
            from torch.utils import _pytree as pytree

            leaves = pytree.tree_leaves(probe)
            label_sizes = ([tuple(o.shape) for o in leaves] if len(leaves) > 1 or isinstance(probe, (tuple, list))
                           else tuple(leaves[0].shape))
        self.check_weights("initial weights")
        with timing.pinned_threads():
            for epoch in range(self.epochs):
                self.epoch = epoch
                inputs = [torch.randn(s, generator=gen) for s in sizes]
                label = None
                if self.test_backward:
                    shapes = normalize_input_sizes(label_sizes)
                    labels = [torch.randn(s, generator=gen) for s in shapes]
                    label = labels if len(labels) > 1 else labels[0]
                self.unit_test(inputs, label, record_timing=self.benchmark and epoch >= self.bench_warmup)
        self.epoch = None
        if self.benchmark:
            self._report_timings()

    # -- timings ----------------------------------------------------------------------------
    def performance_stats(self) -> dict[str, dict[str, Any]]:
        """``{"forward": {...}, "backward": {...}}`` (:meth:`PhaseSamples.stats
        <interop.equivalence.timing.PhaseSamples.stats>`), seconds. ``median1``: model1's
        call. ``median2``: when model2 is (or holds) an :class:`~interop.bridge.AidgeModule`,
        **Aidge's own time** (its scheduler's forward / backward inside the call, ``timed2 =
        "aidge scheduler"``), else model2's call (``timed2 = "model2 call"``). ``call2``:
        model2's whole call; ``bridge2``: what the bridge added (None when model2 holds no
        AidgeModule). ``ratio = median2 / median1``: the slowdown of Aidge itself, not of
        the bridge; ``samples1`` / ``samples2``: how many calls each median rests on."""
        return {phase: times.stats() for phase, times in self._times.items()}

    def _report_timings(self) -> None:
        stats = self.performance_stats()
        line = " | ".join(
            f"{phase}: {s['median1'] * 1e3:.3f} ms vs {s['median2'] * 1e3:.3f} ms (x{s['ratio']:.3g}"
            + (f"; bridge +{s['bridge2'] * 1e3:.3f} ms" if s.get("bridge2") is not None else "")
            + f"; medians of {s['samples1']}/{s['samples2']} calls)"
            for phase, s in stats.items() if s["samples"] and s["ratio"] is not None)
        if self.bench_print and line:
            logger.info("[%s] %s", self.name, line)
        path = resolve_log_path(self.BENCH_LOG_FILE, self.BENCH_LOG_DIR)
        if path is not None:
            append_jsonl(path, self._log_record(stats))
        if self.max_slowdown_ratio is None:
            return
        for phase, s in stats.items():
            if not s["samples"] or s["ratio"] is None or s["median1"] * 1e3 < self.bench_min_time_ms:
                continue
            if s["ratio"] > self.max_slowdown_ratio:
                self._fail(f"{phase} speed", f"{line}\n{slowdown_advice()}", headline=(
                    f"{phase} of model2 is {s['ratio']:.3g}x slower than model1 "
                    f"(max_slowdown_ratio={self.max_slowdown_ratio})"))

    def _log_record(self, stats) -> dict[str, Any]:
        return {
            "name": self.name,
            "forward": stats["forward"],
            "backward": stats["backward"] if self.test_backward else None,
            "seed": self.seed,
            "epochs": self.epochs,
            "threads": timing.thread_count(),
            # the test processes of this pytest session (pytest-xdist's workers): more than one,
            # and the timings shared the CPU with the others' tests (the report ranks none of them)
            "test_workers": _test_workers(),
            "cuda": self.cuda,
            "torch": torch.__version__,
            "aidge": _aidge_version(),
            "test": os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0] or None,
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }


def _as_list(x) -> list:
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]
