"""Issue 44: every fault of a report run (``python -m interop.reporting.run``) ends in a readable
report marked incomplete with its cause, report.txt and run.json written, never a traceback or a
bare "no pytest output found"; pytest never outlives the report process; a full or read-only
results folder is one clear error naming the path, with no ``.partial`` file left behind.

Each fault is made to happen, not timed: a conftest kills or interrupts at a given hook, a test
says (a file) when it runs, RLIMIT_FSIZE makes every write fail."""
from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PASSING = "def test_one():\n    pass\n\ndef test_two():\n    pass\n"


def _project(tmp_path: Path, body: str = PASSING, conftest: str | None = None) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(body)
    if conftest is not None:
        (project / "conftest.py").write_text(conftest)
    return project


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), INTEROP_TIMING_PASS="0", INTEROP_REPRODUCERS="0")
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_RECORDS_DIR", "INTEROP_SHARD", "INTEROP_RECORDS_SESSION",
                 "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    env.update(extra)
    return env


def _start(project: Path, env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "interop.reporting.run", "test_sample.py"], cwd=project,
                            env=env or _env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _only_run(project: Path) -> Path:
    (run,) = sorted((project / "results" / "runs").iterdir())
    return run


def _incomplete(run: Path) -> tuple[str, dict]:
    text = (run / "report.txt").read_text()
    meta = json.loads((run / "run.json").read_text())
    assert "RUN INCOMPLETE" in text, text
    assert meta["complete"] is False and meta["ended"], meta
    assert not (run.parent.parent / "latest").exists()
    return text, meta


def test_a_malformed_shard_option_is_named_in_the_report(tmp_path):
    # before: exit 2 with only "no pytest output found"; the option's own error never shown. (The
    # variable, INTEROP_SHARD=banana, is refused before pytest starts: test_run_environment.py)
    project = _project(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "interop.reporting.run", "test_sample.py", "--shard=banana"],
                            cwd=project, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    text, meta = _incomplete(_only_run(project))
    assert "--shard='banana'" in text and "exit status 4 (usage error)" in text
    assert "--shard='banana'" in out  # the terminal shows it too
    assert "exit status 4" in meta["ended"] and meta["pytest_exit"] == 4


