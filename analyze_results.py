#!/usr/bin/env python
"""Categorised report of an interop test run (a thin CLI over :mod:`interop.reporting`).

    python analyze_results.py results.txt [--bench results/benchmarks.jsonl] [--threshold 10] [--json]
                              [--asv-commit HASH [--asv-results results/asv]]
    pytest tests/test_operators.py -ra | python analyze_results.py --bench results/benchmarks.jsonl

Reads pytest's output of any verbosity (``-v``/``-q``, ``-ra``/``-rA``, xdist) from the file or
from stdin (:mod:`interop.console`, which hands its results to the report as rows of the
records' shape), and the ModelTester benchmark JSONL. Prints the Aidge bugs to report (grouped by
operator, with the error), expected failures by category, slowdowns vs torch (median
Aidge/torch ratio over ``--threshold``; with ``--asv-commit``, asv's ratio of that commit for
the cases asv benchmarked), test-strategy issues, a per-operator benchmark summary and the ten
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

from interop.console import parse_pytest_output, text_run
from interop.reporting import UnreadableInput, build_report, format_report, parse_benchmarks, read_text
from interop.reporting.asv_results import load_asv_ratios


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="?", help="pytest output (a file, or '-' for stdin; default: stdin when piped)")
    p.add_argument("--bench", metavar="JSONL", help="ModelTester benchmark log (e.g. results/benchmarks.jsonl)")
    p.add_argument("--threshold", type=float, default=10.0,
                   help="median Aidge/torch ratio above which a case is listed as a slowdown vs torch (default 10)")
    p.add_argument("--worst", type=int, default=10, help="how many worst slowdowns to list (default 10)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--asv-commit", metavar="HASH", help="rank slowdowns on asv's track_aidge_torch_ratio of this "
                   "commit where asv has the case (a hash or its first 8 characters)")
    p.add_argument("--asv-results", metavar="DIR", default="results/asv",
                   help="asv's results directory (default results/asv)")
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
        # stdin is read when asked ('-') or when no results file is given and stdin is not a
        # terminal: `pytest ... | python analyze_results.py --bench X` (documented) reads the
        # pipe; --bench with an empty stdin (< /dev/null, a script) analyses the timings only
        if args.results == "-" or (args.results is None and not sys.stdin.isatty()):
            text = sys.stdin.read()
            if text.strip() or args.bench is None or args.results == "-":
                run = parse_pytest_output(text, source="<stdin>")
        elif args.results is not None:
            run = parse_pytest_output(read_text(args.results), source=args.results)
        elif args.bench is None:
            print("analyze_results: no input: give a pytest output file, pipe one in, or --bench", file=sys.stderr)
            return 2
        bench = parse_benchmarks(read_text(args.bench), source=args.bench) if args.bench else None
    except UnreadableInput as exc:
        print(f"analyze_results: {exc}", file=sys.stderr)
        return 2
    asv = None
    if args.asv_commit:
        # the release matrix stores one file per Aidge release: the one of the timed stack wins
        aidge = next((r.get("aidge") for r in bench.records if r.get("aidge")), None) if bench else None
        asv = load_asv_ratios(args.asv_results, args.asv_commit, prefer=f"aidge-core{aidge}" if aidge else None)
        if asv is None:
            print(f"analyze_results: no asv ratio of commit {args.asv_commit} under {args.asv_results}",
                  file=sys.stderr)
            return 2
    # the console's results as rows of the records' shape: the report reads them as it reads a run's records
    rows = text_run(run) if run is not None else None
    report = build_report(rows, bench, threshold=args.threshold, worst=args.worst, asv=asv)
    if args.json:
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(report))
    return 3 if report.get("incomplete") else 0


if __name__ == "__main__":
    sys.exit(main())
