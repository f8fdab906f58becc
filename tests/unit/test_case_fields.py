"""Issue 46, item 1: a case carries its facts (source, torch operator, dtype, label, backend) as
fields, a record carries them as written from the case object, a test whose worker died keeps
them (its start line), and the only place an id is parsed back is the importer of records
written without them (:func:`interop.records.sources.imported_fields`)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from interop.cases.case import KINDS, SOURCE_OF_KIND, Case
from interop.records.sources import SOURCES, imported_fields
from interop.records.store import PartWriter, combine, load_run

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]
CASE = Case(id="Relu_a", op_class="torch.nn:ReLU", operator="ReLU", path="a", input_size=(2, 3))


def test_a_case_names_its_source_dtype_torch_operator_and_label():
    assert set(SOURCE_OF_KIND) == set(KINDS)
    # a test that runs no case is named by its file: the same names as the cases' own
    assert set(SOURCE_OF_KIND.values()) <= set(SOURCES.values())
    opinfo = Case(id="opinfo_nn.functional.conv2d_s0_x_float64", op_class="opinfo:nn.functional.conv2d",
                  operator="nn.functional.conv2d", path="s0_x_float64", kind="opinfo",
                  params={"opinfo": "nn.functional.conv2d", "index": 0, "dtype": "float64"})
    assert (opinfo.suite, opinfo.dtype, opinfo.torch_op, opinfo.label) == (
        "OpInfo", "float64", "torch.nn.functional.conv2d", "s0_x_float64")
    assert (CASE.suite, CASE.dtype, CASE.label, CASE.backend) == ("catalog JSON", "float32", "a", "cpu")
    assert CASE.torch_op.startswith("torch.") and "relu" in CASE.torch_op.lower()


def _records(directory: Path) -> dict[str, dict]:
    return {r["nodeid"].rsplit("::", 1)[-1]: r for r in load_run(directory).records}


def test_a_record_carries_the_case_fields_also_when_its_xdist_worker_dies(pytester):
    pytester.makepyfile(test_fields=textwrap.dedent("""
        import os
        import pytest
        from interop.cases.case import Case

        CASES = [Case(id="Relu_a", op_class="torch.nn:ReLU", operator="ReLU", path="a", input_size=(2, 3)),
                 Case(id="Relu_dies", op_class="torch.nn:ReLU", operator="ReLU", path="dies", input_size=(2, 3),
                      params={"dtype": "float64"})]

        @pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
        def test_case(case):
            if case.id == "Relu_dies":
                os._exit(3)
    """))
    out = pytester.path / "records"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "1", "--records", str(out))
    recs = _records(out)
    alive, dead = recs["test_case[Relu_a]"], recs["test_case[Relu_dies]"]
    for rec, case in ((alive, CASE), (dead, Case(id="Relu_dies", op_class="torch.nn:ReLU", operator="ReLU",
                                                 path="dies", params={"dtype": "float64"}))):
        assert (rec["case"], rec["source"], rec["kind"], rec["operator"], rec["label"], rec["dtype"],
                rec["torch_op"], rec["backend"]) == (case.id, case.suite, case.kind, case.operator, case.label,
                                                     case.dtype, case.torch_op, "cpu"), rec
    assert alive["outcome"] == "passed"
    assert dead["outcome"] == "failed" and dead["category"] in ("crash", "killed"), dead


def test_a_test_killed_before_its_record_keeps_its_start_lines_case_fields(tmp_path):
    writer = PartWriter(tmp_path, "gw0")
    writer.write({"event": "start", "nodeid": "tests/test_opinfo.py::test_opinfo[x]", "case": "x", "source": "OpInfo",
                  "kind": "opinfo", "operator": "abs", "label": "s0_2", "dtype": "float16", "time": "2026-01-01",
                  "worker": "gw0", "pid": 1})
    writer.close()
    rec = combine(tmp_path, None)[0][0]
    assert (rec["category"], rec["case"], rec["kind"], rec["operator"], rec["label"], rec["dtype"]) == (
        "killed", "x", "opinfo", "abs", "s0_2", "float16")


@pytest.mark.parametrize("record, fields", [
    # an OpInfo record of a run before the fields (or a console row): its ids say its case
    ({"nodeid": "tests/test_opinfo.py::test_opinfo[opinfo_masked.amin_s8_2_maskNone_float16]",
      "case": "opinfo_masked.amin_s8_2_maskNone_float16"},
     {"source": "OpInfo", "kind": "opinfo", "operator": "masked.amin", "label": "s8_2_maskNone_float16",
      "dtype": "float16"}),
    ({"nodeid": "tests/test_opinfo.py::test_opinfo[opinfo_cdist_s64_5x5x2_0.5]", "case": "opinfo_cdist_s64_5x5x2_0.5"},
     {"source": "OpInfo", "kind": "opinfo", "operator": "cdist", "label": "s64_5x5x2_0_5", "dtype": "float32"}),
    # a record with its case's kind and operator, written before the label: the label from its case key
    ({"nodeid": "tests/test_operators.py::test_x[Conv2D_stride_2]", "case": "Conv2D_stride_2", "source": "catalog JSON",
      "kind": "operator", "operator": "Conv2D", "case_key": "stride.2"}, {"label": "stride_2"}),
    # a unit test: its file's source and its test name, no case
    ({"nodeid": "tests/unit/test_a.py::test_b"}, {"source": "framework unit tests", "case": "b"}),
])
def test_the_importer_reads_old_records_back_and_leaves_new_ones_alone(record, fields):
    got = imported_fields(record)
    assert {k: got.get(k) for k in fields} == fields
    assert imported_fields({**record, **got}) == {}  # a record with its fields: nothing to import


def _called(path: Path, names: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    return found


def test_the_records_plugin_and_the_triage_read_fields_never_ids():
    parsers = {"split_opinfo_id", "operator_of", "source_of", "case_id"}
    files = [ROOT / "interop" / "records" / "plugin.py", ROOT / "interop" / "records" / "plugin_fields.py",
             ROOT / "interop" / "records" / "plugin_session.py", ROOT / "interop" / "reporting" / "triage.py"]
    assert [c for p in files for c in _called(p, parsers)] == []
    triage_propose = ast.parse((ROOT / "interop" / "reporting" / "triage_propose.py").read_text())
    case_of = next(n for n in triage_propose.body if isinstance(n, ast.FunctionDef) and n.name == "_case_of")
    calls = {getattr(n.func, "id", None) or getattr(n.func, "attr", None)
             for n in ast.walk(case_of) if isinstance(n, ast.Call)}
    assert not calls & parsers and "with_imported_fields" in calls
    # the OpInfo id is parsed in one place: the importer's module
    defining = [p.relative_to(ROOT).as_posix() for p in (ROOT / "interop").rglob("*.py")
                if "def split_opinfo_id" in p.read_text()]
    assert defining == ["interop/records/sources.py"]
