"""The defect ledger (interop.reporting.ledger): one entry per distinct Aidge defect, whatever the
source, with ids that do not change from run to run."""
from __future__ import annotations

import json

from interop.registry.identify import defect_id, signature_of
from interop.reporting.ledger import build_ledger, write_ledger


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


# --- the table's rows, releases, impact, the upstream report and the page ---------------------------
def _table(tmp_path, rows_by_release):
    folder = tmp_path / "table"
    for release, rows in rows_by_release.items():
        (folder / release).mkdir(parents=True)
        (folder / release / "operator.aidge_error.json").write_text(json.dumps({"release": release, "rows": rows}))
    return folder


def _row(quote, aidge, source="operator", **extra):
    return {"source": source, "operator": "Slice", "phase": "forward", "category": "aidge_error", "quote": quote,
            "aidge": aidge, "cases": ["Slice:*"], **extra}


def test_an_entry_names_its_rows_and_the_releases_they_hold_in(tmp_path):
    table = _table(tmp_path, {"0.10.0.post3": [_row("Step (-1) is negative", ">=0.10.0.post3")],
                              "0.10.1": [_row("empty slice", "==0.10.1")]})
    held = _rec("tests/test_operators.py::test_Slice_interop[Slice_neg]", "operators", "aidge_error",
                "Slice: Step (-1) is negative, we must have End (3) < Start (2) on axis 0", kind="operator",
                expected={"row": "0.10.0.post3/operator.aidge_error.json#0", "quote": "Step (-1) is negative",
                          "operator": "Slice", "phase": "forward", "category": "aidge_error"})
    new = _rec("tests/test_operators.py::test_Slice_interop[Slice_empty]", "operators", "aidge_error",
               "Slice_Op: empty slice detected on axis 0", kind="operator",
               expected={"quote": "empty slice", "operator": "Slice", "phase": "forward", "category": "aidge_error"})
    ledger = {e["cases"][0].rsplit("_", 1)[1]: e for e in build_ledger([held, new], table_dir=table, release="0.10.1")}
    assert ledger["neg]"]["rows"] == ["0.10.0.post3/operator.aidge_error.json#0"]
    assert ledger["neg]"]["releases"] == ["0.10.0.post3", "0.10.1"]
    assert ledger["neg]"]["since"] == "holds since 0.10.0.post3"
    # found by its quote (a record written before rows were referenced); its source was checked on 0.10.0.post3
    assert ledger["empty]"]["rows"] == ["0.10.1/operator.aidge_error.json#0"]
    assert ledger["empty]"]["releases"] == ["0.10.1"] and ledger["empty]"]["since"] == "new since 0.10.0.post3"


def test_a_source_the_older_release_never_ran_is_not_called_new(tmp_path):
    table = _table(tmp_path, {"0.10.0.post3": [_row("x", "==0.10.0.post3")],
                              "0.10.1": [_row("Step (-1) is negative", ">=0.10.1", source="architecture")]})
    arch = _rec("tests/test_architectures.py::test_architecture[arch_monai_BasicUNet_eval]", "architectures",
                "aidge_error", "Slice: Step (-1) is negative", kind="architecture",
                expected={"quote": "Step (-1) is negative", "operator": "Slice", "phase": "forward",
                          "category": "aidge_error"})
    (entry,) = build_ledger([arch], table_dir=table, release="0.10.1")
    assert entry["since"] == "not checked on 0.10.0.post3"
    assert entry["blocks"] == {"architectures": ["monai_BasicUNet"], "models": []}


def test_the_headline_counts_defects_new_ones_and_blocked_architectures(tmp_path):
    from interop.reporting.ledger import ledger_headline

    arch_ok = _rec("tests/test_architectures.py::test_architecture[arch_transformers_Bert_eval]", "architectures",
                   "x", "", outcome="passed")
    shared = _rec("tests/test_architectures.py::test_architecture[arch_shared_TiedAutoencoder_eval]", "architectures",
                  "x", "", outcome="passed")  # a catalog case run by the architecture suite: not an architecture
    arch_bad = dict(OPINFO_PAD, nodeid="tests/test_architectures.py::test_architecture[arch_monai_UNet_train]")
    ledger = build_ledger([arch_ok, arch_bad, SLICE_BACKWARD])
    text = ledger_headline(ledger, [arch_ok, shared, arch_bad, SLICE_BACKWARD])
    assert text.startswith("2 distinct Aidge defect(s)") and "blocking 1 of 2 architectures (1 in inference)" in text
    assert "incomplete" in ledger_headline(ledger, [], complete=False)


