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
    assert page.count("<tr data-route=") == 4 and "http" not in page
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


# --- issue 49: the operator named beside a node is that node's; every architecture row of a real run ---

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from interop.reporting.porting import attach_defects, defects_by_case, node_operator  # noqa: E402

DATA = Path(__file__).parent / "data"
#: the architecture records of run 20261203T152757075830Z-5f5c4d08-1541 (the fields the table reads;
#: the message cut to its first line and the bridge's line) and its ledger's entries for them
RUN_RECORDS = DATA / "issue49_architecture_records.jsonl"
RUN_DEFECTS = DATA / "issue49_architecture_defects.json"
LIVE_RUN = Path(__file__).resolve().parents[2] / "results" / "runs" / "20261203T152757075830Z-5f5c4d08-1541"


def _said_with(rec: dict, node: str, operator: str) -> bool:
    """The record's own texts pair ``operator`` with ``node``: the bridge's "(operator X, node 'N')"
    or the import gap's "'N' (ONNX op X)"."""
    return (f"(operator {operator}, node '{node}')" in (rec.get("message") or "")
            or f"'{node}' (ONNX op {operator})" in (rec.get("error") or ""))


def _check_every_row(records: list[dict]) -> int:
    table = porting_table(records)
    by_case = {r["case"]: r for r in records}
    checked = 0
    for row in table["rows"]:
        for route, cell in row["routes"].items():
            b = cell["blocking"]
            if not b:
                continue
            rec = by_case[b["case"]]
            if b["node"] and b["operator_from"] in ("bridge", "import"):
                assert _said_with(rec, b["node"], b["operator"]), (row["architecture"], route, b)
                checked += 1
            elif b["node"]:
                assert b["operator_from"] in ("checker",), (row["architecture"], route, b)
            # an architecture's own name is never given as the operator
            assert b["operator"] != row["architecture"], (row["architecture"], b)
            text = format_markdown({**table, "rows": [row]})
            if b["node"]:
                assert f"{b['operator']} `{b['node']}`" in text
    return checked


def _run_records(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines())
            if r.get("kind") == "architecture" and r.get("event", "record") == "record"]


def test_every_architecture_row_of_a_real_run_names_the_operator_of_its_node():
    records = _run_records(RUN_RECORDS)
    assert len(records) == 80
    assert _check_every_row(records) == 34  # every row whose blocking failure names a node
    cells = {(r["architecture"], route): c for r in porting_table(records)["rows"] for route, c in r["routes"].items()}
    # the rows the issue quotes: a RandomUniformLike node was called ConstantOfShape, an IsNaN node CumSum
    llama = cells[("transformers_LlamaModel", "dynamo")]["blocking"]
    assert (llama["operator"], llama["node"], llama["table_operator"]) == ("IsNaN", "node_IsNaN_198", "CumSum")
    assert llama["unsupported"] == [["IsNaN", 2], ["CumSum", 1]]
    vnet = cells[("monai_VNet", "dynamo")]["blocking"]
    assert (vnet["operator"], vnet["node"]) == ("Elu", "node_Elu_119")
    assert ["ConstantOfShape", 2] in vnet["unsupported"] and ["RandomUniformLike", 2] in vnet["unsupported"]
    eff = cells[("monai_EfficientNetBN", "torchscript")]["blocking"]
    assert eff["operator"] == "RandomUniformLike"
    # a Resize node whose backward Aidge refuses in a Slice: the node is the Resize, Aidge's words say Slice
    seg = cells[("monai_SegResNet_instancenorm", "torchscript")]["blocking"]
    assert (seg["operator"], seg["table_operator"]) == ("Resize", "Slice") and "Slice_Op" in seg["error"]
    # no node: the model's own name is not an operator
    dyn = cells[("monai_DynUNet", "torchscript")]["blocking"]
    assert dyn["operator"] is None and "monai_DynUNet (" not in format_markdown(porting_table(records))


@pytest.mark.skipif(not (LIVE_RUN / "records.jsonl").is_file(), reason="the run of 2026-12-03 is not on this machine")
def test_every_architecture_row_of_the_live_run():
    assert _check_every_row(_run_records(LIVE_RUN / "records.jsonl")) == 34


def test_checker_named_node_of_an_invalid_export():
    rec = {"aidge_operator": "index_select", "aidge_node": None, "operator": "torch.index_select",
           "attribution_reason": "the exported graph is invalid, so Aidge is not blamed: InferenceError: "
                                 "[ShapeInferenceError] Inference error(s): (op_type:Gather, node name: /Gather): x"}
    assert node_operator(rec) == {"operator": "Gather", "node": "/Gather", "from": "checker"}


def test_rows_link_the_ledger_defects_of_their_cases(tmp_path):
    records = _run_records(RUN_RECORDS)
    ledger = json.loads(RUN_DEFECTS.read_text())
    table = attach_defects(porting_table(records), ledger["defects"])
    by_case = defects_by_case(ledger["defects"])
    linked = 0
    for row in table["rows"]:
        for cell in row["routes"].values():
            expected = [i for case in cell["cases"] for i in by_case.get(case, [])]
            assert set(cell["defects"]) == set(expected)
            linked += bool(cell["defects"])
    assert linked >= 30
    (tmp_path / "defects.json").write_text(json.dumps(ledger))
    write_porting(tmp_path, porting_table(records))
    page = (tmp_path / "porting.html").read_text()
    llama_ids = [c for r in table["rows"] if r["architecture"] == "transformers_LlamaModel"
                 for c in r["routes"]["dynamo"]["defects"]]
    for i in llama_ids:
        assert f'href="defects.html#{i}"' in page
    assert '<a href="support.html">' in page and '<a href="defects.html">' in page
    assert "<details><summary>" in page  # the whole error one click away, not clipped


def test_quoted_node_and_error_are_escaped(tmp_path):
    rec = _rec("arch_monai_X_eval", "failed", phase="import", category="unsupported_operator",
               aidge_node="<b>n</b>", aidge_operator="Op",
               error="Aidge has no native operator for 1 node(s): '<b>n</b>' (ONNX op Evil); <script>x</script>")
    page = format_html(porting_table([rec]))
    assert "<script>x" not in page and "<b>n</b>" not in page and "&lt;script&gt;" in page


def test_porting_page_search_and_route_filter_in_headless_chromium(tmp_path):
    """The page as a porter uses it: checked by tools/check_site.check_porting_page in headless
    Chromium with every request off the local server aborted (skips without Chromium)."""
    import shutil

    pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium (apt-get install chromium)")
    from tools.check_site import check_porting_page, offline_page

    (tmp_path / "defects.json").write_text(RUN_DEFECTS.read_text())
    write_porting(tmp_path, porting_table(_run_records(RUN_RECORDS)))
    # offline_page: a request off 127.0.0.1 or a JavaScript error is a SiteError when the block ends
    with offline_page(tmp_path, chromium, viewport=(1280, 720)) as (page, base):
        said = check_porting_page(page, base)
    assert "41 architecture x route rows" in said and "search 'PRelu'" in said and "route dynamo -> 4 rows" in said
