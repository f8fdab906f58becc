"""`nox -s report` (interop.reporting.run): one directory per run, files renamed into place,
results/latest only for complete runs, a report for every run whatever its outcome, an
interrupted run reported as such, concurrent runs kept apart (issue 12)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _suite(tmp_path: Path, body: str) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "test_sample.py").write_text(body)
    return project


def _report_run(project: Path, *args: str, env_extra: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # the outer session's settings are not this run's (a report run sets these for its own tests)
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_TIMING_PASS", "INTEROP_REPRODUCERS"):
        env.pop(name, None)
    env.update(env_extra or {})
    return subprocess.Popen([sys.executable, "-m", "interop.reporting.run", *args, "test_sample.py"],
                            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)


def _runs(project: Path) -> list[Path]:
    return sorted((project / "results" / "runs").iterdir())


PASSING = "def test_one():\n    pass\n\ndef test_two():\n    pass\n"
FAILING = "import pytest\n\ndef test_one():\n    assert 0\n\n@pytest.mark.skip(reason='no')\ndef test_two():\n    pass\n"
SLOW = ("import time\nimport pytest\n\n@pytest.mark.parametrize('i', range(40))\ndef test_slow(i):\n"
        "    time.sleep(0.25)\n")


def test_a_complete_run_gets_its_directory_and_becomes_latest(tmp_path):
    project = _suite(tmp_path, PASSING)
    proc = _report_run(project)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    (run,) = _runs(project)
    assert sorted(p.name for p in run.iterdir()) == ["defects.html", "defects.json", "defects.md", "pytest.txt",
                                                     "records.jsonl", "report.json", "report.txt", "run.json",
                                                     "session.json", "support.html", "support.json", "support.md"]
    assert "pytest: 2 passed" in (run / "report.txt").read_text()
    meta = json.loads((run / "run.json").read_text())
    assert meta["complete"] is True and meta["backend"] == "cpu"
    assert (project / "results" / "latest").resolve() == run.resolve()
    assert "== Backends" in (run / "report.txt").read_text()
    assert not list(project.glob("results/**/.*partial"))


def test_a_run_where_everything_fails_or_skips_still_gets_its_report(tmp_path):
    # before: "benchmarks.jsonl: cannot read" and the previous run's report.json left in place
    project = _suite(tmp_path, PASSING)
    assert _report_run(project).wait(timeout=300) == 0
    (first,) = _runs(project)
    (project / "test_sample.py").write_text(FAILING)
    proc = _report_run(project)
    proc.communicate(timeout=300)
    assert proc.returncode == 1  # complete (results/latest follows it): the failure is in the report, and exit 1
    second = [r for r in _runs(project) if r != first][0]
    report = json.loads((second / "report.json").read_text())
    assert report["counts"]["failed"] == 1 and report["counts"]["skipped"] == 1
    assert (project / "results" / "latest").resolve() == second.resolve()
    assert json.loads((first / "report.json").read_text())["counts"]["passed"] == 2  # untouched


def test_an_interrupted_run_is_reported_incomplete_and_never_latest(tmp_path):
    # before: the previous run's reports stayed next to the new partial pytest.txt
    project = _suite(tmp_path, PASSING)
    assert _report_run(project).wait(timeout=300) == 0
    (first,) = _runs(project)
    (project / "test_sample.py").write_text(SLOW)
    proc = _report_run(project, start_new_session=True)
    deadline = time.monotonic() + 120  # until the tests run (a loaded machine takes longer to start)
    while time.monotonic() < deadline and not list(project.glob("results/runs/*/records.d/*/*.jsonl")):
        time.sleep(0.2)
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole process group
    out, err = proc.communicate(timeout=300)
    console = "".join(p.read_text(errors="replace")[-2000:] for p in project.glob("results/runs/*/pytest.txt"))
    assert proc.returncode == 3, (out, err, console)
    second = [r for r in _runs(project) if r != first][0]
    text = (second / "report.txt").read_text()
    assert "RUN INCOMPLETE" in text and "interrupted" in text
    assert json.loads((second / "run.json").read_text())["complete"] is False
    assert (project / "results" / "latest").resolve() == first.resolve()


def test_pytest_killed_from_outside_after_its_tests_is_an_incomplete_run(tmp_path):
    # before: pytest killed (SIGTERM) while it printed 23,000 failures after its session had ended
    # left a run called complete, its pytest.txt cut
    project = _suite(tmp_path, PASSING)
    (project / "conftest.py").write_text("import os, signal\n\n\ndef pytest_unconfigure(config):\n"
                                         "    os.kill(os.getpid(), signal.SIGTERM)\n")
    proc = _report_run(project)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, (out, err)
    (run,) = _runs(project)
    text = (run / "report.txt").read_text()
    assert "RUN INCOMPLETE" in text and "pytest was killed by SIGTERM" in text
    assert "the records are complete" in text
    meta = json.loads((run / "run.json").read_text())
    assert meta["complete"] is False and meta["pytest_exit"] == -signal.SIGTERM
    assert not (project / "results" / "latest").exists()


def test_ctrl_c_stops_the_run_even_when_it_was_started_with_sigint_ignored(tmp_path):
    # before: started from a process that ignores SIGINT (a pytest-xdist worker, a background job),
    # pytest inherited the ignoring: the forwarded Ctrl-C did nothing, the run ended "complete"
    project = _suite(tmp_path, SLOW)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # the outer session's settings are not this run's (a report run sets these for its own tests)
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_TIMING_PASS", "INTEROP_REPRODUCERS"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "interop.reporting.run", "test_sample.py"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(project.glob("results/runs/*/records.d/*/*.jsonl")):
        time.sleep(0.2)
    time.sleep(1.0)
    os.kill(proc.pid, signal.SIGINT)  # reporting.run handles it (its own handler) and passes it on
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, (out, err)
    (run,) = _runs(project)
    assert json.loads((run / "run.json").read_text())["interrupted"] is True
    assert "RUN INCOMPLETE" in (run / "report.txt").read_text()


def test_concurrent_runs_never_touch_each_others_files(tmp_path):
    # before: two runs deleted each other's timing lines and one report held the other's cases
    project = _suite(tmp_path, PASSING)
    procs = [_report_run(project) for _ in range(2)]
    for proc in procs:
        proc.communicate(timeout=300)
        assert proc.returncode == 0
    runs = _runs(project)
    assert len(runs) == 2
    for run in runs:
        assert "pytest: 2 passed" in (run / "report.txt").read_text()


def test_install_only_touches_no_result():
    # before: `nox -s report --install-only` truncated the reports and deleted benchmarks.jsonl
    import ast

    tree = ast.parse((ROOT / "noxfile.py").read_text())
    (report,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "report"]
    source = ast.get_source_segment((ROOT / "noxfile.py").read_text(), report)
    calls = [n for n in ast.walk(report) if isinstance(n, ast.Call)]
    touching = [ast.unparse(c) for c in calls if isinstance(c.func, ast.Attribute)
                and c.func.attr in ("open", "unlink", "mkdir", "write_text", "rmtree")]
    assert not touching, f"the report session touches results outside session.run: {touching}"
    assert "interop.reporting.run" in source


def test_ctrl_c_during_the_analysis_leaves_a_report_marked_incomplete_never_an_empty_one(tmp_path, monkeypatch):
    # before: an empty report.txt next to a stale report.json; then (until 2026-12-03) no report at
    # all. Now: a report marked incomplete naming the Ctrl-C (pytest's totals), no report.json of
    # the half analysis, the previous run stays latest
    from interop.reporting import run, run_analysis

    project = _suite(tmp_path, PASSING)
    results = project / "results"
    assert _report_run(project).wait(timeout=300) == 0
    (first,) = _runs(project)

    def interrupted(report):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_analysis, "format_report", interrupted)  # where the analysis looks it up
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    assert run.main(["test_sample.py"], results=results, cwd=project) == 3
    second = [r for r in _runs(project) if r != first][0]
    assert (second / "pytest.txt").exists()
    text = (second / "report.txt").read_text()
    assert "RUN INCOMPLETE" in text and "Ctrl-C during the analysis: the report was not finished" in text
    assert "2 passed" in text
    assert not (second / "report.json").exists()
    assert not list(second.glob(".*partial"))
    assert (results / "latest").resolve() == first.resolve()


def _recorded(run: Path) -> None:
    """The records of a complete run of one passing test (what the report reads: a run's console
    text is not read back)."""
    (run / "records.jsonl").write_text(json.dumps({"nodeid": "test_a.py::test_x", "outcome": "passed"}) + "\n")
    (run / "session.json").write_text(json.dumps({"complete": True, "ended": "ran to its end",
                                                  "pytest_counts": {"passed": 1}}))


def test_the_report_takes_asvs_ratio_of_the_same_commit(tmp_path):
    from interop.reporting.run_analysis import _analyse

    run = tmp_path / "run"
    run.mkdir()
    _recorded(run)
    stats = {"median1": 1e-5, "median2": 2e-5, "mean1": 1e-5, "mean2": 2e-5, "ratio": 2.0, "samples": 50,
             "samples1": 200, "samples2": 50}
    (run / "benchmarks.jsonl").write_text(json.dumps({"name": "ReLU_a", "forward": stats, "backward": None,
                                                      "aidge": "0.10.1"}) + "\n")
    commit = "89abcdef" + "0" * 32
    asv = tmp_path / "asv" / "machine"
    asv.mkdir(parents=True)
    (asv / f"{commit[:8]}-virtualenv-py3.11-aidge-core0.10.1.json").write_text(json.dumps({
        "commit_hash": commit, "env_name": "virtualenv-py3.11-aidge-core0.10.1", "date": 1,
        "results": {"operators.Forward.track_aidge_torch_ratio": [[12.5], [["'ReLU_a'"]]]}}))
    status, text, _ = _analyse(run, commit[:8], tmp_path / "asv")
    assert status == 0
    report = json.loads((run / "report.json").read_text())
    (slow,) = report["slowdowns_vs_torch"]
    assert (slow["name"], slow["ratio"], slow["figure"], slow["tester_ratio"]) == ("ReLU_a", 12.5, "asv", 2.0)
    assert "asv ratio, ModelTester's x2" in text
    # no asv results of that commit: ModelTester's median figure
    _analyse(run, "deadbeef", tmp_path / "asv")
    assert json.loads((run / "report.json").read_text())["slowdowns_vs_torch"] == []


# a suite whose test writes a contended ModelTester line (two xdist workers), and a stand-in for
# asv's harness (benchmarks/harness.py) with which the pass (interop.reporting.timing_pass) times
# it "alone" (the real pass: tests/unit/test_benchmarks.py)
TIMED = ("import json, os\n\ndef test_timed():\n"
         "    stats = {'median1': 1e-4, 'median2': 1.8e-3, 'mean1': 1e-4, 'mean2': 1.8e-3, 'ratio': 18.0,\n"
         "             'samples': 50, 'samples1': 50, 'samples2': 50}\n"
         "    line = {'name': 'LeNet_eval', 'forward': stats, 'backward': None, 'test_workers': 2,\n"
         "            'test': 'tests/test_models.py::test_model_forward[LeNet_eval]'}\n"
         "    with open(os.path.join(os.environ['INTEROP_RESULTS_DIR'], 'benchmarks.jsonl'), 'a') as f:\n"
         "        f.write(json.dumps(line) + '\\n')\n")
STAND_IN_HARNESS = ("import os, time\nassert 'PYTEST_XDIST_WORKER_COUNT' not in os.environ\n"
                    "RATIO_BUDGET_S = 0.4\n\nclass CaseSkipped(Exception):\n    pass\n\n"
                    "class PrecheckFailed(Exception):\n    pass\n\nclass Pair:\n    threads, cuda = 1, False\n\n"
                    "    def ratio_rounds(self, budget_s, clock=None):\n        return [(1e-4, 1.2e-3)] * 100\n\n"
                    "def pair(kind, name, phase):\n    time.sleep(SLEEP_S)\n    return Pair()\n")


def _stand_in_harness(project: Path, sleep_s: float = 0.0) -> None:
    (project / "benchmarks").mkdir()
    (project / "benchmarks" / "__init__.py").write_text("")
    (project / "benchmarks" / "harness.py").write_text(f"SLEEP_S = {sleep_s!r}\n" + STAND_IN_HARNESS)


def test_the_run_ranks_its_timing_pass_and_never_a_contended_figure(tmp_path, monkeypatch):
    project = _suite(tmp_path, TIMED)
    # no timing pass (off when asked): the contended figure is shown, not ranked
    out, err = _report_run(project, env_extra={"INTEROP_TIMING_PASS": "0"}).communicate(timeout=300)
    (run,) = _runs(project)
    report = json.loads((run / "report.json").read_text())
    assert report["slowdowns_vs_torch"] == [] and report["benchmarks"]["contended"][0]["ratio"] == 18.0
    assert "timing pass: off (INTEROP_TIMING_PASS=0)" in out
    # the pass runs without a checkout's benchmarks/harness.py too (the package's harness:
    # tests/unit/test_timing_pass_installed.py); here a stand-in, so that it takes no time
    _stand_in_harness(project)
    out, err = _report_run(project).communicate(timeout=300)
    run = _runs(project)[-1]
    report = json.loads((run / "report.json").read_text())
    (slow,) = report["slowdowns_vs_torch"]
    assert (slow["name"], slow["figure"], slow["ratio"], slow["tester_ratio"]) == ("LeNet_eval", "alone", 12.0, 18.0)
    assert "timing pass: " in out and "Speed, Aidge / torch (1 timed alone after the tests" in out, out


@pytest.mark.parametrize("sig, said", [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")])
def test_a_signal_during_the_timing_pass_stops_it_and_the_run_is_incomplete(tmp_path, sig, said):
    # SIGINT: the forwarded Ctrl-C ended the pass before the run saw it pressed, and the run was
    # called complete with "timing pass: failed (exit -2)" (seen by hand before this test)
    project = _suite(tmp_path, TIMED)
    _stand_in_harness(project, sleep_s=600.0)  # a pass that would run ten minutes: the run must not wait for it
    proc = _report_run(project)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("timing pass: the cases"):
            break
    assert seen and seen[-1].startswith("timing pass: the cases"), seen
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)  # the pass's 600 s would time this out
    out = "".join(seen) + out
    assert proc.returncode == 3, err
    assert f"timing pass: stopped ({said}): the run's in-test figures only" in out
    (run,) = _runs(project)
    assert not (run / "timings.jsonl").exists() and json.loads((run / "run.json").read_text())["complete"] is False
    report = json.loads((run / "report.json").read_text())
    assert report["slowdowns_vs_torch"] == [] and report["incomplete"][0].startswith(f"the report process got {said}")


def test_a_bad_timing_line_is_named_and_the_good_ones_still_ranked(tmp_path):
    from interop.reporting.run_analysis import _analyse

    run = tmp_path / "run"
    run.mkdir()
    _recorded(run)
    stats = {"median1": 1e-5, "median2": 2e-4, "mean1": 1e-5, "mean2": 2e-4, "ratio": 20.0, "samples": 50,
             "samples1": 50, "samples2": 50}
    (run / "benchmarks.jsonl").write_text(json.dumps({"name": "ReLU_a", "forward": stats, "backward": None,
                                                      "test_workers": 2}) + "\n")
    (run / "timings.jsonl").write_text(json.dumps({"name": "ReLU_a", "phase": "forward", "ratio": 12.0}) + "\n"
                                       + '{"name": "ReLU_b"\n' + json.dumps([1, 2]) + "\n")
    _analyse(run)
    report = json.loads((run / "report.json").read_text())
    assert [(s["name"], s["figure"], s["ratio"]) for s in report["slowdowns_vs_torch"]] == [("ReLU_a", "alone", 12.0)]
    timings = str(run / "timings.jsonl")
    assert any(p.startswith(f"{timings}:2: not valid JSON") for p in report["problems"]), report["problems"]
    assert f"{timings}:3: not a timing line (a JSON object with name and phase)" in report["problems"]


OPINFO_FAILING = (
    "import pytest\n"
    "from interop.errors import aidge_error_from\n\n"
    "@pytest.mark.parametrize('case', ['opinfo_unflatten_s1_8_0_4_2', 'opinfo_constant_pad_nd_s28_1x3_float64'])\n"
    "def test_opinfo(case):\n"
    "    n = 16 if 'unflatten' in case else 32\n"
    "    raise aidge_error_from(RuntimeError(f'Number of elements to copy is above implementation current '\n"
    "                                        f'capacity ({n}B > 8B)'), 'forward', node='Concat', operator='Concat')\n\n"
    "def test_opinfo_passes():\n    pass\n")


def test_untriaged_opinfo_failures_get_their_proposed_rows(tmp_path):
    """`nox -s opinfo` is such a run: its failures that no table row expects become a proposal
    for the table (one row per reason) in the run's triage/ folder, and the report says where."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_opinfo.py").write_text(OPINFO_FAILING)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # the outer session's settings are not this run's (a report run sets these for its own tests)
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_TIMING_PASS", "INTEROP_REPRODUCERS"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-m", "interop.reporting.run", "tests/test_opinfo.py"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr  # complete, with failures no row holds (nox -s opinfo takes that 1)
    (run,) = _runs(project)
    proposal = json.loads((run / "triage" / "proposal.json").read_text())
    (add,) = [c["after"] for c in proposal["changes"] if c["action"] == "add"]
    assert {k: add[k] for k in ("source", "operator", "phase", "category", "quote", "attribution", "dtypes",
                                "cases")} == {
        "source": "opinfo", "operator": "Concat", "phase": "forward", "category": "aidge_error",
        "quote": "Number of elements to copy is above implementation current capacity", "attribution": "aidge",
        "dtypes": ["float64"], "cases": ["constant_pad_nd:s*_1x3_float64"]}
    assert '+    "constant_pad_nd:s*_1x3_float64"' in (run / "triage" / "proposal.diff").read_text()
    # the table's unflatten row says that failure: nothing to change, said why (the test takes no case object)
    (left,) = proposal["left_out"]
    assert left["case"] == "opinfo_unflatten_s1_8_0_4_2" and "was not marked" in left["why"]
    report = json.loads((run / "report.json").read_text())
    assert report["triage"]["cases"] == 1 and report["triage"]["counts"]["add"] == 1
    text = (run / "report.txt").read_text()
    assert "changes proposed for 1 case(s) (1 add, 1 left_out)" in text and "python -m interop.triage update" in text
