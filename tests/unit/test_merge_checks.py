"""``--merge`` checks what it merges (issue 44). Before: shard 1/2 alone merged into a run called
complete; shards of other commits, Aidge or torch versions or routes to ONNX merged silently;
``"complete": "no"`` counted as complete; a field of the wrong type was a traceback; a FIFO in
place of records.jsonl hung; a merged run without records was an AttributeError. Now runs that do
not belong together are refused by name before anything is written (exit 2), unless
``--merge-mismatched`` merges them as a run marked mixed; the merged run names what it merged."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interop.reporting.run import main

ROOT = Path(__file__).resolve().parents[2]
COUNTS = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}


def _record(n: int, **extra) -> dict:
    return {"schema": 1, "event": "record", "nodeid": f"tests/test_operators.py::test_op[ReLU_{n}]",
            "case": f"ReLU_{n}", "kind": "operator", "operator": "ReLU", "torch_op": "torch.relu",
            "phases": ["forward"], "backend": "cpu", "exporter": "auto", "outcome": "passed",
            "time": "2026-01-01T00:00:00", "reports": [{"when": "call", "status": "passed", "duration": 0.0}], **extra}


def _source(tmp_path: Path, name: str, tests: list[int], *, commit: str = "abcdef12", shard: str | None = None,
            records: list[dict] | None = None, **session) -> Path:
    run = tmp_path / "sources" / name / f"20260101T000000000000Z-{commit}-{abs(hash(name)) % 10000}"
    run.mkdir(parents=True)
    recs = [_record(n) for n in tests] if records is None else records
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (run / "session.json").write_text(json.dumps({
        "schema": 1, "complete": True, "ended": "ran to its end", "pytest_counts": dict(COUNTS, passed=len(recs)),
        "shard": shard, "backend": "cpu", "versions": {"torch": "2.13.0+cpu", "aidge_core": "0.10.1"},
        "finished": "2026-01-01T00:01:00", **session}))
    return run


def _merge(tmp_path: Path, capsys, *dirs, flag: bool = False) -> tuple[int, str, str]:
    args = ["--merge", *map(str, dirs)] + (["--merge-mismatched"] if flag else [])
    code = main(args, results=tmp_path / "results", cwd=tmp_path)
    out, err = capsys.readouterr()
    return code, out, err


def _merged(tmp_path: Path) -> Path:
    (run,) = (tmp_path / "results" / "runs").iterdir()
    return run


def test_matching_shards_merge_and_the_merged_run_names_them(tmp_path, capsys):
    one = _source(tmp_path, "one", [1, 2], shard="1/2")
    two = _source(tmp_path, "two", [3], shard="2/2", versions={"torch": "2.13.0+cu126", "aidge_core": "0.10.1"})
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code == 0, out + err
    run = _merged(tmp_path)
    assert "-abcdef12-merged-" in run.name  # the sources' commit
    session = json.loads((run / "session.json").read_text())
    assert session["complete"] is True and "mixed" not in session and session["commit"] == "abcdef12"
    assert [(m["dir"], m["shard"], m["records"]) for m in session["merged"]] == [(str(one), "1/2", 2),
                                                                                 (str(two), "2/2", 1)]
    meta = json.loads((run / "run.json").read_text())
    assert meta["mixed"] is None and [m["dir"] for m in meta["merged"]] == [str(one), str(two)]
    assert (tmp_path / "results" / "latest").resolve() == run.resolve()
    assert len((tmp_path / "results" / "history.jsonl").read_text().splitlines()) == 1


def test_one_shard_alone_is_refused_naming_the_missing_shard(tmp_path, capsys):
    one = _source(tmp_path, "one", [1, 2], shard="1/2")
    code, out, err = _merge(tmp_path, capsys, one)
    assert code == 2, out  # before: merged into a run called complete, exit 0
    assert "backend cpu: shard 2/2 missing (given: 1/2)" in err
    assert not (tmp_path / "results" / "runs").exists()  # nothing written
    # --merge-mismatched: merged, marked mixed and incomplete, never latest nor in the history
    code, out, err = _merge(tmp_path, capsys, one, flag=True)
    assert code == 3, out + err
    run = _merged(tmp_path)
    session = json.loads((run / "session.json").read_text())
    assert session["complete"] is False and "shard 2/2 missing" in session["ended"]
    assert session["mixed"] == ["backend cpu: shard 2/2 missing (given: 1/2)"]
    assert not (tmp_path / "results" / "latest").exists() and not (tmp_path / "results" / "history.jsonl").exists()


@pytest.mark.parametrize("what, second, said", [
    ("commit", dict(commit="0123abcd"), "commits differ: abcdef12 ({one}); 0123abcd ({two})"),
    ("aidge", dict(versions={"torch": "2.13.0", "aidge_core": "0.10.0.post3"}),
     "aidge_core versions differ: 0.10.1 ({one}); 0.10.0.post3 ({two})"),
    ("torch", dict(versions={"torch": "2.12.0", "aidge_core": "0.10.1"}),
     "torch versions differ: 2.13.0 ({one}); 2.12.0 ({two})"),
    ("route", dict(records=[_record(3, exporter="dynamo")]), "routes to ONNX (--exporter) differ: auto ({one}); "
                                                             "dynamo ({two})"),
    ("shard count", dict(shard="2/3"), "backend cpu: shard counts differ: 1/2 ({one}); 2/3 ({two})"),
    ("shard twice", dict(shard="1/2"), "backend cpu: shard 1/2 given 2 times ({one}, {two})"),
])
def test_runs_that_do_not_belong_together_are_refused_by_name(tmp_path, capsys, what, second, said):
    one = _source(tmp_path, "one", [1, 2], shard="1/2")
    two = _source(tmp_path, "two", [3], **{"shard": "2/2", **second})
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code == 2, out  # before: merged silently, exit 0
    assert said.format(one=one, two=two) in err, err
    assert not (tmp_path / "results" / "runs").exists()


def test_merge_mismatched_marks_the_run_mixed(tmp_path, capsys):
    one = _source(tmp_path, "one", [1], shard="1/2")
    two = _source(tmp_path, "two", [2], shard="2/2", versions={"torch": "2.13.0", "aidge_core": "0.10.0.post3"})
    code, out, err = _merge(tmp_path, capsys, one, two, flag=True)
    assert code == 0, out + err
    run = _merged(tmp_path)
    assert "-mixed-merged-" in run.name and "MIXED: results/latest and the history not updated" in out
    said = f"aidge_core versions differ: 0.10.1 ({one}); 0.10.0.post3 ({two})"
    meta = json.loads((run / "run.json").read_text())
    assert meta["mixed"] == [said] and meta["merged"][1]["versions"]["aidge_core"] == "0.10.0.post3"
    assert f"mixed merge (--merge-mismatched): {said}" in json.loads((run / "report.json").read_text())["problems"]
    assert "aidge_core" not in json.loads((run / "session.json").read_text())["versions"]  # not one release
    assert not (tmp_path / "results" / "latest").exists() and not (tmp_path / "results" / "history.jsonl").exists()


def test_complete_no_is_not_complete(tmp_path, capsys):
    one = _source(tmp_path, "one", [1], complete="no")
    code, out, err = _merge(tmp_path, capsys, one)
    assert code == 3, out + err  # before: "no" is truthy: complete, exit 0
    report = json.loads((_merged(tmp_path) / "report.json").read_text())
    assert (f"{one / 'session.json'}: key 'complete': true or false, got str ('no'): the run is taken as incomplete"
            in report["problems"]), report["problems"]


def test_fields_of_the_wrong_type_are_named_not_tracebacks(tmp_path, capsys):
    one = _source(tmp_path, "one", [], records=[_record(1), _record(2, backend=["cpu"])],
                  pytest_counts=dict(COUNTS, passed="two"))
    code, out, err = _merge(tmp_path, capsys, one)  # before: TypeError (a list as a key), ValueError (int('two'))
    assert code == 3, out + err
    problems = json.loads((_merged(tmp_path) / "report.json").read_text())["problems"]
    assert f"{one / 'records.jsonl'}:2: key 'backend': a string, got list: skipped" in problems, problems
    assert f"{one / 'session.json'}: key 'pytest_counts': 'passed' is not a count (a non-negative integer)" in problems
    assert [r["nodeid"] for r in map(json.loads, (_merged(tmp_path) / "records.jsonl").read_text().splitlines())] == [
        _record(1)["nodeid"]]


def test_a_fifo_in_place_of_records_is_refused_not_a_hang(tmp_path):
    one = _source(tmp_path, "one", [1])
    (one / "records.jsonl").unlink()
    os.mkfifo(one / "records.jsonl")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("INTEROP_RESULTS_DIR", None)
    code = ("import sys; from pathlib import Path; from interop.reporting.run import main; "
            f"sys.exit(main(['--merge', {str(one)!r}], results=Path({str(tmp_path / 'results')!r}), "
            f"cwd=Path({str(tmp_path)!r})))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr  # before: waited for a writer forever
    assert f"{one / 'records.jsonl'}: a FIFO (named pipe), not a regular file" in proc.stderr


def test_a_merged_run_without_records_gets_its_report(tmp_path, capsys):
    one = _source(tmp_path, "one", [], shard="1/2", versions={})
    two = _source(tmp_path, "two", [], shard="2/2", versions={})
    code, out, err = _merge(tmp_path, capsys, one, two)  # before: AttributeError: ... no attribute 'path'
    assert code == 0 and "Traceback" not in err, out + err
    report = json.loads((_merged(tmp_path) / "report.json").read_text())
    assert "does not say which Aidge release" in report["triage"]["error"]


def test_merge_neither_deletes_an_outside_folder_nor_copies_an_outside_records_file(tmp_path, capsys):
    outside = tmp_path / "precious"
    outside.mkdir()
    text = json.dumps(_record(99, nodeid="outside.py::test_not_yours")) + "\n"
    (outside / "notes.jsonl").write_text(text)
    one = _source(tmp_path, "one", [1], shard="1/2")
    (one / "records.d").mkdir()
    (one / "records.d" / "s-1").symlink_to(outside)
    two = _source(tmp_path, "two", [], shard="2/2")
    (two / "records.jsonl").unlink()
    (two / "records.jsonl").symlink_to(outside / "notes.jsonl")
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code == 2 and f"{two / 'records.jsonl'}: a symbolic link (to {outside / 'notes.jsonl'})" in err, err
    assert (outside / "notes.jsonl").read_text() == text  # before: read, copied, then deleted
    code, out, err = _merge(tmp_path, capsys, one, _source(tmp_path, "three", [2], shard="2/2"))
    assert (outside / "notes.jsonl").read_text() == text
    run = _merged(tmp_path)
    assert "test_not_yours" not in (run / "records.jsonl").read_text()
    assert code == 3  # the part files it may not read: the source is not known to be whole
    problems = json.loads((run / "report.json").read_text())["problems"]
    assert any(p.startswith(f"{one / 'records.d' / 's-1' / 'notes.jsonl'}: records.d/s-1 is a symbolic link to")
               for p in problems), problems
