"""The report's timing pass: the cases a findings run timed, timed again alone, after its tests.

``python -m interop.reporting.timing_pass --bench RUN/benchmarks.jsonl --out RUN/timings.jsonl``
(what :mod:`interop.reporting.run` runs once pytest has ended, under its supervisor; importable
and runnable from the installed package: ``tools/timing_pass.py`` is a shim of this
module). The cases are built and timed by asv's harness, which is the package's
(:mod:`.bench_harness`, :data:`HARNESS`); where the current directory is a checkout with its own
``benchmarks/harness.py`` (:data:`CHECKOUT_HARNESS`: asv's thin user of the same module, or a
stand-in), that one is used (the current directory comes first on ``sys.path`` under ``python
-m``): :func:`harness`.

ModelTester's timings are taken inside the correctness run, beside the other pytest-xdist
workers, so they measure the machine's load as much as Aidge (LeNet_eval x18.2 in such a run,
x1.96 in asv for the same commit). Here each case the run timed (a ``benchmarks.jsonl`` line of
the models or operators suite) is timed again, one case after the other in one process, with no
test of the run beside it, in asv's rounds (:meth:`.bench_harness.Pair.ratio_rounds`: a
~2 ms block of torch calls, then one of Aidge calls, 10 to 100 times).

The clock is the **thread's CPU time** (``time.thread_time``), not the wall clock: a process that
waits for a core while something else runs is not computing, and the wall clock counted that
wait as Aidge's or torch's. The figure is asv's own estimator on that clock, the median of the
rounds' ratios. Measured 2026-12-03 on the 2-core VM beside a full ``nox -s tests-cpu`` and CPU
hogs (load 4-5), against asv's ``track_aidge_torch_ratio`` of the same commit taken beside one
hog: on the wall clock the median of the models' rounds moved to 0.37-2.93x asv's figure
(LeNet_eval 9.37 for 3.20), the ratio of each side's fastest wall-clock block to 0.96-2.25x
(KWS_eval, whose ~8 ms Aidge call outlasts a time slice: no block of it went undisturbed), the
median on CPU time stayed within 1.06-1.13x. With more than one OpenMP thread (or CUDA) the
work is not all in this thread: the pass then reads the wall clock and says so (``clock``).

One JSON line per case and phase: ``name``, ``phase``, ``kind``, ``ratio`` (3 significant
digits), ``clock`` (``thread CPU time`` or ``wall``), ``rounds``, ``torch_s`` / ``aidge_s``
(each side's median seconds per call over the rounds, on that clock), ``threads``, ``loadavg``
(the 1-minute load average when the case started: what else ran), ``error`` (why the case has
no figure: skipped, precheck failed, budget spent).
The file is written under a temporary name and renamed when complete. A model's ratio gets 1 s
of calls, an operator case's 0.15 s (:data:`BUDGET_S`); the whole pass at most
:data:`DEFAULT_MAX_S`.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

from ..bridge.runtime import quiet_aidge
from ..records.benchmarks import parse_benchmarks
from ..records.store import write_atomically

#: the module that builds and times a case: asv's harness, in the package
HARNESS = "interop.reporting.bench_harness"
#: a checkout's harness (``benchmarks/harness.py`` in the current directory), used where there is one
CHECKOUT_HARNESS = "benchmarks.harness"
#: the suite a benchmark line comes from -> the harness's kind of case
KINDS = {"tests/test_models.py": "model", "tests/test_operators.py": "operator"}
#: seconds the whole pass may take; the cases left then get "budget spent"
DEFAULT_MAX_S = 240.0
#: seconds of calls behind one ratio, per kind: a model 1 s (a KWS_eval Aidge call is ~8 ms: 0.4 s
#: gave 23-32 rounds), an
#: operator case 0.15 s: a full run times ~540 operator case-phases, which took 292 s at 0.4 s
#: each on the loaded 2-core VM (2026-12-03); 0.15 s is still 10-40 rounds of microsecond calls
BUDGET_S = {"model": 1.0, "operator": 0.15}
METHOD = ("median of the rounds' Aidge/torch ratios in asv's interleaved ~2 ms rounds (track_aidge_torch_ratio's "
          "estimator), on the thread's CPU time, alone after the tests")


def wanted(bench_text: str, source: str) -> list[tuple[str, str, str]]:
    """(kind, name, phase) of every timed phase of the run's benchmark lines: the models first,
    then the operator cases from the largest in-run ratio down (when the pass runs out of time,
    what it leaves is what the run found fastest)."""
    data = parse_benchmarks(bench_text, source=source)
    out = []
    for record in data.records:
        kind = KINDS.get(str(record.get("test") or "").split("::")[0])
        for phase in ("forward", "backward"):
            stats = record.get(phase)
            if isinstance(stats, dict) and kind:
                ratio = stats.get("ratio") if isinstance(stats.get("ratio"), (int, float)) else 0.0
                out.append((kind != "model", -ratio, len(out), (kind, record["name"], phase)))
    return [item for *_, item in sorted(out)]


def harness():
    """The harness the pass times with: :data:`CHECKOUT_HARNESS` where the current directory
    holds ``benchmarks/harness.py`` and it is importable (``python -m`` puts the current directory
    first on ``sys.path``), else the package's :data:`HARNESS`: no checkout is needed."""
    if (Path.cwd() / "benchmarks" / "harness.py").is_file():
        try:
            return importlib.import_module(CHECKOUT_HARNESS)
        except ModuleNotFoundError as exc:
            if exc.name not in ("benchmarks", CHECKOUT_HARNESS):
                raise
    return importlib.import_module(HARNESS)


