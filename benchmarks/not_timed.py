"""The case-phases Aidge cannot run, listed once instead of as ``n/a`` rows.

A case that a strict expected failure of the installed Aidge release's table stops in a phase
a benchmark needs is no parameter of the timing benchmarks (:func:`benchmarks.harness.case_ids`:
before, every such case-phase printed four ``n/a`` rows in ``asv run`` and ``asv compare``).
They are listed here, each with its table row's ledger defect id:

- ``track_cases_aidge_cannot_run`` (asv): how many case-phases are left out, one figure per
  commit and environment (it falls when an Aidge release fixes a defect and its row goes);
- ``python benchmarks/not_timed.py [--bench REGEX] [--write DIR]``: the case-phases grouped by
  defect, printed (``nox -s bench-quick`` and ``nox -s compare`` print it); ``--bench`` keeps
  those an ``asv run --bench REGEX`` would have selected, ``--write`` writes every one of them
  to ``DIR/not-timed.json`` and ``DIR/not-timed.md`` (``results/`` by default when writing).
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: benchmarks/ is not a package on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks import harness  # noqa: E402
else:
    from . import harness

#: the asv module of each kind, and the benchmarks a case-phase would have had
MODULES = {"operator": "operators", "model": "models", "architecture": "architectures"}
METHODS = ("time_torch", "time_aidge", "time_bridge", "track_aidge_torch_ratio")


def track_cases_aidge_cannot_run() -> int:
    """Case-phases (operator, model, architecture; forward, backward) that no timing benchmark
    has as a parameter: a strict expected failure of the installed Aidge release's table stops
    them (``python benchmarks/not_timed.py`` lists them with their defect ids)."""
    return len(harness.not_timed())


track_cases_aidge_cannot_run.unit = "case-phases"


def benchmark_names(entry: harness.NotTimed) -> list[str]:
    """The asv names the case-phase would have had (``operators.Backward.time_aidge('X')``)."""
    cls = entry.phase.capitalize()
    return [f"{MODULES[entry.kind]}.{cls}.{m}('{entry.case_id}')" for m in METHODS]


def selected(entries, regex: str | None) -> list[harness.NotTimed]:
    """The entries an ``asv run --bench regex`` would have run (all of them without a regex)."""
    if not regex:
        return list(entries)
    pattern = re.compile(regex)
    return [e for e in entries if any(pattern.search(n) for n in benchmark_names(e))]


def release() -> str:
    from interop.cases.failure_table import aidge_release

    return aidge_release() or "unknown"


def summary(entries, total: int | None = None, examples: int = 3) -> str:
    """The entries grouped by defect: one line per defect (its row's operator, phase and
    category, how many case-phases, the first few ids)."""
    groups: dict[tuple, list[harness.NotTimed]] = collections.OrderedDict()
    for e in entries:
        groups.setdefault((e.defect or "no defect id", e.operator, e.fails_in, e.category), []).append(e)
    head = (f"Not timed: {len(entries)} case-phases Aidge cannot run (strict expected failures of the "
            f"Aidge {release()} table; no timing benchmark has them as a parameter)")
    if total is not None:
        head += f", beside {total} timed case-phases"
    lines = [head + ":"]
    for (defect, operator, fails_in, category), group in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ids = ", ".join(f"{e.case_id} ({e.phase})" for e in group[:examples])
        more = f", +{len(group) - examples} more" if len(group) > examples else ""
        lines.append(f"  {defect}  {operator} {fails_in} [{category}]: {len(group)}: {ids}{more}")
    return "\n".join(lines)


def markdown(entries) -> str:
    rows = ["| case | benchmark phase | defect | Aidge operator | fails in | category | table row |",
            "|---|---|---|---|---|---|---|"]
    rows += [f"| {e.case_id} | {e.phase} | {e.defect or '-'} | {e.operator} | {e.fails_in} | {e.category} | {e.row} |"
             for e in entries]
    return (f"# Case-phases not timed (Aidge {release()})\n\n{len(entries)} case-phases that a strict expected "
            "failure of the table stops: no asv benchmark has them as a parameter "
            "(benchmarks/not_timed.py).\n\n" + "\n".join(rows) + "\n")


def write(entries, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"aidge": release(), "backend_rows": "cpu", "count": len(entries), "not_timed": [e.as_dict() for e in entries]}
    paths = [folder / "not-timed.json", folder / "not-timed.md"]
    paths[0].write_text(json.dumps(data, indent=1) + "\n")
    paths[1].write_text(markdown(entries))
    return paths


def timed_count(regex: str | None = None) -> int:
    """Case-phases the timing benchmarks have (those ``--bench regex`` selects)."""
    names = [f"{MODULES[kind]}.{phase.capitalize()}.{m}('{cid}')"
             for kind, phase in harness.BENCHMARKED for cid in harness.case_ids(kind, phase) for m in METHODS[:1]]
    if regex:
        pattern = re.compile(regex)
        names = [n for n in names if any(pattern.search(n.replace(METHODS[0], m)) for m in METHODS)]
    return len(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", help="only the case-phases this asv --bench regex would have selected")
    parser.add_argument("--write", nargs="?", const=str(Path(__file__).resolve().parent.parent / "results"),
                        help="write not-timed.json and not-timed.md into this folder (default: results/)")
    parser.add_argument("--examples", type=int, default=3, help="case ids shown per defect")
    args = parser.parse_args(argv)
    entries = harness.not_timed()
    shown = selected(entries, args.bench)
    print(summary(shown, total=timed_count(args.bench), examples=args.examples))
    if args.write:
        for path in write(entries, Path(args.write)):
            print(f"  every one of the {len(entries)}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
