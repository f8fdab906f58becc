"""A merge reports only what its records prove. Before: a shard whose records' ``outcome`` alone was
edited (xfailed to passed) merged into "passed", "2 of 2 operators pass", no defect, exit 0, and moved
``latest`` and the history (the consistency check read the per-phase statuses, the report the
outcome); a shard's repro.py replaced by other code was re-published in the merged run's
``defects/<id>/standalone.py``. Now such a shard is refused by name (folder, node id, key: exit 2,
nothing written), and the merged run's bundles are rebuilt from their data with a repro.py generated
anew: no script text of a shard reaches the merged run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from interop.reporting.run import main

COUNTS = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
MARK = "PWNED-BY-THE-SHARD"


def _record(op: str, **extra) -> dict:
    return {"schema": 1, "event": "record", "nodeid": f"tests/test_operators.py::test_op[{op}_x]", "case": f"{op}_x",
            "source": "operator", "kind": "operator", "operator": op, "torch_op": f"torch.{op.lower()}",
            "phases": ["forward"], "backend": "cpu", "exporter": "auto", "outcome": "xfailed",
            "time": "2026-01-01T00:00:00", "category": "aidge_error", "decided": "table", "phase": "forward",
            "attribution": "aidge", "aidge_operator": op,
            "error": f"Aidge forward failed (operator {op}): {op}: Step (-1) is negative",
            "reports": [{"when": "setup", "status": "", "duration": 0.0},
                        {"when": "call", "status": "xfailed", "duration": 0.0, "xfail_reason": "table"},
                        {"when": "teardown", "status": "", "duration": 0.0}], **extra}


def _source(tmp_path: Path, name: str, records: list[dict], shard: str, counts: dict | None = None) -> Path:
    run = tmp_path / "sources" / name / f"20260101T000000000000Z-abcdef12-{name}"
    run.mkdir(parents=True)
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "session.json").write_text(json.dumps({
        "schema": 1, "complete": True, "ended": "ran to its end", "shard": shard, "backend": "cpu",
        "pytest_counts": counts or dict(COUNTS, xfailed=len(records)),
        "versions": {"torch": "2.13.0+cpu", "aidge_core": "0.10.1"}, "finished": "2026-01-01T00:01:00"}))
    return run


def _merge(tmp_path: Path, capsys, *dirs, flag: bool = False) -> tuple[int, str, str]:
    code = main(["--merge", *map(str, dirs)] + (["--merge-mismatched"] if flag else []),
                results=tmp_path / "results", cwd=tmp_path)
    out, err = capsys.readouterr()
    return code, out, err


def _edit(run: Path, **fields) -> None:
    lines = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    lines[0].update(fields)
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def _nothing_written(tmp_path: Path) -> bool:
    results = tmp_path / "results"
    return not (results / "runs").exists() and not (results / "latest").exists() \
        and not (results / "history.jsonl").exists()


def test_a_shard_whose_outcome_alone_was_edited_is_refused_by_folder_nodeid_and_key(tmp_path, capsys):
    one = _source(tmp_path, "one", [_record("Slice")], "1/2")
    two = _source(tmp_path, "two", [_record("Pad")], "2/2")
    _edit(one, outcome="passed")  # xfailed to passed; its per-phase statuses and session.json unchanged
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code == 2, out + err  # before: exit 0, "2 of 2 operators pass", latest and history moved
    line = next(x for x in err.splitlines() if "tests/test_operators.py::test_op[Slice_x]" in x)
    assert str(one) in line and "key 'outcome'" in line and "'passed'" in line and "'xfailed'" in line, err
    assert "passed" not in out and _nothing_written(tmp_path)
    code, out, err = _merge(tmp_path, capsys, one, two, flag=True)  # --merge-mismatched merges no such shard
    assert code == 2 and "key 'outcome'" in err and _nothing_written(tmp_path)


def test_a_shard_whose_records_disagree_with_its_session_counts_is_refused(tmp_path, capsys):
    one = _source(tmp_path, "one", [_record("Slice")], "1/2", counts=dict(COUNTS, passed=1))
    two = _source(tmp_path, "two", [_record("Pad")], "2/2")
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code == 2, out + err
    assert f"{one}: session.json: key 'pytest_counts': xfailed: 1 recorded, 0 in pytest's summary" in err, err
    assert _nothing_written(tmp_path)


def test_a_strict_xpass_flag_its_statuses_do_not_say_is_refused(tmp_path, capsys):
    one = _source(tmp_path, "one", [_record("Slice")], "1/2")
    two = _source(tmp_path, "two", [_record("Pad")], "2/2")
    _edit(two, xpass_strict=True)
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code == 2 and f"{two}: tests/test_operators.py::test_op[Pad_x]: key 'xpass_strict'" in err, err


def test_consistent_shards_merge_with_counts_recomputed_from_their_records(tmp_path, capsys):
    one = _source(tmp_path, "one", [_record("Slice")], "1/2")
    two = _source(tmp_path, "two", [_record("Pad")], "2/2")
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code == 0, out + err
    (run,) = (tmp_path / "results" / "runs").iterdir()
    session = json.loads((run / "session.json").read_text())
    assert session["pytest_counts"] == dict(COUNTS, xfailed=2) and session["complete"] is True
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert {r["outcome"] for r in records} == {"xfailed"}
    assert [r["merged_source"] for r in records] == [str(two), str(one)]  # Pad_x sorts first
    assert (tmp_path / "results" / "latest").resolve() == run.resolve()


def _bundle(folder: Path, script: str | None = None) -> None:
    """A reproducer bundle of one Slice node: its graph, its data, and the repro.py this version
    generates from its settings (or ``script`` in its place)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from interop.reproducers.script import repro_script

    (folder / "test_data_set_0").mkdir(parents=True)
    node = helper.make_node("Slice", ["x", "starts", "ends"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                              [numpy_helper.from_array(np.array([0], np.int64), "starts"),
                               numpy_helper.from_array(np.array([2], np.int64), "ends")])
    onnx.save(helper.make_model(graph), str(folder / "model.onnx"))
    (folder / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.arange(4, dtype=np.float32), "x").SerializeToString())
    (folder / "test_data_set_0" / "output_0.pb").write_bytes(
        numpy_helper.from_array(np.arange(2, dtype=np.float32), "y").SerializeToString())
    (folder / "meta.json").write_text(json.dumps({"case": "Slice_x", "calls": 1, "reproduces": True}))
    settings = {"CASE": "Slice_x", "WHAT": "forward: Slice", "PHASE": "forward", "CALLS": 1, "RTOL": 1e-5,
                "ATOL": 1e-6, "FAITHFUL": True, "DATA_INPUTS": ["x"], "N_OUTPUTS": 1, "PARAMS": [], "GRAD_OUTPUTS": []}
    (folder / "repro.py").write_text(script if script is not None else repro_script(settings), encoding="utf-8")


