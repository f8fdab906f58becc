"""Findings as data (issue 28): the report, the support matrix, the trend and the merge read
records; the wrong facts and run faults measured before this issue, each a test that failed
before it."""
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
ANALYZE = ROOT / "analyze_results.py"
#: a few real catalog cases: passes, an expected forward mismatch, expected backward failures
SUBSET = ["tests/test_operators.py", "-k", "ReLU_rank_2 or ReLU_rank_4 or Gather_attributes_axis_0 or BatchNorm2D_attr_train_inference"
          " or Clip_attributes_relu6"]


def _run_main(args, results: Path, cwd: Path = ROOT, env: dict | None = None) -> int:
    env = dict(os.environ, **(env or {}), PYTHONPATH=str(ROOT))
    env.pop("INTEROP_RESULTS_DIR", None)
    code = ("import sys; from pathlib import Path; from interop.reporting.run import main; "
            f"sys.exit(main({list(args)!r}, results=Path({str(results)!r})))")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600).returncode


def _only_run(results: Path, exclude=()) -> Path:
    (run,) = [r for r in (results / "runs").iterdir() if r not in exclude]
    return run


# ---------------------------------------------------------------------------------------
# wrong facts
# ---------------------------------------------------------------------------------------
def test_the_per_file_section_names_the_files_the_cases_came_from(tmp_path):
    # before: relu_mine.json was reported as Aidge's relu.json, and good_relu.json and
    # good_sigmoid.json were merged as "good.json 2/2" (the file guessed from id prefixes)
    import aidge_benchmark

    source = Path(aidge_benchmark.__file__).parent / "operations_config"
    configs = tmp_path / "configs"
    configs.mkdir()
    for name, original in (("relu_mine.json", "relu.json"), ("good_relu.json", "relu.json"),
                           ("good_sigmoid.json", "sigmoid.json")):
        (configs / name).write_text((source / original).read_text())
    results = tmp_path / "results"
    assert _run_main(["tests/test_aidge_configs.py", "--aidge-configs", str(configs)], results) == 0
    report = json.loads((_only_run(results) / "report.json").read_text())
    files = {row["file"]: (row["cases"], row["passed"]) for row in report["aidge_configs"]}
    assert files == {"relu_mine.json": (1, 1), "good_relu.json": (1, 1), "good_sigmoid.json": (1, 1)}


