"""Issue 49: the report names the right operator for what it quotes, and an Aidge crash on an
invalid export is listed both as the export's fault and as Aidge's failure to reject the graph
(interop/reporting/report_text.py)."""
from __future__ import annotations

from interop.reporting.report_text import _bug_section, aidge_operator_words, crashes_on_invalid_exports


def _bug(category, error, aidge_operator=None, known=True, cases=("c1",)):
    return {"category": category, "error": error, "aidge_operator": aidge_operator, "known": known, "phase": "forward",
            "emoji": "*", "cases": [{"case": c, "nodeid": f"t::{c}", "detail": None, "repro": None} for c in cases]}


def test_an_import_gap_names_every_onnx_op_not_the_table_rows():
    bug = _bug("unsupported_operator", "Aidge has no native operator for 3 node(s): 'node_IsNaN_198' (ONNX op IsNaN), "
               "'node_IsNaN_308' (ONNX op IsNaN), 'node_cumsum' (ONNX op CumSum); they were imported", "CumSum")
    assert aidge_operator_words(bug, "transformers_LlamaModel") == " -> no Aidge operator for ONNX IsNaN, CumSum"


def test_a_torch_function_name_is_not_given_as_aidges_operator():
    crash = _bug("crash", "crash: process killed by SIGSEGV during forward", "index_select")
    assert aidge_operator_words(crash, "torch.index_select") == " -> the process died before Aidge named a node"
    assert "Aidge index_select" not in aidge_operator_words(crash, "torch.index_select")
    assert aidge_operator_words(_bug("gradients_differ", "input grad [0] differs", "cos"), "torch.cos") == ""
    # Aidge's own names stay
    assert aidge_operator_words(_bug("backward_not_implemented", "Backward not yet implemented for Abs_Op", "Abs"),
                                "torch.abs") == " -> Aidge Abs"
    assert aidge_operator_words(_bug("crash", "crash: SIGSEGV", "AvgPooling1D"), "moduleinfo.nn.AvgPool1d") == \
        " -> Aidge AvgPooling1D"


def test_a_crash_on_an_invalid_export_is_listed_in_both_sections():
    report = {"export_findings": [
        {"operator": "moduleinfo.nn.AvgPool1d", "new": 0, "known": 2,
         "bugs": [_bug("crash", "crash: process killed by SIGSEGV during forward", "AvgPooling1D", cases=("a", "b"))]},
        {"operator": "torch.all", "new": 0, "known": 1, "bugs": [_bug("aidge_error", "Expected boolean", "all")]}]}
    crashes = crashes_on_invalid_exports(report)
    assert [g["operator"] for g in crashes] == ["moduleinfo.nn.AvgPool1d"] and crashes[0]["known"] == 2
    lines: list[str] = []
    _bug_section(lines.append, [], "Aidge bugs to report", also=crashes)
    text = "\n".join(lines)
    assert "failure to reject an invalid graph: 2 case(s) of 1 operator(s)" in text
    assert "moduleinfo.nn.AvgPool1d" in text and "[invalid export, not rejected]" in text
    lines = []
    _bug_section(lines.append, report["export_findings"], "Export findings", crash_note=" [also Aidge's]")
    text = "\n".join(lines)
    assert "crash (known) [forward] -> Aidge AvgPooling1D [also Aidge's]" in text
    assert "Expected boolean" in text and text.count("[also Aidge's]") == 1
