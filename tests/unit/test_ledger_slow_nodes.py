"""Issue 47 item 1: slow nodes are ledger entries of kind ``slow`` (from a run's per-node profile),
with an id that does not move with the measured figures, an upstream report each, a place in the
report's speed section by the model time they cost; torch's equivalent op computes what onnxruntime
computes on the node. No timed assertion: the figures here are made up or only checked for shape."""
from __future__ import annotations

import json

import numpy as np
import pytest

from interop.registry.identify import defect_id
from interop.reporting.ledger import build_ledger, ledger_headline, ledger_summary, write_ledger
from interop.reporting.ledger_slow import read_slow_profile, slow_entries, slow_id
from interop.reporting.report_text import _slow_nodes_section


def _slow(op, shapes, occurrences, *, aidge_type=None, attributes=None, ratio=10.0, **extra):
    return {"kind": "slow", "op_type": op, "aidge_type": aidge_type or op, "attributes": attributes or {},
            "input_shapes": shapes, "ratio": ratio, "threshold": 3.0,
            "cost_s": sum(o["aidge_s"] - o["ort_s"] for o in occurrences), "occurrences": occurrences, **extra}


def _occ(model, node, aidge_s, ort_s, share):
    return {"model": model, "node": node, "aidge_s": aidge_s, "ort_s": ort_s, "ratio": aidge_s / ort_s,
            "share": share}


RESIZE = _slow("Resize", [[2, 4, 16, 16], [4]], [_occ("monai_SegResNet", "/up/Resize", 0.025, 2e-5, 0.6)],
               attributes={"mode": "linear"}, ratio=1250.0,
               alone={"rounds": 11, "aidge_s": 0.02, "ort_s": 2e-5, "ort_optimized_s": 2e-5, "torch_s": 4e-5,
                      "torch_op": "torch.nn.functional.interpolate(bilinear)", "ratio_torch": 500.0},
               reproducer="reproducers/slow/x")
LAYERNORM = _slow("LayerNormalization", [[2, 8, 32], [32], [32]],
                  [_occ("transformers_BertModel", f"/l{k}/LayerNorm", 2e-4, 8e-6, 0.1) for k in range(5)],
                  aidge_type="LayerNorm", ratio=25.0)
PROFILE = {"meta": {"started": "2026-12-03 18:00:00 UTC", "command": "python -m interop.node_profile",
                    "uptime_at_end": "load average: 4.0", "rounds": 21},
           "profiles": [], "slow": [LAYERNORM, RESIZE]}


def test_the_profile_names_reproducers_by_the_ledger_s_id():
    from interop.node_profile import slow as npf
    from interop.reporting.ledger_slow import slow_signature

    assert npf.slow_id(RESIZE) == slow_id(RESIZE) == defect_id(slow_signature(RESIZE))


def test_the_id_is_the_shape_class_not_the_figures():
    moved = dict(RESIZE, ratio=700.0, cost_s=0.01, alone={})
    assert slow_id(moved) == slow_id(RESIZE)
    assert slow_id(dict(RESIZE, input_shapes=[[2, 8, 8, 8], [4]])) != slow_id(RESIZE)
    assert slow_id(dict(RESIZE, attributes={"mode": "nearest"})) != slow_id(RESIZE)
    assert slow_id(RESIZE).startswith("D-") and len(slow_id(RESIZE)) == 10


def test_entries_by_cost_with_both_ratios_and_each_model_s_share():
    resize, layernorm = slow_entries(PROFILE, release="0.10.1")
    assert resize["operator"] == "Resize" and layernorm["operator"] == "LayerNorm"  # Aidge's name for it
    assert resize["cost_s"] > layernorm["cost_s"]
    assert resize["ratio_ort"] == 1250.0 and resize["ratio_torch"] == 500.0
    assert layernorm["ratio_torch"] is None  # not timed alone: no torch figure is made up
    assert layernorm["models"]["transformers_BertModel"]["nodes"] == 5
    assert layernorm["models"]["transformers_BertModel"]["share"] == pytest.approx(0.5)
    assert resize["kind"] == "slow" and resize["component"] == "aidge_backend_cpu"
    assert resize["releases"] == ["0.10.1"] and resize["reproducer"] == "reproducers/slow/x"


