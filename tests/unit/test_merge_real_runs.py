"""The pipeline's promise on a real selection (issue 48): the merge of 2 shard jobs is the unsharded run of the
same selection (support cells, defect ids and their cases, counts), and a shard killed mid-job makes the merge
name the missing shard, never a complete report. Real report runs (``python -m interop.reporting.run``,
what ``nox -s report`` runs) of the suite's own Gather cases (9: 2 pass, 7 strict expected failures of
Aidge defects), in a temporary results folder; the timing pass and the reproducer bundles are off (they
neither make nor change a record)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interop.reporting.run import main

ROOT = Path(__file__).resolve().parents[2]
SELECTION = [str(ROOT / "tests" / "test_operators.py"), "-k", "Gather"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTEROP_", "PYTEST_"))}
    env.update(PYTHONPATH=str(ROOT), INTEROP_TIMING_PASS="0", INTEROP_REPRODUCERS="0", OMP_NUM_THREADS="1",
               PYTHONHASHSEED="0")
    return env


def _start(cwd: Path, *shard: str) -> subprocess.Popen:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "interop.reporting.run", "-p", "no:cacheprovider", *shard,
                             *SELECTION], cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def _finish(proc: subprocess.Popen) -> str:
    try:
        out, _ = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    assert proc.returncode == 0, out
    return out


def _run_dir(cwd: Path) -> Path:
    (run,) = [p for p in (cwd / "results" / "runs").iterdir() if p.is_dir()]
    return run


def _what_a_run_says(run: Path) -> dict:
    report = json.loads((run / "report.json").read_text())
    support = json.loads((run / "support.json").read_text())
    ledger = json.loads((run / "defects.json").read_text())
    cells = sorted(json.dumps(c, sort_keys=True) for c in support["cells"])
    return {"counts": report["counts"], "cells": cells, "operators": support["operators"],
            "defects": sorted((d["id"], d["title"], sorted(c if isinstance(c, str) else json.dumps(c, sort_keys=True)
                                                           for c in d.get("cases") or []))
                              for d in ledger["defects"]),
            "complete": ledger["complete"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The unsharded run and both shards, started together (three processes)."""
    base = tmp_path_factory.mktemp("ci48")
    procs = {"whole": _start(base / "whole"), "1": _start(base / "s1", "--shard", "1/2"),
             "2": _start(base / "s2", "--shard", "2/2")}
    for proc in procs.values():
        _finish(proc)
    return base, {name: _run_dir(base / folder) for name, folder in (("whole", "whole"), ("1", "s1"), ("2", "s2"))}


def test_the_merged_shards_are_the_unsharded_run(runs, capsys):
    base, dirs = runs
    whole = _what_a_run_says(dirs["whole"])
    assert whole["counts"]["passed"] >= 1 and whole["counts"]["xfailed"] >= 1 and whole["defects"]  # not vacuous
    shard_counts = [json.loads((dirs[k] / "report.json").read_text())["counts"] for k in ("1", "2")]
    assert all(sum(c.values()) for c in shard_counts)  # each shard ran some of them
    code = main(["--merge", str(dirs["1"]), str(dirs["2"])], results=base / "merged" / "results", cwd=base / "merged")
    capsys.readouterr()
    assert code == 0
    merged = _what_a_run_says(_run_dir(base / "merged"))
    assert merged == whole


def test_a_shard_killed_mid_job_is_named_never_a_complete_report(runs, tmp_path, capsys):
    """Shard 2/2 killed (SIGKILL to its whole process group, as a runner ends a cancelled job) once its first
    test has started: its artifact lost, the merge refuses, naming shard 2/2 missing; its artifact kept (what
    the killed job left), the merge names shard 2/2 and that run, never a complete report nor latest."""
    base, dirs = runs
    proc = _start(tmp_path / "killed", "--shard", "2/2")
    deadline = time.monotonic() + 600
    started = False
    while time.monotonic() < deadline and proc.poll() is None and not started:
        parts = list((tmp_path / "killed" / "results").glob("runs/*/records.d/*/*.jsonl"))
        started = any('"event": "start"' in p.read_text() for p in parts)
        time.sleep(0.05)
    assert started and proc.poll() is None, "shard 2/2 ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    killed = _run_dir(tmp_path / "killed")

    # the job's artifacts lost: shard 1/2 alone
    code = main(["--merge", str(dirs["1"])], results=tmp_path / "lost" / "results", cwd=tmp_path / "lost")
    out, err = capsys.readouterr()
    assert code == 2 and "shard 2/2 missing (given: 1/2)" in err
    assert not (tmp_path / "lost" / "results" / "runs").exists()

    # the job's artifacts kept (a killed run): named, incomplete, never results/latest nor the history
    code = main(["--merge", str(dirs["1"]), str(killed)], results=tmp_path / "kept" / "results",
                cwd=tmp_path / "kept")
    out, err = capsys.readouterr()
    said = out + err
    # measured: the killed session never wrote its session.json (shard, versions): the run the watchdog
    # reported is no shard 2/2, so the merge refuses (exit 2) naming shard 2/2 missing and that run; a run
    # killed after its session.json would be merged as RUN INCOMPLETE (exit 3), naming it
    assert code in (2, 3), said
    assert ("shard 2/2 missing (given: 1/2)" in err and str(killed) in err) if code == 2 else \
        ("INCOMPLETE" in said and str(killed) in said), said
    assert not (tmp_path / "kept" / "results" / "latest").exists()
    runs_made = list((tmp_path / "kept" / "results" / "runs").glob("*")) \
        if (tmp_path / "kept" / "results" / "runs").exists() else []
    for run in runs_made:
        assert json.loads((run / "run.json").read_text())["complete"] is False
