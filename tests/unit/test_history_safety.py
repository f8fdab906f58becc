"""``results/history.jsonl`` (issue 44). Before: a run's line was appended before its report and
run.json were written (a SIGKILL in between left a line naming a run with no report, and the next
run's trend compared against it); bad lines were dropped without a word (their problems were added
after the report had copied its list); one line of unexpected types crashed every later run; a
directory in its place was a traceback, a FIFO a hang. Now each bad line is named (file:line) and
costs only itself, the file itself must be a regular file inside results/, and a run's line is
appended once its report and run.json are in place."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _record(n: int, outcome: str = "passed") -> dict:
    return {"schema": 1, "event": "record", "nodeid": f"tests/test_operators.py::test_op[ReLU_{n}]",
            "case": f"ReLU_{n}", "kind": "operator", "operator": "ReLU", "torch_op": "torch.relu",
            "phases": ["forward"], "backend": "cpu", "outcome": outcome, "time": "2026-01-01T00:00:00",
            "reports": [{"when": "call", "status": outcome, "duration": 0.0}]}


def _run(results: Path, name: str = "20260101T000000Z-abcdef12-1") -> Path:
    run = results / "runs" / name
    run.mkdir(parents=True)
    (run / "records.jsonl").write_text("".join(json.dumps(_record(n)) + "\n" for n in range(2)))
    counts = {"passed": 2, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
    (run / "session.json").write_text(json.dumps({
        "complete": True, "ended": "ran to its end", "pytest_counts": counts, "shard": None, "backend": "cpu",
        "versions": {"torch": "2.13.0", "aidge_core": "0.10.1"}, "finished": "2026-01-01T00:01:00"}))
    return run


def _line(run: str, passing: int = 1, **extra) -> dict:
    return {"run": run, "commit": run[:8], "backend": "cpu", "aidge": "0.10.1", "torch": "2.13.0", "shard": None,
            "cases": 2, "operators_total": 1, "operators_passing": passing, "passing": ["torch.relu"],
            "operators": {"torch.relu": {"forward": [2, 2], "backward": [0, 0], "categories": {}}}, **extra}


def test_bad_lines_are_named_and_cost_only_themselves(tmp_path):
    from interop.reporting.run_analysis import _analyse

    results = tmp_path / "results"
    run = _run(results)
    history = results / "history.jsonl"
    lines = [json.dumps(_line("good0000")), "not json at all", json.dumps([1, 2]), json.dumps(_line("good1111")),
             json.dumps(_line("badtypes", passing="abc")),  # before: int('abc') crashed every later run
             json.dumps(_line("badop", operators={"torch.relu": "passes"}))]
    history.write_text("\n".join(lines) + "\n")
    before = history.read_text()
    _analyse(run, results=results)
    report = json.loads((run / "report.json").read_text())
    problems = report["problems"]
    assert f"{history}:2: not valid JSON (Expecting value at column 1)" in problems, problems
    assert f"{history}:3: not a history line (a JSON object), got list: skipped" in problems
    assert f"{history}:5: key 'operators_passing': a count (a non-negative integer), got str: skipped" in problems
    assert f"{history}:6: key 'operators.torch.relu': an object, got str: skipped" in problems
    assert report["trend"]["cpu"]["since"] == "good1111"  # the good lines still count
    assert history.read_text() == before  # the analysis appends nothing: its caller does, after run.json


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_directory_or_a_fifo_in_place_of_the_history_is_named(tmp_path, kind):
    results = tmp_path / "results"
    run = _run(results)
    history = results / "history.jsonl"
    history.mkdir() if kind == "directory" else os.mkfifo(history)
    code = ("from pathlib import Path; from interop.reporting.run_analysis import _analyse; "
            f"_analyse(Path({str(run)!r}), results=Path({str(results)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=120)  # before: a hang (fifo), a traceback
    assert proc.returncode == 0, proc.stderr[-2000:]
    what = "a directory" if kind == "directory" else "a FIFO (named pipe)"
    problems = json.loads((run / "report.json").read_text())["problems"]
    assert f"{history}: {what}, not a regular file: not read" in problems, problems

    from interop.reporting.run import _append_history

    assert _append_history(results, [{"run": "x", "backend": "cpu"}]) == (
        f"interop.reporting.run: this run was not added to the history: {history}: {what}, not a regular file")


#: one operator case that passes: the run has a support matrix, hence a history line
CASE_SUITE = ("import pytest\nimport torch\nfrom interop.cases.case import Case\n\n"
              "CASE = Case(id='ReLU_a', op_class=torch.nn.ReLU, operator='ReLU')\n\n"
              "@pytest.mark.parametrize('case', [CASE], ids=['ReLU_a'])\ndef test_op(case):\n    pass\n")


class _Killed(BaseException):
    """Stands for a SIGKILL: nothing after it runs."""


def _project(tmp_path: Path, monkeypatch) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(CASE_SUITE)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("INTEROP_RESULTS_DIR", raising=False)
    return project


def _kill_at_the_report(analysis_module, monkeypatch):
    """The run is killed as it writes report.json (as a SIGKILL would stop it there: the analysis,
    :mod:`interop.reporting.run_analysis`, writes it); returns the real writer."""
    real_write = analysis_module.write_atomically

    def killed_at_the_report(path, text, *args, **kwargs):
        if Path(path).name == "report.json":
            raise _Killed
        return real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(analysis_module, "write_atomically", killed_at_the_report)
    return real_write


def test_a_run_killed_before_its_report_is_in_place_adds_no_history_line(tmp_path, monkeypatch):
    from interop.reporting import run as run_module
    from interop.reporting import run_analysis

    project = _project(tmp_path, monkeypatch)
    results = project / "results"
    real_write = _kill_at_the_report(run_analysis, monkeypatch)
    with pytest.raises(_Killed):
        run_module.main(["test_sample.py"], results=results, cwd=project)
    assert not (results / "history.jsonl").exists()  # before: a line naming the run that has no report

    # a run that is not killed: its line comes once report.json and run.json are there
    monkeypatch.setattr(run_analysis, "write_atomically", real_write)
    seen = []
    real_append = run_module.append_history

    def append(path, entry, *args, **kwargs):
        run_dir = results / "runs" / entry["run"]
        seen.append(((run_dir / "report.json").exists(), (run_dir / "run.json").exists()))
        return real_append(path, entry, *args, **kwargs)

    monkeypatch.setattr(run_module, "append_history", append)
    assert run_module.main(["test_sample.py"], results=results, cwd=project) == 0
    assert seen == [(True, True)]  # one line (cpu), appended with the report and run.json in place
    (line,) = [json.loads(x) for x in (results / "history.jsonl").read_text().splitlines()]
    assert line["operators"]["torch.relu"]["forward"] == [1, 1]


def test_a_merge_killed_before_its_report_is_in_place_adds_no_history_line(tmp_path, monkeypatch):
    from interop.reporting import run as run_module
    from interop.reporting import run_analysis

    results = tmp_path / "results"
    source = _run(tmp_path / "elsewhere")
    _kill_at_the_report(run_analysis, monkeypatch)
    with pytest.raises(_Killed):
        run_module.main(["--merge", str(source)], results=results, cwd=tmp_path)
    assert not (results / "history.jsonl").exists()  # before: the merged run's line, and no report