def test_no_profile_no_entries():
    assert slow_entries(None) == []


def test_write_ledger_adds_the_run_s_slow_nodes_with_their_reports(tmp_path):
    (tmp_path / "node-profile").mkdir()
    (tmp_path / "node-profile" / "node_profile.json").write_text(json.dumps(PROFILE))
    record = {"nodeid": "tests/test_operators.py::test_Slice_interop[Slice_x]", "source": "operator",
              "category": "backward_not_implemented", "error": "Backward not yet implemented for Slice_Op on backend cpu",
              "aidge_operator": "Slice", "phase": "backward", "outcome": "xfailed", "attribution": "aidge",
              "backend": "cpu"}
    ledger = write_ledger(tmp_path, [record])
    kinds = [e["kind"] for e in ledger]
    assert kinds == ["no backward", "slow", "slow"]
    assert len(build_ledger([record])) == 1  # the records alone: no slow entry
    data = json.loads((tmp_path / "defects.json").read_text())
    assert [e["kind"] for e in data["defects"]] == kinds
    resize = next(e for e in ledger if e["operator"] == "Resize")
    issue = (tmp_path / resize["issue"]).read_text()
    assert "x1250" in issue and "interpolate" in issue and "reproducers/slow/x/time_aidge.py" in issue
    assert "time_aidge.py" in (tmp_path / "defects.md").read_text()
    headline = ledger_headline(ledger, [record])
    assert headline.startswith("1 distinct Aidge defect(s)") and "2 slow node(s)" in headline
    summary = ledger_summary(ledger, records=[record])
    assert [e["operator"] for e in summary["slow"]] == ["Resize", "LayerNorm"]
    assert all(e["id"] != resize["id"] for e in summary["top"])  # the top defects are correctness ones
    lines: list[str] = []
    _slow_nodes_section(lines.append, summary)
    assert "2 ==" in lines[1] and "Resize" in lines[2] and "LayerNorm" in lines[3]


def test_a_broken_profile_is_said_not_fatal(tmp_path):
    (tmp_path / "node-profile").mkdir()
    (tmp_path / "node-profile" / "node_profile.json").write_text("{not json")
    with pytest.raises(ValueError, match="node_profile.json"):
        read_slow_profile(tmp_path)
    assert write_ledger(tmp_path, []) == []
    assert "node_profile.json" in json.loads((tmp_path / "defects.json").read_text())["slow_error"]


def test_without_slow_entries_the_report_says_so():
    lines: list[str] = []
    _slow_nodes_section(lines.append, ledger_summary([]))
    assert "none in the ledger" in lines[1]


@pytest.mark.parametrize("op, attrs, shapes", [
    ("Conv", {"pads": [1, 1, 1, 1], "group": 4, "kernel_shape": [3, 3]}, [[2, 4, 8, 8], [4, 1, 3, 3], [4]]),
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, [[2, 3, 8, 8]]),
    ("LayerNormalization", {"axis": -1, "epsilon": 1e-5}, [[2, 8, 32], [32], [32]]),
    ("Resize", {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}, None),
    ("Gemm", {"transB": 1}, [[4, 8], [16, 8], [16]]),
])
def test_torch_equivalent_computes_what_onnxruntime_computes(op, attrs, shapes):
    pytest.importorskip("onnxruntime")
    torch = pytest.importorskip("torch")
    from onnx import TensorProto, helper, numpy_helper

    from interop.oracle.onnxruntime import ort_session
    from interop.node_profile.alone import torch_equivalent

    rng = np.random.default_rng(0)
    if op == "Resize":
        values = {"x": rng.standard_normal((2, 4, 8, 8)).astype(np.float32), "roi": np.zeros(0, np.float32),
                  "scales": np.array([1, 1, 2, 2], np.float32)}
        names = ["x", "roi", "scales"]
    else:
        names = [f"i{k}" for k in range(len(shapes))]
        values = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    node = helper.make_node(op, names, ["y"], name="n", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x" if op == "Resize" else "i0",
                                                                          TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(values[n], n) for n in names[1:]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (expected,) = ort_session(model).run(None, {names[0]: values[names[0]]})
    call, label = torch_equivalent(node, values, list(expected.shape))
    with torch.no_grad():
        got = call().numpy()
    assert label.startswith("torch")
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_no_torch_op_is_made_up():
    from onnx import helper

    from interop.node_profile.alone import torch_equivalent

    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[0, 0, 1, 1])  # asymmetric pads: no single torch op
    values = {"x": np.zeros((1, 1, 4, 4), np.float32), "w": np.zeros((1, 1, 2, 2), np.float32)}
    assert torch_equivalent(node, values) is None
    assert torch_equivalent(helper.make_node("Einsum", ["x"], ["y"], equation="ij->ji"), values) is None


