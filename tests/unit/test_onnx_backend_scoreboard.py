"""The ONNX conformance scoreboard (interop.reporting.onnx_scoreboard) from records: passed / run per
operator, failures (xfailed included) by category, skips by reason and out of the run count; the run
folder's conformance.json / .md / .html, each defect the ledger's, linked to its row of defects.html."""
from __future__ import annotations

import json

from interop.reporting.onnx_scoreboard import main, render_markdown, scoreboard, write_scoreboard


def _rec(case, operator, outcome, category=None, skip=None):
    return {"kind": "onnx_backend", "case": case, "operator": operator, "case_key": case.split("_", 2)[2],
            "outcome": outcome, "category": category, "skip_reason": skip, "backend": "cpu"}


RECORDS = [
    _rec("onnx_node_test_relu", "Relu", "passed"),
    _rec("onnx_node_test_dropout_default", "Dropout", "xfailed", "outputs_differ"),
    _rec("onnx_node_test_dropout_default_ratio", "Dropout", "failed", "outputs_differ"),
    _rec("onnx_node_test_training_dropout", "Dropout", "skipped", skip="random expected output: Dropout"),
    _rec("onnx_pytorch-converted_test_Conv2d", "pytorch-converted", "passed"),
    {"kind": "opinfo", "case": "opinfo_abs_s0", "operator": "abs", "outcome": "failed"},  # another source
]


def test_counts_per_operator_group_and_reason():
    board = scoreboard(RECORDS)
    assert board["operators"]["Dropout"]["run"] == 2 and board["operators"]["Dropout"]["passed"] == 0
    assert board["operators"]["Dropout"]["failed"] == {"outputs_differ": 2}
    assert board["operators"]["Dropout"]["skipped"] == 1
    assert board["operators"]["Relu"] == {"run": 1, "passed": 1, "failed": {}, "skipped": 0, "defects": []}
    assert "pytorch-converted" not in board["operators"]  # model tests: by group, not operator
    assert board["groups"]["pytorch-converted"]["passed"] == 1
    assert board["skipped"] == {"random expected output": 1}
    assert board["totals"]["run"] == 4 and board["totals"]["passed"] == 2
    text = render_markdown(board)
    assert "| Dropout | 0 / 2 | 2 outputs_differ | 1 |" in text


def test_main_writes_into_the_run_folder_only(tmp_path, capsys):
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    assert main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conformance.html", "conformance.json", "conformance.md",
                                                          "records.jsonl"]
    assert json.loads((tmp_path / "conformance.json").read_text())["totals"]["run"] == 4
    assert (tmp_path / "conformance.md").read_text().startswith("# ONNX backend conformance")
    assert main([str(tmp_path / "missing")]) == 2
    other = tmp_path / "other"
    other.mkdir()
    (other / "records.jsonl").write_text(json.dumps(RECORDS[-1]) + "\n")  # no case of the source: nothing written
    assert main([str(other)]) == 1 and sorted(p.name for p in other.iterdir()) == ["records.jsonl"]


# --- the run folder's page (issue 60 item 5) -------------------------------------------------------------
def _aidge(rec, nodeid, error, **extra):
    return dict(rec, nodeid=nodeid, error=error, attribution="aidge", source="ONNX backend tests", phase="forward",
                aidge_operator=rec["operator"], **extra)


LEDGER_RECORDS = [
    _aidge(RECORDS[0], "tests/test_onnx_backend.py::test_onnx_backend[onnx_node_test_relu]", ""),
    _aidge(RECORDS[1], "tests/test_onnx_backend.py::test_onnx_backend[onnx_node_test_dropout_default]",
           "output differs", expected={"defect": "D-00000000", "category": "outputs_differ"}),
    # Aidge's words with HTML and Markdown in them, an operator name too
    _aidge(_rec("onnx_node_test_evil", "<script>x</script>|Op", "failed", "aidge_error"),
           "tests/test_onnx_backend.py::test_onnx_backend[onnx_node_test_evil]", "Aidge forward failed: <img onerror=1>"),
    # onnxruntime refuses the model: not Aidge's, no ledger entry
    dict(_aidge(_rec("onnx_node_test_dft", "DFT", "xfailed", "outputs_differ"),
                "tests/test_onnx_backend.py::test_onnx_backend[onnx_node_test_dft]", "output differs"),
         attribution="export"),
    RECORDS[3],
]


