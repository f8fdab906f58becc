#!/usr/bin/env python
"""Categorised report of an interop test run (a thin CLI over :mod:`interop.reporting`).

    python analyze_results.py results.txt [--bench results/benchmarks.jsonl] [--threshold 10] [--json]
    pytest tests/test_operators.py -ra | python analyze_results.py --bench results/benchmarks.jsonl

Reads pytest's output of any verbosity (``-v``/``-q``, ``-ra``/``-rA``, xdist) from the file or
from stdin, and the ModelTester benchmark JSONL. Prints the Aidge bugs to report (grouped by
operator, with the error), expected failures by category, performance regressions (slowdown
over ``--threshold``), test-strategy issues, a per-operator benchmark summary and the ten
worst forward and backward slowdowns; ``--json`` prints the same report as JSON.

Exit status: 0 when the input could be analysed (whatever the tests' outcome), 2 when it
could not be read (missing file, not pytest output, a JSONL without one valid line), 3 when
the run is incomplete (no totals line, a process died, an interruption, items without a
result, failures not itemised): the report says why at its top.
Malformed JSONL lines are listed with their line number and skipped.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

from interop.reporting import (UnreadableInput, build_report, format_report, parse_benchmarks,
                               parse_pytest_output, read_text)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="?", help="pytest output (a file, or '-' for stdin; default: stdin when piped)")
    p.add_argument("--bench", metavar="JSONL", help="ModelTester benchmark log (e.g. results/benchmarks.jsonl)")
    p.add_argument("--threshold", type=float, default=10.0,
                   help="slowdown ratio (Aidge time / torch time) above which a case is a regression (default 10)")
    p.add_argument("--worst", type=int, default=10, help="how many worst slowdowns to list (default 10)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not (math.isfinite(args.threshold) and args.threshold > 0):
        print(f"analyze_results: --threshold must be a positive number, got {args.threshold}", file=sys.stderr)
        return 2
    if args.worst < 0:
        print(f"analyze_results: --worst must be 0 or more, got {args.worst}", file=sys.stderr)
        return 2
    try:
        run = None
        # stdin is read when asked ('-') or when piped with no other input: --bench alone
        # from a script (stdin not a terminal) analyses the timings only
        if args.results == "-" or (args.results is None and args.bench is None and not sys.stdin.isatty()):
            run = parse_pytest_output(sys.stdin.read(), source="<stdin>")
        elif args.results is not None:
            run = parse_pytest_output(read_text(args.results), source=args.results)
        elif args.bench is None:
            print("analyze_results: no input: give a pytest output file, pipe one in, or --bench", file=sys.stderr)
            return 2
        bench = parse_benchmarks(read_text(args.bench), source=args.bench) if args.bench else None
    except UnreadableInput as exc:
        print(f"analyze_results: {exc}", file=sys.stderr)
        return 2
    report = build_report(run, bench, threshold=args.threshold, worst=args.worst)
    if args.json:
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(report))
    return 3 if report.get("incomplete") else 0


if __name__ == "__main__":
    sys.exit(main())
