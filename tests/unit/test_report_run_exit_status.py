"""The runner's exit status says how the tests went (issue 49): ``nox -s report`` exited 0 when tests
failed (pytest's status was only in run.json). Now: 0 complete and nothing unexpected (expected
failures and skips included), 1 complete with a failure, error or strict XPASS no row holds, 3
incomplete, 2 nothing read; the CI gate and the nightly script read that 1 as "judge the records"."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interop.reporting import run as runner

ROOT = Path(__file__).resolve().parents[2]

MIXED = ("import pytest\n\n"
         "def test_passes():\n    pass\n\n"
         "@pytest.mark.xfail(strict=True, reason='known')\ndef test_expected():\n    assert 0\n\n"
         "@pytest.mark.skip(reason='no')\ndef test_skipped():\n    pass\n")
FAILING = MIXED + "\ndef test_fails():\n    assert 0\n"
XPASSING = MIXED + "\n@pytest.mark.xfail(strict=True, reason='fixed?')\ndef test_fixed():\n    pass\n"


@pytest.mark.parametrize("status, counts, code, said", [
    (0, {"passed": 3, "xfailed": 2, "skipped": 1}, 0, None),
    (0, {"passed": 3, "failed": 2}, 1, "2 failed"),
    (0, {"passed": 3, "error": 1, "xpassed": 1}, 1, "1 error, 1 xpassed"),
    (3, {"passed": 3, "failed": 2}, 3, None),  # incomplete stays incomplete, failures or not
    (2, {}, 2, None),
])
def test_the_exit_status_of_an_analysed_run(status, counts, code, said):
    got, line = runner.exit_status(status, {"counts": counts})
    assert got == code
    assert (line is None) if said is None else (said in line and line.startswith("exit 1: "))


def test_a_run_without_a_report_keeps_its_status():
    assert runner.exit_status(2, None) == (2, None)
    assert runner.exit_status(0, None) == (0, None)


def _report_run(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_TIMING_PASS", "INTEROP_REPRODUCERS", "INTEROP_RECORDS_DIR",
                 "INTEROP_RECORDS_SESSION"):
        env.pop(name, None)
    env["INTEROP_TIMING_PASS"] = "0"
    return subprocess.run([sys.executable, "-m", "interop.reporting.run", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("body, code, said", [
    (MIXED, 0, None),
    (FAILING, 1, "exit 1: 1 failed without an expected failure"),
    (XPASSING, 1, "exit 1: 1 xpassed without an expected failure"),
])
def test_a_report_run_exits_as_its_tests_went(tmp_path, body, code, said):
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(body)
    proc = _report_run(project, "-p", "no:cacheprovider", "test_sample.py")
    assert proc.returncode == code, proc.stdout + proc.stderr
    (run_dir,) = (project / "results" / "runs").iterdir()
    meta = json.loads((run_dir / "run.json").read_text())
    # complete either way: results/latest follows it, and run.json keeps pytest's own status
    assert meta["complete"] is True and meta["pytest_exit"] == code
    assert (project / "results" / "latest").resolve() == run_dir.resolve()
    assert (said in proc.stdout) if said else ("exit 1" not in proc.stdout)
    if code:  # a merge of that run says the same
        merged = _report_run(project, "--merge", str(run_dir))
        assert merged.returncode == 1 and said in merged.stdout, merged.stdout + merged.stderr


def test_help_says_the_exit_statuses_and_runs_nothing(tmp_path, capsys):
    assert runner.main(["--help"], results=tmp_path / "results", cwd=tmp_path) == 0
    out = capsys.readouterr().out
    assert "Exit status" in out and "- 1: the run completed, and some tests failed" in out
    assert not (tmp_path / "results").exists()


# -- ci/gate.py and nox: the runner's 1 (or nox's 1 for it) with a complete merged run is judged, not "the merge failed"

def _merged_run(tmp_path: Path, outcomes: list[str], *, complete: bool = True) -> Path:
    run = tmp_path / "runs" / "20261204T000000000000Z-abcdef12-merged-1"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"complete": complete, "merged_from": ["a"],
                                              "ended": None if complete else "shard 2/2 killed"}))
    (run / "report.json").write_text(json.dumps({"incomplete": [] if complete else ["shard 2/2 killed"]}))
    (run / "records.jsonl").write_text("".join(json.dumps({"nodeid": f"t.py::test_{i}", "outcome": o}) + "\n"
                                               for i, o in enumerate(outcomes)))
    return run


def _gate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "ci" / "gate.py"), *args], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("outcomes, complete, extra, code, said", [
    (["passed", "failed"], True, [], 1, "FAILED: 1 unexpected outcome(s)"),
    (["passed", "failed"], True, ["--complete-only"], 0, "complete (unexpected failures are this selection's"),
    (["passed"], False, [], 1, "FAILED: the merge failed (exit 1"),  # nox's 1 for an incomplete merge
])
def test_the_gate_judges_a_complete_merge_that_exited_1(tmp_path, outcomes, complete, extra, code, said):
    _merged_run(tmp_path, outcomes, complete=complete)
    proc = _gate(str(tmp_path / "runs"), "--merge-status", "1", *extra)
    assert proc.returncode == code and said in proc.stdout, proc.stdout + proc.stderr


def test_the_findings_sessions_take_exit_1_and_the_report_session_does_not():
    """nox -s report and nox -s onnx-backend (every failure of the source is a strict row) fail on
    unexpected outcomes; opinfo, moduleinfo and release-matrix (selections whose failures the table
    does not all hold: triage material) and ci/nightly.sh go on to their triage."""
    source = (ROOT / "noxfile.py").read_text()
    calls = [line for line in source.splitlines() if '"interop.reporting.run"' in line]
    assert len(calls) == 5
    assert sum("success_codes=[0, 1]" in line for line in calls) == 3
    for session in (("def report(", "def repro_check("), ("def onnx_backend(", "def moduleinfo(")):
        assert "success_codes" not in source[source.index(session[0]):source.index(session[1])]
    nightly = (ROOT / "ci" / "nightly.sh").read_text()
    assert '[ "$status" -ne 0 ] && [ "$status" -ne 1 ]' in nightly
