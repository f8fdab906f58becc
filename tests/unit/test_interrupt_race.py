"""A findings run (``python -m interop.reporting.run``) stopped by Ctrl-C (or SIGTERM) at any point is
reported as stopped, never as a clean run: its exit status, ``run.json``, ``report.txt``,
``results/latest`` and ``results/history.jsonl`` tell one story.

Before: a stop signal that came after pytest had ended (its ``pytest.txt`` just in place) and before
the analysis, or after the analysis and before the run was committed, was only recorded by the
supervisor's handler (no handler raises outside the analysis): the run was written complete,
became ``results/latest`` and got its history line, and the process exited 3 (issue 59: "a Ctrl-C the
moment pytest.txt appears once gave exit 3 yet became latest with a history line").

The signal is sent by the run's own process at a chosen point (a wrapper around one of its steps),
so each point is hit every time, not 1 try in 2."""
from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASSING = "def test_one():\n    pass\n\ndef test_two():\n    pass\n"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(PASSING)
    return project


def _isolate(monkeypatch) -> list:
    """The run's environment (no timing pass, no reproducers, no outer session's folders); returns the
    list of the history appends the run makes (a tiny project's run has no history lines to append:
    the call, made only for a complete run, is what is counted)."""
    from interop.reporting import run as run_module

    appended: list = []
    real = run_module._append_history

    def append(results, lines):
        appended.append(list(lines))
        return real(results, lines)
    monkeypatch.setattr(run_module, "_append_history", append)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("INTEROP_TIMING_PASS", "0")
    monkeypatch.setenv("INTEROP_REPRODUCERS", "0")
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_RECORDS_DIR", "INTEROP_SHARD", "INTEROP_RECORDS_SESSION",
                 "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
        monkeypatch.delenv(name, raising=False)
    return appended


def _story(project: Path, status: int, appended: list) -> tuple[bool, dict, str]:
    """(whether the run is complete, its run.json, its report.txt), after checking that the exit
    status, run.json, the report, results/latest and the history agree."""
    results = project / "results"
    (run,) = sorted((results / "runs").iterdir())
    meta = json.loads((run / "run.json").read_text())
    text = (run / "report.txt").read_text()
    latest = (results / "latest").resolve() if (results / "latest").exists() else None
    if meta["complete"]:
        assert status == 0 and not meta.get("interrupted") and not meta.get("stopped_by"), (status, meta)
        assert "RUN INCOMPLETE" not in text
        assert latest == run.resolve() and appended
    else:
        assert status == 3, (status, meta)
        assert "RUN INCOMPLETE" in text, text
        assert latest is None and not appended, (latest, appended)
    assert not list(run.glob(".*partial"))
    return meta["complete"], meta, text


def _signal_self(sig=signal.SIGINT) -> None:
    os.kill(os.getpid(), sig)


def _after(monkeypatch, module, name: str, sig=signal.SIGINT) -> None:
    real = getattr(module, name)

    def wrapped(*args, **kwargs):
        out = real(*args, **kwargs)
        _signal_self(sig)
        return out
    monkeypatch.setattr(module, name, wrapped)


@pytest.mark.parametrize("sig, said", [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")])
def test_a_stop_signal_the_moment_pytest_txt_appears_is_a_stopped_run(tmp_path, monkeypatch, sig, said):
    # the race: the signal right after pytest ended and its pytest.txt was put in place
    from interop.reporting import run as run_module

    project = _project(tmp_path)
    appended = _isolate(monkeypatch)
    _after(monkeypatch, run_module, "_run_pytest", sig)
    status = run_module.main(["test_sample.py"], results=project / "results", cwd=project)
    complete, meta, text = _story(project, status, appended)
    assert not complete  # before: complete, latest and a history line, yet exit 3
    assert said in meta["ended"] and said in text


def test_a_ctrl_c_between_the_timing_pass_and_the_analysis_is_a_stopped_run(tmp_path, monkeypatch):
    from interop.reporting import run as run_module

    project = _project(tmp_path)
    appended = _isolate(monkeypatch)
    _after(monkeypatch, run_module, "_timing_pass")
    status = run_module.main(["test_sample.py"], results=project / "results", cwd=project)
    complete, meta, text = _story(project, status, appended)
    assert not complete and meta["interrupted"] is True and "Ctrl-C" in meta["ended"]


def test_a_ctrl_c_after_the_analysis_and_before_the_run_is_committed_is_a_stopped_run(tmp_path, monkeypatch):
    # the analysis ended (report.txt says complete), then the signal, before run.json
    from interop.reporting import run as run_module
    from interop.reporting import supervisor as supervisor_module

    project = _project(tmp_path)
    appended = _isolate(monkeypatch)
    real = supervisor_module.Supervisor.interruptible

    @contextlib.contextmanager
    def then_signal(self):
        with real(self):
            yield self
        _signal_self()  # out of the analysis: the handler only records it
    monkeypatch.setattr(supervisor_module.Supervisor, "interruptible", then_signal)
    status = run_module.main(["test_sample.py"], results=project / "results", cwd=project)
    complete, meta, text = _story(project, status, appended)
    assert not complete and "Ctrl-C" in meta["ended"]
    assert not (project / "results" / "runs" / meta["run"] / "report.json").exists()  # it read as complete


@pytest.mark.parametrize("point", ["run.json", "history", "latest"])
def test_a_ctrl_c_once_the_run_is_committed_changes_nothing_it_said(tmp_path, monkeypatch, point):
    # from run.json on the run is complete: a later signal leaves the story as it is (before: exit 3
    # for a run that had become latest with its history line)
    from interop.reporting import run as run_module

    project = _project(tmp_path)
    appended = _isolate(monkeypatch)
    if point == "run.json":
        real = run_module.write_atomically

        def writes(path, *args, **kwargs):
            out = real(path, *args, **kwargs)
            if Path(path).name == "run.json":
                _signal_self()
            return out
        monkeypatch.setattr(run_module, "write_atomically", writes)
    else:
        _after(monkeypatch, run_module, "_append_history" if point == "history" else "point_latest")
    status = run_module.main(["test_sample.py"], results=project / "results", cwd=project)
    complete, meta, text = _story(project, status, appended)
    assert complete


def test_a_run_without_a_signal_is_complete(tmp_path, monkeypatch):
    from interop.reporting import run as run_module

    project = _project(tmp_path)
    appended = _isolate(monkeypatch)
    status = run_module.main(["test_sample.py"], results=project / "results", cwd=project)
    assert _story(project, status, appended)[0]
