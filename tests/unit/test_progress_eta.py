"""The progress line's ETA weighs the tests left by the last run's durations (issue 49: at the recent
rate alone it was 0.29-8.35x off over a full report run, the suite's test mix going from
milliseconds-long operator tests to minute-long architectures). No timing is asserted: a clock is
given, and the figures follow from the records written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from interop.records.progress import Progress, file_means, file_of, previous_durations, weighted_eta
from interop.records.store import PartWriter


def _previous(tmp_path: Path, rows: list[tuple[str, float]]) -> Path:
    run = tmp_path / "results" / "runs" / "20261203T000000Z-abc-1"
    run.mkdir(parents=True)
    (run / "records.jsonl").write_text("".join(json.dumps({"nodeid": n, "duration_s": d, "outcome": "passed"}) + "\n"
                                               for n, d in rows))
    (tmp_path / "results" / "latest").symlink_to(run.relative_to(tmp_path / "results"))
    return run


def test_the_file_of_a_node_id():
    assert file_of("tests/test_models.py::test_model[ResNet18_eval]") == "tests/test_models.py"
    assert file_of("tests/unit/test_x.py") == "tests/unit/test_x.py"


def test_the_last_runs_durations_skip_what_is_not_a_duration(tmp_path):
    run = _previous(tmp_path, [("a.py::t1", 1.0), ("a.py::t2", 3.0), ("b.py::t1", 60.0)])
    with (run / "records.jsonl").open("a") as f:
        f.write('{"nodeid": "b.py::t2", "duration_s": "slow"}\n[1]\nnot json\n{"nodeid": "c.py::t", "duration_s": true}\n')
    assert previous_durations(run) == {"a.py::t1": 1.0, "a.py::t2": 3.0, "b.py::t1": 60.0}
    assert file_means(previous_durations(run)) == {"a.py": 2.0, "b.py": 60.0}
    assert previous_durations(tmp_path / "nowhere") == {} and previous_durations(None) == {}


def test_the_weighted_eta_is_the_work_left_over_the_speed():
    means = {"ops.py": 0.1, "arch.py": 30.0}
    # 100 operator tests (10 s of the last run) and 4 architectures (100 s) left, at 2 s of that work a second
    assert weighted_eta({"ops.py": 1000, "arch.py": 4}, {"ops.py": 900}, {"ops.py": (10.0, 100), "arch.py": (100.0, 4)},
                        means, 2.0) == pytest.approx(55.0)
    # a narrower selection (-k): 2 of the 4 known architectures left weigh half their known work
    assert weighted_eta({"arch.py": 2}, {}, {"arch.py": (100.0, 4)}, means, 1.0) == pytest.approx(50.0)
    # tests beyond the known ones weigh their file's mean; a file the last run lacks, the mean of the means
    assert weighted_eta({"arch.py": 5, "new.py": 2}, {}, {"arch.py": (100.0, 4)}, means, 1.0) == pytest.approx(
        100.0 + 30.0 + 2 * 15.05)
    assert weighted_eta({"ops.py": 10}, {}, {}, {}, 1.0) is None
    assert weighted_eta({"ops.py": 10}, {}, {}, means, 0.0) is None


def _session(tmp_path: Path, files: dict[str, int] | None) -> tuple[Progress, PartWriter, list[float]]:
    run_dir = tmp_path / "results" / "runs" / "20261204T000000Z-abc-2"
    run_dir.mkdir(parents=True)
    now = [0.0]
    progress = Progress(run_dir, clock=lambda: now[0])
    writer = PartWriter(run_dir, "gw0", "s")
    writer.write({"event": "collected", "count": sum((files or {"ops.py": 100, "arch.py": 4}).values()),
                  **({"files": files} if files is not None else {})})
    return progress, writer, now


def test_the_line_weighs_a_slow_tail_by_the_last_run_and_says_so(tmp_path):
    _previous(tmp_path, [(f"ops.py::t[{i}]", 0.1) for i in range(100)]
              + [(f"arch.py::t[{i}]", (10.0, 20.0, 40.0, 50.0)[i]) for i in range(4)])
    progress, writer, now = _session(tmp_path, {"ops.py": 100, "arch.py": 4})
    assert len(progress.durations) == 104 and progress.means == {"ops.py": pytest.approx(0.1), "arch.py": 30.0}
    now[0] = 5.0
    progress.poll()
    # the first line after collection: no speed of this run yet, the current rate
    assert progress.line() == "0 / 104 tests (0%), 0.0/s, no test ended in the last 5 s, 5 s in"
    for i in range(100):
        writer.write({"event": "record", "nodeid": f"ops.py::t[{i}]", "outcome": "passed"})
    now[0] = 15.0
    progress.poll()
    # 100 tests in 10 s is 10 tests/s: 4 left would say 0 s; their weight is 120 s of work at 1 s/s
    line = progress.line()
    assert line == "100 / 104 tests (96%), 10.0/s, ETA 2 min 00 s by the last run's durations, 15 s in", line
    assert progress.eta() == (pytest.approx(120.0), "by the last run's durations")
    # the 50-s architecture ends: 60 s of work in 40 s; the three left weigh their own 70 s
    writer.write({"event": "record", "nodeid": "arch.py::t[3]", "outcome": "failed"})
    now[0] = 45.0
    progress.poll()
    assert "ETA 47 s by the last run's durations" in progress.line()
    assert progress.eta()[0] == pytest.approx(70.0 / 1.5)


def test_without_the_files_or_a_last_run_the_line_says_it_uses_the_current_rate(tmp_path):
    progress, writer, now = _session(tmp_path, None)  # a plugin that does not say its files
    _previous(tmp_path, [("ops.py::t", 0.1)])
    for i in range(52):
        writer.write({"event": "record", "nodeid": f"ops.py::t[{i}]", "outcome": "passed"})
    now[0] = 26.0
    progress.poll()
    assert "52 / 104 tests (50%), 2.0/s, ETA 26 s at the current rate, 26 s in" in progress.line()

    bare = tmp_path / "bare"
    bare.mkdir()
    progress = Progress(bare, clock=lambda: now[0], previous=None)
    assert progress.durations == {}
    PartWriter(bare, "gw0", "s").write({"event": "collected", "count": 4, "files": {"ops.py": 4}})
    PartWriter(bare, "gw1", "s").write({"event": "record", "nodeid": "ops.py::t[0]", "outcome": "passed"})
    now[0] = 30.0
    progress.poll()
    assert progress.line() == "1 / 4 tests (25%), 0.2/s, ETA 12 s at the current rate, 4 s in"


def test_the_largest_collection_gives_the_files(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    progress = Progress(run_dir, previous=None)
    PartWriter(run_dir, "gw0", "s").write({"event": "collected", "count": 3, "files": {"a.py": 3}})
    PartWriter(run_dir, "gw1", "s").write({"event": "collected", "count": 5, "files": {"a.py": 3, "b.py": 2}})
    PartWriter(run_dir, "gw2", "s").write({"event": "collected", "count": 6, "files": "not a mapping"})
    progress.poll()
    assert progress.collected == 6 and progress.files == {"a.py": 3, "b.py": 2}


INNER = '''import glob, json, os

def test_reads_its_collection():
    parts = glob.glob(os.path.join(os.environ["INTEROP_RECORDS_DIR"], "records.d", "*", "*.jsonl"))
    events = [json.loads(line) for p in parts for line in open(p) if '"collected"' in line]
    assert events and all(e["files"] == {"test_sample.py": 2, "test_other.py": 1} for e in events), events

def test_two():
    pass
'''


def test_the_plugin_says_each_files_test_count_when_it_has_collected(tmp_path):
    """The records plugin's ``collected`` line carries the tests per file (what the ETA weighs): the
    run's own test reads it from the part files while the run goes on."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "test_sample.py").write_text(INNER)
    (tmp_path / "test_other.py").write_text("def test_one():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTEROP_", "PYTEST_"))}
    env.update(PYTHONPATH=str(root), INTEROP_TIMING_PASS="0", INTEROP_REPRODUCERS="0")
    done = subprocess.run([sys.executable, "-m", "interop.reporting.run", "-p", "no:cacheprovider", "test_sample.py",
                           "test_other.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = (tmp_path / "results" / "runs").iterdir()
    assert json.loads((run / "report.json").read_text())["counts"]["passed"] == 3


def test_running_tests_count_their_elapsed_time_up_to_their_weight(tmp_path):
    """Two long tests on both workers: their work counts while they run (before, the speed fell while
    they ran and the ETA climbed to 3x the real end), each up to its duration in the last run."""
    _previous(tmp_path, [(f"ops.py::t[{i}]", 0.1) for i in range(100)]
              + [(f"arch.py::t[{i}]", (10.0, 20.0, 40.0, 50.0)[i]) for i in range(4)])
    progress, writer, now = _session(tmp_path, {"ops.py": 100, "arch.py": 4})
    now[0] = 5.0
    progress.poll()
    progress.line()
    for i in range(100):
        writer.write({"event": "start", "nodeid": f"ops.py::t[{i}]"})
        writer.write({"event": "record", "nodeid": f"ops.py::t[{i}]", "outcome": "passed"})
    for i in (2, 3):
        writer.write({"event": "start", "nodeid": f"arch.py::t[{i}]"})
    now[0] = 15.0
    progress.poll()
    # 10 s of work done in 10 s; 120 s left, the running two have done nothing yet
    assert "ETA 2 min 00 s by the last run's durations" in progress.line()
    now[0] = 35.0
    progress.poll()
    # 20 s into each: 50 s of work in 30 s; 120 - 40 left: 48 s (without the credit: 6 min)
    assert "ETA 48 s by the last run's durations" in progress.line()
    now[0] = 75.0
    progress.poll()
    # 60 s into each, credited 40 and 50 (their weights): 100 s of work in 70 s; 30 s left
    assert "ETA 21 s by the last run's durations" in progress.line()
    assert progress.eta() == (pytest.approx(30.0 / (100.0 / 70.0)), "by the last run's durations")
    writer.write({"event": "record", "nodeid": "arch.py::t[3]", "outcome": "passed"})
    now[0] = 80.0
    progress.poll()
    progress.line()
    assert "arch.py::t[3]" not in progress._running and "arch.py::t[2]" in progress._running


def test_the_fixed_cost_per_test_the_records_leave_out_is_added_to_each_weight(tmp_path):
    from interop.records.progress import previous_run

    run = _previous(tmp_path, [])
    rows = [("a.py::t1", 1.0, "gw0", "10:00:02"), ("a.py::t2", 1.0, "gw0", "10:00:05"),
            ("b.py::t3", 2.0, "gw1", "10:00:03")]
    (run / "records.jsonl").write_text("".join(json.dumps({"nodeid": n, "duration_s": d, "worker": w,
                                                           "time": f"2026-12-04T{t}+00:00"}) + "\n"
                                               for n, d, w, t in rows))
    # gw0 was busy 4 s (10:00:01 to 10:00:05) for 2 s of tests, gw1 2 s for 2 s: 2 s left out over 3 tests
    durations, overhead = previous_run(run)
    assert durations == {"a.py::t1": 1.0, "a.py::t2": 1.0, "b.py::t3": 2.0} and overhead == pytest.approx(2 / 3)
    progress = Progress(tmp_path / "results" / "runs" / "now", previous=run)
    assert progress.durations["b.py::t3"] == pytest.approx(2 + 2 / 3)
    assert previous_run(None) == ({}, 0.0)


def test_a_replayed_run_reads_as_its_part_files_did(tmp_path):
    """tools/progress_eta.py --replay rebuilds a finished run's start/record lines from its
    records.jsonl (start = time - duration_s) and feeds them through Progress.take on a simulated
    clock: the lines are those a live poll of the same part lines at the same moments says."""
    import datetime
    import importlib.util

    spec = importlib.util.spec_from_file_location("progress_eta", Path(__file__).parents[2] / "tools" / "progress_eta.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    prev = _previous(tmp_path, [("ops.py::t[0]", 1.0), ("ops.py::t[1]", 1.0), ("arch.py::t", 20.0)])
    t0 = datetime.datetime(2026, 12, 4, 7, 31, 45, 158016, tzinfo=datetime.timezone.utc)
    run = tmp_path / "replayed" / "20261204T073145158016Z-abc-1"
    run.mkdir(parents=True)
    rows = [("ops.py::t[0]", 2.0, 10.0), ("arch.py::t", 25.0, 40.0), ("ops.py::t[1]", 1.5, 50.0)]  # (id, duration, end)
    (run / "records.jsonl").write_text("".join(json.dumps(
        {"event": "record", "nodeid": n, "duration_s": d, "outcome": "passed",
         "time": (t0 + datetime.timedelta(seconds=end)).isoformat()}) + "\n" for n, d, end in rows))
    start, events = bench.timeline(run)
    assert start == t0.timestamp()
    assert [(round(t - start, 3), e["event"], e.get("nodeid")) for t, _, e in events] == [
        (8.0, "collected", None), (8.0, "start", "ops.py::t[0]"), (10.0, "record", "ops.py::t[0]"),
        (15.0, "start", "arch.py::t"), (40.0, "record", "arch.py::t"), (48.5, "start", "ops.py::t[1]"),
        (50.0, "record", "ops.py::t[1]")]
    assert events[0][2]["files"] == {"ops.py": 2, "arch.py": 1} and events[0][2]["count"] == 3
    # the same lines written to a part file and polled at the same clock: the same progress lines
    live_dir = tmp_path / "live"
    live_dir.mkdir()
    now = [0.0]
    live = Progress(live_dir, clock=lambda: now[0], previous=prev)
    writer = PartWriter(live_dir, "gw0", "s")
    clock = [start]
    replayed = Progress(run, clock=lambda: clock[0], previous=prev)
    i = 0
    for tick in (5.0, 12.0, 30.0, 45.0):
        now[0], clock[0] = tick, start + tick
        while i < len(events) and events[i][0] <= clock[0]:
            writer.write(events[i][2])
            replayed.take(events[i][2])
            i += 1
        live.poll()
        assert replayed.line() == live.line()
        assert replayed.eta() == live.eta()
    assert "2 / 3 tests" in live.line() and "by the last run's durations" in live.line()
