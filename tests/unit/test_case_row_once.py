"""Issue 46, item 1: a case's table row is looked up once, by the pytest plugin at collection; the
case the fixtures and the test receive carries that row, and the guard reads the same one. No
``cases/`` module and no fixture looks the table up again."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOOKUPS = {"with_expected_failure", "expected_failure"}


def _calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in LOOKUPS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    return found


def test_no_case_module_and_no_suite_fixture_looks_the_table_up():
    modules = [p for p in (ROOT / "interop" / "cases").glob("*.py") if p.name != "expected_failures.py"]
    suites = list((ROOT / "tests").glob("test_*.py"))
    found = [c for p in [*modules, *suites] for c in _calls(p)]
    # test_models.py's BatchNorm diagnosis asks which row another case (the _train one) has: not a fixture
    assert [c for c in found if not c.startswith("tests/test_models.py")] == []
    plugin = _calls(ROOT / "interop" / "pytest_plugin.py")
    assert len(plugin) == 1 and "with_expected_failure" in plugin[0], plugin


def test_the_case_a_test_receives_carries_the_row_its_item_was_marked_with(tmp_path):
    (tmp_path / "test_one_row.py").write_text(textwrap.dedent('''
        import pytest
        from interop.cases.catalog import property_cases

        CASES = {c.id: c for c in property_cases()}

        @pytest.mark.parametrize("case", [CASES["hypothesis_ReLU_nonfinite"], CASES["hypothesis_Log_finite"]],
                                 ids=lambda c: c.id)
        def test_row(case, request):
            assert case.expected_failure is request.node.interop_expected_failure
            assert case is request.node.interop_case and case.backend == "cpu"
            if case.id == "hypothesis_ReLU_nonfinite":
                assert case.expected_failure is not None  # the row the table has for it
    '''))
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTEROP_")}
    env["INTEROP_CONFIG_DIR"] = str(ROOT / "configs")
    # --runxfail: the row's strict xfail would turn this test's pass into a failure
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--runxfail",
                           "--records", "none", str(tmp_path / "test_one_row.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout
