"""Issue 47 item 3: onnxruntime as the third column of the forward benchmarks (benchmarks/ort_column.py):
every forward class has ``time_ort`` and ``track_aidge_ort_ratio``, onnxruntime runs the very graph the
AidgeModule imported on the case's inputs and computes what torch computes; the ratio is Aidge's
scheduler call over onnxruntime's. No timed assertion: the clock is faked where a ratio is checked."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")
pytest.importorskip("aidge_core")

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks import architectures, harness, models, operators, ort_column  # noqa: E402


@pytest.mark.parametrize("module", [operators, models, architectures])
def test_every_forward_class_has_the_third_column_and_no_backward_one_has(module):
    assert callable(module.Forward.time_ort) and callable(module.Forward.track_aidge_ort_ratio)
    assert module.Forward.track_aidge_ort_ratio.unit == "aidge/onnxruntime"
    assert not hasattr(module.Backward, "time_ort") and not hasattr(module.Backward, "track_aidge_ort_ratio")
    assert module.Forward.params == [harness.case_ids(module.Forward.kind, "forward")]  # every timed case
    # the session is built in the two benchmarks' own asv setup, never inside a sample
    assert module.Forward.time_ort.setup is module.Forward.track_aidge_ort_ratio.setup


def test_onnxruntime_runs_the_imported_graph_on_the_case_s_inputs():
    case = "LeNet_eval"
    pair = harness.pair("model", case, "forward")
    outs = ort_column.ort_call("model", case)()
    with torch.no_grad():
        expected = pair.torch_call()
    np.testing.assert_allclose(outs[0], expected.numpy(), rtol=1e-4, atol=1e-5)
    assert ort_column.ort_call("model", case) is ort_column.ort_call("model", case)  # memoised per process


def test_the_ratio_is_aidge_s_call_over_onnxruntime_s(monkeypatch):
    fake_ort, fake_aidge = (lambda: None), (lambda: None)
    seconds = {id(fake_ort): 4e-6, id(fake_aidge): 10e-6}
    order = []
    monkeypatch.setattr(ort_column.timing, "measure", lambda fn, warmup=2, repeat=10: [seconds[id(fn)]] * repeat)

    def block_time(fn, n):
        order.append(id(fn))
        return seconds[id(fn)]

    monkeypatch.setattr(ort_column.timing, "block_time", block_time)
    bench = models.Forward()
    bench.pair = harness.Pair("X", "forward", "cpu", 1, lambda: None, fake_aidge)
    monkeypatch.setattr(ort_column, "ort_call", lambda kind, case: fake_ort)
    assert bench.track_aidge_ort_ratio("X") == 2.5
    assert order[:4] == [id(fake_ort), id(fake_aidge)] * 2  # a block of each, back to back, per round


def test_the_feeds_are_the_graph_s_inputs_in_its_types():
    from onnx import TensorProto, helper

    node = helper.make_node("NoSuchOp", ["input_0"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("input_0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    proto = helper.make_model(graph)
    feeds = ort_column._feeds(proto, [torch.zeros(1)])
    assert list(feeds) == ["input_0"] and feeds["input_0"].dtype == np.float32
    with pytest.raises(ort_column.OrtRefused, match="not the case's inputs"):
        ort_column._feeds(proto, [])


def test_the_report_reads_asv_s_aidge_ort_ratio_beside_the_torch_one(tmp_path):
    import json

    from interop.reporting.asv_results import load_asv_ratios
    from interop.reporting.report import _bench_entry

    commit = "0123456789abcdef0123456789abcdef01234567"

    def row(values):
        return [list(values.values()), [[repr(c) for c in values]]]

    path = tmp_path / "machine" / f"{commit[:8]}-py.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"commit_hash": commit, "env_name": "py", "date": 1, "results": {
        "models.Forward.track_aidge_torch_ratio": row({"LeNet_eval": 0.4}),
        "models.Forward.track_aidge_ort_ratio": row({"LeNet_eval": 9.1, "KWS_eval": None, "Bad_eval": -1.0})}}))
    problems: list[str] = []
    asv = load_asv_ratios(tmp_path, commit, problems=problems)
    assert asv.get_ort("LeNet_eval", "forward") == 9.1 and asv.get_ort("KWS_eval", "forward") is None
    assert any("Bad_eval" in p and "track_aidge_ort_ratio" in p for p in problems)  # said, never ranked
    record = {"name": "LeNet_eval", "forward": {"ratio": 0.5, "median1": 1e-3, "median2": 5e-4, "samples": 50}}
    entry = _bench_entry(record, "forward", asv)
    assert entry["ratio"] == 0.4 and entry["ort_ratio"] == 9.1 and entry["ort_figure"] == "asv"
