"""How steady is this machine itself? (a script, not an asv module)

    python tools/machine_drift.py [--samples 30] [--pause 1.5]

Times the same fixed pure-Python loop (300,000 multiply-adds, ~70 ms here) ``--samples`` times,
``--pause`` seconds apart, one thread, and prints each time and max/min. No benchmark can be
steadier than this ratio between minutes: when it is far above 1.10x, asv's ``time_*`` rows of
two runs of the same commit differ by as much, whatever the benchmark attributes (docs/noise-floor.md); only ``track_aidge_torch_ratio``, whose two sides are timed in rounds of ~2 ms blocks in one
process, cancels it.
"""
from __future__ import annotations

import argparse
import statistics
import time


def probe(iterations: int = 300_000) -> float:
    start = time.perf_counter()
    x = 0
    for k in range(iterations):
        x += k * k
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--pause", type=float, default=1.5, help="seconds between samples")
    args = parser.parse_args(argv)
    times = []
    for i in range(args.samples):
        if i:
            time.sleep(args.pause)
        times.append(probe())
    median = statistics.median(times)
    within = sum(abs(t / median - 1) <= 0.10 for t in times) / len(times)
    print(f"fixed loop, {args.samples} samples {args.pause} s apart (ms): {' '.join(f'{t * 1e3:.1f}' for t in times)}")
    print(f"median {median * 1e3:.1f} ms, max/min {max(times) / min(times):.2f}, "
          f"share within 1.10x of the median {within:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
