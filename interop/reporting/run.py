"""One findings run, in a directory of its own: ``python -m interop.reporting.run [pytest args]``
(what ``nox -s report`` runs).

- The run gets ``results/runs/<UTC time>-<commit>-<pid>/`` (created exclusively: two
  concurrent runs never share a file). pytest's output goes to ``pytest.txt``, ModelTester's
  timings to ``benchmarks.jsonl`` (``INTEROP_RESULTS_DIR`` points there), the analysis to
  ``report.txt`` / ``report.json``, and ``run.json`` says how the run ended. When OpInfo
  cases failed without an expected failure, ``triage.py`` proposes their table rows
  (:mod:`.triage`). When asv
  results of the same commit exist (``results/asv``), the report's slowdowns take asv's
  ratio for the cases asv holds.
- Every file is written under a temporary name and renamed when complete: a reader never
  sees half a report. Ctrl-C during the tests still produces the report of what ran (pytest
  prints its totals on an interrupt; the report says the run is incomplete); Ctrl-C during the
  analysis leaves ``pytest.txt`` and no report, never an empty one.
- ``results/latest`` (a symbolic link, replaced atomically) points at the last run that
  completed; an incomplete run is reported but never becomes ``latest``.
- ``OMP_NUM_THREADS`` defaults to 1 (the suites pin threads themselves too).

Exit status: 0 when the run completed (whatever the tests' outcome: the report lists the
failures), 3 when it is incomplete (interrupted, a process died, items without a result), 2
when pytest's output could not be analysed.
"""
from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from .asv_results import load_asv_ratios
from .backends import backend_matrix, backend_of, latest_runs, load_runs
from .benchmarks import parse_benchmarks
from .inputs import UnreadableInput
from .pytest_output import parse_pytest_output
from .report import build_report, format_report
from .triage import format_rows, propose_opinfo_rows, summary as triage_summary

__all__ = ["main", "new_run_dir", "write_atomically", "point_latest"]

DEFAULT_PYTEST_ARGS = ("-n", "auto", "tests")
#: the proposed expected-failure rows of the run's untriaged OpInfo failures (:mod:`.triage`)
TRIAGE_FILE = "triage.py"


def _commit(cwd: Path) -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=cwd, capture_output=True, text=True,
                              timeout=30)
        return done.stdout.strip() or "nogit"
    except (OSError, subprocess.SubprocessError):
        return "nogit"


def new_run_dir(results: Path, commit: str) -> Path:
    """``results/runs/<UTC time>-<commit>-<pid>``, created exclusively."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    run_dir = results / "runs" / f"{stamp}-{commit}-{os.getpid()}"
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    run_dir.mkdir()  # FileExistsError rather than sharing a directory
    return run_dir


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory + rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    tmp.write_text(text)
    os.replace(tmp, path)


def point_latest(results: Path, run_dir: Path) -> None:
    """Make ``results/latest`` point at ``run_dir`` (relative link, replaced atomically)."""
    link = results / "latest"
    tmp = results / f".latest.{os.getpid()}.partial"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.relative_to(results))
    os.replace(tmp, link)


def _run_pytest(args: list[str], run_dir: Path, env: dict[str, str], cwd: Path) -> tuple[int | None, bool]:
    """pytest into ``run_dir/pytest.txt``; (exit code, interrupted)."""
    partial = run_dir / ".pytest.txt.partial"
    interrupted = False
    with partial.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "-ra", "-v", "-p", "no:cacheprovider", *args],
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        while True:
            try:
                code = proc.wait()
                break
            except KeyboardInterrupt:
                # the terminal sent SIGINT to pytest too; make sure it got one, then let it
                # print what it has (its totals) and finish
                interrupted = True
                try:
                    proc.send_signal(signal.SIGINT)
                except ProcessLookupError:
                    pass
    os.replace(partial, run_dir / "pytest.txt")
    return code, interrupted


def _analyse(run_dir: Path, commit: str | None = None, asv_dir: Path | None = None,
             backend: str | None = None) -> tuple[int, str]:
    """(exit status, report text); writes report.txt and report.json atomically. ``commit``
    and ``asv_dir``: where to look for asv's ratios of the same commit. ``backend``: the
    backend this run tested; the report's "Backends" section sets it beside the latest
    complete run of each other backend under ``run_dir``'s ``results`` directory."""
    try:
        run = parse_pytest_output((run_dir / "pytest.txt").read_text(errors="replace"),
                                  source=str(run_dir / "pytest.txt"))
        log = run_dir / "benchmarks.jsonl"
        text = log.read_text(errors="replace") if log.exists() else ""
        # a run where no test wrote a timing line (all failed, skipped or xfailed) still
        # gets its report, without a benchmark section
        bench = parse_benchmarks(text, source=str(log)) if text.strip() else None
    except UnreadableInput as exc:
        message = f"interop.reporting.run: {exc}\n"
        write_atomically(run_dir / "report.txt", message)
        return 2, message
    asv = None
    if bench is not None and commit and commit != "nogit" and asv_dir is not None:
        aidge = next((r.get("aidge") for r in bench.records if r.get("aidge")), None)
        asv = load_asv_ratios(asv_dir, commit, prefer=f"aidge-core{aidge}" if aidge else None)
    report = build_report(run, bench, asv=asv)
    if backend is not None:
        others = latest_runs(run_dir.parent.parent, exclude={backend})
        try:
            runs = load_runs(others)
        except (OSError, UnreadableInput):  # another run's file went away or is unreadable: not this run's
            runs = {}
        runs[backend] = (run_dir.name, run)
        report["backends"] = backend_matrix(runs)
    triage = propose_opinfo_rows(run)
    if triage.rows or triage.left_out:
        write_atomically(run_dir / TRIAGE_FILE, format_rows(triage, source=run_dir.name))
        report["triage"] = dict(triage_summary(triage), file=str(run_dir / TRIAGE_FILE))
    text = format_report(report)
    write_atomically(run_dir / "report.json", json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    write_atomically(run_dir / "report.txt", text)
    return (3 if report.get("incomplete") else 0), text


def main(argv: list[str] | None = None, *, results: Path | None = None, cwd: Path | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv) or list(DEFAULT_PYTEST_ARGS)
    cwd = Path.cwd() if cwd is None else cwd
    results = (cwd / "results") if results is None else results
    results.mkdir(parents=True, exist_ok=True)
    commit = _commit(cwd)
    run_dir = new_run_dir(results, commit)
    env = dict(os.environ, INTEROP_RESULTS_DIR=str(run_dir))
    env.setdefault("OMP_NUM_THREADS", "1")
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    backend = backend_of(args, env)
    code, interrupted = _run_pytest(args, run_dir, env, cwd)
    status, text = _analyse(run_dir, commit, results / "asv", backend=backend)
    complete = status == 0
    write_atomically(run_dir / "run.json", json.dumps({
        "run": run_dir.name, "started": started, "pytest_args": args, "backend": backend, "pytest_exit": code,
        "interrupted": interrupted, "complete": complete,
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}, indent=2) + "\n")
    if complete:
        point_latest(results, run_dir)
    sys.stdout.write(text)
    where = f"report of this run: {run_dir / 'report.txt'}"
    sys.stdout.write(f"\n{where}" + ("" if complete else " (INCOMPLETE: results/latest not updated)") + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