def test_two_outputs_run_together_are_not_one_complete_run(tmp_path):
    # before: a complete run followed by a killed one was reported as one complete run, exit 0
    complete = ("============================= test session starts ==============================\n"
                "collected 2 items\n\nt.py::test_a PASSED [ 50%]\nt.py::test_b PASSED [100%]\n\n"
                "============================== 2 passed in 0.10s ===============================\n")
    killed = ("============================= test session starts ==============================\n"
              "collected 3 items\n\nt.py::test_a PASSED [ 33%]\n")
    (tmp_path / "out.txt").write_text(complete + killed)
    proc = subprocess.run([sys.executable, str(ANALYZE), str(tmp_path / "out.txt")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 3, proc.stdout
    assert "RUN INCOMPLETE" in proc.stdout and "2 pytest sessions" in proc.stdout


def test_a_case_killed_from_outside_is_no_aidge_bug(tmp_path):
    # before: "crash (NEW)" under "Aidge bugs to report" for a SIGKILL from outside
    from interop.records.store import RunRecords
    from interop.reporting import build_report, format_report

    recs = [{"nodeid": "tests/test_operators.py::test_ReLU_interop[ReLU_a]", "case": "ReLU_a", "outcome": "failed",
             "source": "catalog JSON", "category": "killed", "decided": "raise", "signal": "SIGKILL",
             "attribution": None, "error": "crash: process killed by SIGKILL during forward",
             "reports": [{"when": "call", "status": "failed", "duration": 1.0}]},
            {"nodeid": "tests/test_operators.py::test_ReLU_interop[ReLU_b]", "case": "ReLU_b", "outcome": "failed",
             "source": "catalog JSON", "category": "crash", "decided": "raise", "signal": "SIGSEGV",
             "attribution": "aidge", "aidge_operator": "ReLU", "phase": "forward", "torch_op": "torch.relu",
             "error": "crash: process killed by SIGSEGV during forward",
             "reports": [{"when": "call", "status": "failed", "duration": 1.0}]}]
    run = RunRecords(recs, {"complete": True, "pytest_counts": {"failed": 2}}, [], "records.jsonl")
    report = build_report(run)
    (bug,) = report["aidge_bugs"]
    assert bug["operator"] == "torch.relu" and bug["bugs"][0]["category"] == "crash"
    assert [f["case"] for f in report["lost"]] == ["ReLU_a"]
    text = format_report(report)
    assert "Lost to the run (a process killed from outside" in text and "-> Aidge ReLU" in text


def test_asv_files_with_differently_typed_dates_are_no_traceback(tmp_path):
    # before: TypeError ('<' between str and int) after the tests, exit 1, no report
    from interop.reporting.asv_results import load_asv_ratios

    commit = "89abcdef" + "0" * 32
    machine = tmp_path / "asv" / "m"
    machine.mkdir(parents=True)
    for i, date in enumerate((1700000000000, "2026-12-01", None)):
        (machine / f"{commit[:8]}-env{i}.json").write_text(json.dumps({
            "commit_hash": commit, "env_name": f"env{i}", "date": date,
            "results": {"operators.Forward.track_aidge_torch_ratio": [[float(i + 2)], [["'ReLU_a'"]]]}}))
    ratios = load_asv_ratios(tmp_path / "asv", commit[:8])
    assert ratios.env == "env0" and ratios.get("ReLU_a", "forward") == 2.0  # the one real timestamp wins


@pytest.mark.parametrize("stats, why", [
    ({"mean1": 1e-3, "mean2": 2e-3, "ratio": -50.0, "samples": 5, "median1": -1e-3, "median2": 5e-2},
     "is impossible: -"),
    ({"mean1": float("nan"), "mean2": float("nan"), "ratio": float("nan"), "samples": 3}, "'forward.mean1' is impossible"),
    ({"mean1": 1e-3, "mean2": 2e-3, "ratio": 2.0, "samples": 3, "median2": float("inf")},
     "'forward.median2' is impossible"),
    ({"mean1": 1e-3, "mean2": 2e-3, "ratio": 2.0, "samples": 2.5}, "'forward.samples' is not a count"),
], ids=["negative-ratio", "nan", "inf-median", "fractional-samples"])
def test_impossible_benchmark_figures_are_listed_never_ranked(stats, why):
    # before: x-50 (torch -1.000 ms ...) and NaN medians were ranked as slowdowns
    from interop.reporting import build_report, parse_benchmarks

    good = {"mean1": 1e-3, "mean2": 2e-2, "ratio": 20.0, "samples": 9, "median1": 1e-3, "median2": 2e-2}
    text = "\n".join([json.dumps({"name": "Bad_a", "forward": stats}), json.dumps({"name": "Good_a", "forward": good})])
    bench = parse_benchmarks(text, source="b.jsonl")
    assert [r["name"] for r in bench.records] == ["Good_a"]
    (problem,) = bench.problems
    assert problem.startswith("b.jsonl:1: Bad_a: ") and why in problem
    report = build_report(None, bench)
    assert [s["name"] for s in report["slowdowns_vs_torch"]] == ["Good_a"]


# ---------------------------------------------------------------------------------------
# run faults
# ---------------------------------------------------------------------------------------
SLOW = ("import time\nimport pytest\n\n@pytest.mark.parametrize('i', range(60))\ndef test_slow(i):\n"
        "    time.sleep(0.25)\n")


def test_sigterm_stops_the_pytest_child_and_leaves_an_incomplete_report(tmp_path):
    # before: exit 143, no report, no run.json, and the pytest child ran on to the end
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(SLOW)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("INTEROP_RESULTS_DIR", None)
    proc = subprocess.Popen([sys.executable, "-m", "interop.reporting.run", "-n", "2", "test_sample.py"], cwd=project,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runs = project / "results" / "runs"
    # the pids of the processes that run the tests (the workers'): in their start lines and records
    # (the controller's own start line, written as xdist forwards the test's start, has none)
    def worker_pids():
        return {json.loads(line).get("pid") for part in runs.glob("*/records.d/*/*.jsonl")
                for line in part.read_text().splitlines() if line.strip()} - {None}

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not worker_pids():
        time.sleep(0.2)
    time.sleep(1.5)
    pids = worker_pids()
    assert pids, "no test started within 120 s"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 3, (out, err)
    (run,) = runs.iterdir()
    text = (run / "report.txt").read_text()
    assert text.startswith("Aidge <-> PyTorch") and "RUN INCOMPLETE" in text and "SIGTERM" in text
    meta = json.loads((run / "run.json").read_text())
    assert meta["complete"] is False and meta["stopped_by"] == "SIGTERM"
    assert not (project / "results" / "latest").exists()
    for pid in pids:  # nothing of the run outlives it
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# ---------------------------------------------------------------------------------------
# the matrix, the trend, the merge
# ---------------------------------------------------------------------------------------
def test_report_counts_support_matrix_trend_and_merged_shards(tmp_path):
    results = tmp_path / "results"
    assert _run_main(SUBSET, results) == 0
    first = _only_run(results)
    for name in ("records.jsonl", "session.json", "support.json", "support.md", "support.html"):
        assert (first / name).exists(), name
    report = json.loads((first / "report.json").read_text())
    session = json.loads((first / "session.json").read_text())
    pytest_counts = {k: v for k, v in session["pytest_counts"].items() if k != "deselected"}
    assert report["records_counts"] == pytest_counts and not report["incomplete"]
    support = json.loads((first / "support.json").read_text())
    cells = {(c["operator"], c["phase"]): c for c in support["cells"]}
    relu_fwd = cells[("torch.relu", "forward")]
    assert relu_fwd["passed"] == relu_fwd["total"] > 0 and relu_fwd["dtype"] == "float32"
    clamp_bwd = cells[("torch.clamp", "backward")]
    assert clamp_bwd["passed"] == 0 and clamp_bwd["categories"] == {"backward_not_implemented": clamp_bwd["total"]}
    assert clamp_bwd["aidge_operators"] == ["Cast"]  # torch.clamp -> Aidge Cast: backward not implemented
    assert "torch.clamp" in (first / "support.md").read_text()
    assert "<table" in (first / "support.html").read_text() and "http" not in (first / "support.html").read_text()
    (line,) = [json.loads(x) for x in (results / "history.jsonl").read_text().splitlines()]
    assert line["backend"] == "cpu" and line["operators"]["torch.relu"]["forward"][0] > 0

    # a second run compares with the first: an operator newly failing (a fake earlier line says it passed)
    previous = dict(line, run="older", commit="0123abcd", operators_passing=line["operators_passing"] + 1,
                    operators=dict(line["operators"], **{"torch.clamp": {"forward": [3, 3], "backward": [2, 2],
                                                                         "categories": {}}}))
    with (results / "history.jsonl").open("a") as f:
        f.write(json.dumps(previous) + "\n")
    assert _run_main(SUBSET, results) == 0
    second = _only_run(results, exclude={first})
    trend = json.loads((second / "report.json").read_text())["trend"]["cpu"]
    assert trend["since"] == "older" and trend["newly_failing"] == ["torch.clamp"]
    assert trend["headline"].endswith(", -1 since 0123abcd")
    assert "NEWLY FAILING: torch.clamp" in (second / "report.txt").read_text()
    assert len((results / "history.jsonl").read_text().splitlines()) == 3

    # two shards merged give the unsharded matrix
    shard_dirs = []
    for k in (1, 2):
        assert _run_main(SUBSET, results, env={"INTEROP_SHARD": f"{k}/2"}) == 0
        shard_dirs.append(max((results / "runs").iterdir(), key=lambda p: p.name))
        assert (shard_dirs[-1] / "records.jsonl").read_text().strip(), f"shard {k}/2 is empty: no merge shown"
    assert _run_main(["--merge", *map(str, shard_dirs)], results) == 0
    merged = max((results / "runs").iterdir(), key=lambda p: p.name)
    assert "-merged-" in merged.name
    strip = [{k: v for k, v in c.items()} for c in json.loads((merged / "support.json").read_text())["cells"]]
    assert strip == support["cells"]
    merged_report = json.loads((merged / "report.json").read_text())
    assert merged_report["counts"] == report["counts"] and not merged_report["incomplete"]


# ---------------------------------------------------------------------------------------
# progress and the terminal summary (issue 32, first part)
# ---------------------------------------------------------------------------------------
def test_progress_counts_whole_lines_of_the_parts_against_the_collected_tests(tmp_path):
    from interop.records.progress import Progress
    from interop.records.store import PartWriter

    now = [100.0]
    progress = Progress(tmp_path, clock=lambda: now[0])
    assert progress.line().startswith("collecting")
    a, b = PartWriter(tmp_path, "gw0", "s"), PartWriter(tmp_path, "gw1", "s")
    for w in (a, b):
        w.write({"event": "collected", "count": 10})
    for i, outcome in enumerate(["passed", "failed", "xfailed", "passed"]):
        (a if i % 2 else b).write({"event": "record", "nodeid": f"t::{i}", "outcome": outcome})
    with a.path.open("a") as f:
        f.write('{"event": "record", "nodeid": "t::half')  # a line being written: not counted yet
    now[0] = 102.0
    progress.poll()
    assert progress.line() == "4 / 10 tests (40%), 2.0/s, ETA 3 s at the current rate, 2 s in; 1 failed, 1 xfailed so far"
    # the ETA follows the recent rate: a slow tail is not estimated at the first minutes' rate
    now[0] = 300.0
    progress.line()
    b.write({"event": "record", "nodeid": "t::5", "outcome": "passed"})
    now[0] = 400.0
    progress.poll()
    assert progress.line() == "5 / 10 tests (50%), 0.0/s, ETA 8 min 20 s at the current rate, 5 min 00 s in; 1 failed, 1 xfailed so far"
    now[0] = 700.0
    assert progress.line().startswith("5 / 10 tests (50%), 0.0/s, no test ended in the last 5 min 00 s, 10 min 00 s in")


def test_the_terminal_summary_is_short_and_new_findings_come_first():
    from interop.records.store import RunRecords
    from interop.reporting import build_report
    from interop.reporting.report_text import format_summary

    recs = [{"nodeid": f"tests/test_operators.py::test_Op{i}_interop[Op{i}_a]", "case": f"Op{i}_a", "outcome": "failed",
             "source": "catalog JSON", "category": "aidge_error", "decided": "raise", "phase": "forward",
             "aidge_operator": f"Op{i}", "torch_op": f"torch.op{i}", "attribution": "aidge", "error": f"boom {i}",
             "reports": [{"when": "call", "status": "failed", "duration": 0.1}]} for i in range(40)]
    recs += [{"nodeid": f"tests/test_operators.py::test_K_interop[K_{i}]", "case": f"K_{i}", "outcome": "xfailed",
              "source": "catalog JSON", "category": "backward_not_implemented", "decided": "table", "phase": "backward",
              "aidge_operator": "K", "torch_op": "torch.k", "attribution": "aidge", "error": "no backward",
              "reports": [{"when": "call", "status": "xfailed", "duration": 0.1}]} for i in range(300)]
    run = RunRecords(recs, {"complete": True, "pytest_counts": {"failed": 40, "xfailed": 300}}, [], "records.jsonl")
    text = format_summary(build_report(run), full="/r/report.txt")
    lines = text.splitlines()
    assert len(lines) <= 60 and lines[-1] == "full report: /r/report.txt"
    assert "Aidge bugs: 41 operator(s), 40 new failure(s) in 40 group(s), 300 known (xfail)" in text
    assert "  NEW torch.op0 -> Aidge Op0: aidge_error [forward] boom 0 (1 case(s))" in text
    assert "... 32 more new group(s) in the full report" in text
