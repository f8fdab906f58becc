"""The child processes of a findings run (:mod:`.run`), each under the run's supervisor
(:mod:`.supervisor`): pytest into ``pytest.txt`` with its progress lines (:func:`_run_pytest`), then
the timing pass (:func:`_timing_pass`: the cases the run timed, timed again alone, :mod:`.timing_pass`)."""
from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from ..env import read as read_env
from ..records.progress import Progress
from .supervisor import Supervisor
from .run_analysis import TIMING_PASS_LOG, TIMINGS_FILE, _run_file

#: the module that times the cases: with the package's harness (:data:`.timing_pass.HARNESS`), or
#: a checkout's ``benchmarks/harness.py`` where the run's directory has one; no checkout needed
TIMING_PASS_MODULE = "interop.reporting.timing_pass"
#: seconds the timing pass gets after a stop signal: none (it writes nothing when stopped)
TIMING_PASS_GRACE_S = {"Ctrl-C": 0.0, "SIGTERM": 0.0, "SIGHUP": 0.0}


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
