"""The run's pages typed (interop/reporting/models.py): every entry of a built ledger, cell of a
built support matrix and row of a built porting table validates through its model, as written and
as read back; a wrong type or a misspelt key in a file is refused naming the file, the entry (its
id) and the key; an older file whose entries lack a key added later still reads."""
from __future__ import annotations

import json

import pytest

from interop.reporting.ledger import build_ledger, write_ledger
from interop.reporting.ledger_slow import slow_entries
from interop.reporting.models import (DefectEntry, PageFileError, PortingRow, SupportCell, checked, page_entries,
                                      read_page)
from interop.reporting.porting import load_defects, porting_table, write_porting
from interop.reporting.support import load_support, support_matrix, write_support
from interop.triage import _run_ledger


def _finding(nodeid, source, category, error, *, operator="Slice", phase="forward", outcome="xfailed", **extra):
    return {"nodeid": nodeid, "source": source, "kind": source, "category": category, "error": error,
            "aidge_operator": operator, "phase": phase, "outcome": outcome, "attribution": "aidge", "backend": "cpu",
            **extra}


FINDINGS = [
    _finding("tests/test_opinfo.py::test_opinfo[opinfo_nn.functional.pad_s3_float32]", "opinfo", "aidge_error",
             "Aidge forward failed (operator Slice, node 'fn_Slice'): Slice: Step (-1) is negative, we must have "
             "End (3) < Start (2) on axis 0",
             reproducer={"reproduces": True, "path": "reproducers/a", "reduced": "reproducers/a/reduced",
                         "reduced_nodes": 1, "line": "DEFECT PRESENT: forward (call 1): ..."}),
    _finding("tests/test_operators.py::test_Slice_interop[Slice_x]", "operator", "backward_not_implemented",
             "Backward not yet implemented for Slice_Op on backend cpu", phase="backward", outcome="failed"),
    dict(_finding("tests/test_architectures.py::test_architecture[arch_monai_X_eval]", "architecture",
                  "unsupported_operator", "Aidge has no native operator for 1 node(s): 'node_IsNaN_1' (ONNX op IsNaN)",
                  operator="IsNaN", phase="import", aidge_node="node_IsNaN_1", case="arch_monai_X_eval",
                  exporter="torchscript", export_route="torchscript", onnx_nodes=12), operator="monai_X"),
]


def _arch(case, outcome="passed", **extra):
    return dict({"kind": "architecture", "case": case, "operator": case.rsplit("_", 1)[0][len("arch_"):],
                 "outcome": outcome, "exporter": "torchscript", "export_route": "torchscript", "onnx_nodes": 12,
                 "nodeid": f"tests/test_architectures.py::test_architecture[{case}]"}, **extra)


ARCHS = [_arch("arch_monai_Good_eval"), _arch("arch_monai_Good_train"), FINDINGS[2],
         _arch("arch_monai_X_train", "failed", phase="import", category="unsupported_operator", error="no IsNaN")]
CELLS = [{"kind": "operator", "torch_op": "torch.abs", "operator": "torch.abs", "source": "catalog JSON",
          "outcome": "failed", "case": "Abs_1", "nodeid": "tests/test_x.py::test_x[Abs_1]", "phase": "forward",
          "category": "aidge_error", "phases": ["forward", "backward"], "export_route": "dynamo"},
         {"kind": "operator", "torch_op": "torch.abs", "operator": "torch.abs", "source": "catalog JSON",
          "outcome": "passed", "case": "Abs_2", "nodeid": "tests/test_x.py::test_x[Abs_2]"}]
SLOW = {"meta": {"started": "2026-12-03", "command": "node_profile", "uptime_at_end": "load 1", "rounds": 3},
        "slow": [{"kind": "slow", "op_type": "Resize", "aidge_type": "Resize", "attributes": {"mode": "linear"},
                  "input_shapes": [[2, 4, 16, 16], [4]], "ratio": 1250.0, "threshold": 3, "cost_s": 0.02,
                  "occurrences": [{"model": "m", "node": "/Resize", "aidge_s": 0.02, "ort_s": 2e-5, "share": 0.6}],
                  "alone": {"rounds": 11, "aidge_s": 0.02, "ort_s": 2e-5, "torch_s": 4e-5, "ratio_torch": 500.0}}]}


def _fields(model) -> set[str]:
    return {f.alias or name for name, f in model.model_fields.items()}


def test_every_entry_of_a_built_ledger_validates_as_built_and_as_written(tmp_path):
    ledger = build_ledger(FINDINGS)
    assert len(ledger) == 3
    for entry in ledger:
        assert checked(DefectEntry, entry) is entry  # the dict itself: what is written is what was built
        assert set(entry) <= _fields(DefectEntry)
    written = write_ledger(tmp_path, FINDINGS)
    data, entries = read_page(tmp_path / "defects.json")
    assert [e["id"] for e in entries] == [e["id"] for e in written] == [e["id"] for e in load_defects(tmp_path)]
    assert all(e["issue"].endswith("/ISSUE.md") for e in entries)
    assert set(_run_ledger(tmp_path)) == {e["id"] for e in ledger}


def test_a_slow_entry_validates_with_every_key_the_model_lists():
    (entry,) = slow_entries(SLOW, release="0.10.1")
    assert checked(DefectEntry, entry) is entry
    assert set(entry) <= _fields(DefectEntry) and len(entry) == 45  # 46 with its issue, once written