def _with_bundle(op: str) -> dict:
    return _record(op, reproducer={"written": True, "path": f"reproducers/{op}", "reproduces": True, "nodes": 1,
                                   "line": "DEFECT PRESENT: forward (call 1): Slice: Step"})


def _merged_text(tmp_path: Path) -> str:
    (run,) = (tmp_path / "results" / "runs").iterdir()
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in run.rglob("*") if p.is_file())


def test_a_shard_s_replaced_repro_py_is_not_republished_in_the_merged_run(tmp_path, capsys):
    one = _source(tmp_path, "one", [_with_bundle("Slice")], "1/2")
    two = _source(tmp_path, "two", [_record("Pad")], "2/2")
    _bundle(one / "reproducers" / "Slice", script=f"import os; os.system('true {MARK}')\n")
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code in (0, 1), out + err
    assert MARK not in _merged_text(tmp_path)  # before: quoted whole in defects/<id>/standalone.py, run there
    (run,) = (tmp_path / "results" / "runs").iterdir()
    said = json.loads((run / "session.json").read_text())["problems"]
    assert any(f"{one / 'reproducers' / 'Slice' / 'repro.py'}: not a reproducer this version generates" in p
               for p in said), said
    assert not (run / "merged" / "1" / "reproducers" / "Slice" / "repro.py").exists()


def test_an_edited_harness_is_not_republished_the_merged_run_generates_its_own(tmp_path, capsys):
    one = _source(tmp_path, "one", [_with_bundle("Slice")], "1/2")
    two = _source(tmp_path, "two", [_record("Pad")], "2/2")
    _bundle(one / "reproducers" / "Slice")
    original = (one / "reproducers" / "Slice" / "repro.py").read_text()
    edited = original.replace("\ndef main(", f"\nimport os; os.system('true {MARK}')\n\n\ndef main(", 1)
    assert edited != original
    (one / "reproducers" / "Slice" / "repro.py").write_text(edited)
    code, out, err = _merge(tmp_path, capsys, one, two)
    assert code in (0, 1), out + err
    assert MARK not in _merged_text(tmp_path)
    (run,) = (tmp_path / "results" / "runs").iterdir()
    rebuilt = run / "merged" / "1" / "reproducers" / "Slice"
    assert (rebuilt / "repro.py").read_text() == original  # generated anew from its settings
    assert (rebuilt / "model.onnx").read_bytes() == (one / "reproducers" / "Slice" / "model.onnx").read_bytes()
    defects = json.loads((run / "defects.json").read_text())["defects"]
    standalone = [d["standalone"] for d in defects if d.get("standalone")]
    assert standalone and all(MARK not in (run / s).read_text() for s in standalone)
