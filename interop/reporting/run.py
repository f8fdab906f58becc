"""One findings run, in a directory of its own: ``python -m interop.reporting.run [pytest args]``
(what ``nox -s report`` runs), or several runs merged into one:
``python -m interop.reporting.run --merge DIR [DIR...]`` (``nox -s report -- --merge ...``).

- The run gets ``results/runs/<UTC time>-<commit>-<pid>/`` (created exclusively: two
  concurrent runs never share a file). pytest's output goes to ``pytest.txt`` (for people),
  the records to ``records.jsonl`` + ``session.json`` (the interop plugin,
  :mod:`interop.records`: what everything below reads), ModelTester's timings to
  ``benchmarks.jsonl`` (``INTEROP_RESULTS_DIR`` points there), the analysis to ``report.txt`` /
  ``report.json``, the support matrix to ``support.json`` / ``support.md`` / ``support.html``
  (:mod:`.support`), the ONNX conformance scoreboard to ``conformance.json`` / ``.md`` / ``.html``
  when the run holds onnx's backend tests (:mod:`.onnx_scoreboard`), and ``run.json`` says how
  the run ended. A complete run appends its lines to ``results/history.jsonl``; the report
  compares with the previous complete run of each backend and shows what changed from one Aidge
  release to the next (:mod:`.history`). When
  OpInfo cases failed without an expected failure, ``triage.py`` proposes their table rows
  (:mod:`.triage`). When asv results of the same commit exist (``results/asv``), the report's
  slowdowns take asv's ratio for the cases asv holds.
- ``--merge``: the records of several run directories (``INTEROP_SHARD=K/N`` shards, other
  machines, a GPU machine's cuda run) into one new run directory ``<time>-<commit>-merged-<pid>``,
  with one report and one matrix; complete when every source is and no shard is missing. Runs
  that do not belong together (another commit, Aidge or torch version, route to ONNX, shard
  count; a shard missing or given twice; a source without readable records) are refused, each
  named, before anything is written (exit 2), unless ``--merge-mismatched``: the merged run is
  then marked mixed (its session and run.json say why) and is neither ``latest`` nor a line of
  the history. The merged run names each source it merged (``merged`` in session.json and run.json).
  It reports only what its records prove: a source whose records disagree with each other (an
  ``outcome`` its per-phase statuses do not make) or with its session's counts is refused, one line
  each naming the folder, the test and the key, whatever the flag (exit 2, nothing written); outcomes
  and counts are recomputed from the records checked; no script of a source is copied (its defects'
  bundles are rebuilt from their data, repro.py generated anew: :func:`_rebuild_bundles`).
- Every file is written under a temporary name and renamed when complete: a reader never
  sees half a report. Every child process (pytest, the timing pass) runs under one supervisor
  (:mod:`.supervisor`): Ctrl-C, SIGTERM or SIGHUP during the tests stop pytest (SIGINT to its
  session: it prints its totals and combines its records; killed after that signal's grace
  period, ``main(grace_s=...)``, 60 s by default) and still produce the report of what ran,
  marked ``RUN INCOMPLETE`` (exit 3); nothing of the run outlives it. During the timing pass
  they stop it at once; during the analysis they cut it short: the report is then pytest's
  last lines (its totals), marked ``RUN INCOMPLETE`` with the signal named (exit 3), never a
  half or an empty one.
- Every fault ends in a report marked ``RUN INCOMPLETE`` with its cause, and a run.json whose
  ``ended`` says it: pytest killed (SIGKILL included) before or during its tests, a Ctrl-C in
  the first seconds (before pytest starts it is never started), pytest ending on its own error
  (a malformed ``INTEROP_SHARD``, an unknown option: its own last lines are quoted). When the
  report process itself dies (SIGKILL, the OOM killer), pytest does not run on alone: the kernel
  kills it (``PR_SET_PDEATHSIG``) and the run's watchdog (:class:`.supervisor.Watchdog`) kills its
  session (xdist workers, case children) and writes the report of what the run left
  (:func:`_salvage`). A results folder that is full, read-only or not writable is one line
  naming the file (exit 2), and this process's ``.partial`` files are removed.
- ``results/latest`` (a symbolic link, replaced atomically) points at the last run that
  completed; an incomplete run is reported but never becomes ``latest``.
- ``--prune N`` (``python -m interop.reporting.run --prune N``): removes the finished run folders of
  ``results/runs`` but the last N complete runs, ``latest``'s and the run of each backend's last line of
  ``results/history.jsonl`` (a run without ``run.json``, running or killed, is left). A run ends with a
  warning line naming the total when ``results/runs`` is above :data:`RUNS_WARN_BYTES` (2 GB; a default
  run is about 190 MB).
- ``OMP_NUM_THREADS`` defaults to 1 (the suites pin threads themselves too).

Exit status (``python -m interop.reporting.run --help`` prints it; the same for ``--merge``):

- 0: the run completed and every test passed, was skipped or failed as the expected-failure table
  says (xfailed);
- 1: the run completed, and some tests failed or errored without an expected failure, or a strict
  expected failure passed (:data:`UNEXPECTED`, counted as ``ci/gate.py`` counts them; the report
  lists each). The run is complete all the same: ``results/latest`` and the history are updated;
- 3: the run is incomplete (interrupted, stopped by a signal, a process died, tests without a
  result, records that disagree with pytest's summary), whatever the tests' outcomes. A stop signal
  received at any moment up to the run's one decision (just before ``run.json``) makes it so, the
  moment pytest ends and the end of the analysis included; from that decision on, ``run.json``, the
  history, ``results/latest`` and the exit status say the same, whatever signal comes later;
- 2: nothing could be read (pytest ended before any result: its report says why), the results
  folder could not be written, or ``--merge`` refused its sources; or an ``INTEROP_*`` variable is no
  value (every one, through its declaration in :data:`interop.env.VARIABLES`: :func:`check_environment`):
  one line each naming it and its value, before pytest starts, nothing written.
"""
from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path

