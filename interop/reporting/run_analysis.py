"""The analysis of a findings run (:mod:`.run`): :func:`_analyse` reads what the run left in its folder
(its records, never pytest's console output; its timings and the timing pass's figures, each file under the
rule of the run's files: :func:`_run_file`) and writes the report (``report.txt`` / ``report.json``), the
support matrix, the defect ledger, the porting and conformance pages and the expected-failure table's
proposal; the comparison with the previous complete run of each backend (:func:`_trend`); and the
analysis' files moved out of the way of something else under their names (:func:`_clear_the_way`)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..reading import MAX_LOG_BYTES, UnreadableInput, UnsafeInputError, confined, json_lines, read_confined
from ..records.benchmarks import parse_benchmarks
from ..records.store import write_atomically
from ..records.store import RECORDS_FILE, RunRecords, load_run
from .asv_results import load_asv_ratios
from .backends import backend_matrix, latest_runs, load_runs
from .history import HISTORY_FILE, compare, history_entry, load_history, previous_entry, release_changes
from .ledger import ledger_summary, write_ledger
from .onnx_scoreboard import write_scoreboard
from .porting import headline as headline_of
from .porting import link_run_pages, porting_table, write_porting
from .report import build_report
from .report_text import format_report
from .run_faults import _fault_causes, _fault_report
from .run_folder import WRITE_ERRNOS
from .support import headline, support_matrix, write_support
from .triage_apply import write_proposal
from .triage_propose import propose as propose_table_changes

#: the run's proposed changes to the expected-failure table (:mod:`.triage_propose`): a folder of the run
TRIAGE_DIR = "triage"
#: the timing pass's figures and its console output, in the run directory
TIMINGS_FILE = "timings.jsonl"
TIMING_PASS_LOG = "timing_pass.txt"


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
        if run is None:  # no records (the interop plugin disabled, pytest never started): its console text is not read
            raise UnreadableInput(f"{run_dir / RECORDS_FILE}: missing: no records were written (the interop pytest "
                                  "plugin did not run, or pytest never started)")
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
                                       f"cut" + (", the records are complete" if run.complete else ""))
    rows = run.records
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
        runs.update(mine or {backend: (run_dir.name, rows)})
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


def _run_file(path: Path, run_dir: Path, problems: list[str]) -> str | None:
    """The text of one file of the run (pytest.txt, benchmarks.jsonl, timings.jsonl) under the rule
    of the run's files (:func:`interop.reading.confined`: a regular file inside the run, never a
    FIFO, which hung the report, nor a link) and :data:`interop.reading.MAX_LOG_BYTES`; None when it
    is absent, or refused (``path: why`` added to ``problems``)."""
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
