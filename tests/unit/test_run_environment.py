"""The environment of a findings run (``python -m interop.reporting.run``) and of a plain pytest
session: a value that decides the run and is no value is one line naming it, before pytest starts,
nothing written (``INTEROP_TIMING_PASS=banana`` used to let the tests run and end in a ValueError
traceback without report.txt); a results folder that cannot be written is one line naming it (it
used to be pytest's INTERNALERROR traceback)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in list(env):
        if name.startswith(("INTEROP_", "PYTEST_")):
            del env[name]
    env.update(extra)
    return env


def _report_run(tmp_path: Path, **extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    results = tmp_path / "results"
    tests = tmp_path / "test_tiny.py"
    tests.write_text("def test_one():\n    assert True\n")
    code = ("import sys; from pathlib import Path; from interop.reporting.run import main; "
            f"sys.exit(main([{str(tests)!r}, '-q', '-p', 'no:cacheprovider'], results=Path({str(results)!r}), "
            f"cwd=Path({str(tmp_path)!r})))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(**extra), capture_output=True,
                          text=True, timeout=300)
    return proc, results


@pytest.mark.parametrize("name, value", [("INTEROP_TIMING_PASS", "banana"), ("INTEROP_REPRODUCERS", "maybe"),
                                         ("INTEROP_BACKEND", "banana"), ("INTEROP_EXPORTER", "onnxruntime")])
def test_a_run_deciding_value_that_is_no_value_is_one_line_before_pytest_starts(tmp_path, name, value):
    proc, results = _report_run(tmp_path, **{name: value})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{name}={value!r}" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "interop.reporting.run: pytest" not in proc.stdout  # pytest never started
    assert not results.exists()  # nothing written


def test_every_bad_value_is_named_at_once(tmp_path):
    proc, _ = _report_run(tmp_path, INTEROP_TIMING_PASS="banana", INTEROP_BACKEND="gpu")
    assert proc.returncode == 2
    assert "INTEROP_TIMING_PASS='banana'" in proc.stderr and "INTEROP_BACKEND='gpu'" in proc.stderr


def test_check_environment_reads_every_spelling_and_leaves_options_to_pytest():
    from interop.reporting.run import check_environment

    assert check_environment([], {"INTEROP_TIMING_PASS": "OFF", "INTEROP_REPRODUCERS": " yes ",
                                  "INTEROP_BACKEND": "CUDA", "INTEROP_EXPORTER": ""}) == []
    # --backend on the command line: pytest checks it, the variable decides nothing
    assert check_environment(["--backend=cpu"], {"INTEROP_BACKEND": "banana"}) == []
    assert check_environment(["--backend", "cpu"], {"INTEROP_BACKEND": "banana"}) == []
    assert check_environment([], {"INTEROP_BACKEND": "banana"}) == [
        "environment variable INTEROP_BACKEND='banana': expected one of cpu, cuda, export_cpp"]


def test_env_choice():
    from interop.env import env_choice

    assert env_choice("X", ("a", "b"), "a", {}) == "a"
    assert env_choice("X", ("a", "b"), "a", {"X": " B "}) == "b"
    with pytest.raises(ValueError, match=r"^environment variable X='c': expected one of a, b$"):
        env_choice("X", ("a", "b"), "a", {"X": "c"})


# ---------------------------------------------------------------------------------------
# a plain pytest session whose results folder cannot be written
# ---------------------------------------------------------------------------------------
def _unwritable(path: Path) -> Path:
    """``path`` made a folder nobody may write (chmod 0o500); where the process can write it all
    the same (root), a regular file instead, which nobody can make a folder in."""
    path.mkdir()
    path.chmod(0o500)
    if os.access(path, os.W_OK):
        path.chmod(0o700)
        path.rmdir()
        path.write_text("not a folder\n")
    return path


def _plain_session(project: Path, **extra: str) -> subprocess.CompletedProcess:
    tests = project / "tests"
    tests.mkdir(parents=True)
    # the suite's own conftest: it makes the session's staging folder under <project>/results
    (tests / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tests / "test_tiny.py").write_text("def test_one():\n    assert True\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/test_tiny.py"],
                          cwd=project, env=_env(**extra), capture_output=True, text=True, timeout=300)


def _one_line_naming(proc: subprocess.CompletedProcess, folder: Path) -> None:
    assert proc.returncode != 0, (proc.stdout, proc.stderr)
    out = proc.stdout + proc.stderr
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    errors = [line for line in out.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and str(folder) in errors[0], out


def test_a_read_only_results_folder_is_one_line_naming_it(tmp_path):
    # before: INTERNALERROR> ... NotADirectoryError / PermissionError: '<project>/results/.sessions'
    folder = _unwritable(tmp_path / "results")
    proc = _plain_session(tmp_path)
    _one_line_naming(proc, folder)
    assert "cannot write the results folder" in proc.stderr


def test_a_read_only_results_dir_variable_is_one_line_naming_it(tmp_path):
    folder = _unwritable(tmp_path / "elsewhere")
    proc = _plain_session(tmp_path / "project", INTEROP_RESULTS_DIR=str(folder))
    _one_line_naming(proc, folder)


# ---------------------------------------------------------------------------------------
# results/runs bounded: --prune N, and a warning line above RUNS_WARN_BYTES
# ---------------------------------------------------------------------------------------
def _fake_run(results: Path, name: str, complete: bool | None, size: int = 10) -> Path:
    run = results / "runs" / name
    run.mkdir(parents=True)
    (run / "records.jsonl").write_bytes(b"x" * size)
    if complete is not None:
        (run / "run.json").write_text(json.dumps({"run": name, "complete": complete}))
    return run


def test_prune_keeps_the_last_complete_runs_latest_and_the_historys_last(tmp_path):
    import json as _json

    from interop.reporting.run import main

    results = tmp_path / "results"
    names = [f"2026120{i}T000000000000Z-abc-{i}" for i in range(1, 8)]
    for i, name in enumerate(names):
        _fake_run(results, name, complete=i != 5)  # the 6th incomplete
    running = _fake_run(results, "20261209T000000000000Z-abc-9", complete=None)  # no run.json: running
    (results / "latest").symlink_to(Path("runs") / names[0])
    (results / "history.jsonl").write_text(
        "".join(_json.dumps({"run": run, "backend": backend, "shard": None, "operators": {},
                             "operators_passing": 0, "operators_total": 0}) + "\n"
                for run, backend in ((names[1], "cpu"), (names[2], "cuda"), (names[3], "cpu"))))
    assert main(["--prune", "2"], results=results, cwd=tmp_path) == 0
    left = sorted(p.name for p in (results / "runs").iterdir())
    # latest (1st), cuda's last (3rd), cpu's last (4th), the last two complete (5th, 7th), the running one
    assert left == [names[0], names[2], names[3], names[4], names[6], running.name]
    assert (results / "latest").resolve().name == names[0]


def test_prune_needs_a_count(tmp_path, capsys):
    from interop.reporting.run import main

    assert main(["--prune", "many"], results=tmp_path / "results", cwd=tmp_path) == 2
    assert "--prune many" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_a_runs_folder_above_its_bound_is_a_warning_naming_its_size(tmp_path):
    from interop.reporting.run import runs_size_warning

    results = tmp_path / "results"
    _fake_run(results, "20261201T000000000000Z-abc-1", complete=True, size=3000)
    assert runs_size_warning(results, bound=10_000) is None
    _fake_run(results, "20261202T000000000000Z-abc-2", complete=True, size=9000)
    said = runs_size_warning(results, bound=10_000)
    assert said and "warning" in said and str(results / "runs") in said and "--prune" in said