def test_every_cell_of_a_built_matrix_validates_as_built_and_as_written(tmp_path):
    matrix = support_matrix(CELLS)
    assert matrix["cells"] and all(checked(SupportCell, c) is c for c in matrix["cells"])
    (tmp_path / "defects.json").write_text(json.dumps({"defects": [
        {"id": "D-0000abcd", "cases": ["tests/test_x.py::test_x[Abs_1]"]}]}))
    write_support(tmp_path, matrix)
    data, cells = read_page(tmp_path / "support.json")
    assert all(set(c) == _fields(SupportCell) for c in cells)  # 15 keys each
    assert [c["defects"] for c in cells if c["phase"] == "forward"] == [["D-0000abcd"]]
    assert load_support(tmp_path)["cells"] == cells


def test_every_row_of_a_built_table_validates_as_built_and_as_written(tmp_path):
    table = porting_table(ARCHS)
    assert [r["architecture"] for r in table["rows"]] == ["monai_Good", "monai_X"]
    assert all(checked(PortingRow, r) is r for r in table["rows"])
    write_porting(tmp_path, table, defects=build_ledger(FINDINGS))
    data, rows = read_page(tmp_path / "porting.json")
    assert set(rows[1]) == _fields(PortingRow)
    assert rows[1]["routes"]["torchscript"]["blocking"]["node"] == "node_IsNaN_1"
    assert rows[1]["routes"]["torchscript"]["defects"]


@pytest.mark.parametrize("entry, key", [({"id": "D-0000abcd", "known": "1"}, "'known': an integer, got str"),
                                        ({"id": "D-0000abcd", "cases": ["a", 2]}, "'cases.1': a string, got int"),
                                        ({"id": "D-0000abcd", "titel": "x"}, "'titel'"),
                                        ({"id": "D-0000abcd", "reached_from_torch": 1}, "'reached_from_torch'")])
def test_a_wrong_ledger_entry_is_refused_naming_the_file_its_id_and_the_key(tmp_path, entry, key):
    path = tmp_path / "defects.json"
    path.write_text(json.dumps({"complete": True, "defects": [{"id": "D-ffffffff", "title": "fine"}, entry]}))
    for read in (load_defects, _run_ledger):
        with pytest.raises(PageFileError) as caught:
            read(tmp_path)
        said = str(caught.value)
        assert said.startswith(f"{path}: defect D-0000abcd: key ") and key in said, said
    with pytest.raises(PageFileError, match=r"entry 1: key 'id'"):
        page_entries({"defects": [{"id": "D-ffffffff"}, {"id": 7}]}, path)


def test_a_wrong_support_cell_or_porting_row_is_refused_naming_the_file_the_entry_and_the_key(tmp_path):
    matrix = support_matrix(CELLS)
    matrix["cells"][0]["total"] = "2"
    (tmp_path / "support.json").write_text(json.dumps(dict(matrix, headlines={})))
    with pytest.raises(PageFileError) as caught:
        load_support(tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'support.json'}: cell 0 (torch.abs/catalog JSON/backward/cpu/float32): "
                                 "key 'total': an integer, got str")
    table = porting_table(ARCHS)
    table["rows"][1]["routes"]["torchscript"]["nodes"] = "12"
    (tmp_path / "porting.json").write_text(json.dumps(table))
    with pytest.raises(PageFileError) as caught:
        read_page(tmp_path / "porting.json")
    assert str(caught.value) == (f"{tmp_path / 'porting.json'}: row monai_X: key 'routes.torchscript.nodes': "
                                 "an integer, got str")
    with pytest.raises(PageFileError, match="row monai_Good: key 'library'"):  # written: refused before the files
        write_porting(tmp_path / "out", dict(table, rows=[dict(table["rows"][0], library=3)]))
    assert not (tmp_path / "out" / "porting.json").exists()


def test_an_older_file_without_the_keys_added_later_still_reads(tmp_path):
    # an entry of an early ledger: no torch reach, no detected_by, no releases, no issue
    old = {"id": "D-0000abcd", "title": "Slice fails", "kind": "error", "component": "aidge_core", "operator": "Slice",
           "phase": "forward", "backend": "cpu", "cases": ["t.py::test_a"], "sources": {"opinfo": 1}, "known": 1,
           "new": 0, "reproducer": None, "blocks": {"architectures": [], "models": []}}
    (tmp_path / "defects.json").write_text(json.dumps({"complete": True, "defects": [old]}))
    assert load_defects(tmp_path) == [old]
    # a cell before routes, lost, failing_nodeids and defects
    cell = {"operator": "torch.abs", "source": "catalog JSON", "phase": "forward", "backend": "cpu", "dtype": "float32",
            "passed": 1, "total": 2, "skipped": 0, "categories": {"aidge_error": 1}, "failing": ["Abs_1"],
            "aidge_operators": []}
    (tmp_path / "support.json").write_text(json.dumps({"cells": [cell], "columns": [], "operators": {}}))
    assert load_support(tmp_path)["cells"] == [cell]
    # a row before speed and defects
    row = {"architecture": "monai_X", "library": "monai", "routes": {"torchscript": {
        "exports": "12 nodes", "nodes": 12, "import": "no", "forward": {}, "backward": None, "blocking": None,
        "cases": []}}}
    assert page_entries({"rows": [row]}, tmp_path / "porting.json") == [row]
