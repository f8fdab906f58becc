"""interop.node_profile on a 3-node model: every Aidge node matched to its ONNX node,
the times positive, the shares of each side summing to 1, the parsers on fixed text. No timed
assertion: nothing here compares a speed."""
from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")
pytest.importorskip("aidge_core")

from interop.node_profile.alone import write_timing_reproducer  # noqa: E402
from interop.node_profile.forward import profile_onnx  # noqa: E402
from interop.node_profile.records import parse_ort_profile, parse_scheduling_diagram  # noqa: E402
from interop.node_profile.report import markdown, table_lines  # noqa: E402
from interop.node_profile.slow import slow_nodes  # noqa: E402
from interop.node_profile.torch import export_torch, profile_torch  # noqa: E402


class Tiny(torch.nn.Module):
    """Gemm -> Relu -> Gemm (3 ONNX nodes)."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@pytest.fixture(scope="module")
def profile():
    torch.manual_seed(0)
    return profile_torch(Tiny(), [(2, 8)], name="Tiny", rounds=5, warmup=1, max_s=5.0)


def test_every_aidge_node_matched(profile):
    assert profile["onnx_nodes"] == 3
    assert profile["unmatched_aidge"] == []
    ops = sorted(r["op_type"] for r in profile["nodes"])
    assert ops == ["Gemm", "Gemm", "Relu"]
    for row in profile["nodes"]:
        assert row["index"] is not None and row["onnx_name"]
        assert row["aidge_names"], row  # each ONNX node ran in Aidge under a name mapped back to it


def test_times_positive_and_rounds(profile):
    assert profile["rounds"] == 5
    total = profile["total"]
    for side in ("aidge_s", "ort_s", "ort_optimized_s"):
        assert total[side]["n"] == 5 and total[side]["median"] > 0
    assert total["aidge_nodes_sum_s"] > 0 and total["ort_nodes_sum_s"] > 0
    for row in profile["nodes"]:
        assert row["ort_s"] is not None and row["ort_s"] >= 0
        assert row["aidge_s"] >= 0  # whole microseconds: a tiny Relu may read 0
        assert row["aidge_cpu_s"] is not None and row["aidge_cpu_s"] > 0  # each node alone, thread CPU time
    assert profile["threads"]["ort_intra_op_num_threads"] == 1


def test_shares_sum_to_one(profile):
    assert math.isclose(sum(r["aidge_share"] for r in profile["nodes"]), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(r["ort_share"] for r in profile["nodes"]), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(op["aidge_share"] for op in profile["operators"]), 1.0, rel_tol=1e-9)
    assert {op["op_type"] for op in profile["operators"]} == {"Gemm", "Relu"}


def test_hot_nodes_have_shapes_and_data_is_json(profile):
    by_index = {r["index"]: r for r in profile["nodes"]}
    assert profile["hot"], profile
    for key in profile["hot"]:
        assert by_index[key]["input_shapes"][0][0] == 2  # batch of the example input
    json.dumps(profile)
    text = markdown([profile])
    assert "## Tiny" in text and "| Gemm |" in text
    assert any("Gemm" in line for line in table_lines(profile))


def test_profile_onnx_takes_a_proto_and_arrays(profile):
    import numpy as np
    from onnx import TensorProto, helper

    node = helper.make_node("Relu", ["x"], ["y"], name="only")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    p = profile_onnx(model, [np.ones((3, 4), np.float32)], rounds=5, warmup=1)
    assert [r["onnx_name"] for r in p["nodes"]] == ["only"]
    assert p["nodes"][0]["aidge_names"] and p["unmatched_aidge"] == []
    assert p["nodes"][0]["input_shapes"] == [[3, 4]]


def test_parse_scheduling_diagram():
    text = ("gantt\ndateFormat x\naxisFormat %Q µs\n\nconv1_Conv (Conv2D#0) :3, 189\n"
            "Relu (ReLU#0) :190, 195\nodd name (x) (FC#2) :7, 7\n")
    assert parse_scheduling_diagram(text) == [("conv1_Conv", "Conv2D", pytest.approx(186e-6)),
                                              ("Relu", "ReLU", pytest.approx(5e-6)),
                                              ("odd name (x)", "FC", 0.0)]


def test_parse_ort_profile_groups_runs():
    events = [
        {"cat": "Session", "name": "session_initialization", "dur": 10},
        {"cat": "Node", "name": "a_kernel_time", "dur": 5, "args": {"op_name": "Relu",
                                                                    "input_type_shape": [{"float": [2, 3]}]}},
        {"cat": "Node", "name": "a_fence_before", "dur": 0},
        {"cat": "Session", "name": "model_run", "dur": 9},
        {"cat": "Node", "name": "a_kernel_time", "dur": 7, "args": {"op_name": "Relu"}},
        {"cat": "Session", "name": "model_run", "dur": 9},
    ]
    runs = parse_ort_profile(events)
    assert len(runs) == 2
    assert runs[0]["a"] == {"s": pytest.approx(5e-6), "op": "Relu", "shapes": [[2, 3]]}
    assert runs[1]["a"]["s"] == pytest.approx(7e-6)


def test_slow_nodes_group_and_sort(profile):
    # threshold 0: every node with enough ticks on both sides is "slow"; grouping and order only
    slow = slow_nodes([profile, {"name": "broken", "error": "x"}], threshold=0.0)
    for entry in slow:
        assert entry["kind"] == "slow" and entry["occurrences"]
        assert entry["ratio"] > 0 and entry["input_shapes"]
    costs = [e["cost_s"] for e in slow]
    assert costs == sorted(costs, reverse=True)
    assert slow_nodes([profile], threshold=float("inf")) == []


def test_timing_reproducer_runs_without_the_suite(tmp_path):
    import subprocess
    import sys

    torch.manual_seed(0)
    proto, feeds, sizes, _ = export_torch(Tiny(), [(2, 8)])
    assert sizes == [[2, 8]]
    relu = next(n.name for n in proto.graph.node if n.op_type == "Relu")
    folder = write_timing_reproducer(proto, relu, feeds, tmp_path / "relu", meta={"why": "test"})
    assert {p.name for p in folder.iterdir()} == {"model.onnx", "inputs.npz", "time_aidge.py", "meta.json"}
    assert json.loads((folder / "meta.json").read_text())["op_type"] == "Relu"
    done = subprocess.run([sys.executable, str(folder / "time_aidge.py"), "3"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300, env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Aidge: median" in done.stdout
