"""The proposed expected-failure rows of a run's untriaged OpInfo failures
(interop/reporting/triage.py): one row per reason, quotes general enough to cover every sample
failing for that reason, each quote found in its failures' messages, nothing dropped silently;
and the rows pasted as they are make the same failures strict expected failures."""
from __future__ import annotations


import pytest

from interop.console import PytestRun, TestResult, text_run
from interop.reporting.report import TextRun
from interop.reporting.triage import propose_opinfo_rows, split_opinfo_id

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


def _result(case: str, message: str, exc_type: str | None, outcome: str = "failed",
            test: str = "tests/test_opinfo.py::test_opinfo") -> TestResult:
    return TestResult(f"{test}[{case}]", outcome, message, exc_type=exc_type)


def _run(*results: TestResult) -> TextRun:
    return text_run(PytestRun(list(results), totals={"failed": len(results)}))


def test_opinfo_ids_split_into_the_tables_entry_and_label():
    assert split_opinfo_id("opinfo_nn.functional.max_pool2d_s12_1x2x3_kernelsize3") == (
        "nn.functional.max_pool2d", "s12_1x2x3_kernelsize3")
    assert split_opinfo_id("opinfo_masked.amin_s8_2_maskNone_float16") == ("masked.amin", "s8_2_maskNone_float16")
    assert split_opinfo_id("opinfo_abs_s0") == ("abs", "s0")
    # the label as Case.label gives it (what a row's pattern matches): dots become underscores
    assert split_opinfo_id("opinfo_cdist_s64_5x5x2_5x6x2_0.5_usemmforeucliddist") == (
        "cdist", "s64_5x5x2_5x6x2_0_5_usemmforeucliddist")
    assert split_opinfo_id("ReLU_rank_2") is None


def test_one_row_per_reason_with_general_quotes():
    triage = propose_opinfo_rows(_run(
        _result("opinfo_masked.amin_s8_2_maskNone_float16", _REGISTRAR, "interop.errors.AidgeNotImplementedError"),
        _result("opinfo_amin_s3_3x5_float16", _REGISTRAR_OTHER_SHAPE, "interop.errors.AidgeNotImplementedError"),
        _result("opinfo_matmul_s4_5x0_0x10", _EMPTY, "interop.errors.AidgeError"),
        _result("opinfo_unflatten_s1_8_float64", _CAPACITY.format(16), "interop.errors.AidgeError"),
        _result("opinfo_constant_pad_nd_s28_1x3", _CAPACITY.format(32), "interop.errors.AidgeError"),
        _result("opinfo_argsort_s12_5x5x5_int64", _EXPORT, "interop.errors.ExportError"),
        _result("opinfo_cdist_s4_2x3x5_2x3x5_0_usemmforeucliddist", _MISMATCH,
                "interop.equivalence.tester.EquivalenceError"),
        _result("opinfo_masked.normalize_s28_5x10x5_0_2", _CRASH, "interop.errors.AidgeCrash"),
        _result("opinfo_diagonal_s7_3x5_offset1", _UNSUPPORTED, "interop.errors.UnsupportedOperatorError"),
    ))
    rows = {(r.operator, r.phase, r.category, r.error, r.attribution): r.cases for r in triage.rows}
    assert rows == {
        # a missing kernel: filed under the Aidge operator its mangled type names, quoted up to the dtype,
        # so that two shapes (and two OpInfo entries) share the row
        ("ReduceMin", "forward", "forward_not_implemented", 'missing or invalid registrar key: "[float16', "aidge"):
            ["amin:s3_3x5_float16", "masked.amin:s8_2_maskNone_float16"],
        ("MatMul", "forward", "aidge_error",
         "Aidge does not compute on empty tensors (it returns the previous outputs unchanged)", "aidge"):
            ["matmul:s4_5x0_0x10"],
        ("Concat", "forward", "aidge_error", "Number of elements to copy is above implementation current capacity",
         "aidge"): ["constant_pad_nd:s28_1x3", "unflatten:s1_8_float64"],
        ("argsort", "export", "export_error (test strategy)",
         "Unsupported: ONNX export of operator Sort, Out parameter is not supported", "export"):
            ["argsort:s12_5x5x5_int64"],
        # a mismatch: the comparator's line, as the table quotes it
        ("cdist", "forward", "outputs_differ", "Tensors are not close at output!", "export"):
            ["cdist:s4_2x3x5_2x3x5_0_usemmforeucliddist"],
        ("masked.normalize", "forward", "crash", "crash: process killed by SIGSEGV during forward", "aidge"):
            ["masked.normalize:s28_5x10x5_0_2"],
        # the node list's order and names change from run to run: one "(ONNX op X)", the first by name
        ("CumSum", "import", "unsupported_operator", "(ONNX op CumSum)", "aidge"): ["diagonal:s7_3x5_offset1"],
    }
    assert triage.cases == 9 and not triage.left_out


def test_what_cannot_become_a_row_is_listed_not_dropped():
    triage = propose_opinfo_rows(_run(
        _result("opinfo_abs_s0_20x20", "something nobody categorises", "RuntimeError"),
        # another suite's failure: not this triage's business
        _result("ReLU_rank_2", _EMPTY, "interop.errors.AidgeError", test="tests/test_operators.py::test_ReLU_interop"),
        # an OpInfo test whose id is not an OpInfo case id
        _result("weird", _EMPTY, "interop.errors.AidgeError"),
    ))
    assert triage.rows == []
    assert [case for case, _ in triage.left_out] == ["opinfo_abs_s0_20x20", "weird"]
    assert dict(triage.left_out)["opinfo_abs_s0_20x20"].startswith("category")


def test_passes_and_expected_failures_propose_nothing():
    triage = propose_opinfo_rows(_run(
        _result("opinfo_abs_s0_20x20", "", None, outcome="passed"),
        _result("opinfo_matmul_s4_5x0_0x10", _EMPTY, "interop.errors.AidgeError", outcome="xfailed"),
    ))
    assert triage.rows == [] and triage.left_out == []


def test_the_proposed_rows_cover_their_cases_with_a_quote_their_failures_contain():
    """Each proposed row, built into the table's entry, covers its cases with a quote their
    failures contain."""
    from interop.cases.expected_failures import ExpectedFailure

    failures = {
        "opinfo_masked.amin_s8_2_maskNone_float16": _REGISTRAR,
        "opinfo_matmul_s4_5x0_0x10": _EMPTY,
        "opinfo_argsort_s12_5x5x5_int64": _EXPORT,
    }
    types = {"opinfo_argsort_s12_5x5x5_int64": "interop.errors.ExportError"}
    triage = propose_opinfo_rows(_run(*(_result(c, m, types.get(c, "interop.errors.AidgeError"))
                                        for c, m in failures.items())))
    assert len(triage.rows) == 3
    for row in triage.rows:
        entry = ExpectedFailure(row.operator, row.phase, row.category, row.error, tuple(row.cases), kind="opinfo",
                                backend="cpu", attribution=row.attribution)
        for key in row.cases:
            entry_name, label = key.split(":")
            case_id = f"opinfo_{entry_name}_{label}"
            assert entry.covers("opinfo", entry_name, label, "cpu")
            assert any(q in failures[case_id] for q in entry.quotes)


@pytest.mark.parametrize("outcome", ["failed", "error"])
def test_both_failed_and_errored_cases_are_triaged(outcome):
    triage = propose_opinfo_rows(_run(_result("opinfo_matmul_s4_5x0_0x10", _EMPTY, "interop.errors.AidgeError",
                                              outcome=outcome)))
    assert triage.cases == 1
