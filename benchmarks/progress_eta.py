"""How far the progress line's ETA is from the run's real end (issue 49).

    python benchmarks/progress_eta.py [--every 5] [--cwd DIR] -- PYTEST ARGS

Starts ``python -m interop.reporting.run PYTEST ARGS`` in ``DIR`` (default: here; its
``results/latest`` is the last run whose durations weigh the ETA), and while it runs reads the
new run's part files every ``--every`` seconds with two :class:`interop.records.progress.Progress`:
one as ``nox -s report`` builds it (weighted by the last run's durations when it can), one without
a last run (the current rate only). When pytest's tests have ended (the last record), it prints for
each reading the predicted end (elapsed + ETA) over the real end, for both, and their range:
1.00 is exact, 0.5 said the run would end at half its real time. Nothing is asserted; the
run's own report is written as usual (in ``DIR/results``).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from interop.records.progress import Progress  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/progress_eta.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    parser.add_argument("pytest_args", nargs="+")
    args = parser.parse_args(argv)
    runs = args.cwd / "results" / "runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "interop.reporting.run", *args.pytest_args], cwd=args.cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))
    run_dir = None
    while run_dir is None and proc.poll() is None:
        time.sleep(0.2)
        new = set(runs.iterdir()) - before if runs.is_dir() else set()
        run_dir = min(new) if new else None
    if run_dir is None:
        print("progress_eta: the run made no run directory", file=sys.stderr)
        return 2
    weighted, plain = Progress(run_dir), Progress(run_dir, previous=None)
    print(f"run {run_dir.name}; last run's durations: {len(weighted.durations)} test(s)")
    readings = []  # (elapsed, done, total, weighted eta, how, plain eta)
    last_done, last_change = -1, None
    while proc.poll() is None:
        time.sleep(args.every)
        for p in (weighted, plain):
            p.poll()
        weighted.line(), plain.line()
        done = sum(weighted.outcomes.values())
        now = time.monotonic() - started
        if done != last_done:
            last_done, last_change = done, now
        if weighted.collected and done < weighted.collected:
            (w, how), (r, _) = weighted.eta(), plain.eta()
            readings.append((now, done, weighted.collected, w, how, r))
    end = last_change  # the last record's reading: the tests' end (the analysis after it is no test)
    print(f"exit {proc.returncode}; tests ended at ~{end:.0f} s (within {args.every:g} s), {last_done} tests")
    print("elapsed  done/total  weighted(end ratio, how)              current rate (end ratio)")
    ratios_w, ratios_r = [], []
    for now, done, total, w, how, r in readings:
        rw = (now + w) / end if w is not None else None
        rr = (now + r) / end if r is not None else None
        if rw is not None:
            ratios_w.append(rw)
        if rr is not None:
            ratios_r.append(rr)
        print(f"{now:7.0f}  {done:5d}/{total:<5d} " + (f"{rw:5.2f} {how:30s}" if rw is not None else " " * 37)
              + (f" {rr:5.2f}" if rr is not None else "  -"))
    for name, ratios in (("weighted", ratios_w), ("current rate", ratios_r)):
        if ratios:
            print(f"{name}: predicted end / real end {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} readings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