def _bundle(folder, *, exit_code=1):
    """A reproducer bundle: a one-node graph, its data, and a repro.py that exits as the defect would."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np

    folder.mkdir(parents=True)
    node = helper.make_node("Slice", ["x", "starts", "ends"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                              [numpy_helper.from_array(np.array([0], np.int64), "starts"),
                               numpy_helper.from_array(np.array([2], np.int64), "ends")])
    onnx.save(helper.make_model(graph), str(folder / "model.onnx"))
    (folder / "test_data_set_0").mkdir()
    (folder / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.arange(4, dtype=np.float32), "x").SerializeToString())
    (folder / "repro.py").write_text(
        "import os, sys\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "assert os.path.isfile(os.path.join(here, 'test_data_set_0', 'input_0.pb'))\n"
        f"print('DEFECT PRESENT: forward: <Slice & co>'); sys.exit({exit_code})\n")


def test_each_defect_gets_an_upstream_report_and_a_one_file_script_that_runs_without_the_suite(tmp_path):
    import subprocess
    import sys

    run = tmp_path / "run"
    _bundle(run / "reproducers" / "a" / "reduced")
    (run / "session.json").write_text(json.dumps({"versions": {"aidge_core": "0.10.1", "onnx": "1.23"},
                                                  "python": "3.11.7"}))
    rec = dict(OPINFO_PAD, reproducer={"reproduces": True, "path": "reproducers/a", "reduced": "reproducers/a/reduced",
                                       "reduced_nodes": 1, "line": "DEFECT PRESENT: forward (call 1): Slice: Step"})
    (entry,) = write_ledger(run, [rec])
    issue = (run / entry["issue"]).read_text()
    assert issue.startswith("# [aidge_core] Slice refuses a valid graph in forward")
    assert "aidge_core 0.10.1" in issue and "Slice(x: float[4]" in issue and "```python" in issue
    assert "opinfo 1" in issue and "Step (-1) is negative" in issue
    script = run / entry["standalone"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = elsewhere / "standalone.py"
    moved.write_text(script.read_text())  # one file: it needs nothing beside it
    done = subprocess.run([sys.executable, str(moved)], cwd=elsewhere, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "DEFECT PRESENT" in done.stdout
    assert sorted(p.name for p in elsewhere.iterdir()) == ["standalone.py"]  # unpacked in a temporary folder
    page = (run / "defects.html").read_text()
    assert f"id='{entry['id']}'" in page and "ISSUE.md" in page


def test_a_bundle_path_out_of_the_run_gives_a_report_without_a_script(tmp_path):
    run = tmp_path / "run"
    _bundle(tmp_path / "outside")
    run.mkdir()
    rec = dict(OPINFO_PAD, reproducer={"reproduces": True, "path": "../outside", "nodes": 1, "line": "x"})
    (entry,) = write_ledger(run, [rec])
    assert "standalone" not in entry
    assert "No script: the reproducer bundle ../outside cannot be read" in (run / entry["issue"]).read_text()
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["model.onnx", "repro.py", "test_data_set_0"]


def test_the_page_escapes_what_it_quotes():
    from interop.reporting.ledger_pages import format_ledger_html

    evil = dict(OPINFO_PAD, error="<script>alert(1)</script> Slice failed", nodeid="t.py::x[<img src=x>]")
    page = format_ledger_html(build_ledger([evil]), complete=False, headline="<b>h</b>")
    assert "<script>alert" not in page and "<img" not in page and "&lt;b&gt;h" in page
    assert "incomplete" in page


def test_shards_merge_into_the_same_ledger():
    first, second = [OPINFO_PAD, SLICE_BACKWARD], [MODULEINFO_PAD]
    merged = build_ledger(first + second)
    shards = build_ledger(first) + build_ledger(second)
    assert {e["id"] for e in merged} == {e["id"] for e in shards}
    by_id: dict[str, set] = {}
    for e in shards:
        by_id.setdefault(e["id"], set()).update(e["cases"])
    assert {e["id"]: set(e["cases"]) for e in merged} == by_id


def test_a_merged_run_s_reports_take_their_scripts_from_the_runs_it_merged(tmp_path):
    shard = tmp_path / "shard1"
    _bundle(shard / "reproducers" / "a")
    merged = tmp_path / "merged"
    merged.mkdir()
    rec = dict(OPINFO_PAD, merged_from=str(shard),
               reproducer={"reproduces": True, "path": "reproducers/a", "nodes": 1, "line": "DEFECT PRESENT: x"})
    (entry,) = write_ledger(merged, [rec, dict(MODULEINFO_PAD, merged_from=str(tmp_path / "shard2"))])
    assert entry["id"] == build_ledger([OPINFO_PAD])[0]["id"] and len(entry["cases"]) == 2
    assert (merged / entry["standalone"]).is_file() and "```python" in (merged / entry["issue"]).read_text()


def test_a_defect_no_row_says_comes_first_then_impact():
    unexpected = dict(SLICE_BACKWARD, outcome="failed")
    ledger = build_ledger([OPINFO_PAD, MODULEINFO_PAD, unexpected])
    assert [e["kind"] for e in ledger] == ["no backward", "error"]  # 1 new case before 2 known ones
    assert "Not in the expected-failure table (1)" in __import__("interop.reporting.ledger", fromlist=["x"]) \
        .format_ledger_md(ledger)


def test_a_report_never_passes_the_suite_s_words_off_as_aidge_s(tmp_path):
    mismatch = _rec("tests/test_models.py::test_model[KWS_train]", "model zoo", "outputs_differ",
                    "Tensors are not close at output!", operator="BatchNorm2D",
                    expected={"detected_by": "comparator"})
    (entry,) = write_ledger(tmp_path, [mismatch])
    text = (tmp_path / entry["issue"]).read_text()
    assert entry["detected_by"] == "comparator"
    assert "Aidge says nothing about it: the suite's comparator saw it" in text and "Aidge says:" not in text


def test_an_empty_input_s_stale_result_is_one_defect_whatever_the_operator_and_shape():
    roll = _rec("tests/test_opinfo.py::test_opinfo[opinfo_roll_s0_0x0x0_0_0]", "OpInfo", "aidge_error",
                "input 0 has shape (0, 0, 0): Aidge does not compute on empty tensors (it returns the previous "
                "outputs unchanged)", operator="roll")
    pad = _rec("tests/test_opinfo.py::test_opinfo[opinfo_nn.functional.pad.circular_s0_0x3x3]", "OpInfo", "aidge_error",
               "input 0 has shape (0, 3): Aidge does not compute on empty tensors (it returns the previous outputs "
               "unchanged)", operator="nn.functional.pad.circular")
    (entry,) = build_ledger([roll, pad])
    assert entry["kind"] == "silently wrong result" and len(entry["cases"]) == 2
    assert "returns the previous outputs unchanged" in entry["title"]


def test_a_failing_unit_test_of_the_framework_is_no_aidge_defect():
    ours = dict(OPINFO_PAD, nodeid="tests/unit/test_isolation.py::test_x", category="crash", error="crash: ...",
                outcome="failed")
    assert build_ledger([ours]) == []


# --- reached from torch (issue 60 item 4) ------------------------------------------------------------
ONNX_SLICE = _rec("tests/test_onnx_backend.py::test_onnx_backend[onnx_node_test_slice_start_out_of_bounds]",
                  "ONNX backend tests", "output_shape_differs", "output shape differs", kind="onnx_backend")
OPINFO_SLICE = _rec("tests/test_opinfo.py::test_opinfo[opinfo_narrow_s0]", "OpInfo", "output_shape_differs",
                    "output shape differs", kind="opinfo")
CONFIG_SLICE = _rec("tests/test_aidge_configs.py::test_aidge_config[aidge.slice_x]", "Aidge configs (aidge-benchmark)",
                    "output_shape_differs", "output shape differs", kind="aidge_config")


def test_an_entry_says_whether_torch_driven_cases_reach_it():
    (entry,) = build_ledger([ONNX_SLICE, OPINFO_SLICE, CONFIG_SLICE], table_dir="/nonexistent")
    assert entry["reached_from_torch"] is True and entry["torch_cases"] == 1  # the OpInfo case, not Aidge's configs
    (alone,) = build_ledger([ONNX_SLICE, CONFIG_SLICE], table_dir="/nonexistent")
    assert alone["id"] == entry["id"] and alone["reached_from_torch"] is False and alone["torch_cases"] == 0


def test_the_table_s_torch_driven_rows_reach_a_defect_this_run_saw_only_from_onnx(tmp_path):
    (entry,) = build_ledger([ONNX_SLICE], table_dir="/nonexistent")
    table = _table(tmp_path, {"0.10.1": [_row("x", "==0.10.1", source="opinfo", defect=entry["id"]),
                                         _row("y", "==0.10.1", source="onnx_backend", defect=entry["id"])],
                              "0.10.0": [_row("z", "==0.10.0", source="moduleinfo", defect=entry["id"])]})
    (seen,) = build_ledger([ONNX_SLICE], table_dir=table, release="0.10.1")
    assert seen["torch_rows"] == {"opinfo": 1}  # the onnx row is not torch's, the 0.10.0 row does not hold
    assert seen["reached_from_torch"] is True and seen["torch_cases"] == 0 and seen["torch_export"] is None


def test_an_onnx_only_defect_keeps_what_was_measured_of_torch_s_exporters_and_the_pages_show_it(tmp_path, monkeypatch):
    from interop.reporting import ledger as ledger_module

    (plain,) = build_ledger([ONNX_SLICE], table_dir="/nonexistent")
    monkeypatch.setitem(ledger_module.TORCH_EXPORTS, plain["id"], "x[:, 10:] <exports> as | this Slice")
    written = write_ledger(tmp_path, [ONNX_SLICE], table_dir="/nonexistent")
    assert written[0]["reached_from_torch"] is False and written[0]["torch_export"].startswith("x[:, 10:]")
    md = (tmp_path / "defects.md").read_text()
    assert "| from torch |" in md and "| no |" in md
    assert "- reached from torch: no (torch's exporters, measured: x\\[:, 10:\\] \\<exports\\> as \\| this Slice)" in md
    page = (tmp_path / "defects.html").read_text()
    assert "<th>from torch</th>" in page and "&lt;exports&gt;" in page and "<exports>" not in page
    data = json.loads((tmp_path / "defects.json").read_text())["defects"][0]
    assert (data["reached_from_torch"], data["torch_cases"], data["torch_rows"]) == (False, 0, {})
