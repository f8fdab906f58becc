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

import contextlib
import dataclasses
import datetime
import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..env import check as check_variables, read as read_env
from .asv_results import load_asv_ratios
from .ledger import ledger_summary, write_ledger
from .backends import backend_matrix, backend_of, latest_runs, load_runs
from ..records.benchmarks import parse_benchmarks
from ..reading import UnreadableInput, UnsafeInputError, confined, json_lines
from .pytest_output import parse_pytest_output
from ..records.store import write_atomically
from ..records.store import SCHEMA, RunRecords, disagreements, load_run, outcome_of_reports, records_counts, write_run
from .history import HISTORY_FILE, append_history, compare, history_entry, load_history, previous_entry, release_changes
from .report import build_report
from ..records.progress import EVERY_S as PROGRESS_EVERY_S, Progress
from .report_text import format_report, format_summary
from .porting import headline as headline_of
from .onnx_scoreboard import write_scoreboard
from .porting import link_run_pages, porting_table, write_porting
from .support import headline, support_matrix, write_support
from .supervisor import Stopped, Supervisor, Watchdog
from .table_triage import propose as propose_table_changes, write_proposal

__all__ = ["main", "new_run_dir", "write_atomically", "point_latest"]

DEFAULT_PYTEST_ARGS = ("-n", "auto", "tests")
#: the outcomes that make a complete run's exit status 1 (ci/gate.py's own list: a strict XPASS is
#: recorded as ``xpassed``)
UNEXPECTED = ("failed", "error", "xpassed")
#: the run's proposed changes to the expected-failure table (:mod:`.table_triage`): a folder of the run
TRIAGE_DIR = "triage"


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


def point_latest(results: Path, run_dir: Path) -> str | None:
    """Make ``results/latest`` point at ``run_dir`` (relative link, replaced atomically). Only a
    link is replaced: anything else in its place (a directory, a file: someone's) is left as it
    is, and the returned line says so (None when the link points at ``run_dir``)."""
    link = results / "latest"
    if os.path.lexists(link) and not os.path.islink(link):
        return (f"interop.reporting.run: {link} is not a symbolic link (a "
                f"{'directory' if os.path.isdir(link) else 'file'}): left as it is, not pointed at {run_dir.name}")
    tmp = results / f".latest.{os.getpid()}.partial"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.relative_to(results))
    try:
        os.replace(tmp, link)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return None


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


def _cannot_write(exc: OSError, run_dir: Path | None) -> str:
    """The error of a disk that refused a file of the run: the path, the system's words, what is left."""
    where = exc.filename or (str(run_dir) if run_dir is not None else "results/")
    if run_dir is None:
        left = "; no run was started"
    elif os.path.lexists(run_dir / "run.json"):
        left = f"; the run {run_dir} has its report, results/latest or the history was not updated"
    else:
        left = f"; the run {run_dir} has no report (its records, if any, are there)"
    return (f"interop.reporting.run: cannot write {where}: {exc.strerror or exc} (the results folder is full, "
            f"read-only or not writable){left}\n")


def _remove_partials(folders: list[Path]) -> None:
    """This process's temporaries (``.<name>.<pid>.partial``, ``.pytest.txt.partial``) in ``folders``:
    a run that stops on a full or read-only disk leaves none behind. Another process's are its own."""
    mine = (f".{os.getpid()}.partial", ".pytest.txt.partial")
    for folder in folders:
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                if entry.name.startswith(".") and entry.name.endswith(mine) and not entry.is_dir(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def _run_pytest(args: list[str], run_dir: Path, env: dict[str, str], cwd: Path, supervisor: Supervisor,
                progress_every: float | None = None) -> tuple[int | None, bool]:
    """pytest into ``run_dir/pytest.txt`` under ``supervisor`` (a session of its own: stopping it
    stops its xdist workers and their case children too); (exit code, interrupted).
    ``progress_every``: seconds between two progress lines on stdout (read from the records' part
    files: tests done of collected, rate, ETA, failures so far). A stop signal already received:
    pytest is not started (exit code None)."""
    partial = run_dir / ".pytest.txt.partial"
    with partial.open("w") as out:
        proc = supervisor.start([sys.executable, "-m", "pytest", "-ra", "-v", "-p", "no:cacheprovider", *args],
                                stdout=out, env=env, cwd=cwd)
        if proc is None:
            out.write("interop.reporting.run: stopped before pytest started\n")
            code = None
        else:
            progress = Progress(run_dir) if progress_every else None

            def tick() -> None:
                progress.poll()
                sys.stdout.write(f"interop.reporting.run: {progress.line()}\n")
                sys.stdout.flush()
            code = supervisor.wait(proc, tick=tick if progress is not None else None, every=progress_every)
    os.replace(partial, run_dir / "pytest.txt")
    return code, supervisor.stopped_by is not None


def _trend(results: Path, run_dir: Path, run: RunRecords, matrix: dict, commit: str | None,
           append: bool, problems: list[str]) -> tuple[dict | None, list, list[dict]]:
    """Compare with the previous complete run of each backend (a bad line of
    ``results/history.jsonl`` adds ``file:line: why`` to ``problems``). Returns the trends, the
    release changes and the lines this run adds to the history when it is complete: appended by
    :func:`_append_history` once its report and run.json are in place, never before."""
    path = results / HISTORY_FILE
    entries, bad = load_history(path, results)
    problems.extend(bad)
    trends, releases, pending = {}, [], []
    for backend in matrix["operators"]:
        entry = history_entry(run_dir.name, run.session, matrix, commit, backend)
        trends[backend] = compare(previous_entry(entries, backend, before_run=run_dir.name,
                                                 shard=entry["shard"], aidge=entry["aidge"]), entry)
        if append:
            pending.append(entry)
            entries.append(entry)
        releases += release_changes(entries, backend)
    return trends, releases, pending


def _append_history(results: Path, lines: list[dict]) -> str | None:
    """This run's lines into ``results/history.jsonl`` (after its report and run.json: a run
    killed before has none); what went wrong in a line (a directory or a FIFO in its place), or None."""
    try:
        for entry in lines:
            append_history(results / HISTORY_FILE, entry, results)
    except (OSError, ValueError) as exc:  # UnsafeInputError is a ValueError
        return f"interop.reporting.run: this run was not added to the history: {exc}"
    return None


#: the errors of a disk that cannot take the run's files: full, over quota, read-only, not ours,
#: a file too large (RLIMIT_FSIZE), an I/O error
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO})
#: pytest's last lines a report without results quotes (its own error: a bad variable, option or file)
PYTEST_TAIL_LINES = 15


