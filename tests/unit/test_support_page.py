"""Issue 49: the support matrix as a page people use (interop/reporting/support.py): torch rows
before Aidge's own configurations, a search box and a source filter, failing case ids behind a
disclosure, marks as text, a sticky header and first column, defect ids linked; checked in
headless Chromium with the network blocked by tools/check_site.check_support_page."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from site_chromium import chromium_path

from interop.reporting.support import format_html, format_markdown, row_group, support_matrix, write_support


def _rec(op, source, outcome="passed", case=None, **extra):
    case = case or f"{op}_case"
    return dict({"kind": "operator", "torch_op": op, "operator": op, "source": source, "outcome": outcome,
                 "case": case, "nodeid": f"tests/test_x.py::test_x[{case}]", "phases": ["forward", "backward"]},
                **extra)


RECORDS = [
    _rec("aidge.abs", "Aidge configs (aidge-benchmark)"),
    _rec("aidge.conv", "Aidge configs (aidge-benchmark)", "xfailed", case="aidge.conv_bad", phase="forward",
         category="outputs_differ"),
    _rec("torch.nn.functional.relu", "OpInfo"),
    _rec("torch.nn.functional.relu", "OpInfo", "xfailed", case="opinfo_relu_<img src=x>", phase="backward",
         category="backward_not_implemented", aidge_operator="ReLU"),
    _rec("torch.abs", "catalog JSON", "failed", case="Abs_1", phase="forward", category="aidge_error"),
    _rec("LeNet", "model zoo"),
    _rec("Aidge SDShiftGELU (no torch counterpart)", "catalog JSON"),
]
DEFECTS = {"complete": True, "defects": [
    {"id": "D-0000abcd", "cases": ["tests/test_x.py::test_x[opinfo_relu_<img src=x>]"]},
    {"id": "D-1111ffff", "cases": ["tests/test_x.py::test_x[Abs_1]", "tests/test_x.py::test_x[aidge.conv_bad]"]}]}


def _page(tmp_path: Path) -> str:
    (tmp_path / "defects.json").write_text(json.dumps(DEFECTS))
    write_support(tmp_path, support_matrix(RECORDS), lines=["run <b>x</b>"])
    return (tmp_path / "support.html").read_text()


def test_torch_rows_first_aidge_configurations_last():
    assert [row_group(*r) for r in [("torch.abs", "OpInfo"), ("LeNet", "model zoo"),
                                    ("aidge.abs", "Aidge configs (aidge-benchmark)"),
                                    ("Aidge X (no torch counterpart)", "catalog JSON")]] == [0, 1, 2, 2]
    md = format_markdown(support_matrix(RECORDS))
    order = [line.split("`")[1] for line in md.splitlines() if line.startswith("| `")]
    assert order == ["torch.abs", "torch.nn.functional.relu", "LeNet", "Aidge SDShiftGELU (no torch counterpart)",
                     "aidge.abs", "aidge.conv"]


def test_operators_differing_only_in_case_have_one_order():
    """torch.T and torch.t (one source) tied on the row key, so the pages listed them in a set's
    iteration order, which changed with PYTHONHASHSEED: two runs of the same records differed."""
    import os
    import subprocess
    import sys

    script = ("import json, sys; from interop.reporting.support import format_markdown, support_matrix; "
              "recs = json.loads(sys.argv[1]); md = format_markdown(support_matrix(recs)); "
              "print([l.split('`')[1] for l in md.splitlines() if l.startswith('| `')])")
    pair = json.dumps([_rec("torch.t", "OpInfo", case="t_1"), _rec("torch.T", "OpInfo", case="T_1")])
    orders = {subprocess.run([sys.executable, "-c", script, pair], capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout.strip() for seed in range(6)}
    assert orders == {"['torch.T', 'torch.t']"}


def test_page_marks_disclosures_defects_escaping(tmp_path):
    page = _page(tmp_path)
    for emoji in ("\u2705", "\u274c", "\u26a0"):
        assert emoji not in page
    assert '<span class="mark">fail</span>' in page and '<span class="mark">part</span>' in page
    assert "<details><summary>1 failing case</summary>" in page and "<details open" not in page
    assert "<img src=x>" not in page and "opinfo_relu_&lt;img src=x&gt;" in page and "run &lt;b&gt;x&lt;/b&gt;" in page
    assert 'href="defects.html#D-0000abcd"' in page and 'href="defects.html#D-1111ffff"' in page
    assert '<a href="porting.html">' in page and '<a href="defects.html">' in page
    assert "http" not in page  # nothing fetched, no address outside the run
    cells = {(c["operator"], c["phase"]): c for c in json.loads((tmp_path / "support.json").read_text())["cells"]}
    assert cells[("torch.abs", "forward")]["defects"] == ["D-1111ffff"]
    assert cells[("torch.nn.functional.relu", "backward")]["defects"] == ["D-0000abcd"]
    assert cells[("torch.nn.functional.relu", "forward")]["defects"] == []


def test_page_without_a_ledger_has_no_defect_links():
    page = format_html(support_matrix(RECORDS))
    assert "defects.html#" not in page


def test_search_and_filter_in_headless_chromium_network_blocked(tmp_path):
    chromium = chromium_path()  # skips without playwright (requirements/site-check.txt) or a Chromium binary
    from tools.check_site import check_support_page, offline_page

    _page(tmp_path)
    # offline_page: a request off 127.0.0.1 or a JavaScript error is a SiteError when the block ends
    with offline_page(tmp_path, chromium, viewport=(900, 600)) as (page, base):
        said = check_support_page(page, base)
        # a search for nothing that exists shows no row, and says so
        page.fill("#q", "no-such-operator")
        assert page.inner_text("#shown").startswith("0 of 6")
    assert "6 rows x 2 columns" in said and "search: 'torch.abs'" in said and "source filter" in said


def test_publishing_renders_an_older_runs_matrix_again_and_adds_the_site_navigation(tmp_path):
    """case_index.py: a run's support.html written before the page had its controls is rendered
    again from its support.json (defects matched by case id); the pages get the site's links;
    the ledger page and its reports come from the same run, another run's reports are removed."""
    from tools import case_index

    run = tmp_path / "run"
    run.mkdir()
    matrix = support_matrix(RECORDS)
    for cell in matrix["cells"]:
        cell.pop("failing_nodeids")  # as an older run wrote it
    (run / "support.json").write_text(json.dumps(matrix))
    (run / "support.html").write_text("<html><body><table id='support'></table></body></html>")
    (run / "defects.json").write_text(json.dumps(DEFECTS))
    (run / "defects.html").write_text("<!DOCTYPE html><html><body><table><tr id='D-0000abcd'></tr></table></body></html>")
    html_dir = tmp_path / "html"
    (html_dir / "defects" / "D-99999999").mkdir(parents=True)
    (html_dir / "index.json").write_text(json.dumps({"benchmarks": {}}))
    assert case_index.main(["--html-dir", str(html_dir), "--support", str(run / "support.html"),
                            "--porting", str(tmp_path / "none.html")]) == 0
    page = (html_dir / "support.html").read_text()
    assert 'id="controls"' in page and 'href="defects.html#D-0000abcd"' in page and 'href="defects.html#D-1111ffff"' in page
    assert page.count("<nav") == 1 and page.count('id="site-nav"') == 1 and '<a href="index.html">Benchmark grid</a>' in page
    defects = (html_dir / "defects.html").read_text()
    assert "D-0000abcd" in defects and '<a href="support.html">Support matrix</a>' in defects
    assert not (html_dir / "defects").exists()  # the previous run's reports are gone
    porting = (html_dir / "porting.html").read_text()
    assert 'id="no-run"' in porting and '<a href="defects.html">Defects</a>' in porting
    assert case_index.with_site_nav(page, "support.html") == page  # idempotent
