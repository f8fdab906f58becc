"""The ONNX conformance scoreboard (interop.reporting.onnx_scoreboard) from records: passed / run per
operator, failures (xfailed included) by category, skips by reason and out of the run count."""
from __future__ import annotations

import json

from interop.reporting.onnx_scoreboard import main, render_markdown, scoreboard


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
    assert json.loads((tmp_path / "onnx-scoreboard.json").read_text())["totals"]["run"] == 4
    assert (tmp_path / "onnx-scoreboard.md").read_text().startswith("# ONNX backend conformance")
    assert main([str(tmp_path / "missing")]) == 2
