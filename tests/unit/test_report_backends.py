"""The report's "Backends" section: one column per Aidge backend, from the latest complete
run of each (interop.reporting.backends, issue 18)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from interop.reading import UnreadableInput
from interop.reporting.backends import backend_matrix, backend_of, format_backend_matrix, latest_runs, load_runs, main

OPS = "tests/test_operators.py::test_operator"
MODELS = "tests/test_models.py::test_model"


def _records(lines: list[str]) -> list[dict]:
    # "nodeid OUTCOME" -> a run's record (nodeid, outcome: what the matrix counts)
    return [{"nodeid": line.rsplit(" ", 1)[0], "outcome": line.rsplit(" ", 1)[1].lower()} for line in lines]


CPU = _records([f"{OPS}[ReLU_rank_1] PASSED", f"{OPS}[ReLU_rank_2] PASSED",
                f"{OPS}[Clip_min_max] XFAILED", f"{MODELS}[LeNet_eval] PASSED",
                "tests/test_opinfo.py::test_opinfo[opinfo_abs_s0_20x20] PASSED"])
EXPORT = _records([f"{OPS}[ReLU_rank_1] PASSED", f"{OPS}[ReLU_rank_2] XFAILED",
                   f"{MODELS}[LeNet_eval] PASSED", f"{MODELS}[LeNet_train] SKIPPED"])


def _run(results: Path, name: str, records: list[dict], *, complete: bool = True, args=("-n", "2"),
         backend=None) -> Path:
    run_dir = results / "runs" / name
    run_dir.mkdir(parents=True)
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
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
    runs = {"export_cpp": ("e", EXPORT), "cpu": ("c", CPU)}
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


def test_load_runs_reads_each_runs_records(tmp_path):
    run_dir = _run(tmp_path, "20261201T01-a-1", CPU)
    (name, run), = load_runs({"cpu": run_dir}).values()
    assert name == run_dir.name and sum(1 for r in run if r["outcome"] == "passed") == 4


def test_a_run_without_records_is_no_column_and_never_read_from_its_console_text(tmp_path, capsys):
    # before (until 2026-12-07): a complete run that left only its pytest.txt (an older suite's) was
    # a column, its console text read back; the suite's runs are now read from their records alone
    console_only = tmp_path / "runs" / "20261201T02-a-2"
    console_only.mkdir(parents=True)
    (console_only / "pytest.txt").write_text("tests/test_operators.py::test_operator[ReLU_rank_1] PASSED [100%]\n"
                                             "1 passed in 0.01s\n")
    (console_only / "run.json").write_text(json.dumps({"run": console_only.name, "complete": True}))
    assert latest_runs(tmp_path) == {}
    assert main([str(tmp_path)]) == 1 and "no complete run" in capsys.readouterr().err
    older = _run(tmp_path, "20261201T01-a-1", CPU)
    assert latest_runs(tmp_path) == {"cpu": older}
    with pytest.raises(UnreadableInput, match=f"{console_only / 'records.jsonl'}: missing: the run wrote no records"):
        load_runs({"cpu": console_only})
