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


def test_a_choice_variable_is_read_in_any_case_and_names_its_choices():
    from interop.env import read

    assert read("INTEROP_BACKEND", {}) == "cpu"
    assert read("INTEROP_BACKEND", {"INTEROP_BACKEND": " CUDA "}) == "cuda"
    with pytest.raises(ValueError, match=r"^environment variable INTEROP_BACKEND='c': expected one of cpu, cuda, "
                                         r"export_cpp$"):
        read("INTEROP_BACKEND", {"INTEROP_BACKEND": "c"})


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
    from interop.reporting.run_prune import runs_size_warning

    results = tmp_path / "results"
    _fake_run(results, "20261201T000000000000Z-abc-1", complete=True, size=3000)
    assert runs_size_warning(results, bound=10_000) is None
    _fake_run(results, "20261202T000000000000Z-abc-2", complete=True, size=9000)
    said = runs_size_warning(results, bound=10_000)
    assert said and "warning" in said and str(results / "runs") in said and "--prune" in said


# ---------------------------------------------------------------------------------------
# every INTEROP_* variable: one declaration (interop.env.VARIABLES), checked before anything runs
# ---------------------------------------------------------------------------------------
#: a value each declared variable refuses ("{file}": a regular file, "{missing}": a path to nothing)
BAD_VALUES = {
    "INTEROP_BACKEND": "banana", "INTEROP_EXPORTER": "onnxruntime", "INTEROP_TORCH_DEVICE": "gpu",
    "INTEROP_AIDGE_CONFIGS": "{missing}", "INTEROP_SHARD": "4/3", "INTEROP_RECORDS_DIR": "{file}",
    "INTEROP_RESULTS_DIR": "{file}", "INTEROP_RECORDS_SESSION": "two words", "INTEROP_OPINFO_SHARD": "0/2",
    "INTEROP_OPINFO_SAMPLES": "many", "INTEROP_OPINFO_DTYPES": "bfloat16", "INTEROP_MODULEINFO_SAMPLES": "0",
    "INTEROP_SEED": "abc", "INTEROP_CASE_TIMEOUT": "nan", "INTEROP_CASE_MEMORY": "3",
    "INTEROP_ISOLATE": "ture", "INTEROP_FORWARD_ONLY_CASES": "maybe", "INTEROP_AIDGE_CASE_TIMEOUT": "-5",
    "INTEROP_AIDGE_NEGATIVE_TIMEOUT": "inf", "INTEROP_AIDGE_FULL_SIZE": "2", "INTEROP_AIDGE_ELEMENT_BUDGET": "1.5",
    "INTEROP_AIDGE_RELEASE": "banana", "INTEROP_TIMING_PASS": "banana", "INTEROP_REPRODUCERS": "maybe",
    "INTEROP_REPRO_MAX_MB": "0", "INTEROP_EXPORT_DFORMAT": "nchw", "INTEROP_EXPORT_CACHE": "{file}",
    "INTEROP_OPENMP_POLICY": "kepp", "INTEROP_BENCH_CASES": ",", "INTEROP_ONNX_GROUPS": "node,nodes",
}
#: paths whose content their reader checks where it is used, one line naming them (not here: a unit-test
#: session needs none of them): test_failure_table_errors (the table, the configuration folder) and
#: test_records_shard (the durations)
CHECKED_WHERE_READ = {"INTEROP_CONFIG_DIR", "INTEROP_EXPECTED_FAILURES", "INTEROP_SHARD_DURATIONS"}


def _read_in_source() -> set[str]:
    import re

    names = set()
    for path in [*(ROOT / "interop").rglob("*.py"), ROOT / "tests" / "conftest.py"]:
        names |= set(re.findall(r"INTEROP_[A-Z0-9_]*[A-Z0-9]", path.read_text(encoding="utf-8")))
    return names


def test_every_variable_the_package_names_is_declared_once():
    from interop.env import VARIABLES

    assert _read_in_source() <= set(VARIABLES), sorted(_read_in_source() - set(VARIABLES))
    assert set(VARIABLES) == set(BAD_VALUES) | CHECKED_WHERE_READ
    for variable in VARIABLES.values():
        assert variable.meaning and callable(variable.parse)


def _bad(name: str, tmp_path: Path) -> str:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder\n")
    return BAD_VALUES[name].format(file=a_file, missing=tmp_path / "nowhere")


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_a_bad_value_of_any_variable_stops_plain_pytest_before_anything_runs(tmp_path, name):
    # before: INTEROP_CASE_TIMEOUT=nan broke every module's collection with a traceback, INTEROP_SEED=abc or
    # INTEROP_CASE_MEMORY=3 failed every case, INTEROP_ISOLATE=ture ran the cases, and the conftest had made
    # its staging folder under results/ first
    value = _bad(name, tmp_path)
    project = tmp_path / "project"
    tests = project / "tests"
    tests.mkdir(parents=True)
    (tests / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    ran = project / "ran"
    (tests / "test_tiny.py").write_text(f"def test_one():\n    open({str(ran)!r}, 'w').close()\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/test_tiny.py"],
                          cwd=project, env=_env(**{name: value}), capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out  # pytest's usage error
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    errors = [line for line in out.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("ERROR: ") and f"{name}={value!r}" in errors[0], out
    assert not ran.exists()  # no case ran
    assert sorted(p.name for p in project.iterdir()) == ["tests"]  # nothing written (no results/)


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_a_bad_value_of_any_variable_stops_a_findings_run_before_pytest(tmp_path, name):
    from interop.reporting.run import check_environment

    value = _bad(name, tmp_path)
    assert check_environment([], {name: value}) == [check_environment([], {name: value})[0]]
    assert f"environment variable {name}={value!r}: " in check_environment([], {name: value})[0]


def test_a_findings_run_with_a_bad_seed_is_one_line_exit_2_nothing_written(tmp_path):
    proc, results = _report_run(tmp_path, INTEROP_SEED="abc", INTEROP_CASE_MEMORY="3")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and "INTEROP_SEED='abc'" in lines[0] and "INTEROP_CASE_MEMORY='3'" in lines[1]
    assert not results.exists()


def test_an_option_on_the_command_line_decides_in_place_of_its_variable(tmp_path):
    from interop.env import check

    assert check(["--shard=1/2"], {"INTEROP_SHARD": "4/3"}) == []
    assert check(["--torch-device", "cpu"], {"INTEROP_TORCH_DEVICE": "gpu"}) == []
    assert check([], {"INTEROP_SHARD": "4/3"}) == ["environment variable INTEROP_SHARD='4/3': expected K/N with "
                                                   "1 <= K <= N (e.g. 2/4)"]
