"""How a run's untriaged failures become proposed expected-failure rows: the quote of each
failed record (interop/reporting/triage.py, ``quote_of``) general enough to cover every sample
failing for its reason, under the Aidge operator, found in the failure's message, or the reason
it cannot be a row; the proposal (interop/reporting/triage_propose.py, ``propose``) groups them
into one row per reason, lists every case, drops nothing silently; and the rows it writes make
the same failures strict expected failures."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from interop.cases import failure_table as ft
from interop.cases.case import PHASES
from interop.cases.expected_failures import disagreements, expected_failure, quotes_failure
from interop.console import PytestRun, TestResult, text_run
from interop.records.sources import split_opinfo_id
from interop.reporting.triage import quote_of
from interop.reporting.triage_propose import _case_of, propose

# failure messages as the OpInfo suite raises them (from a run of shard 1/300 of the full session)
_REGISTRAR = ('Aidge forward failed: missing or invalid registrar key: "[float16, Default, [(2, 2)], int64, Default, '
              '[(1, 1)]], [float16, Default, [(1, 1)]]" for registrable object N5Aidge16OperatorImpl_cpuINS_12ReduceMin'
              '_OpEFvRKSt6vectorIiSaIiEEmRKS2_ImSaImEEPKvPvEFvvEEE\nDid you include/import the corresponding module?')
_REGISTRAR_OTHER_SHAPE = _REGISTRAR.replace("(2, 2)", "(3, 5)")
_EMPTY = ("Aidge forward failed (operator MatMul, node 'MatMul'): input 0 has shape (5, 0): Aidge does not compute on "
          "empty tensors (it returns the previous outputs unchanged)")
_CAPACITY = ("Aidge forward failed (operator Concat, node 'Concat'): Number of elements to copy is above implementation "
             "current capacity ({}B > 8B)")
_EXPORT = ("torch.onnx.export failed for CallableModule: Unsupported: ONNX export of operator Sort, Out parameter is not "
           "supported. Please feel free to request support or submit a pull request on PyTorch GitHub")
_MISMATCH = ("[opinfo_cdist_s4_2x3x5_2x3x5_0_usemmforeucliddist, call 1] output differs between model1 (torch) and "
             "model2 (AidgeModule) [seed 0]\nTensors are not close at output!\n\nMismatched elements: 18 / 18 (100%)\n"
             "attribution: export (onnxruntime on the same ONNX model differs from torch too)")
_UNSUPPORTED = ("Aidge import failed (operator If, node 'If'): Aidge has no native operator for 3 node(s): 'If' (ONNX op "
                "If), 'EyeLike' (ONNX op EyeLike), 'CumSum' (ONNX op CumSum); they were imported as GenericOperator and "
                "cannot run")
_CRASH = "crash: process killed by SIGSEGV during forward (innermost Python frame runner.py:run_forward)"
_NOT_IMPLEMENTED = "interop.errors.AidgeNotImplementedError"


def _result(case: str, message: str, exc_type: str | None, outcome: str = "failed",
            test: str = "tests/test_opinfo.py::test_opinfo") -> TestResult:
    return TestResult(f"{test}[{case}]", outcome, message, exc_type=exc_type)


def _rows(*results: TestResult) -> list[dict]:
    """The results as records (a console row has a record's keys)."""
    return text_run(PytestRun(list(results), totals={"failed": len(results)})).records


def _record(case: str, message: str, exc_type: str | None, **over) -> dict:
    (row,) = _rows(_result(case, message, exc_type, **over))
    return row


def _propose(tmp_path: Path, *results: TestResult):
    """The proposal for a run of these results against an empty table of Aidge 0.10.1, and the run's records."""
    run, table = tmp_path / "run", tmp_path / "table"
    run.mkdir()
    table.mkdir()
    records = _rows(*results)
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "session.json").write_text(json.dumps({"versions": {"aidge_core": "0.10.1"}, "complete": True}))
    return propose(run, table), records, table