def test_the_page_names_the_ledger_s_defects_and_links_each_to_its_row(tmp_path):
    from interop.reporting.ledger import write_ledger

    ledger = write_ledger(tmp_path, LEDGER_RECORDS, table_dir="/nonexistent")
    ids = {e["operator"]: e["id"] for e in ledger}
    written = write_scoreboard(tmp_path, LEDGER_RECORDS, lines=["run R"])
    assert [p.name for p in written] == ["conformance.json", "conformance.md", "conformance.html"]
    board = json.loads((tmp_path / "conformance.json").read_text())
    assert board["ledger"] is True
    # the ledger's id, not the table's D-00000000: the page links only what defects.html holds
    assert board["operators"]["Dropout"]["defects"] == [ids["Dropout"]]
    assert board["operators"]["DFT"]["defects"] == []  # export's: no Aidge defect
    page = (tmp_path / "conformance.html").read_text()
    assert f'<a class="defect" href="defects.html#{ids["Dropout"]}">{ids["Dropout"]}</a>' in page
    assert f"<tr id='{ids['Dropout']}'" in (tmp_path / "defects.html").read_text()
    assert "<script>x" not in page and "&lt;script&gt;x&lt;/script&gt;|Op" in page and "<img" not in page
    assert "<b>ONNX conformance</b>" in page and 'href="defects.html">Defects' in page
    md = (tmp_path / "conformance.md").read_text()
    assert f"[{ids['Dropout']}](defects.html#{ids['Dropout']})" in md
    assert "\\<script\\>x\\</script\\>\\|Op" in md and "<script>" not in md


def test_without_a_ledger_the_table_s_defects_are_named_unlinked(tmp_path):
    write_scoreboard(tmp_path, LEDGER_RECORDS)
    board = json.loads((tmp_path / "conformance.json").read_text())
    assert board["ledger"] is False and board["operators"]["Dropout"]["defects"] == ["D-00000000"]
    page = (tmp_path / "conformance.html").read_text()
    assert 'href="defects.html#' not in page and '<span class="defect"' in page
    assert "](defects.html#" not in (tmp_path / "conformance.md").read_text()


def test_a_run_without_the_source_gets_no_page(tmp_path):
    assert write_scoreboard(tmp_path, [RECORDS[-1]]) == [] and list(tmp_path.iterdir()) == []


def test_publishing_puts_the_run_s_scoreboard_on_the_site_with_the_site_s_navigation(tmp_path):
    """case_index.py: conformance.html of the run the support matrix comes from, its defect links kept,
    the site's navigation in place of the run's; a run without it: a page saying so; index.html's
    navigation bar links it."""
    from tools import case_index
    from interop.reporting.ledger import write_ledger
    from interop.reporting.porting import link_run_pages
    from interop.reporting.support import support_matrix, write_support

    run = tmp_path / "run"
    run.mkdir()
    ledger = write_ledger(run, LEDGER_RECORDS, table_dir="/nonexistent")
    write_support(run, support_matrix(LEDGER_RECORDS))
    write_scoreboard(run, LEDGER_RECORDS)
    link_run_pages(run)
    html_dir = tmp_path / "html"
    html_dir.mkdir()
    (html_dir / "index.json").write_text(json.dumps({"benchmarks": {}}))
    (html_dir / "index.html").write_text('<html><body><ul><li id="nav-li-regressions">R</li></ul></body></html>')
    args = ["--html-dir", str(html_dir), "--support", str(run / "support.html"), "--porting", str(tmp_path / "none")]
    assert case_index.main(args) == 0
    page = (html_dir / "conformance.html").read_text()
    assert page.count("<nav") == 1 and 'id="site-nav"' in page and "<b>ONNX conformance</b>" in page
    assert '<a href="index.html">Benchmark grid</a>' in page
    assert all(f'href="defects.html#{e["id"]}"' in page for e in ledger if e["operator"] == "Dropout")
    for name in ("support.html", "defects.html", "porting.html"):
        assert '<a href="conformance.html">ONNX conformance</a>' in (html_dir / name).read_text(), name
    assert case_index.NAV_CONFORMANCE in (html_dir / "index.html").read_text()
    (run / "conformance.html").unlink()  # a published run without onnx's backend tests
    assert case_index.main(args) == 0
    assert 'id="no-run"' in (html_dir / "conformance.html").read_text()