from ..env import check as check_variables
from .backends import backend_of
from ..records.store import write_atomically
from .history import HISTORY_FILE, append_history
from ..records.progress import EVERY_S as PROGRESS_EVERY_S
from .report_text import format_summary
from .supervisor import Stopped, Supervisor, Watchdog

# the code of the run lives in these modules, by what each part does; this module runs the run (the
# noxfile runs it) and imports what its own code calls (the tests patch those names here)
from .run_folder import WRITE_ERRNOS, _cannot_write, _commit, _remove_partials, new_run_dir, point_latest
from .run_faults import _analysis_stopped, _signal_name
from .run_analysis import _analyse, _clear_the_way
from .run_processes import _run_pytest, _timing_pass
from .run_merge import MERGE_MISMATCHED, load_merge_source, merge_disagreements, merge_mismatches, merge_runs
from .run_prune import _prune_main, runs_size_warning

__all__ = ["main"]

DEFAULT_PYTEST_ARGS = ("-n", "auto", "tests")
#: the outcomes that make a complete run's exit status 1 (ci/gate.py's own list: a strict XPASS is
#: recorded as ``xpassed``)
UNEXPECTED = ("failed", "error", "xpassed")


def _salvage(run_dir: str, meta: str) -> int:
    """The watchdog's report of a run whose report process died (:class:`.supervisor.Watchdog`): pytest's
    output put in place, the records combined as they are, the report marked incomplete with that
    cause, ``run.json`` (complete: false); never ``results/latest``, never a line of the history.
    Nothing is done when run.json is already there (the report process died after its report)."""
    run_dir = Path(run_dir)
    if os.path.lexists(run_dir / "run.json"):
        return 0
    info = json.loads(meta)
    partial = run_dir / ".pytest.txt.partial"
    if os.path.lexists(partial) and not os.path.lexists(run_dir / "pytest.txt"):
        os.replace(partial, run_dir / "pytest.txt")
    cause = ("the report process died (killed by SIGKILL, the OOM killer, or it crashed): pytest and what it "
             "started were stopped by the run's watchdog, this report was written from what the run left")
    try:
        status, text, _ = _analyse(run_dir, info.get("commit"), None, results=run_dir.parent.parent,
                                   add_to_history=False, causes=[cause])
        write_atomically(run_dir / "run.json", json.dumps(dict(
            info, run=run_dir.name, complete=False, ended=cause, salvaged_by="watchdog",
            finished=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")), indent=2) + "\n")
    except OSError as exc:
        sys.stderr.write(_cannot_write(exc, run_dir))
        return 2
    sys.stderr.write(f"interop.reporting.run: {cause}: {run_dir / 'report.txt'}\n")
    return 3


def _append_history(results: Path, lines: list[dict]) -> str | None:
    """This run's lines into ``results/history.jsonl`` (after its report and run.json: a run
    killed before has none); what went wrong in a line (a directory or a FIFO in its place), or None."""
    try:
        for entry in lines:
            append_history(results / HISTORY_FILE, entry, results)
    except (OSError, ValueError) as exc:  # UnsafeInputError is a ValueError
        return f"interop.reporting.run: this run was not added to the history: {exc}"
    return None


def exit_status(status: int, report: dict | None) -> tuple[int, str | None]:
    """(the exit status of a run whose analysis said ``status``, the line that says why it is 1):
    a complete run (``status`` 0) with unexpected outcomes (:data:`UNEXPECTED`, from the report's
    ``counts``) exits 1; any other status is kept (incomplete: 3, nothing read: 2)."""
    if status != 0 or report is None:
        return status, None
    counts = report.get("counts") or {}
    bad = {o: counts.get(o) or 0 for o in UNEXPECTED if counts.get(o)}
    if not bad:
        return 0, None
    said = ", ".join(f"{n:,} {o}" for o, n in bad.items())
    return 1, (f"exit 1: {said} without an expected failure (the run is complete; the report lists each; "
               "expected failures alone exit 0)")


def _summary(run_dir: Path, text: str, report: dict | None) -> str:
    """The terminal's part of the report: its summary (``report.txt`` holds the rest), or the
    text itself when there is no report (nothing could be read)."""
    return text if report is None else format_summary(report, full=str(run_dir / "report.txt"))


def _merge_main(sources: list[str], results: Path, cwd: Path) -> int:
    mismatched = MERGE_MISMATCHED in sources
    sources = [s for s in sources if s != MERGE_MISMATCHED]
    dirs = [Path(s) if Path(s).is_absolute() else cwd / s for s in sources]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if not dirs or missing:
        sys.stderr.write(f"interop.reporting.run --merge: not a directory: {', '.join(missing) or '(none given)'}\n")
        return 2
    loaded = [load_merge_source(d) for d in dirs]
    disagree = merge_disagreements(loaded)
    if disagree:  # before anything is written: no run directory, latest and the history untouched
        sys.stderr.write("interop.reporting.run --merge: these runs' records do not prove what they say (nothing "
                         "merged, with or without " + MERGE_MISMATCHED + "):\n" + "".join(f"  - {r}\n" for r in disagree))
        return 2
    reasons, _ = merge_mismatches(loaded)
    if reasons and not mismatched:  # checked before anything is written: no run directory
        sys.stderr.write("interop.reporting.run --merge: these runs do not belong together (nothing merged; "
                         f"{MERGE_MISMATCHED} merges them anyway, as a run marked mixed):\n"
                         + "".join(f"  - {r}\n" for r in reasons))
        return 2
    commits = {s.commit for s in loaded}
    commit = commits.pop() if len(commits) == 1 and None not in commits else _commit(cwd)
    run_dir = new_run_dir(results, f"{'mixed' if reasons else commit}-merged")
    merged = merge_runs(loaded, run_dir, mismatched=True)
    history: list[dict] = []
    status, text, report = _analyse(run_dir, commit, results / "asv", results=results, history=history,
                                    add_to_history=not reasons)  # a mixed run is no point of the trend
    complete = status == 0
    write_atomically(run_dir / "run.json", json.dumps({
        "run": run_dir.name, "commit": merged.get("commit"), "merged_from": [str(d) for d in dirs],
        "merged": merged["merged"], "mixed": reasons or None, "complete": complete,
        "backend": merged.get("backend"),
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}, indent=2) + "\n")
    if complete and not reasons:
        said = _append_history(results, history)  # the report and run.json are in place: now the history
        if said:
            sys.stderr.write(said + "\n")
        said = point_latest(results, run_dir)
        if said:
            sys.stderr.write(said + "\n")
    sys.stdout.write(_summary(run_dir, text, report))
    why = "INCOMPLETE" if not complete else "MIXED" if reasons else None
    sys.stdout.write(f"\nreport of the merged run: {run_dir / 'report.txt'}"
                     + (f" ({why}: results/latest and the history not updated)" if why else "") + "\n")
    status, said = exit_status(status, report)
    if said:
        sys.stdout.write(said + "\n")
    return status


def check_environment(args: list[str], env: dict[str, str] | None = None) -> list[str]:
    """One line per ``INTEROP_*`` value that is no value (``INTEROP_TIMING_PASS=banana`` used to let the tests
    run for an hour and end in a ValueError traceback without a report; ``INTEROP_CASE_TIMEOUT=abc`` broke
    every module's collection): each names the variable and its value. Every variable is read through its
    one declaration (:data:`interop.env.VARIABLES`), before pytest starts; one whose pytest option ``args``
    give (``--backend``, ``--exporter``, ``--shard``...) is not read (pytest checks the option)."""
    return check_variables(args, dict(os.environ) if env is None else env)


def main(argv: list[str] | None = None, *, results: Path | None = None, cwd: Path | None = None,
         grace_s: dict[str, float] | None = None) -> int:
    """``grace_s``: seconds pytest gets to stop after each stop signal (:data:`.supervisor.GRACE_S`)."""
    args = list(sys.argv[1:] if argv is None else argv) or list(DEFAULT_PYTEST_ARGS)
    if args[0] in ("-h", "--help"):  # this runner's usage and exit statuses (pytest's own: python -m pytest --help)
        sys.stdout.write(__doc__)
        return 0
    cwd = Path.cwd() if cwd is None else cwd
    results = (cwd / "results") if results is None else results
    if args[0] == "--merge":
        try:
            results.mkdir(parents=True, exist_ok=True)
            return _merge_main(args[1:], results, cwd)
        except OSError as exc:
            if exc.errno not in WRITE_ERRNOS:
                raise
            _remove_partials([results] + sorted(results.glob("runs/*-merged-*")))
            sys.stderr.write(_cannot_write(exc, None))
            return 2
    if args[0] == "--prune":
        try:
            return _prune_main(args[1:], results)
        except OSError as exc:
            sys.stderr.write(f"interop.reporting.run: --prune: cannot remove {exc.filename}: {exc.strerror}\n")
            return 2
    problems = check_environment(args)
    if problems:  # before anything is written or started: one line each, exit 2
        sys.stderr.write("".join(f"interop.reporting.run: {line} (nothing was run or written)\n" for line in problems))
        return 2
    run_dir = None
    # from the start: a stop signal before pytest runs stops the run (pytest is never started), with its report
    with Supervisor(grace_s) as supervisor:
        try:
            results.mkdir(parents=True, exist_ok=True)
            commit = _commit(cwd)
            run_dir = new_run_dir(results, commit)
            status = _run(args, cwd, results, run_dir, commit, supervisor)
            said = runs_size_warning(results)
            if said:
                sys.stderr.write(said + "\n")
            return status
        except OSError as exc:
            if exc.errno not in WRITE_ERRNOS:
                raise
            _remove_partials([results] + ([run_dir] if run_dir is not None else []))
            sys.stderr.write(_cannot_write(exc, run_dir))
            return 2


def _run(args: list[str], cwd: Path, results: Path, run_dir: Path, commit: str, supervisor: Supervisor) -> int:
    """The report run of ``main``, in ``run_dir`` (just created)."""
    env = dict(os.environ, INTEROP_RESULTS_DIR=str(run_dir))
    env["INTEROP_RECORDS_DIR"] = str(run_dir)  # the run's records go into the run's directory
    # this run is nobody's nested session (started from a test, under pytest-xdist, its records
    # and timings would otherwise take the outer session's worker count for their own)
    for name in ("PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        env.pop(name, None)
    env.pop("INTEROP_RECORDS_SESSION", None)
    env.setdefault("OMP_NUM_THREADS", "1")
    # every failing case leaves a reproducer bundle in the run (interop.reproducers);
    # INTEROP_REPRODUCERS=0 turns them off
    env.setdefault("INTEROP_REPRODUCERS", "1")
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    backend = backend_of(args, env)
    meta = {"commit": commit, "started": started, "pytest_args": args, "backend": backend}
    supervisor.watchdog = Watchdog(cwd, "interop.reporting.run:_salvage", [str(run_dir), json.dumps(meta)])
    try:
        return _run_watched(args, cwd, results, run_dir, env, meta, supervisor)
    finally:
        supervisor.watchdog.done()  # this process ends on its own: the watchdog has nothing to do
        supervisor.watchdog = None


def _run_watched(args, cwd, results, run_dir, env, meta, supervisor: Supervisor) -> int:
    commit, backend = meta["commit"], meta["backend"]
    sys.stdout.write(f"interop.reporting.run: pytest {' '.join(args)} -> {run_dir} (progress every "
                     f"{PROGRESS_EVERY_S:g} s; pytest's own output: {run_dir / '.pytest.txt.partial'})\n")
    sys.stdout.flush()
    code, interrupted = _run_pytest(args, run_dir, env, cwd, supervisor, progress_every=PROGRESS_EVERY_S)
    # SIGTERM and SIGHUP are said as "stopped", a Ctrl-C as "interrupted" (pytest's own word)
    stopped = supervisor.stopped_by if supervisor.stopped_by != "Ctrl-C" else None
    killed = _signal_name(-code) if code is not None and code < 0 and not interrupted else None
    pass_stopped = False
    if not (interrupted or killed):
        said, pass_stopped = _timing_pass(run_dir, env, cwd, backend, supervisor)
        if said:
            sys.stdout.write(said + "\n")
            sys.stdout.flush()
        stopped = supervisor.stopped_by if supervisor.stopped_by != "Ctrl-C" else None
    quiet = not (interrupted or pass_stopped or stopped)  # no stop signal seen so far
    interrupted = interrupted or pass_stopped
    history: list[dict] = []
    try:
        with supervisor.interruptible():
            # from here a stop signal raises Stopped. One that came after pytest ended and before here (the
            # moment pytest.txt appears, the timing pass's end) was only recorded by the handler: the run is
            # stopped all the same (it used to be written complete, latest and a history line, and exit 3)
            late = supervisor.stopped_by if quiet else None
            in_the_way = _clear_the_way(run_dir)
            status, text, report = _analyse(
                run_dir, commit, results / "asv", backend=backend, results=results,
                stopped=stopped or ("Ctrl-C during the timing pass" if pass_stopped else None)
                or (f"{late} after pytest ended" if late else None), pytest_killed=killed,
                history=history, interrupted=interrupted and not pass_stopped, pytest_exit=code,
                problems=in_the_way)
    except KeyboardInterrupt as exc:  # Stopped, or a Ctrl-C where no handler could be installed: the
        # analysis cut short, a report all the same, marked incomplete, naming the signal
        status, text, report = 3, _analysis_stopped(run_dir, exc.name if isinstance(exc, Stopped) else "Ctrl-C"), None
        history.clear()
    # the run's one decision, made once, from every stop signal received up to this line: one that came after
    # the analysis ended (its report then reads complete) stops the run too; from here on a signal changes
    # nothing the run says (run.json, the history, latest and the exit status all follow this decision)
    stopped_by = supervisor.stopped_by
    if stopped_by and status == 0:
        status, report = 3, None
        text = _analysis_stopped(run_dir, stopped_by, when="after the analysis, before the run was committed")
        history.clear()
    complete = status == 0
    if complete:
        ended = None
    elif report is not None:
        ended = "; ".join(report.get("incomplete") or []) or "incomplete"
    else:  # nothing could be read, or the analysis was stopped: the fault report's causes
        ended = "; ".join(line.strip()[2:].strip() for line in text.splitlines() if line.startswith("  ⚠️"))
    write_atomically(run_dir / "run.json", json.dumps({
        "run": run_dir.name, "commit": commit, "started": meta["started"], "pytest_args": args, "backend": backend,
        "pytest_exit": code, "interrupted": interrupted or stopped_by == "Ctrl-C",
        "stopped_by": stopped_by if stopped_by != "Ctrl-C" else None, "complete": complete,
        **({"ended": ended} if ended else {}),
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}, indent=2) + "\n")
    supervisor.watchdog.done()  # run.json is in place: whatever happens next, the run has its report
    if complete:
        said = _append_history(results, history)  # the report and run.json are in place: now the history
        if said:
            sys.stderr.write(said + "\n")
        said = point_latest(results, run_dir)
        if said:
            sys.stderr.write(said + "\n")
    sys.stdout.write(_summary(run_dir, text, report))
    where = f"report of this run: {run_dir / 'report.txt'}"
    sys.stdout.write(f"\n{where}" + ("" if complete else " (INCOMPLETE: results/latest not updated)") + "\n")
    status, said = exit_status(status, report)
    if said:
        sys.stdout.write(said + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
