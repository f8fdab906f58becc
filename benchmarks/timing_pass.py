"""The report's timing pass: the cases a findings run timed, timed again alone, after its tests.

``python -m benchmarks.timing_pass --bench RUN/benchmarks.jsonl --out RUN/timings.jsonl``
(what :mod:`interop.reporting.run` runs once pytest has ended). ModelTester's timings are taken
inside the correctness run, beside the other pytest-xdist workers, so they measure the machine's
load as much as Aidge (LeNet_eval x18.2 in such a run, x1.96 in asv for the same commit). Here
each case the run timed (a ``benchmarks.jsonl`` line of the models or operators suite) is timed
again, one case after the other in one process, with no test of the run beside it, in asv's
rounds (:meth:`benchmarks.harness.Pair.ratio_rounds`: a ~2 ms block of torch calls, then one of
Aidge calls, 10 to 100 times).

The figure is the ratio of each side's **least-disturbed block** (Aidge's fastest block over
torch's fastest, both within the same second): what else runs on the machine only ever adds
time to a block, so the fastest block of each side is the one it disturbed least. asv's
``track_aidge_torch_ratio`` takes the median of the rounds' ratios instead (``ratio_median``
here): on a quiet machine the two agree; measured 2026-12-03 beside a full ``nox -s tests-cpu``
and a CPU hog (load 5 on 2 cores), the median of the models' rounds moved to 0.38-1.93x asv's
quiet figure (ResNet_eval 1.04 against 2.70), the least-disturbed ratio stayed within
0.97-1.11x of it for all but KWS_eval (1.65x at 32 rounds; 1.02x at 82: hence a model's 1 s).

One JSON line per case and phase: ``name``, ``phase``, ``kind``, ``ratio`` (3 significant
digits), ``ratio_median``, ``rounds``, ``torch_s`` / ``aidge_s`` (each side's fastest block,
seconds per call), ``threads``, ``loadavg`` (the 1-minute load average when the case started:
what else ran), ``error`` (why the case has no figure: skipped, precheck failed, budget spent).
The file is written under a temporary name and renamed when complete. A model's ratio gets 1 s
of calls, an operator case's 0.15 s (:data:`BUDGET_S`); the whole pass at most
:data:`DEFAULT_MAX_S`.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: the suite a benchmark line comes from -> the harness's kind of case
KINDS = {"tests/test_models.py": "model", "tests/test_operators.py": "operator"}
#: seconds the whole pass may take; the cases left then get "budget spent"
DEFAULT_MAX_S = 240.0
#: seconds of calls behind one ratio, per kind: a model 1 s (a KWS_eval Aidge call is ~8 ms: 0.4 s
#: gave 23-32 rounds, too few for an undisturbed block of each side on a loaded machine), an
#: operator case 0.15 s: a full run times ~540 operator case-phases, which took 292 s at 0.4 s
#: each on the loaded 2-core VM (2026-12-03); 0.15 s is still 10-40 rounds of microsecond calls
BUDGET_S = {"model": 1.0, "operator": 0.15}
METHOD = ("Aidge's least-disturbed ~2 ms block over torch's, in asv's interleaved rounds, alone after the tests "
          "(asv's track_aidge_torch_ratio: the median of the rounds' ratios, ratio_median here)")


def wanted(bench_text: str, source: str) -> list[tuple[str, str, str]]:
    """(kind, name, phase) of every timed phase of the run's benchmark lines: the models first,
    then the operator cases from the largest in-run ratio down (when the pass runs out of time,
    what it leaves is what the run found fastest)."""
    from interop.records.benchmarks import parse_benchmarks

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


def time_case(kind: str, name: str, phase: str) -> dict:
    from benchmarks import harness
    from interop.equivalence import timing

    entry = {"name": name, "phase": phase, "kind": kind, "ratio": None, "error": None,
             "loadavg": round(os.getloadavg()[0], 2)}
    try:
        pair = harness.pair(kind, name, phase)
        rounds = pair.ratio_rounds(BUDGET_S.get(kind, harness.RATIO_BUDGET_S))
    except (harness.CaseSkipped, harness.PrecheckFailed) as exc:
        return dict(entry, error=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001  (a case that cannot be timed here is said, not fatal)
        return dict(entry, error=f"{type(exc).__name__}: {exc}")
    torch_s, aidge_s = min(t for t, _ in rounds), min(a for _, a in rounds)
    return dict(entry, ratio=timing.round_sig(aidge_s / torch_s, 3), rounds=len(rounds), torch_s=torch_s,
                aidge_s=aidge_s, ratio_median=timing.round_sig(statistics.median(a / t for t, a in rounds), 3),
                threads=pair.threads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, required=True, help="the run's benchmarks.jsonl")
    parser.add_argument("--out", type=Path, required=True, help="where the timings go (JSON lines)")
    parser.add_argument("--max-s", type=float, default=DEFAULT_MAX_S, help="seconds the pass may take")
    args = parser.parse_args(argv)
    todo = wanted(args.bench.read_text(errors="replace"), str(args.bench))
    from interop.bridge.runtime import quiet_aidge

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
            lines.append(time_case(kind, name, phase))
    tmp = args.out.with_name(f".{args.out.name}.{os.getpid()}.partial")
    tmp.write_text("".join(json.dumps(dict(line, method=METHOD)) + "\n" for line in lines))
    os.replace(tmp, args.out)
    timed = sum(1 for line in lines if line["ratio"] is not None)
    print(f"timing pass: {timed} of {len(lines)} case phase(s) timed in {time.monotonic() - start:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
