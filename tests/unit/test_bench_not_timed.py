"""Issue 49, asv output: a case Aidge cannot run (a strict expected failure of the table for the
installed Aidge release, in a phase the benchmark needs) is no parameter of the timing
benchmarks; it is listed once, with its table row's defect id (benchmarks/not_timed.py). A case
that passes stays a parameter. No timed assertion."""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness, not_timed  # noqa: E402
from interop.cases import expected_failures  # noqa: E402
from interop.cases.failure_table import ExpectedFailure  # noqa: E402

DEFECT = "D-0123abcd"


def _case(case_id: str, test_backward: bool = True) -> harness.Case:
    return harness.Case(case_id, lambda: torch.nn.Linear(4, 3), input_size=(2, 4), test_backward=test_backward,
                        operator=case_id.split("_")[0])


@pytest.fixture
def fake_table(monkeypatch):
    """Two cases of a made-up operator, ``Fakeop_bad`` and ``Fakeop_good``, and a table of one strict
    row: Fakeop's ``bad`` label fails Aidge's backward (defect DEFECT)."""
    row = ExpectedFailure(operator="Fakeop", phase="backward", category="backward_not_implemented",
                          error="Backward not yet implemented for Fakeop_Op", cases=("Fakeop:bad",), kind="operator",
                          defect=DEFECT, file="interop/cases/expected/0.10.1/operator.backward_not_implemented.json",
                          index=7)
    real = expected_failures.expected_failure

    def lookup(case, backend=None, phases=None, table=None):
        return real(case, backend, phases, table=[row])

    monkeypatch.setattr(harness, "expected_failure", lookup)
    added = {c.id: c for c in (_case("Fakeop_bad"), _case("Fakeop_good"))}
    operators = harness.cases("operator")
    saved = dict(operators)
    operators.clear()
    operators.update(added)  # the fake cases alone: the real table stays out of this test
    try:
        yield row
    finally:
        operators.clear()
        operators.update(saved)


def test_a_strict_expected_failure_is_no_parameter_of_its_phase(fake_table):
    assert harness.case_ids("operator", "backward") == ["Fakeop_good"]
    # the row stops the backward only: the forward of the same case is timed
    assert harness.case_ids("operator", "forward") == ["Fakeop_bad", "Fakeop_good"]


def test_it_is_listed_once_with_its_defect_id(fake_table):
    listed = harness.not_timed([("operator", "forward"), ("operator", "backward")])
    assert [(e.case_id, e.phase, e.defect) for e in listed] == [("Fakeop_bad", "backward", DEFECT)]
    entry = listed[0]
    assert (entry.operator, entry.fails_in, entry.category) == ("Fakeop", "backward", "backward_not_implemented")
    assert entry.row.endswith("operator.backward_not_implemented.json#7")
    text = not_timed.summary(listed)
    assert text.count("Fakeop_bad") == 1 and DEFECT in text
    # the asv names it would have had, so that bench-quick lists those its --bench selects
    assert "operators.Backward.time_aidge('Fakeop_bad')" in not_timed.benchmark_names(entry)
    assert not_timed.selected(listed, r"\('Fakeop_bad'\)") == listed
    assert not_timed.selected(listed, r"\('Fakeop_good'\)") == []


def test_the_benchmark_class_parametrises_the_passing_case_only(fake_table):
    cls = harness.benchmark_class("operator", "backward", "Backward")
    assert cls.params == [["Fakeop_good"]]


def test_the_list_is_written_as_json_and_markdown(fake_table, tmp_path):
    listed = harness.not_timed([("operator", "backward")])
    paths = not_timed.write(listed, tmp_path)
    data = json.loads(paths[0].read_text())
    assert data["count"] == 1 and data["not_timed"][0]["defect"] == DEFECT
    assert "| Fakeop_bad | backward | " + DEFECT in paths[1].read_text()


def test_a_declared_skip_is_left_out_too(monkeypatch):
    import dataclasses

    case = dataclasses.replace(_case("Fakeop_declared"), skip_reason="no such operator in Aidge")
    entry = harness.not_timed_entry(case, "forward")
    assert entry is not None and entry.defect is None and entry.category == "declared_skip"


def test_the_installed_table_and_the_parametrisation_agree():
    """Over the real catalog and table: every listed case-phase is no parameter, every
    parameter has no expected failure up to its phase, and a listed row with a defect shows it."""
    listed = harness.not_timed()
    assert listed, "no case Aidge cannot run: the test is void"
    for kind, phase in harness.BENCHMARKED:
        ids = set(harness.case_ids(kind, phase))
        out = {e.case_id for e in listed if (e.kind, e.phase) == (kind, phase)}
        assert not ids & out
        for case_id in ids:
            case = harness.cases(kind)[case_id]
            assert expected_failures.expected_failure(case, "cpu", harness._phases_up_to(phase)) is None, case_id
    assert any(e.defect and re.fullmatch(r"D-[0-9a-f]{8}", e.defect) for e in listed)
    assert not_timed.track_cases_aidge_cannot_run() == len(listed)


def test_interop_bench_cases_parametrises_those_cases_only(monkeypatch):
    monkeypatch.setenv("INTEROP_BENCH_CASES", "LeNet_eval, LeNet_train")
    assert harness.case_ids("model", "forward") == ["LeNet_eval", "LeNet_train"]
    monkeypatch.delenv("INTEROP_BENCH_CASES")
    assert len(harness.case_ids("model", "forward")) > 2


def test_bench_quick_parametrises_cases_its_regex_selects():
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    values = {t.id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
              for t in n.targets if getattr(t, "id", None) in ("BENCH_QUICK", "BENCH_QUICK_CASES")}
    catalog = set(harness.cases("operator")) | set(harness.cases("model"))
    for case in values["BENCH_QUICK_CASES"]:
        assert case in catalog, case
        assert re.search(values["BENCH_QUICK"], f"models.Forward.time_aidge('{case}')") or \
            re.search(values["BENCH_QUICK"], f"operators.Forward.time_aidge('{case}')"), case
    assert re.search(values["BENCH_QUICK"], "not_timed.track_cases_aidge_cannot_run")


def test_the_script_s_command_line_builds(tmp_path):
    """`nox -s bench-quick` runs the script itself: its argument parser is built from the harness
    module (which is interop.reporting.bench_harness since issue 44), and a name that module does
    not hold broke the session in CI (`harness.Path`, 2026-12-04)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "not_timed.py"), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "--write" in done.stdout, done.stderr[-2000:]
