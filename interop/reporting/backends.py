"""One column per Aidge backend: the operator and model suites' outcomes per operator (or
model), side by side for ``cpu``, ``cuda`` and ``export_cpp``.

A findings run (``nox -s report``, :mod:`interop.reporting.run`) tests one backend
(``--backend`` or ``$INTEROP_BACKEND``; recorded as ``backend`` in its ``run.json``). The
report's "Backends" section puts the run beside the latest *complete* run of every other
backend found under ``results/runs/`` (a run of the same backend is the run itself), so
``nox -s report`` then ``nox -s report -- --backend=export_cpp tests/test_operators.py
tests/test_models.py`` gives two columns, and a run on a GPU machine a third.
``python -m interop.reporting.backends [RESULTS_DIR]`` prints the table from the latest
runs alone. Counts only: a column is what that run executed (a run filtered with ``-k``
holds fewer cases; the header names every run and its case count), never an estimate.
"""
from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..backends import BACKENDS  # the backends a column can hold, in column order
from ..reading import UnreadableInput
from ..records.sources import case_id, operator_of
from ..env import read
from ..records.store import RECORDS_FILE, load_run

__all__ = ["BACKENDS", "SUITES", "backend_of", "latest_runs", "backend_matrix", "format_backend_matrix", "main"]

#: the test files whose cases every backend runs (the others are cpu-side sources)
SUITES = ("tests/test_operators.py", "tests/test_models.py")


def backend_of(pytest_args: Sequence[str], env: Mapping[str, str]) -> str:
    """The backend a pytest command line tests: ``--backend=X`` / ``--backend X``, else
    ``$INTEROP_BACKEND``, else ``cpu`` (the plugin's own rule)."""
    args = list(pytest_args)
    for i, arg in enumerate(args):
        if arg.startswith("--backend="):
            return arg.split("=", 1)[1].strip().lower()
        if arg == "--backend" and i + 1 < len(args):
            return args[i + 1].strip().lower()

    return read("INTEROP_BACKEND", env)


def _run_backend(meta: dict[str, Any]) -> str:
    return meta.get("backend") or backend_of(meta.get("pytest_args") or [], {})


def latest_runs(results: Path, exclude: Iterable[str] = ()) -> dict[str, Path]:
    """The newest complete run directory of each backend under ``results/runs`` (run names
    start with their UTC time, so the last in name order is the newest). ``exclude``:
    backends not wanted. A ``run.json`` that cannot be read is skipped (it belongs to a run
    still going, or to one that crashed: never a complete run), and so is a run that wrote no
    ``records.jsonl`` (its console text is not read back)."""
    found: dict[str, Path] = {}
    runs = results / "runs"
    if not runs.is_dir():
        return found
    for run_dir in sorted(runs.iterdir()):
        try:
            meta = json.loads((run_dir / "run.json").read_text())
        except (OSError, ValueError):
            continue
        if not meta.get("complete") or not (run_dir / "records.jsonl").exists():
            continue
        backend = _run_backend(meta)
        if backend not in exclude:
            found[backend] = run_dir
    return found


def _in_suites(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0] in SUITES


def backend_matrix(runs: Mapping[str, tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """``{"runs": {backend: {"run": name, "cases": n}}, "rows": {operator: {backend: counts}}}``
    from the rows of one run per backend (``runs``: backend -> (run name, its records)), counting
    the cases of :data:`SUITES` by outcome. Backends in :data:`BACKENDS` order."""
    order = sorted(runs, key=lambda b: (BACKENDS.index(b) if b in BACKENDS else len(BACKENDS), b))
    rows: dict[str, dict[str, Counter]] = {}
    header = {}
    for backend in order:
        name, run = runs[backend]
        results = [r for r in run if _in_suites(r["nodeid"])]
        header[backend] = {"run": name, "cases": len(results)}
        for r in results:
            outcome = str(r.get("outcome"))  # a record's, said once (records.outcome)
            operator = r.get("operator") or operator_of(r.get("case") or case_id(r["nodeid"]))
            rows.setdefault(operator, {}).setdefault(backend, Counter())[outcome] += 1
    return {"runs": header,
            "rows": {op: {b: dict(c) for b, c in sorted(cols.items(), key=lambda kv: order.index(kv[0]))}
                     for op, cols in sorted(rows.items())}}


def _cell(counts: dict[str, int] | None) -> str:
    if not counts:
        return "-"
    total = sum(counts.values())
    parts = [f"{counts.get('passed', 0)}/{total}"]
    for outcome, mark in (("xfailed", "xf"), ("failed", "FAIL"), ("xpassed", "XPASS"), ("error", "ERR"),
                          ("skipped", "skip")):
        if counts.get(outcome):
            parts.append(f"{counts[outcome]} {mark}")
    return " ".join(parts)


def format_backend_matrix(matrix: dict[str, Any] | None) -> list[str]:
    """The report section (empty without any run)."""
    if not matrix or not matrix.get("runs"):
        return []
    backends = list(matrix["runs"])
    out = ["", "== Backends: operator and model suites, one column per backend (passed/cases, then "
               "xf = expected failures, FAIL, skip = not applicable or skipped) =="]
    for backend, meta in matrix["runs"].items():
        out.append(f"  {backend}: run {meta['run']} ({meta['cases']} cases)")
    missing = [b for b in BACKENDS if b not in backends]
    if missing:
        out.append(f"  no complete run of: {', '.join(missing)} (nox -s report -- --backend=NAME "
                   f"{' '.join(SUITES)})")
    width = max([len(op) for op in matrix["rows"]] + [8])
    out.append(f"  {'':<{width}}  " + "  ".join(f"{b:<24}" for b in backends).rstrip())
    for op, cols in matrix["rows"].items():
        out.append(f"  {op:<{width}}  " + "  ".join(f"{_cell(cols.get(b)):<24}" for b in backends).rstrip())
    return out


def load_runs(run_dirs: Mapping[str, Path]) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Each run's rows (backend -> (run name, its records)). A run that wrote no records (an
    older suite's, or one without the interop plugin) is :class:`UnreadableInput`, naming the
    path of its ``records.jsonl``: its ``pytest.txt`` is not read back."""
    out = {}
    for backend, run_dir in run_dirs.items():
        run = load_run(run_dir)
        if run is None:
            raise UnreadableInput(f"{run_dir / RECORDS_FILE}: missing: the run wrote no records (its console "
                                  "text is not read back)")
        out[backend] = (run_dir.name, run.records)
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.stderr.write("usage: python -m interop.reporting.backends [RESULTS_DIR]  (default: ./results)\n")
        return 2
    results = Path(args[0]) if args else Path(os.getcwd()) / "results"
    runs = latest_runs(results)
    if not runs:
        sys.stderr.write(f"no complete run under {results / 'runs'} (nox -s report writes them)\n")
        return 1
    try:
        matrix = backend_matrix(load_runs(runs))
    except UnreadableInput as exc:
        sys.stderr.write(f"interop.reporting.backends: {exc}\n")
        return 2
    sys.stdout.write("\n".join(format_backend_matrix(matrix)).lstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
