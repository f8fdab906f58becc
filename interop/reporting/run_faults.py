"""The report of a findings run (:mod:`.run`) of which nothing can be read, or whose analysis a stop
signal cut short: marked ``RUN INCOMPLETE`` (never read as a clean run), what ended it in words
(:func:`_fault_causes`), and pytest's own last lines (:func:`_fault_report`, :func:`_analysis_stopped`)."""
from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from ..records.store import write_atomically
from .report_text import escape_controls
from .run_folder import _remove_partials


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