def measure_case(kind: str, name: str, phase: str) -> dict:
    from ..equivalence import timing

    harness_ = harness()

    entry = {"name": name, "phase": phase, "kind": kind, "ratio": None, "error": None,
             "loadavg": round(os.getloadavg()[0], 2)}
    try:
        pair = harness_.pair(kind, name, phase)
        # the thread's CPU time when all the work is in this thread (one OpenMP thread, no CUDA)
        cpu = pair.threads == 1 and not pair.cuda
        rounds = pair.ratio_rounds(BUDGET_S.get(kind, harness_.RATIO_BUDGET_S),
                                   clock=time.thread_time if cpu else None)
    except (harness_.CaseSkipped, harness_.PrecheckFailed) as exc:
        return dict(entry, error=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001  (a case that cannot be timed here is said, not fatal)
        return dict(entry, error=f"{type(exc).__name__}: {exc}")
    return dict(entry, ratio=timing.round_sig(statistics.median(a / t for t, a in rounds), 3),
                clock="thread CPU time" if cpu else "wall", rounds=len(rounds),
                torch_s=statistics.median(t for t, _ in rounds), aidge_s=statistics.median(a for _, a in rounds),
                threads=pair.threads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, required=True, help="the run's benchmarks.jsonl")
    parser.add_argument("--out", type=Path, required=True, help="where the timings go (JSON lines)")
    parser.add_argument("--max-s", type=float, default=DEFAULT_MAX_S, help="seconds the pass may take")
    args = parser.parse_args(argv)
    todo = wanted(args.bench.read_text(errors="replace"), str(args.bench))

    start = time.monotonic()
    lines = []
    # Aidge's console quiet: its per-call warnings ("Inputs (0) and output (0) must have the same
    # DataFormat") made 660,000 lines of one pass's output
    with quiet_aidge():
        for kind, name, phase in todo:
            if time.monotonic() - start > args.max_s:
                lines.append({"name": name, "phase": phase, "kind": kind, "ratio": None,
                              "error": f"not timed: the pass's {args.max_s:g} s were spent"})
                continue
            lines.append(measure_case(kind, name, phase))

    write_atomically(args.out, "".join(json.dumps(dict(line, method=METHOD)) + "\n" for line in lines))
    timed = sum(1 for line in lines if line["ratio"] is not None)
    print(f"timing pass: {timed} of {len(lines)} case phase(s) timed in {time.monotonic() - start:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
