"""The porting-readiness table (interop/reporting/porting.py) from records: routes side by side,
the first blocking node, the README's and the site's formats, the command line."""
from __future__ import annotations

import json

from interop.reporting.porting import format_html, format_markdown, main, porting_table, write_porting


def _rec(case, outcome="passed", exporter="auto", route="torchscript", nodes=42, **extra):
    name = case.rsplit("_", 1)[0][len("arch_"):]
    rec = {"kind": "architecture", "case": case, "operator": name, "outcome": outcome, "exporter": exporter,
           "export_route": route, "onnx_nodes": nodes}
    if route is None:
        rec.pop("export_route")
        rec.pop("onnx_nodes")
    rec.update(extra)
    return rec


RECORDS = [
    # passes everything on TorchScript
    _rec("arch_monai_Good_eval", exporter="torchscript"),
    _rec("arch_monai_Good_train", exporter="torchscript"),
    # TorchScript cannot export it; dynamo does, Aidge has no kernel
    _rec("arch_transformers_Gpt_eval", "xfailed", exporter="torchscript", route=None, phase="export",
         category="export_error (test strategy)", attribution="export",
         error="torch.onnx.export (torchscript route) failed for GPT2Model: aten::diff"),
    _rec("arch_transformers_Gpt_train", "xfailed", exporter="torchscript", route=None, phase="export",
         category="export_error (test strategy)", attribution="export", error="aten::diff"),
    _rec("arch_transformers_Gpt_eval", "failed", exporter="dynamo", route="dynamo", nodes=91, phase="import",
         category="unsupported_operator", aidge_operator="Where", aidge_node="node_Where_3",
         error="Aidge import failed (operator Where, node 'node_Where_3'): no kernel\nmore"),
    _rec("arch_transformers_Gpt_train", "failed", exporter="dynamo", route="dynamo", nodes=91, phase="import",
         category="unsupported_operator", aidge_operator="Where", aidge_node="node_Where_3", error="no kernel"),
    # forward fine in eval, backward blocked; train forward differs (a row of the table names it)
    _rec("arch_monai_Net_eval", "xfailed", exporter="torchscript", phase="backward",
         category="backward_not_implemented", aidge_operator="GlobalAveragePooling", aidge_node="pool",
         error="Backward not yet implemented for GlobalAveragePooling_Op on backend cpu"),
    _rec("arch_monai_Net_train", "xfailed", exporter="torchscript", phase="forward", category="outputs_differ",
         error="output differs", expected={"operator": "BatchNorm2D"}),
    # not an architecture record: ignored
    {"kind": "model", "case": "LeNet_eval", "outcome": "passed"},
]


def _cells():
    table = porting_table(RECORDS)
    return table, {(r["architecture"], route): c for r in table["rows"] for route, c in r["routes"].items()}


def test_each_route_is_a_column_and_every_architecture_a_row():
    table, cells = _cells()
    assert table["routes"] == ["torchscript", "dynamo"]
    assert [r["architecture"] for r in table["rows"]] == ["monai_Good", "monai_Net", "transformers_Gpt"]
    good = cells[("monai_Good", "torchscript")]
    assert (good["exports"], good["import"], good["forward"], good["backward"], good["blocking"]) == \
        ("42 nodes", "ok", {"eval": "ok", "train": "ok"}, "ok", None)


def test_an_export_failure_and_the_other_routes_first_blocking_node():
    _, cells = _cells()
    ts, dyn = cells[("transformers_Gpt", "torchscript")], cells[("transformers_Gpt", "dynamo")]
    assert ts["exports"] == "no" and ts["blocking"]["phase"] == "export" and ts["blocking"]["attribution"] == "export"
    assert dyn["exports"] == "91 nodes" and dyn["import"] == "no" and dyn["backward"] == "-"
    assert dyn["blocking"]["operator"] == "Where" and dyn["blocking"]["node"] == "node_Where_3"
    assert dyn["blocking"]["error"] == "Aidge import failed (operator Where, node 'node_Where_3'): no kernel"


def test_backward_is_the_first_mode_whose_forward_matched_and_the_table_names_the_operator():
    _, cells = _cells()
    net = cells[("monai_Net", "torchscript")]
    assert net["forward"] == {"eval": "ok", "train": "outputs_differ"}
    assert net["backward"] == "backward_not_implemented"  # eval's: train's forward already differs
    assert net["blocking"]["mode"] == "train" and net["blocking"]["operator"] == "BatchNorm2D"


def test_the_summary_counts_per_route():
    table, _ = _cells()
    assert table["summary"]["torchscript"] == {"architectures": 3, "exports": 2, "imports": 2, "forward_eval": 2,
                                               "forward_train": 1, "backward": 1}
    assert table["summary"]["dynamo"]["exports"] == 1 and table["summary"]["dynamo"]["imports"] == 0


def test_markdown_and_html_hold_every_row(tmp_path):
    table, _ = _cells()
    md = format_markdown(table)
    assert md.count("\n| ") == 1 + 4  # the header, 4 (architecture, route) rows
    assert "Where `node_Where_3` (import, eval)" in md
    assert format_markdown(table, limit=1).count("| monai_Good |") == 1
    page = format_html(table)
    assert page.count("<tr><td><code>") == 4 and "http" not in page
    paths = write_porting(tmp_path, table)
    assert [p.name for p in paths] == ["porting.json", "porting.md", "porting.html"]
    assert json.loads(paths[0].read_text())["architectures"] == 3


def test_the_command_line_reads_run_directories(tmp_path, capsys):
    for route in ("torchscript", "dynamo"):
        run = tmp_path / route
        run.mkdir()
        rows = [r for r in RECORDS if r.get("exporter") == route]
        (run / "records.jsonl").write_text("".join(json.dumps({"nodeid": f"t::{i}", **r}) + "\n"
                                                   for i, r in enumerate(rows)))
    assert main([str(tmp_path / "torchscript"), str(tmp_path / "dynamo"), "--write", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "| transformers_Gpt | dynamo | 91 nodes | no |" in out
    assert (tmp_path / "out" / "porting.html").exists()
    assert main([str(tmp_path / "missing")]) == 2
    assert "no records.jsonl" in capsys.readouterr().err