def test_opinfo_ids_split_into_the_tables_entry_and_label():
    assert split_opinfo_id("opinfo_nn.functional.max_pool2d_s12_1x2x3_kernelsize3") == (
        "nn.functional.max_pool2d", "s12_1x2x3_kernelsize3")
    assert split_opinfo_id("opinfo_masked.amin_s8_2_maskNone_float16") == ("masked.amin", "s8_2_maskNone_float16")
    assert split_opinfo_id("opinfo_abs_s0") == ("abs", "s0")
    # the label as Case.label gives it (what a row's pattern matches): dots become underscores
    assert split_opinfo_id("opinfo_cdist_s64_5x5x2_5x6x2_0.5_usemmforeucliddist") == (
        "cdist", "s64_5x5x2_5x6x2_0_5_usemmforeucliddist")
    assert split_opinfo_id("ReLU_rank_2") is None


@pytest.mark.parametrize("case, message, exc_type, row", [
    # a missing kernel: filed under the Aidge operator its mangled type names, quoted up to the dtype,
    # so that two shapes (and two OpInfo entries) share the quote
    ("opinfo_masked.amin_s8_2_maskNone_float16", _REGISTRAR, _NOT_IMPLEMENTED,
     ("ReduceMin", "forward", "forward_not_implemented", 'missing or invalid registrar key: "[float16', "aidge")),
    ("opinfo_amin_s3_3x5_float16", _REGISTRAR_OTHER_SHAPE, _NOT_IMPLEMENTED,
     ("ReduceMin", "forward", "forward_not_implemented", 'missing or invalid registrar key: "[float16', "aidge")),
    # the empty input's shape dropped
    ("opinfo_matmul_s4_5x0_0x10", _EMPTY, "interop.errors.AidgeError",
     ("MatMul", "forward", "aidge_error",
      "Aidge does not compute on empty tensors (it returns the previous outputs unchanged)", "aidge")),
    # the copy's byte counts dropped
    ("opinfo_unflatten_s1_8_float64", _CAPACITY.format(16), "interop.errors.AidgeError",
     ("Concat", "forward", "aidge_error", "Number of elements to copy is above implementation current capacity",
      "aidge")),
    ("opinfo_constant_pad_nd_s28_1x3", _CAPACITY.format(32), "interop.errors.AidgeError",
     ("Concat", "forward", "aidge_error", "Number of elements to copy is above implementation current capacity",
      "aidge")),
    # the export's "why", under the case's operator
    ("opinfo_argsort_s12_5x5x5_int64", _EXPORT, "interop.errors.ExportError",
     ("argsort", "export", "export_error (test strategy)",
      "Unsupported: ONNX export of operator Sort, Out parameter is not supported", "export")),
    # a mismatch: the comparator's line, as the table quotes it
    ("opinfo_cdist_s4_2x3x5_2x3x5_0_usemmforeucliddist", _MISMATCH, "interop.equivalence.tester.EquivalenceError",
     ("cdist", "forward", "outputs_differ", "Tensors are not close at output!", "export")),
    # a crash: AidgeCrash's own words, without the frame
    ("opinfo_masked.normalize_s28_5x10x5_0_2", _CRASH, "interop.errors.AidgeCrash",
     ("masked.normalize", "forward", "crash", "crash: process killed by SIGSEGV during forward", "aidge")),
    # the node list's order and names change from run to run: one "(ONNX op X)", the first by name
    ("opinfo_diagonal_s7_3x5_offset1", _UNSUPPORTED, "interop.errors.UnsupportedOperatorError",
     ("CumSum", "import", "unsupported_operator", "(ONNX op CumSum)", "aidge")),
])
@pytest.mark.parametrize("outcome", ["failed", "error"])
def test_a_failure_s_quote_is_general_names_the_aidge_operator_and_is_in_its_message(case, message, exc_type, row,
                                                                                    outcome):
    assert quote_of(_record(case, message, exc_type, outcome=outcome)) == row
    assert row[3] in message


