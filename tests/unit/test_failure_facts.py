"""Issue 46, a failure's category and attribution decided once:
:func:`interop.cases.expected_failures.failure_facts` (the typed error first, the text only for
another library's exception) is what the guard, the record (``records.classify``), the console
reader (``records.sources.attribution_of``) and the report read. Before, a hang during the export
was ``export`` in the record and ``aidge`` in the report's reading of a text-decided failure
(``sources.attribution_of`` knew a crash during export, not a hang)."""
from __future__ import annotations

import pytest

from interop.cases import expected_failures as xf
from interop.errors import AidgeCrash, AidgeError
from interop.records.classify import finding_of
from interop.records.sources import attribution_of

HANG_TEXT = "crash: process timed out after 5 s during export (innermost Python frame onnx_export.py:120 export)"


def _report_finding(record):
    from interop.reporting import report

    return report._finding(report.row_of(record))


def _record(exc, **extra):
    return {"nodeid": "tests/test_models.py::test_m[m]", "case": "m", "outcome": "failed", "when": "call",
            "source": "model zoo", **finding_of(exc), **extra}


def test_a_hang_during_export_gets_one_attribution_everywhere():
    typed = AidgeCrash("export", HANG_TEXT, signal="SIGKILL", timed_out=True)
    foreign = RuntimeError(HANG_TEXT)  # the same failure through another library's exception
    for exc in (typed, foreign):
        facts = xf.failure_facts(exc)
        assert (facts.category, facts.attribution) == ("hang", "export"), exc
        record = _record(exc)
        assert (record["category"], record["attribution"]) == ("hang", "export")
        assert _report_finding(record)["attribution"] == "export"
    assert xf.failure_facts(typed).decided == "raise" and xf.failure_facts(foreign).decided == "text"
    assert attribution_of(HANG_TEXT, "hang") == "export"  # a console row: before, "aidge"
    assert attribution_of(HANG_TEXT.replace("during export", "during forward"), "hang") == "aidge"


def test_the_typed_category_comes_first_and_the_text_only_for_a_foreign_exception():
    # an Aidge error whose text alone would read as another category: its own class and phase decide
    exc = AidgeError("backward", "Backward not yet implemented for Sin_Op on backend cpu", operator="Sin")
    assert xf.failure_facts(exc).category == exc.category == "backward_not_implemented"
    assert xf.failure_facts(exc).decided == "raise"
    foreign = ValueError("something torch said")
    assert (xf.failure_facts(foreign).category, xf.failure_facts(foreign).decided) == ("unknown", "text")
    # a text-decided failure's stated attribution is read from its text; a typed one's is not
    stated = RuntimeError("Aidge forward failed (operator Add): boom\nattribution: export (onnxruntime agrees)")
    assert (xf.failure_facts(stated).attribution, xf.failure_facts(stated).stated) == ("export", True)
    assert finding_of(stated)["attribution"] == "export"


def test_the_guard_reads_the_one_decider(monkeypatch):
    from interop.cases.failure_table import ExpectedFailure

    entry = ExpectedFailure(kind="model", operator="M", cases=("M:*",), phase="export", category="hang",
                            error="timed out after", attribution="export", note="n")
    calls = []
    real = xf.failure_facts
    monkeypatch.setattr(xf, "failure_facts", lambda exc: calls.append(exc) or real(exc))
    with pytest.raises(xf.ExpectedAidgeFailure):
        with xf.expected_failure_guard(entry):
            raise AidgeCrash("export", HANG_TEXT, signal="SIGKILL", timed_out=True)
    assert len(calls) == 1
    # the same text in another category (the decider says crash, not hang): the row is wrong, the test fails
    with pytest.raises(xf.ExpectedFailureMismatch, match="category 'crash'"):
        with xf.expected_failure_guard(entry):
            raise AidgeCrash("export", "crash: process killed by SIGSEGV during export; timed out after", signal="SIGSEGV")