#: pytest's exit statuses that end a run before its tests (pytest.ExitCode, without importing pytest here)
_PYTEST_EXITS = {2: "interrupted", 3: "internal error", 4: "usage error"}


def _fault_causes(stopped: str | None, pytest_killed: str | None, interrupted: bool, pytest_exit: int | None,
                  causes: list[str] | None) -> list[str]:
    """What ended a run that left nothing to read, in words."""
    out = list(causes or [])
    if stopped:
        out.append(f"the report process got {stopped}: the run was stopped")
    if interrupted:
        out.append("interrupted (Ctrl-C) before pytest wrote any result")
    if pytest_killed:
        out.append(f"pytest was killed by {pytest_killed} before it wrote any result")
    elif pytest_exit is None and not (stopped or interrupted or causes):
        out.append("pytest did not run")
    elif stopped or interrupted:  # the signal passed on to pytest ended it: said above
        pass
    elif pytest_exit is not None and pytest_exit < 0:
        out.append(f"pytest was killed by {_signal_name(-pytest_exit)} before it wrote any result")
    elif pytest_exit not in (None, 0, 1, 5):
        name = _PYTEST_EXITS.get(pytest_exit)
        out.append(f"pytest ended with exit status {pytest_exit}{f' ({name})' if name else ''} before any test "
                   "ran: its own words below")
    return out or ["pytest wrote no result"]


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _fault_report(run_dir: Path, why: str, causes: list[str],
                  headline: str = "no test result could be read, do not read this as a clean run") -> str:
    """The report of a run of which nothing can be read: marked incomplete (never read as a clean
    run), what ended it, and pytest's own last lines (its error: ``INTEROP_SHARD`` malformed, an
    unknown option...), control characters escaped."""
    from .report_text import escape_controls

    tail: list[str] = []
    console = run_dir / "pytest.txt"
    with contextlib.suppress(OSError):
        with open(console, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            tail = [line.rstrip() for line in handle.read().decode("utf-8", "replace").splitlines() if line.strip()]
    tail = tail[-PYTEST_TAIL_LINES:]
    lines = [f"Aidge <-> PyTorch interop results (run {run_dir.name})", "",
             f"== RUN INCOMPLETE: {headline} ==",
             *(f"  ⚠️ {c}" for c in causes), f"  ⚠️ {why}", ""]
    if tail:
        lines += [f"pytest's last lines ({console}):", *(f"  {line}" for line in tail)]
    else:
        lines.append(f"pytest wrote nothing ({console})")
    return "\n".join(escape_controls(line) for line in lines) + "\n"


#: the files the analysis writes into the run directory (:func:`_analyse`, :func:`_run_watched`)
RUN_OUTPUTS = ("report.txt", "report.json", "run.json", "support.json", "support.md", "support.html",
               "porting.json", "porting.md", "porting.html", "defects.json", "defects.md", "defects.html",
               "conformance.json", "conformance.md", "conformance.html")


def _clear_the_way(run_dir: Path) -> list[str]:
    """Something other than a file or a link under the name of one of the analysis' files (a
    directory a test of the run made: the run's tests write into its directory) is moved aside,
    never deleted, so that the report can be written; each one said (``path: why``). Before: a
    directory named ``report.txt`` ended the run in a traceback, without report or run.json."""
    said = []
    for name in RUN_OUTPUTS:
        path = run_dir / name
        if os.path.lexists(path) and not (path.is_symlink() or path.is_file()):
            aside = run_dir / f"{name}.in-the-way-{os.getpid()}"
            os.replace(path, aside)
            said.append(f"{path}: not a file (a directory or a FIFO, made by a test of the run?): moved to {aside.name}, "
                        "where the run's own file goes")
    return said


def _analyse(run_dir: Path, commit: str | None = None, asv_dir: Path | None = None,
             backend: str | None = None, *, results: Path | None = None,
             stopped: str | None = None, pytest_killed: str | None = None,
             history: list[dict] | None = None, add_to_history: bool = True, interrupted: bool = False,
             pytest_exit: int | None = None, causes: list[str] | None = None,
             problems: list[str] | None = None) -> tuple[int, str, dict | None]:
    """(exit status, report text, report: None when nothing could be read); writes report.txt, report.json and the support matrix
    atomically. ``commit`` and ``asv_dir``: where to look for asv's ratios of the same commit.
    ``backend``: the backend this run tested; the report's "Backends" section sets it beside the
    latest complete run of each other backend under ``run_dir``'s ``results`` directory.
    ``stopped``: the signal that stopped the run (it is then incomplete). ``pytest_killed``: the
    signal that ended pytest itself (from outside this process; the run is then incomplete too,
    even when every record was written: pytest's own output is cut). ``history``: gets the lines
    a complete run adds to ``results/history.jsonl`` (``add_to_history`` False: none), for the
    caller to append once run.json is written (:func:`_append_history`); nothing is appended here.
    ``interrupted`` (Ctrl-C), ``pytest_exit`` (pytest's exit status) and ``causes`` (more reasons
    the run is incomplete: the report process died) name what ended a run; when nothing of it can
    be read they make its report (:func:`_fault_report`: marked incomplete, the cause and pytest's
    own last lines), never a bare "no pytest output found". ``problems``: lines the report lists
    among its input problems (what :func:`_clear_the_way` moved aside)."""
    results = run_dir.parent.parent if results is None else results
    read_problems: list[str] = list(problems or [])
    try:
        run = load_run(run_dir)
        if run is None:  # no records (the interop plugin disabled, pytest never started): its console
            console = _run_file(run_dir / "pytest.txt", run_dir, read_problems)
            if console is None:
                raise UnreadableInput(read_problems.pop() if read_problems else
                                      f"{run_dir / 'pytest.txt'}: missing (no records.jsonl either)")
            run = parse_pytest_output(console, source=str(run_dir / "pytest.txt"))
        log = run_dir / "benchmarks.jsonl"
        text = _run_file(log, run_dir, read_problems) or ""
        # a run where no test wrote a timing line (all failed, skipped or xfailed) still
        # gets its report, without a benchmark section
        bench = parse_benchmarks(text, source=str(log)) if text.strip() else None
    except (UnreadableInput, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:
            raise  # the disk (full, read-only): the caller says so, naming the path
        message = _fault_report(run_dir, str(exc), _fault_causes(stopped, pytest_killed, interrupted, pytest_exit,
                                                                   causes))
        write_atomically(run_dir / "report.txt", message)
        return (3 if interrupted or stopped else 2), message, None
    asv, asv_problems = None, []
    if bench is not None and commit and commit != "nogit" and asv_dir is not None:
        aidge = next((r.get("aidge") for r in bench.records if r.get("aidge")), None)
        asv = load_asv_ratios(asv_dir, commit, prefer=f"aidge-core{aidge}" if aidge else None, problems=asv_problems)
    timing_problems: list[str] = []
    timings = _load_timings(run_dir / TIMINGS_FILE, timing_problems) if bench is not None else None
    report = build_report(run, bench, asv=asv, timings=timings)
    report["problems"].extend(read_problems + timing_problems + asv_problems)
    if timings is None and bench is not None and (run_dir / TIMING_PASS_LOG).exists():
        report["problems"].append(f"the timing pass left no {TIMINGS_FILE} (its output: {run_dir / TIMING_PASS_LOG})")
    for cause in reversed(causes or []):
        report["incomplete"].insert(0, cause)
    if stopped:
        report["incomplete"].insert(0, f"the report process got {stopped}: the run was stopped")
    if pytest_killed:
        report["incomplete"].insert(0, f"pytest was killed by {pytest_killed}: its console output (pytest.txt) is "
                                       f"cut" + (", the records are complete" if isinstance(run, RunRecords)
                                                 and run.complete else ""))
    if report["input"] == "console":
        report["problems"].append(f"{run_dir}: no records.jsonl (the interop pytest plugin did not run): "
                                  "the report reads pytest's console output, without the records' fields")
    rows = run.records if isinstance(run, RunRecords) else None
    if rows is not None:
        try:
            ledger = write_ledger(run_dir, rows, complete=not report["incomplete"])
        except UnsafeInputError as exc:  # a link planted in the run (by a test of it) leads out: nothing written there
            report["problems"].append(f"{exc}: the defect ledger was not finished")
        else:
            report["defects"] = ledger_summary(ledger, complete=not report["incomplete"], records=rows)
        matrix = support_matrix(rows)
        report["support"] = {"files": [str(p) for p in write_support(run_dir, matrix, lines=[
            f"run {run_dir.name}" + (f", commit {commit}" if commit else "")])],
            "headlines": {b: headline(matrix, b) for b in matrix["operators"]}}
        table = porting_table(rows)
        if table["rows"]:
            report["porting"] = {"files": [str(p) for p in write_porting(run_dir, table, lines=[
                f"run {run_dir.name}" + (f", commit {commit}" if commit else "")])], "headlines": headline_of(table)}
        # the ONNX conformance scoreboard, when the run holds onnx's backend tests (its defects: the ledger's)
        conformance = write_scoreboard(run_dir, rows, lines=[f"run {run_dir.name}" + (f", commit {commit}" if commit else "")])
        if conformance:
            report["conformance"] = {"files": [str(p) for p in conformance]}
        link_run_pages(run_dir)  # the run's pages link only those it holds (no porting.html without architectures)
        trends, releases, pending = _trend(results, run_dir, run, matrix, commit,
                                           append=add_to_history and not report["incomplete"],
                                           problems=report["problems"])
        report["trend"], report["releases"] = trends, releases
        if history is not None:
            history.extend(pending)
    mine = {b: (run_dir.name, [r for r in rows if (r.get("backend") or "cpu") == b])
            for b in {r.get("backend") or "cpu" for r in rows}} if rows else {}
    if backend is not None or mine:
        others = latest_runs(results, exclude=set(mine) | ({backend} if backend else set()))
        try:
            runs = load_runs(others)
        except (OSError, UnreadableInput):  # another run's file went away or is unreadable: not this run's
            runs = {}
        runs.update(mine or {backend: (run_dir.name, rows if rows is not None else run)})
        report["backends"] = backend_matrix(runs)
    if (run_dir / "records.jsonl").exists():
        try:
            proposal = propose_table_changes(run_dir)
            # the run's own folder, never one a link planted in the run (by a test of it) leads to
            confined(run_dir / TRIAGE_DIR, run_dir, kind="dir", missing_ok=True)
        except ValueError as exc:  # a run that does not say its Aidge release, a link out (UnsafeInputError): said
            report["triage"] = {"error": str(exc)}
            if isinstance(exc, UnsafeInputError):
                report["problems"].append(f"{exc}: the table's proposal was not written")
        else:
            if proposal.files or proposal.left_out:
                _, diff = write_proposal(proposal, run_dir / TRIAGE_DIR)
                report["triage"] = {"counts": proposal.counts(), "release": proposal.release, "diff": str(diff),
                                    "cases": sum(len(c["cases"]) for c in proposal.changes),
                                    "apply": f"python -m interop.triage update {run_dir} --apply"}
    text = format_report(report)
    write_atomically(run_dir / "report.json", json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
    write_atomically(run_dir / "report.txt", text)
    return (3 if report.get("incomplete") else 0), text, report


#: the timing pass's figures and its console output, in the run directory
TIMINGS_FILE = "timings.jsonl"
TIMING_PASS_LOG = "timing_pass.txt"
#: the module that times the cases: with the package's harness (:data:`.timing_pass.HARNESS`), or
#: a checkout's ``benchmarks/harness.py`` where the run's directory has one; no checkout needed
TIMING_PASS_MODULE = "interop.reporting.timing_pass"
#: seconds the timing pass gets after a stop signal: none (it writes nothing when stopped)
TIMING_PASS_GRACE_S = {"Ctrl-C": 0.0, "SIGTERM": 0.0, "SIGHUP": 0.0}


def _run_file(path: Path, run_dir: Path, problems: list[str]) -> str | None:
    """The text of one file of the run (pytest.txt, benchmarks.jsonl, timings.jsonl) under the rule
    of the run's files (:func:`interop.reading.confined`: a regular file inside the run, never a
    FIFO, which hung the report, nor a link) and :data:`interop.reading.MAX_LOG_BYTES`; None when it
    is absent, or refused (``path: why`` added to ``problems``)."""
    from ..reading import MAX_LOG_BYTES, read_confined

    if not os.path.lexists(path):
        return None
    try:
        return read_confined(path, run_dir, max_bytes=MAX_LOG_BYTES).decode("utf-8", errors="replace")
    except UnsafeInputError as exc:
        problems.append(f"{exc}: not read")
    except OSError as exc:
        problems.append(f"{path}: unreadable ({exc.strerror or exc})")
    return None


def _load_timings(path: Path, problems: list[str]) -> dict[tuple[str, str], dict] | None:
    """The timing pass's lines by (case, phase), read with the project's JSONL reader: a line that
    is not a JSON object with ``name`` and ``phase`` adds ``file:line: why`` to ``problems``."""
    text = _run_file(path, path.parent, problems)
    if text is None:
        return None
    out = {}
    for number, entry in json_lines(text, str(path), problems):
        if isinstance(entry, dict) and "name" in entry and "phase" in entry:
            out[(str(entry["name"]), str(entry["phase"]))] = entry
        else:
            problems.append(f"{path}:{number}: not a timing line (a JSON object with name and phase)")
    return out


def _timing_pass(run_dir: Path, env: dict[str, str], cwd: Path, backend: str | None,
                 supervisor: Supervisor | None = None) -> tuple[str | None, bool]:
    """Time the cases the run timed again, alone, now that no test runs (:mod:`.timing_pass`,
    under ``supervisor``): the figures the report ranks. Returns (what happened in a line, or None
    when there is nothing to time; whether the pass was stopped: Ctrl-C, SIGTERM, SIGHUP stop it at
    once, :data:`TIMING_PASS_GRACE_S`, it writes nothing then). Off with ``INTEROP_TIMING_PASS=0``."""
    bench = run_dir / "benchmarks.jsonl"
    if not (_run_file(bench, run_dir, []) or "").strip():
        return None, False
    if not read_env("INTEROP_TIMING_PASS", env):
        return "timing pass: off (INTEROP_TIMING_PASS=0): the run's in-test figures only", False
    if backend not in (None, "cpu", "cuda"):
        return f"timing pass: not run (backend {backend})", False
    started = time.monotonic()
    sys.stdout.write("timing pass: the cases the run timed, timed again one by one now that no test runs "
                     "(a few minutes at most) ...\n")
    sys.stdout.flush()
    with contextlib.ExitStack() as stack:
        if supervisor is None:
            supervisor = stack.enter_context(Supervisor())
        with open(run_dir / TIMING_PASS_LOG, "w") as log:
            proc = supervisor.start([sys.executable, "-m", TIMING_PASS_MODULE, "--bench", str(bench),
                                     "--out", str(run_dir / TIMINGS_FILE)], stdout=log, env=env, cwd=cwd)
            code = None if proc is None else supervisor.wait(proc, grace_s=TIMING_PASS_GRACE_S)
        if supervisor.stopped_by:  # asked after the wait too: the forwarded Ctrl-C may end the pass first
            return f"timing pass: stopped ({supervisor.stopped_by}): the run's in-test figures only", True
    if code != 0:
        return f"timing pass: failed (exit {code}, {run_dir / TIMING_PASS_LOG})", False
    return f"timing pass: {time.monotonic() - started:.0f} s ({run_dir / TIMING_PASS_LOG})", False


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


#: the packages whose versions merged runs must share (torch without its local build tag: a cuda
#: machine's ``2.13.0+cu126`` and this one's ``2.13.0+cpu`` are one torch)
MERGE_VERSIONS = ("aidge_core", "aidge_backend_cpu", "aidge_onnx", "torch")
#: a run directory's name: ``<UTC time>-<commit>-...`` (:func:`new_run_dir`)
_RUN_NAME = re.compile(r"^\d{8}T\d+Z-(?P<commit>[0-9a-f]{4,40}|nogit)-")
#: the flag that merges runs that do not belong together, as a run marked mixed
MERGE_MISMATCHED = "--merge-mismatched"


class MergeRefused(ValueError):
    """Runs that do not belong together, each reason naming them."""

    def __init__(self, reasons: list[str]):
        self.reasons = reasons
        super().__init__("; ".join(reasons))


@dataclasses.dataclass
class MergeSource:
    """One run given to ``--merge``: its records (None: none could be read) and what says where
    it comes from (commit, versions, backend, shard, route to ONNX)."""

    path: Path
    run: RunRecords | None
    commit: str | None
    versions: dict[str, str]
    backend: str
    shard: tuple[int, int] | None
    exporters: tuple[str, ...]
    unreadable: str | None = None
    #: where its records disagree with each other or with its session's counts
    #: (:func:`interop.records.store.disagreements`): such a source is never merged
    disagrees: list[str] = dataclasses.field(default_factory=list)

    def summary(self) -> dict:
        return {"dir": str(self.path), "commit": self.commit, "versions": self.versions, "backend": self.backend,
                "shard": f"{self.shard[0]}/{self.shard[1]}" if self.shard else None, "exporters": list(self.exporters),
                "records": len(self.run.records) if self.run else 0,
                "complete": bool(self.run and self.run.complete), "unreadable": self.unreadable}


def _source_commit(path: Path, problems: list[str]) -> str | None:
    """The commit a run was made at: its run.json's ``commit``, else its directory's name."""
    from ..reading import read_confined_json

    meta = path / "run.json"
    if os.path.lexists(meta):
        try:
            doc = read_confined_json(meta, path)
        except (OSError, ValueError) as exc:
            problems.append(f"{meta}: unreadable ({getattr(exc, 'strerror', None) or exc})")
        else:
            if isinstance(doc, dict) and isinstance(doc.get("commit"), str):
                return doc["commit"]
            if isinstance(doc, dict) and doc.get("commit") is not None:
                problems.append(f"{meta}: key 'commit': a string, got {type(doc['commit']).__name__}")
    match = _RUN_NAME.match(Path(os.path.realpath(path)).name)
    return match.group("commit") if match else None


def load_merge_source(path: Path) -> MergeSource:
    """One source of a merge, read under the rules of :mod:`interop.records.store` (a link out,
    a FIFO, a field of the wrong type: named in its problems, never a traceback)."""
    from ..records.store import MAX_RECORDS_BYTES, RECORDS_FILE

    unreadable = None
    records = path / RECORDS_FILE
    if os.path.lexists(records):
        try:
            size = confined(records, path).stat().st_size
        except (UnsafeInputError, OSError) as exc:
            unreadable = str(exc)
        else:
            if size > MAX_RECORDS_BYTES:
                unreadable = f"{records}: {size:,} bytes, above the limit of {MAX_RECORDS_BYTES:,} bytes for records"
    run = load_run(path)
    if run is None and unreadable is None:
        unreadable = f"{records}: no records.jsonl (not the directory of a records run)"
    session = run.session if run is not None else {}
    problems = run.problems if run is not None else []
    commit = _source_commit(path, problems)
    versions = {k: str(v).split("+")[0] if k == "torch" else str(v)
                for k, v in (session.get("versions") or {}).items() if k in MERGE_VERSIONS}
    shard = None
    if session.get("shard") is not None:
        from ..env import parse_k_of_n

        try:
            shard = parse_k_of_n(str(session["shard"]), f"{path / 'session.json'}: key 'shard'")
        except ValueError as exc:
            problems.append(str(exc))
            unreadable = unreadable or str(exc)
    backends = {r.get("backend") or "cpu" for r in (run.records if run else [])}
    backend = session.get("backend") or (backends.pop() if len(backends) == 1 else "cpu")
    exporters = tuple(sorted({r.get("exporter") or "auto" for r in (run.records if run else []) if r.get("kind")}))
    disagrees = disagreements(run, str(path)) if run is not None else []
    return MergeSource(path, run, commit, versions, backend, shard, exporters, unreadable, disagrees)


#: the lines of one source's disagreements a refusal shows (then how many more)
MAX_DISAGREEMENTS_SHOWN = 10


def merge_disagreements(sources: list[MergeSource]) -> list[str]:
    """Why the records of these runs do not prove what they say, one line each (``DIR: nodeid: key
    ...``, at most :data:`MAX_DISAGREEMENTS_SHOWN` a source, then how many more): a record whose
    ``outcome`` is not what its per-phase statuses make it, a session whose counts are not its records'.
    A merge of such a run is refused, ``--merge-mismatched`` or not: it would report what nothing proves."""
    out: list[str] = []
    for source in sources:
        out += source.disagrees[:MAX_DISAGREEMENTS_SHOWN]
        if len(source.disagrees) > MAX_DISAGREEMENTS_SHOWN:
            out.append(f"{source.path}: and {len(source.disagrees) - MAX_DISAGREEMENTS_SHOWN} more records that "
                       "disagree with themselves or with session.json")
    return out


def _differs(label: str, sources: list[MergeSource], value) -> str | None:
    groups: dict[str, list[str]] = {}
    for source in sources:
        shown = value(source)
        groups.setdefault("unknown" if shown in (None, "", ()) else str(shown), []).append(str(source.path))
    if len(groups) < 2:
        return None
    return f"{label} differ: " + "; ".join(f"{v} ({', '.join(dirs)})" for v, dirs in groups.items())


def merge_mismatches(sources: list[MergeSource]) -> tuple[list[str], list[str]]:
    """(why these runs do not belong together, the shards missing): a source without readable
    records; a different commit, Aidge or torch version, route to ONNX; shards of different
    counts, one given twice, sharded beside unsharded runs of a backend, a missing shard. Each
    reason names the runs."""
    reasons = [f"{s.path}: {s.unreadable}" if not s.unreadable.startswith(str(s.path)) else s.unreadable
               for s in sources if s.unreadable]
    reasons += filter(None, [_differs("commits", sources, lambda s: s.commit)]
                      + [_differs(f"{k} versions", sources, lambda s, k=k: s.versions.get(k)) for k in MERGE_VERSIONS]
                      + [_differs("routes to ONNX (--exporter)", sources,
                                  lambda s: ",".join(s.exporters) if s.exporters else None)])
    missing: list[str] = []
    by_backend: dict[str, list[MergeSource]] = {}
    for source in sources:
        if not source.unreadable:
            by_backend.setdefault(source.backend, []).append(source)
    for backend, group in sorted(by_backend.items()):
        sharded = [s for s in group if s.shard]
        if not sharded:
            continue
        if len(sharded) < len(group):
            reasons.append(f"backend {backend}: sharded and unsharded runs together (unsharded: "
                           f"{', '.join(str(s.path) for s in group if not s.shard)})")
        counts = {s.shard[1] for s in sharded}
        if len(counts) > 1:
            reasons.append(f"backend {backend}: shard counts differ: "
                           + "; ".join(f"{s.shard[0]}/{s.shard[1]} ({s.path})" for s in sharded))
            continue
        (n,) = counts
        seen: dict[int, list[str]] = {}
        for s in sharded:
            seen.setdefault(s.shard[0], []).append(str(s.path))
        reasons += [f"backend {backend}: shard {k}/{n} given {len(dirs)} times ({', '.join(dirs)})"
                    for k, dirs in sorted(seen.items()) if len(dirs) > 1]
        gone = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
        if gone:
            missing.append(f"backend {backend}: shard{'s' if len(gone) > 1 else ''} {', '.join(gone)} missing "
                           f"(given: {', '.join(f'{k}/{n}' for k in sorted(seen))})")
    return reasons + missing, missing


def merge_runs(sources: list[Path], run_dir: Path, *, mismatched: bool = False) -> dict:
    """The records of several runs (shards, machines, backends) into ``run_dir``: one record per
    (test, backend). Runs that do not belong together (:func:`merge_mismatches`) are refused
    (:class:`MergeRefused`, nothing written) unless ``mismatched``: the merged run is then
    marked ``mixed`` with the reasons. Complete when every source is and no shard is missing.
    Returns the merged session: ``merged`` names each source (dir, commit, versions, backend,
    shard, route, records), ``problems`` what went wrong reading them."""
    loaded = [s if isinstance(s, MergeSource) else load_merge_source(Path(s)) for s in sources]
    disagree = merge_disagreements(loaded)
    if disagree:  # never merged, mismatched or not
        raise MergeRefused(disagree)
    reasons, missing = merge_mismatches(loaded)
    if reasons and not mismatched:
        raise MergeRefused(reasons)
    return _write_merged(loaded, run_dir, reasons, missing)


def _write_merged(loaded: list[MergeSource], run_dir: Path, reasons: list[str], missing: list[str]) -> dict:
    """The merged run: its records, its session (counts recomputed from the records merged, each
    source's checked against its own session by :func:`merge_disagreements`) and its reproducer
    bundles, rebuilt from the sources' data (:func:`_rebuild_bundles`): each record's ``merged_from``
    is its source's folder of rebuilt bundles in the merged run (where the ledger finds its bundle),
    ``merged_source`` the run it came from."""
    problems: list[str] = [f"mixed merge ({MERGE_MISMATCHED}): {r}" for r in reasons]
    merged: dict[tuple[str, str], dict] = {}
    sessions = []
    counts: dict[str, int] = {}
    for index, source in enumerate(loaded, 1):
        run = source.run
        if run is None:
            sessions.append({"complete": False, "ended": f"{source.path}: no records", "source": str(source.path)})
            continue
        problems.extend(run.problems)
        sessions.append(dict(run.session, source=str(source.path)))
        for key, n in records_counts(run.records).items():
            counts[key] = counts.get(key, 0) + n
        root = run_dir / MERGED_BUNDLES_DIR / str(index)
        _rebuild_bundles(source.path, run.records, root, run_dir, problems)
        for rec in run.records:
            key = (rec["nodeid"], rec.get("backend") or "cpu")
            if key in merged:
                problems.append(f"{source.path}: {rec['nodeid']} on {key[1]} is recorded by an earlier source too "
                                "(overlapping shards?): the later record is kept")
            derived = outcome_of_reports(rec)  # what its statuses prove (merge_disagreements: the same)
            merged[key] = dict(rec, merged_from=str(root), merged_source=str(source.path),
                               **({"outcome": derived} if derived is not None and rec.get("reports") else {}))
    complete = bool(sessions) and all(s.get("complete") is True for s in sessions) and not missing
    ended = [str(s.get("ended")) for s in sessions if s.get("complete") is not True] + missing
    versions = {k: v for k, v in (sessions[0].get("versions") or {}).items()
                if all((s.get("versions") or {}).get(k) == v for s in sessions)} if sessions else {}
    commits = {s.commit for s in loaded}
    session = {"schema": SCHEMA, "merged_from": [str(s.path) for s in loaded], "complete": complete,
        "ended": "merged" if complete else "; ".join(ended),
        "pytest_counts": counts, "started": min((str(s.get("started")) for s in sessions if s.get("started")),
                                                default=None),
        "finished": max((str(s.get("finished")) for s in sessions if s.get("finished")), default=None),
        "versions": versions, "shard": None, "problems": problems, "commit": commits.pop() if len(commits) == 1 else None,
        "merged": [s.summary() for s in loaded], **({"mixed": reasons} if reasons else {}),
        "backend": ",".join(sorted({k[1] for k in merged})) or None, "sources": sessions}
    write_run(run_dir, [merged[k] for k in sorted(merged)], session)
    return session


#: the merged run's folder of the reproducer bundles rebuilt from its sources' data (one folder a source)
MERGED_BUNDLES_DIR = "merged"
#: the largest file of a bundle a merge copies (a bundle is bounded by INTEROP_REPRO_MAX_MB, 20 MB by default)
MAX_BUNDLE_FILE_BYTES = 256 << 20
#: the largest repro.py read for its settings
MAX_REPRO_BYTES = 4 << 20


def _bundle_folders(records: list[dict]) -> list[str]:
    """The bundle folders (relative to their run) the ledger may take a defect's reproducer from:
    each reproducing record's reduced bundle, else its full one (:func:`interop.reporting.ledger.build_ledger`)."""
    out: list[str] = []
    for rec in records:
        repro = rec.get("reproducer")
        if isinstance(repro, dict) and repro.get("reproduces"):
            where = repro.get("reduced") or repro.get("path")
            if isinstance(where, str) and where and where not in out:
                out.append(where)
    return out


def _rebuild_bundles(source: Path, records: list[dict], root: Path, run_dir: Path, problems: list[str]) -> None:
    """The bundles of ``records`` (:func:`_bundle_folders`) rebuilt under ``root`` from their data: the
    graph (``model.onnx``), the values (``test_data_set_0/{input,output,grad}_*.pb``) and ``meta.json``
    copied as they are, and ``repro.py`` generated anew by :func:`interop.diagnostics.reproducer.repro_script`
    from the settings the source's repro.py holds, read as data
    (:func:`~interop.diagnostics.reproducer.script_settings`). No script text of a source is copied: a
    repro.py that is not the one its settings generate (replaced, edited) is said in ``problems``, and one
    that holds no settings to generate it from leaves its bundle without a script (its defect's report
    then says the bundle cannot be read). Every path lies in ``source`` and in ``run_dir``
    (:func:`interop.reading.confined`)."""
    from ..diagnostics.repro_script import repro_script, script_settings
    from ..reading import read_confined
    from .defect_issue import _BODY_MARK

    for rel in _bundle_folders(records):
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts:
            problems.append(f"{source}: reproducer bundle {rel!r}: not a folder of the run: not merged")
            continue
        bundle, target = source / rel, root / rel
        try:
            confined(bundle, source, kind="dir")
            files = [n for n in ("model.onnx", "meta.json") if os.path.lexists(bundle / n)]
            if Path(rel).name == "reduced" and os.path.lexists(bundle.parent / "meta.json"):
                files.append("../meta.json")  # a reduced bundle's facts are its parent's meta.json
            data = bundle / "test_data_set_0"
            if os.path.lexists(data):
                confined(data, source, kind="dir")
                files += [f"test_data_set_0/{p.name}" for p in sorted(data.glob("*.pb"))
                          if p.name.startswith(("input_", "output_", "grad_"))]
            copied = {name: read_confined(bundle / name, source, max_bytes=MAX_BUNDLE_FILE_BYTES) for name in files}
            text = read_confined(bundle / "repro.py", source, max_bytes=MAX_REPRO_BYTES).decode("utf-8", "replace")
        except (OSError, UnsafeInputError) as exc:
            problems.append(f"{source}: reproducer bundle {rel}: {getattr(exc, 'strerror', None) or exc}: not merged")
            continue
        try:  # its header's settings: the body (the same in every repro.py) binds names of its own
            at = text.find(_BODY_MARK)
            settings = script_settings(text[:at] if at >= 0 else text)
            script = repro_script(settings, factory="OPERATION" in settings) if {"RTOL", "ATOL"} <= set(settings) else None
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
            script = None
        if script is None:
            problems.append(f"{bundle / 'repro.py'}: not a reproducer this version generates, and no settings to "
                            "generate one from: not merged (its defect's report says the bundle cannot be read)")
        elif script != text:
            problems.append(f"{bundle / 'repro.py'}: not the script its settings generate (replaced or edited, or "
                            "written by another version): the merged run's is generated anew from its settings")
        for name, blob in copied.items():
            path = Path(os.path.normpath(target / name))
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_bytes(path, blob, run_dir)
        if script is not None:
            target.mkdir(parents=True, exist_ok=True)
            write_atomically(target / "repro.py", script, root=run_dir)


def _write_bytes(path: Path, blob: bytes, root: Path) -> None:
    """``blob`` into ``path`` (inside ``root``, :func:`interop.reading.confined`) through a temporary file."""
    confined(path.parent, root, kind="dir")
    if os.path.lexists(path):
        confined(path, root)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, flags | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(blob)
    os.replace(tmp, path)


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


#: results/runs above this many bytes is said in a warning line at the end of every run (a default run is
#: about 190 MB: some ten runs); ``--prune N`` removes the older runs
RUNS_WARN_BYTES = 2 * 1024 ** 3


def _tree_bytes(root: Path) -> int:
    """The bytes of the files under ``root`` (links not followed, unreadable entries skipped)."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def runs_size_warning(results: Path, bound: int = RUNS_WARN_BYTES) -> str | None:
    """A line when ``results/runs`` holds more than ``bound`` bytes (its total named), else None."""
    runs = results / "runs"
    if not runs.is_dir() or runs.is_symlink():
        return None
    total = _tree_bytes(runs)
    if total <= bound:
        return None
    return (f"interop.reporting.run: warning: {runs} holds {total / 1024 ** 3:.1f} GB (above {bound / 1024 ** 3:g} GB): "
            "python -m interop.reporting.run --prune N keeps the last N complete runs (and latest, and the last of "
            "each backend in the history) and removes the others")


def _protected_runs(results: Path) -> set[str]:
    """The runs ``--prune`` never removes: ``results/latest``'s, and the run of the last line of
    ``results/history.jsonl`` for each backend (and shard): the one each next report compares with."""
    keep: set[str] = set()
    link = results / "latest"
    if os.path.islink(link):
        keep.add(Path(os.readlink(link)).name)
    entries, _problems = load_history(results / HISTORY_FILE, results)
    last: dict[tuple, str] = {}
    for entry in entries:
        if entry.get("run"):
            last[(entry.get("backend"), entry.get("shard"))] = str(entry["run"])
    keep.update(last.values())
    return keep


def prune_runs(results: Path, keep: int) -> tuple[list[str], list[str]]:
    """Remove the run folders of ``results/runs`` but the last ``keep`` complete runs (name order:
    their UTC time) and :func:`_protected_runs`. Only finished runs (a readable ``run.json``) are
    removed: a run without one is running (or was killed before its report) and is left, as is
    anything that is not a plain folder (a link). Returns (removed, left because unfinished)."""
    import shutil

    runs = results / "runs"
    if not runs.is_dir() or runs.is_symlink():
        return [], []
    finished: dict[str, bool] = {}
    unfinished: list[str] = []
    for run_dir in sorted(runs.iterdir()):
        if run_dir.is_symlink() or not run_dir.is_dir():
            continue
        try:
            meta = json.loads((run_dir / "run.json").read_text())
            finished[run_dir.name] = bool(meta.get("complete")) if isinstance(meta, dict) else False
        except (OSError, ValueError):
            unfinished.append(run_dir.name)
    complete = [name for name, done in finished.items() if done]
    kept = set(complete[len(complete) - keep:] if keep > 0 else []) | _protected_runs(results)
    removed = []
    for name in finished:
        if name not in kept:
            shutil.rmtree(runs / name)
            removed.append(name)
    return removed, unfinished


def _prune_main(args: list[str], results: Path) -> int:
    """``--prune N``: :func:`prune_runs`, what it removed in one line, and the size left."""
    if len(args) != 1 or not args[0].isdigit():
        sys.stderr.write(f"interop.reporting.run: --prune {' '.join(args)!s}: expected one count, "
                         "--prune N (N >= 0: the complete runs kept besides latest and the history's last)\n")
        return 2
    removed, unfinished = prune_runs(results, int(args[0]))
    sys.stdout.write(f"interop.reporting.run: --prune {args[0]}: {len(removed)} run(s) removed from {results / 'runs'}"
                     + (f"; {len(unfinished)} without run.json left (running, or killed): "
                        f"{', '.join(unfinished)}" if unfinished else "")
                     + f"; {_tree_bytes(results / 'runs') / 1024 ** 2:.0f} MB left\n")
    return 0


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
    # every failing case leaves a reproducer bundle in the run (interop.diagnostics.reproducer);
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


def _analysis_stopped(run_dir: Path, name: str, when: str = "during the analysis") -> str:
    """The report of a run whose analysis a stop signal cut short: marked incomplete, the signal
    named, pytest's own last lines (its totals); the analysis's report.json, when it was written
    before the signal, is removed (it would read as the run's)."""
    with contextlib.suppress(OSError):
        os.unlink(run_dir / "report.json")
    _remove_partials([run_dir])
    text = _fault_report(run_dir, "pytest.txt and records.jsonl are in place: the report of what ran is pytest's "
                         "summary below", [f"{name} {when}: the report was not finished"],
                         headline="the analysis was stopped, do not read this as a clean run")
    write_atomically(run_dir / "report.txt", text)
    return text


if __name__ == "__main__":
    sys.exit(main())