def test_backward_profile_reads_aidge_s_backward_records():
    torch = pytest.importorskip("torch")
    pytest.importorskip("aidge_core")
    from interop.node_profile.backward import profile_backward
    from interop.node_profile.report import backward_lines

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval()
    p = profile_backward(model, [(2, 8)], name="Tiny", rounds=5, warmup=1, max_s=5.0)
    assert model.training is False  # the caller's mode restored
    assert p["rounds"] == 5 and p["total"]["aidge_s"]["n"] == 5 and p["total"]["torch_s"]["median"] > 0
    assert sorted(r["op_type"] for r in p["nodes"]) == ["Gemm", "Gemm", "Relu"] and p["unmatched_aidge"] == []
    assert sum(r["share"] for r in p["nodes"]) == pytest.approx(1.0)
    assert all(r["forward_s"] is not None for r in p["nodes"])  # the same round's forward, beside
    assert "(backward)" in backward_lines(p)[0]


def test_the_porting_table_shows_both_ratios_from_the_profile(tmp_path):
    from interop.reporting.porting import format_html, format_markdown, load_speeds, write_porting

    (tmp_path / "node-profile").mkdir()
    profile = {"profiles": [{"name": "monai_DenseNet121", "total": {"ratio_torch": {"median": 1.05},
                                                                     "ratio_optimized": {"median": 11.2}}},
                            {"name": "monai_UNet", "error": "RuntimeError: PRelu"}], "slow": []}
    (tmp_path / "node-profile" / "node_profile.json").write_text(json.dumps(profile))
    assert load_speeds(tmp_path) == {"monai_DenseNet121": {"torch": 1.05, "ort": 11.2}}
    table = {"routes": ["torchscript"], "architectures": 1, "summary": {}, "rows": [
        {"architecture": "monai_DenseNet121", "library": "monai", "routes": {"torchscript": {
            "exports": "77 nodes", "nodes": 77, "import": "ok", "forward": {"eval": "ok"}, "backward": "ok",
            "blocking": None, "cases": [], "defects": []}}}]}
    write_porting(tmp_path, table)
    assert "| x1.05 / x11.2 |" in (tmp_path / "porting.md").read_text()
    page = (tmp_path / "porting.html").read_text()
    assert "Aidge/onnxruntime</th>" in page and "<td>x11.2</td>" in page
    assert "| - |" in format_markdown(dict(table, rows=[dict(table["rows"][0], speed=None)]))
    assert format_html(table).count("<th title=") == 2  # the two speed columns say where they come from


def test_a_long_node_is_judged_on_its_cpu_time_alone_not_its_wall_clock_records():
    from interop.node_profile.slow import slow_nodes

    def row(k, aidge_s, cpu_s, ort_s):
        return {"index": k, "onnx_name": f"n{k}", "op_type": "Conv", "attributes": {"group": k},
                "aidge_types": ["Conv2D"], "input_shapes": [[1, 8, 8, 8]], "aidge_s": aidge_s,
                "aidge_cpu_s": cpu_s, "ort_s": ort_s, "ratio": aidge_s / ort_s, "aidge_share": 0.5}

    # 60 ms of records (preempted) for 3 ms of CPU: x3000 in the records, x150 on CPU time
    profile = {"name": "M", "nodes": [row(1, 60e-3, 3e-3, 20e-6), row(2, 400e-6, 300e-6, 20e-6)]}
    long, short = slow_nodes([profile])
    assert long["occurrences"][0]["aidge_clock"] == "cpu alone" and long["ratio"] == pytest.approx(150)
    assert short["occurrences"][0]["aidge_clock"] == "records" and short["ratio"] == pytest.approx(20)