def test_what_cannot_become_a_row_says_why():
    assert quote_of(_record("opinfo_abs_s0_20x20", "something nobody categorises", "RuntimeError")) == (
        "category 'unknown' is not a table category")
    # a quote the message does not hold is no quote: the row would never match its failure
    record = _record("opinfo_matmul_s4_5x0_0x10", _EMPTY, "interop.errors.AidgeError")
    assert quote_of(dict(record, message="Aidge forward failed: something else")) == (
        "the quote 'Aidge does not compute on empty tensors (it returns the previous outputs unchanged)' is not in "
        "the failure's message")
    assert quote_of(dict(record, phase=None)) == "no phase or quote found in the message (aidge_error)"


def test_one_row_per_reason_every_case_listed_nothing_dropped_silently(tmp_path):
    proposal, _, _ = _propose(
        tmp_path,
        _result("opinfo_unflatten_s1_8_float64", _CAPACITY.format(16), "interop.errors.AidgeError"),
        _result("opinfo_constant_pad_nd_s28_1x3_float64", _CAPACITY.format(32), "interop.errors.AidgeError"),
        _result("opinfo_argsort_s12_5x5x5_int64", _EXPORT, "interop.errors.ExportError"),
        _result("opinfo_matmul_s4_5x0_0x10", _EMPTY, "interop.errors.AidgeError", outcome="error"),
        _result("opinfo_abs_s0_20x20", "something nobody categorises", "RuntimeError"),
        # passes and expected failures propose nothing
        _result("opinfo_abs_s1_5", "", None, outcome="passed"),
        _result("opinfo_matmul_s5_5x0_0x10", _EMPTY, "interop.errors.AidgeError", outcome="xfailed"),
    )
    added = {(c["after"]["operator"], c["after"]["phase"], c["after"]["category"], c["after"]["quote"],
              c["after"]["attribution"]): c["after"]["cases"] for c in proposal.changes if c["action"] == "add"}
    assert [c["action"] for c in proposal.changes] == ["add"] * 3
    assert added == {
        # two operators' cases failing for one reason (byte counts apart): one row
        ("Concat", "forward", "aidge_error", "Number of elements to copy is above implementation current capacity",
         "aidge"): ["constant_pad_nd:s*_1x3_float64", "unflatten:s*_8_float64"],
        ("argsort", "export", "export_error (test strategy)",
         "Unsupported: ONNX export of operator Sort, Out parameter is not supported", "export"):
            ["argsort:s*_5x5x5_int64"],
        # an errored case is triaged as a failed one
        ("MatMul", "forward", "aidge_error",
         "Aidge does not compute on empty tensors (it returns the previous outputs unchanged)", "aidge"):
            ["matmul:s*_5x0_0x10"],
    }
    assert proposal.left_out == [{"case": "opinfo_abs_s0_20x20", "why": "category 'unknown' is not a table category"}]


def test_the_proposed_rows_make_the_same_failures_strict_expected_failures(tmp_path):
    """Each proposed row, written into the table as proposed, decides its cases as the guard
    does: it covers them, quotes their failures and disagrees with none of their fields."""
    proposal, records, table = _propose(
        tmp_path,
        _result("opinfo_masked.amin_s8_2_maskNone_float16", _REGISTRAR, _NOT_IMPLEMENTED),
        _result("opinfo_matmul_s4_5x0_0x10", _EMPTY, "interop.errors.AidgeError"),
        _result("opinfo_argsort_s12_5x5x5_int64", _EXPORT, "interop.errors.ExportError"),
    )
    assert [c["action"] for c in proposal.changes] == ["add"] * 3 and not proposal.left_out
    applied = tmp_path / "applied"  # a folder of its own: the table is read once per folder
    for path, (_, text) in proposal.files.items():
        written = applied / Path(path).relative_to(table)
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text(text)
    entries = ft.applicable(ft.load_table(applied), "0.10.1")
    assert len(entries) == 3
    for record in records:
        case = _case_of(record)
        entry = expected_failure(case, case.backend, PHASES, table=entries)
        assert entry is not None, case.id
        assert quotes_failure(entry, record["message"]), (case.id, entry.quotes)
        assert not disagreements(entry, record["category"], record["phase"], record["attribution"]), case.id
