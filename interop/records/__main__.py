"""``python -m interop.records check DIR``: do the records of the run in ``DIR`` (``results/``
after a plain session, a run directory of ``nox -s report``) hold every test pytest's summary
counted, and did the session complete? Prints both counts and every problem met reading them (a bad line, a
part file or ``records.jsonl`` the tools may not read: a link out of ``DIR``, a FIFO; each named,
never read, never removed); exit 0 when they agree and the session completed, 1 when not, 2 when
``DIR`` holds no records.

``nox -s tests-cpu`` runs it after the suite: every CI run checks the records of the full suite
against pytest's own summary line.
"""
from __future__ import annotations

import sys
from pathlib import Path

from .store import COUNTED_OUTCOMES, check_counts, load_run, records_counts


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "check":
        sys.stderr.write("usage: python -m interop.records check DIR\n")
        return 2
    if not Path(args[1]).is_dir():
        sys.stderr.write(f"{args[1]}: not a directory\n")
        return 2
    run = load_run(Path(args[1]))
    if run is None:
        sys.stderr.write(f"{args[1]}: no records.jsonl\n")
        return 2
    counted = records_counts(run.records)
    line = ", ".join(f"{counted[o]} {o}" for o in COUNTED_OUTCOMES if counted[o])
    sys.stdout.write(f"{run.source}: {len(run.records)} records: {line or 'none'}\n")
    problems = check_counts(run)
    if not run.complete:
        problems.append(f"the session did not complete: {run.session.get('ended')}")
    for problem in run.problems:
        sys.stdout.write(f"  PROBLEM {problem}\n")
    for problem in problems:
        sys.stdout.write(f"  MISMATCH {problem}\n")
    if not problems:
        sys.stdout.write("  = pytest's summary line; the session completed\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
