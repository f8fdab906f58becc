"""The report's "Backends" section: one column per Aidge backend, from the latest complete
run of each (interop.reporting.backends, issue 18)."""
from __future__ import annotations

import json
from pathlib import Path

from interop.reporting.backends import backend_matrix, backend_of, format_backend_matrix, latest_runs, load_runs, main
from interop.reporting.pytest_output import parse_pytest_output

OPS = "tests/test_operators.py::test_operator"
MODELS = "tests/test_models.py::test_model"


def _pytest_text(lines: list[str], totals: str) -> str:
    # the lines `pytest -v -n 2` prints: "[gw0] [ 50%] PASSED <nodeid>"
    lines = [f"[gw0] [ 50%] {line.rsplit(' ', 1)[1]} {line.rsplit(' ', 1)[0]} " for line in lines]  # "nodeid OUTCOME"
    return "\n".join(["============================= test session starts ==============================", *lines,
                      f"======================== {totals} in 1.00s ========================", ""])


CPU = _pytest_text([f"{OPS}[ReLU_rank_1] PASSED", f"{OPS}[ReLU_rank_2] PASSED",
                    f"{OPS}[Clip_min_max] XFAIL", f"{MODELS}[LeNet_eval] PASSED",
                    "tests/test_opinfo.py::test_opinfo[opinfo_abs_s0_20x20] PASSED"],
                   "4 passed, 1 xfailed")
EXPORT = _pytest_text([f"{OPS}[ReLU_rank_1] PASSED", f"{OPS}[ReLU_rank_2] XFAIL",
                       f"{MODELS}[LeNet_eval] PASSED", f"{MODELS}[LeNet_train] SKIPPED"],
                      "2 passed, 1 skipped, 1 xfailed")


def _run(results: Path, name: str, text: str, *, complete: bool = True, args=("-n", "2"), backend=None) -> Path:
    run_dir = results / "runs" / name
    run_dir.mkdir(parents=True)
    (run_dir / "pytest.txt").write_text(text)
    meta = {"run": name, "pytest_args": list(args), "complete": complete}
    if backend:
        meta["backend"] = backend
    (run_dir / "run.json").write_text(json.dumps(meta))
    return run_dir


def test_backend_of_reads_the_option_then_the_environment():
    assert backend_of(["-n", "2", "--backend=export_cpp"], {}) == "export_cpp"
    assert backend_of(["--backend", "cuda", "tests"], {"INTEROP_BACKEND": "export_cpp"}) == "cuda"
    assert backend_of(["tests"], {"INTEROP_BACKEND": "export_cpp"}) == "export_cpp"
    assert backend_of([], {}) == "cpu"


def test_latest_complete_run_per_backend(tmp_path):
    _run(tmp_path, "20261201T01-a-1", CPU)
    newest_cpu = _run(tmp_path, "20261201T02-a-2", CPU)
    _run(tmp_path, "20261201T03-a-3", CPU, complete=False)  # incomplete: never a column
    export = _run(tmp_path, "20261201T04-a-4", EXPORT, args=("--backend=export_cpp",))
    (tmp_path / "runs" / "20261201T05-a-5").mkdir()  # still running: no run.json yet
    assert latest_runs(tmp_path) == {"cpu": newest_cpu, "export_cpp": export}
    assert latest_runs(tmp_path, exclude={"cpu"}) == {"export_cpp": export}


def test_the_matrix_counts_the_operator_and_model_suites_per_backend(tmp_path):
    runs = {"export_cpp": ("e", parse_pytest_output(EXPORT)), "cpu": ("c", parse_pytest_output(CPU))}
    matrix = backend_matrix(runs)
    assert list(matrix["runs"]) == ["cpu", "export_cpp"]  # column order: cpu, cuda, export_cpp
    assert matrix["runs"]["cpu"]["cases"] == 4  # the OpInfo case is not an operator-suite case
    assert matrix["rows"]["ReLU"] == {"cpu": {"passed": 2}, "export_cpp": {"passed": 1, "xfailed": 1}}
    assert matrix["rows"]["Clip"] == {"cpu": {"xfailed": 1}}
    text = "\n".join(format_backend_matrix(matrix))
    assert "no complete run of: cuda" in text
    assert "ReLU" in text and "2/2" in text and "1/2 1 xf" in text and "1/2 1 skip" in text


def test_the_command_prints_the_latest_runs_and_says_when_there_is_none(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    assert "no complete run" in capsys.readouterr().err
    _run(tmp_path, "20261201T01-a-1", CPU)
    _run(tmp_path, "20261201T02-a-2", EXPORT, backend="export_cpp")
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== Backends") and "export_cpp" in out and "LeNet" in out


def test_load_runs_parses_each_runs_output(tmp_path):
    run_dir = _run(tmp_path, "20261201T01-a-1", CPU)
    (name, run), = load_runs({"cpu": run_dir}).values()
    assert name == run_dir.name and sum(1 for r in run if r["outcome"] == "passed") == 4
