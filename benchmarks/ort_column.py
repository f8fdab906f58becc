"""onnxruntime as the third column of the forward benchmarks (issue 47 item 3): ``time_ort`` and
``track_aidge_ort_ratio`` for every operator, model and architecture case whose forward is timed.

What is timed: onnxruntime's ``InferenceSession.run`` on **the very ONNX graph the case's
AidgeModule imported** (``AidgeModule.onnx_model``), on the case's own seeded inputs (the ones
:func:`benchmarks.harness.pair` checks and times; an architecture's example call), with the
session's default graph optimisations (what a porter who picks onnxruntime instead of Aidge gets)
and as many threads as Aidge's OpenMP runtime has (``OMP_NUM_THREADS``, 1 in asv.conf.json: the
same thread count as both other columns). ``track_aidge_ort_ratio`` is Aidge's scheduler
(``time_aidge``'s call) over onnxruntime's, measured as ``track_aidge_torch_ratio`` is: rounds of
a block of onnxruntime calls then a block of Aidge calls, the median of the rounds' ratios.

A backward has no onnxruntime column: the installed onnxruntime has no training runtime. A case
whose export onnxruntime refuses fails ``time_ort`` and the ratio with onnxruntime's words
(``OrtRefused``); the other columns of the case are unaffected. On a backend other than ``cpu``
the column is skipped (onnxruntime runs on the CPU).

The classes of ``operators.py``, ``models.py`` and ``architectures.py`` get the two methods
through :func:`with_ort`; nothing here is collected by asv on its own (no class, no benchmark)."""
from __future__ import annotations

import statistics
from typing import Any, Callable

from interop.equivalence import timing

from . import harness

__all__ = ["with_ort", "ort_call", "OrtRefused", "RATIO_UNIT"]

RATIO_UNIT = "aidge/onnxruntime"


class OrtRefused(RuntimeError):
    """onnxruntime cannot build or run the case's exported graph: the case has no onnxruntime figure."""


_CALLS: dict[tuple[str, str], Callable[[], Any] | BaseException] = {}


def _inputs(case) -> list:
    """The case's inputs as :func:`benchmarks.harness.pair` builds them (seeded: the same tensors)."""
    if case.kind == "architecture":
        _, example = harness._architecture_call(case)
        return list(example)
    return harness._seeded_inputs(case.id, case.input_sizes, tuple(case.input_ranges))


def _feeds(proto, inputs) -> dict[str, Any]:
    """``inputs`` by the exported graph's input names (``input_<i>``, in the model's order), in the
    graph's declared types; inputs the graph does not read are left out, as onnxruntime wants."""
    import onnx.helper

    from interop.bridge.onnx_export import default_input_names

    inits = {i.name for i in proto.graph.initializer}
    declared = {i.name: i.type.tensor_type.elem_type for i in proto.graph.input if i.name not in inits}
    feeds = {}
    for name, x in zip(default_input_names(len(inputs)), inputs):
        if name not in declared:
            continue
        value = x.detach().cpu().numpy()
        if declared[name]:
            value = value.astype(onnx.helper.tensor_dtype_to_np_dtype(declared[name]), copy=False)
        feeds[name] = value
    missing = sorted(set(declared) - set(feeds))
    if missing:
        raise OrtRefused(f"the exported graph's inputs {missing} are not the case's inputs")
    return feeds


def ort_call(kind: str, case_id: str) -> Callable[[], Any]:
    """The memoised onnxruntime call of a case's forward (see the module's docstring); raises
    :class:`OrtRefused` (memoised too) where onnxruntime cannot run the graph, the harness's
    :class:`~benchmarks.harness.CaseSkipped` off the ``cpu`` backend."""
    key = (kind, case_id)
    if key not in _CALLS:
        try:
            _CALLS[key] = _build(kind, case_id)
        except BaseException as exc:  # noqa: BLE001  (remembered, re-raised below)
            _CALLS[key] = exc
    value = _CALLS[key]
    if isinstance(value, BaseException):
        raise value
    return value


def _build(kind: str, case_id: str) -> Callable[[], Any]:
    if harness.BACKEND != "cpu":
        raise harness.CaseSkipped(f"backend {harness.BACKEND}: onnxruntime runs on the CPU only, no third column")
    pair = harness.pair(kind, case_id, "forward")
    proto = pair.module.onnx_model
    feeds = _feeds(proto, _inputs(harness.cases(kind)[case_id]))
    from interop._lazy import quiet_import

    ort = quiet_import("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = pair.threads  # Aidge's OpenMP thread count (1 under asv.conf.json)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
        session.run(None, feeds)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own words
        raise OrtRefused(f"{case_id}: onnxruntime cannot run the exported graph: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:300]}") from exc
    run = session.run
    return lambda: run(None, feeds)


def aidge_ort_rounds(aidge_call: Callable[[], Any], ort: Callable[[], Any],
                     budget_s: float = harness.RATIO_BUDGET_S) -> list[tuple[float, float]]:
    """(onnxruntime's, Aidge's) seconds per call in each round, as
    :meth:`benchmarks.harness.Pair.ratio_rounds` measures torch against Aidge."""
    calls = (ort, aidge_call)
    for call in calls:
        timing.measure(call, warmup=3, repeat=0)
    once = [min(timing.measure(call, warmup=0, repeat=3)) for call in calls]
    counts = [max(1, int(harness.RATIO_BLOCK_S / max(t, 1e-7))) for t in once]
    round_s = sum(n * t for n, t in zip(counts, once))
    rounds = max(harness.RATIO_MIN_ROUNDS, min(harness.RATIO_MAX_ROUNDS, int(budget_s / max(round_s, 1e-9))))
    return [(timing.block_time(ort, counts[0]), timing.block_time(aidge_call, counts[1])) for _ in range(rounds)]


def with_ort(cls: type) -> type:
    """``cls`` (a class of :func:`benchmarks.harness.benchmark_class`) with ``time_ort`` and
    ``track_aidge_ort_ratio`` for a ``forward`` class with cases; other classes unchanged. The
    onnxruntime session is built in the two methods' own asv ``setup`` (run after the class's, before
    any sample: a ``--quick`` run's one sample used to include the build, 5-109 ms), and only there:
    the class's other benchmarks build none."""
    if getattr(cls, "phase", None) != "forward" or not issubclass(cls, harness._CaseBenchmark):
        return cls
    kind = cls.kind

    def setup_ort(case: str) -> None:  # asv calls a benchmark function's own setup with the parameters
        ort_call(kind, case)

    def time_ort(self, case: str) -> None:
        try:
            run = self._ort_run
        except AttributeError:
            run = self._ort_run = ort_call(kind, case)
        run()

    def track_aidge_ort_ratio(self, case: str) -> float:
        rounds = aidge_ort_rounds(self.pair.aidge_call, ort_call(kind, case))
        return timing.round_sig(statistics.median(a / o for o, a in rounds), 3)

    time_ort.setup = track_aidge_ort_ratio.setup = setup_ort
    track_aidge_ort_ratio.unit = RATIO_UNIT
    cls.time_ort = time_ort
    cls.track_aidge_ort_ratio = track_aidge_ort_ratio
    return cls
