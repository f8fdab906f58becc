"""Issue 44: an expected-failure table or an operator configuration folder that does not load is
one clear error naming the file (and the row and key), before collection: it was every operator
turned into one ``<Op>_config_error`` test blamed on ``configs/<Op>.json`` (with ``-k``: only "56
deselected", exit 5); a FIFO in the table hung the session; an unknown ``INTEROP_AIDGE_RELEASE``
was every operator's config error too."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from interop.cases import failure_table as ft

ROOT = Path(__file__).resolve().parents[2]


def _broken_table(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the table with one row's phase of the wrong type; (the table, the broken file)."""
    table = tmp_path / "table"
    shutil.copytree(ft.TABLE_DIR, table)
    path = sorted((table / "0.10.1").glob("operator.*.json"))[0]
    data = json.loads(path.read_text())
    data["rows"][0]["phase"] = 5
    path.write_text(json.dumps(data))
    return table, path


def _pytest(*args: str, **env: str) -> subprocess.CompletedProcess:
    full = dict(os.environ, **env)
    for name in ("INTEROP_RESULTS_DIR", "INTEROP_RECORDS_DIR", "INTEROP_SHARD", "INTEROP_RECORDS_SESSION",
                 "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
        full.pop(name, None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--records", "none", *args],
                          cwd=ROOT, env=full, capture_output=True, text=True, timeout=300)


def test_a_broken_table_file_is_one_error_naming_file_row_and_key(tmp_path):
    table, path = _broken_table(tmp_path)
    done = _pytest("tests/test_operators.py", "-q", "-k", "Conv2D", INTEROP_EXPECTED_FAILURES=str(table))
    out = done.stdout + done.stderr
    assert done.returncode == 4, out[-3000:]
    (line,) = [x for x in out.splitlines() if x.startswith("ERROR:")]
    assert f"{path} row 0 (" in line and "key 'phase'" in line, line
    assert "_config_error" not in out and "deselected" not in out and "Traceback" not in out


def test_a_missing_configuration_folder_is_one_error_naming_it(tmp_path):
    done = _pytest("tests/test_operators.py", "-q", "--co", INTEROP_CONFIG_DIR=str(tmp_path / "nowhere"))
    out = done.stdout + done.stderr
    assert done.returncode == 4, out[-3000:]
    assert f"ERROR: {tmp_path / 'nowhere'}: the operator configuration folder (INTEROP_CONFIG_DIR): no such folder" \
        in out
    assert "_config_error" not in out


def test_the_tools_own_tests_do_not_need_the_table(tmp_path):
    # tests/unit sessions (and projects outside the checkout) are not the suites: no table check
    from interop import pytest_plugin

    config = type("C", (), {"args": ["tests/unit/test_x.py"],
                            "invocation_params": type("I", (), {"dir": ROOT})()})()
    assert not pytest_plugin._collects_suites(config)
    config.args = ["tests/test_operators.py::test_Conv2D_interop"]
    assert pytest_plugin._collects_suites(config)
    config.args = [str(tmp_path)]
    assert not pytest_plugin._collects_suites(config)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs: POSIX")
def test_a_fifo_in_the_table_is_refused_by_name_never_a_hang(tmp_path):
    table = tmp_path / "table"
    (table / "0.10.1").mkdir(parents=True)
    os.mkfifo(table / "0.10.1" / "operator.crash.json")
    with pytest.raises(ft.TableError, match=r"operator\.crash\.json: .*FIFO"):
        ft.load_table(table)


def test_an_unknown_release_variable_is_named(monkeypatch):
    monkeypatch.setenv("INTEROP_AIDGE_RELEASE", "banana")
    with pytest.raises(ft.TableError, match=r"INTEROP_AIDGE_RELEASE='banana': not a release"):
        ft.aidge_release()
    from interop.cases import expected_failures

    expected_failures._table.cache_clear()
    try:
        assert "INTEROP_AIDGE_RELEASE='banana'" in expected_failures.suite_input_problem()
    finally:
        monkeypatch.delenv("INTEROP_AIDGE_RELEASE")
        expected_failures._table.cache_clear()


def test_a_missing_table_folder_is_named(monkeypatch, tmp_path):
    from interop.cases import expected_failures

    monkeypatch.setenv("INTEROP_EXPECTED_FAILURES", str(tmp_path / "no-table"))
    expected_failures._table.cache_clear()
    try:
        problem = expected_failures.suite_input_problem()
    finally:
        monkeypatch.delenv("INTEROP_EXPECTED_FAILURES")
        expected_failures._table.cache_clear()
    assert problem == (f"the expected-failure table cannot be loaded: {tmp_path / 'no-table'}: no expected-failure "
                       "table here (INTEROP_EXPECTED_FAILURES, or the package's interop/cases/expected/)")