def test_pytest_killed_by_sigkill_before_any_result_gets_a_report(tmp_path):
    # before: "no pytest output found" (or the AttributeError of RunRecords), no cause named
    project = _project(tmp_path, conftest="import os, signal\n\n\ndef pytest_configure(config):\n"
                                          "    os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = _start(project)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    text, meta = _incomplete(_only_run(project))
    assert "pytest was killed by SIGKILL before it wrote any result" in text
    assert meta["pytest_exit"] == -signal.SIGKILL and "Traceback" not in err


def test_pytest_killed_by_sigkill_during_a_test_gets_a_report(tmp_path):
    project = _project(tmp_path, "import os, signal\n\ndef test_one():\n    pass\n\n"
                                 "def test_two():\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = _start(project)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, (out, err)
    text, meta = _incomplete(_only_run(project))
    assert "pytest was killed by SIGKILL" in text and "test_sample.py::test_two" in text
    assert meta["pytest_exit"] == -signal.SIGKILL


def test_ctrl_c_while_pytest_starts_is_an_interrupted_run_with_its_report(tmp_path):
    # before: exit 2 with only "no pytest output found". The Ctrl-C reaches the report process
    # while pytest configures (the conftest sends it): the report passes it on, pytest stops
    # before any result
    conftest = ("import os, signal, time\n\n\ndef pytest_configure(config):\n"
                "    os.kill(os.getppid(), signal.SIGINT)\n    time.sleep(60)\n")
    project = _project(tmp_path, conftest=conftest)
    proc = _start(project)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, (out, err)
    text, meta = _incomplete(_only_run(project))
    assert "interrupted (Ctrl-C) before pytest wrote any result" in text
    assert meta["interrupted"] is True


def test_ctrl_c_before_pytest_started_is_reported_and_pytest_is_never_started(tmp_path):
    from interop.reporting.run_analysis import _analyse
    from interop.reporting.run_processes import _run_pytest
    from interop.reporting.supervisor import Supervisor

    run = tmp_path / "results" / "runs" / "20260101T000000000000Z-nogit-1"
    run.mkdir(parents=True)
    supervisor = Supervisor()
    supervisor.stopped_by = "Ctrl-C"  # as its handler does
    code, interrupted = _run_pytest(["does_not_exist.py"], run, _env(), tmp_path, supervisor)
    assert (code, interrupted) == (None, True)
    assert "stopped before pytest started" in (run / "pytest.txt").read_text()
    status, text, report = _analyse(run, interrupted=True, pytest_exit=None)
    assert status == 3 and report is None
    assert "RUN INCOMPLETE" in text and "interrupted (Ctrl-C)" in text
    assert (run / "report.txt").read_text() == text


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper that never comes, in a container, is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG: Linux")
def test_pytest_and_its_children_never_outlive_a_killed_report_process(tmp_path):
    # before: after a SIGKILL of the report process, pytest ran on alone to its end (and its
    # workers with it). Now the kernel kills pytest (PR_SET_PDEATHSIG) and the run's watchdog
    # kills its process group (a child like an xdist worker or a case child) and writes the report
    started = tmp_path / "started"
    body = ("import os, subprocess, sys, time\n\ndef test_one():\n    pass\n\ndef test_long():\n"
            "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            f"    open({str(started)!r} + '.tmp', 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
            f"    os.replace({str(started)!r} + '.tmp', {str(started)!r})\n"
            "    time.sleep(120)\n")
    project = _project(tmp_path, body)
    proc = _start(project)
    try:
        while not started.exists():  # until the long test runs (no timing: it says so)
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        pytest_pid, child_pid = map(int, started.read_text().split())
        os.kill(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)  # the watchdog holds stderr until its report is written
    finally:
        if proc.poll() is None:
            proc.kill()
    for _ in range(200):  # SIGKILL is delivered by now; the exit itself may take a moment
        if not (_alive(pytest_pid) or _alive(child_pid)):
            break
        time.sleep(0.05)
    assert not _alive(pytest_pid), "pytest outlived the report process"
    assert not _alive(child_pid), "a child of pytest outlived the report process"
    text, meta = _incomplete(_only_run(project))
    assert "the report process died" in text and meta["salvaged_by"] == "watchdog"
    assert "test_sample.py::test_long" in text  # the test that was running: lost, named
    assert (_only_run(project) / "pytest.txt").exists()
    assert not list(project.glob("results/**/.*partial"))


def _no_writes():
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # every write to a file fails (EFBIG), as on a full disk
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def test_a_full_disk_is_one_clear_error_naming_the_file_and_leaves_no_partial_file(tmp_path):
    # before: raw tracebacks, .partial files left behind
    project = _project(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "interop.reporting.run", "test_sample.py"], cwd=project,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_no_writes)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    assert "Traceback" not in err, err
    run = _only_run(project)
    assert f"interop.reporting.run: cannot write {run}/" in err and "File too large" in err, err
    assert "has no report" in err
    assert not list(project.glob("results/**/.*partial")) and not list(project.glob("results/.*partial"))
    assert not (project / "results" / "latest").exists()


def test_a_read_only_results_folder_is_one_clear_error_naming_it(tmp_path, monkeypatch, capsys):
    from interop.reporting import run as run_module

    def read_only(results, commit):
        raise OSError(errno.EROFS, "Read-only file system", str(results / "runs"))

    monkeypatch.setattr(run_module, "new_run_dir", read_only)
    monkeypatch.setattr(run_module, "_commit", lambda cwd: "nogit")
    assert run_module.main(["test_sample.py"], results=tmp_path / "results", cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert f"cannot write {tmp_path / 'results' / 'runs'}: Read-only file system" in err
    assert "no run was started" in err


def test_a_full_disk_while_the_report_is_written_leaves_no_partial_file(tmp_path, monkeypatch, capsys):
    from interop.records import store
    from interop.reporting.run_analysis import _analyse
    from interop.reporting.run_folder import _cannot_write

    run = tmp_path / "results" / "runs" / "20260101T000000000000Z-nogit-1"
    run.mkdir(parents=True)
    _recorded(run)
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(fd, mode="r", *a, **k):  # os.fdopen is every module's: only the writes fail
        handle = real_fdopen(fd, mode, *a, **k)
        return Full(handle) if "w" in mode else handle

    monkeypatch.setattr(store.os, "fdopen", fdopen)
    with pytest.raises(OSError) as caught:
        _analyse(run)
    assert caught.value.errno == errno.ENOSPC and caught.value.filename.startswith(str(run))
    assert not list(run.glob(".*partial"))
    assert _cannot_write(caught.value, run).startswith(f"interop.reporting.run: cannot write {run}/")


@pytest.mark.parametrize("sig, said", [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM"),
                                       (signal.SIGHUP, "SIGHUP")])
def test_a_stop_signal_during_the_analysis_leaves_a_report_marked_incomplete(tmp_path, monkeypatch, sig, said):
    # before (and required by this test until 2026-12-03): a Ctrl-C during the analysis left no
    # report at all, only run.json saying why; SIGTERM and SIGHUP were not seen before the end.
    # Now each cuts the analysis short and the report says so (pytest's totals, the signal named)
    from interop.reporting import run as run_module
    from interop.reporting import run_analysis

    project = _project(tmp_path)
    real = run_analysis.format_report

    def signalled(report):  # the signal arrives while the report is being built
        os.kill(os.getpid(), sig)
        time.sleep(5)  # the handler runs before this ends
        return real(report)

    monkeypatch.setattr(run_analysis, "format_report", signalled)  # where the analysis looks it up
    for name, value in _env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("INTEROP_RESULTS_DIR", raising=False)
    assert run_module.main(["test_sample.py"], results=project / "results", cwd=project) == 3
    run = _only_run(project)
    text, meta = _incomplete(run)
    assert f"{said} during the analysis: the report was not finished" in text
    assert "2 passed" in text  # pytest's own totals are quoted
    assert meta["complete"] is False and meta["ended"].startswith(f"{said} during the analysis")
    assert not (run / "report.json").exists() and not list(run.glob(".*partial"))
    assert not (project / "results" / "latest").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs: POSIX")
def test_a_fifo_among_the_runs_files_is_named_never_a_hang(tmp_path):
    # before: benchmarks.jsonl or timings.jsonl as a FIFO (a test's doing) hung the report forever
    from interop.reporting.run_analysis import TIMINGS_FILE, _analyse
    from interop.reporting.run_processes import _timing_pass

    run = tmp_path / "results" / "runs" / "20260101T000000000000Z-nogit-1"
    run.mkdir(parents=True)
    _recorded(run)
    os.mkfifo(run / "benchmarks.jsonl")
    os.mkfifo(run / TIMINGS_FILE)
    assert _timing_pass(run, _env(), tmp_path, "cpu") == (None, False)
    status, text, report = _analyse(run)
    assert status == 0 and any("benchmarks.jsonl: a FIFO" in p for p in report["problems"])


def _recorded(run: Path) -> None:
    """The records of a complete run of one passing test (what the report reads)."""
    (run / "records.jsonl").write_text(json.dumps({"nodeid": "test_a.py::test_x", "outcome": "passed"}) + "\n")
    (run / "session.json").write_text(json.dumps({"complete": True, "ended": "ran to its end",
                                                  "pytest_counts": {"passed": 1}}))


def test_a_run_without_records_nor_console_output_gets_a_report(tmp_path):
    from interop.reporting.run_analysis import _analyse

    run = tmp_path / "results" / "runs" / "20260101T000000000000Z-nogit-1"
    run.mkdir(parents=True)
    status, text, report = _analyse(run, pytest_exit=None)
    assert status == 2 and report is None
    assert "RUN INCOMPLETE" in text and "pytest did not run" in text
    assert f"{run / 'records.jsonl'}: missing: no records were written" in text


@pytest.mark.parametrize("interrupted, status", [(False, 2), (True, 3)])
def test_a_run_with_console_output_but_no_records_is_reported_as_such(tmp_path, interrupted, status):
    # before (until 2026-12-07): its pytest.txt was parsed and reported as the run's results, without
    # the records' fields; the suite's own runs are now read from their records alone (interop.console
    # reads console text for analyze_results.py only)
    from interop.reporting.run_analysis import _analyse

    run = tmp_path / "results" / "runs" / "20260101T000000000000Z-nogit-1"
    run.mkdir(parents=True)
    (run / "pytest.txt").write_text("test_a.py::test_x PASSED [100%]\n1 passed in 0.01s\n")
    got, text, report = _analyse(run, pytest_exit=0, interrupted=interrupted)
    assert got == status and report is None
    assert "RUN INCOMPLETE" in text and f"{run / 'records.jsonl'}: missing: no records were written" in text
    assert "1 passed in 0.01s" in text  # pytest's own last lines are quoted, not read as the run's results
    assert not (run / "report.json").exists() and (run / "report.txt").read_text() == text
