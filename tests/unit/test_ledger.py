"""The defect ledger (interop.reporting.ledger): one entry per distinct Aidge defect, whatever the
source, with ids that do not change from run to run."""
from __future__ import annotations

import json

from interop.reporting.ledger import build_ledger, defect_id, signature_of, write_ledger


def _rec(nodeid, source, category, error, *, operator="Slice", phase="forward", outcome="xfailed", **extra):
    return {"nodeid": nodeid, "source": source, "category": category, "error": error, "aidge_operator": operator,
            "phase": phase, "outcome": outcome, "attribution": "aidge", "backend": "cpu", **extra}


# the padding Slice (negative step, clamped ends) as OpInfo and ModuleInfo samples report it
OPINFO_PAD = _rec("tests/test_opinfo.py::test_opinfo[opinfo_nn.functional.pad_s3_float32]", "opinfo", "aidge_error",
                  "Aidge forward failed (operator Slice, node 'fn_Slice'): Slice: Step (-1) is negative, we must have "
                  "End (3) < Start (2) on axis 0")
MODULEINFO_PAD = _rec("tests/test_moduleinfo.py::test_moduleinfo[moduleinfo_ConstantPad1d_eval_s0_1_2_3x4]",
                      "moduleinfo", "aidge_error",
                      "Aidge forward failed (operator Slice, node 'pad_Slice_1'): Slice: Step (-1) is negative, we "
                      "must have End (2) < Start (1) on axis 0")
SLICE_BACKWARD = _rec("tests/test_operators.py::test_Slice_interop[Slice_x]", "operator", "backward_not_implemented",
                      "Backward not yet implemented for Slice_Op on backend cpu", phase="backward")


def test_one_root_cause_from_two_sources_is_one_entry():
    (entry,) = build_ledger([OPINFO_PAD, MODULEINFO_PAD])
    assert entry["sources"] == {"opinfo": 1, "moduleinfo": 1}
    assert len(entry["cases"]) == 2 and entry["kind"] == "error" and entry["operator"] == "Slice"


def test_two_causes_on_one_operator_stay_apart():
    ledger = build_ledger([OPINFO_PAD, MODULEINFO_PAD, SLICE_BACKWARD])
    assert len(ledger) == 2
    assert {e["kind"] for e in ledger} == {"error", "no backward"}
    assert ledger[0]["id"] == defect_id(signature_of(OPINFO_PAD))  # the larger first


def test_ids_are_stable_and_the_order_of_records_does_not_matter():
    a = build_ledger([OPINFO_PAD, SLICE_BACKWARD, MODULEINFO_PAD])
    b = build_ledger([SLICE_BACKWARD, MODULEINFO_PAD, OPINFO_PAD])
    assert [e["id"] for e in a] == [e["id"] for e in b]
    assert defect_id(signature_of(OPINFO_PAD)) == "D-" + defect_id(signature_of(OPINFO_PAD))[2:]


def test_not_aidge_findings_and_passes_are_no_defects():
    export = dict(OPINFO_PAD, attribution="export")
    passed = dict(OPINFO_PAD, outcome="passed")
    strategy = dict(OPINFO_PAD, category="config_error")
    assert build_ledger([export, passed, strategy]) == []


def test_a_converter_failure_is_its_own_kind_keyed_on_aidge_s_words():
    gap = _rec("t.py::test_a", "opinfo", "unsupported_operator", "Aidge has no native operator for 1 node(s): "
               "'MaxPool' (ONNX op MaxPool); they were imported as GenericOperator", operator="MaxPool", phase="import",
               reproducer={"import_kind": "converter failure",
                           "aidge_said": ["Warning: PaddedMaxPooling1D is not supported in Aidge."]})
    none = _rec("t.py::test_b", "opinfo", "unsupported_operator", "(ONNX op Einsum) imported as GenericOperator",
                operator="Einsum", phase="import", reproducer={"import_kind": "no converter"})
    kinds = {e["operator"]: (e["kind"], e["component"]) for e in build_ledger([gap, none])}
    assert kinds == {"MaxPool": ("converter failure", "aidge_onnx"), "Einsum": ("no importer", "aidge_onnx")}


def test_the_smallest_reproducer_is_the_entry_s(tmp_path):
    small = dict(OPINFO_PAD, reproducer={"reproduces": True, "path": "reproducers/a", "reduced": "reproducers/a/reduced",
                                         "reduced_nodes": 1, "line": "DEFECT PRESENT: forward (call 1): ..."})
    big = dict(MODULEINFO_PAD, reproducer={"reproduces": True, "path": "reproducers/b", "nodes": 24})
    (entry,) = build_ledger([big, small])
    assert entry["reproducer"] == "reproducers/a/reduced" and entry["reproducer_nodes"] == 1
    write_ledger(tmp_path, [big, small], complete=False)
    data = json.loads((tmp_path / "defects.json").read_text())
    assert data["complete"] is False and data["defects"][0]["id"] == entry["id"]
    assert "incomplete" in (tmp_path / "defects.md").read_text()


def test_an_onnx_case_and_an_aidge_configuration_of_one_defect_agree_on_its_operator():
    onnx_case = _rec("tests/test_models.py::test_model[KWS_train]", "model zoo", "outputs_differ", "output differs",
                     operator="KWS", first_diverging={"onnx_node": "/bn1/BatchNormalization",
                                                      "op_type": "BatchNormalization", "aidge_type": "BatchNorm2D"})
    config_case = _rec("tests/test_aidge_configs.py::test_aidge_config[aidge.batchnorm_train]", "Aidge configs",
                       "outputs_differ", "output differs", operator="BatchNorm2D")
    (entry,) = build_ledger([onnx_case, config_case])
    assert entry["operator"] == "BatchNorm2D" and len(entry["cases"]) == 2
