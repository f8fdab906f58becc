"""Issue 44: a benchmark record whose ratio is impossible (a 400-digit integer) or that its own
medians contradict (1e300 beside medians giving 2.0) is a named bad line of
``benchmarks.jsonl`` (file:line, name, key), never a traceback nor the worst rank."""
from __future__ import annotations

import json

import pytest

from interop.records.benchmarks import parse_benchmarks
from interop.reporting import build_report


def _record(name: str, ratio, torch_s=1e-3, aidge_s=2e-3) -> dict:
    stats = {"median1": torch_s, "median2": aidge_s, "mean1": torch_s, "mean2": aidge_s, "ratio": ratio,
             "samples": 200, "samples1": 200, "samples2": 200}
    return {"name": name, "forward": stats, "backward": None}


@pytest.mark.parametrize("ratio, said", [
    (1e300, "'forward.ratio' 1e+300 is not its own medians' median2 / median1 = 2"),
    (int("9" * 400),
     "'forward.ratio' is impossible: a 400-digit integer (a time or a ratio is finite and positive)"),
])
def test_an_impossible_ratio_is_a_named_bad_line_not_a_rank(ratio, said):
    text = "\n".join(json.dumps(r) for r in (_record("ReLU_a", ratio), _record("Tanh_a", 3.0, aidge_s=3e-3)))
    bench = parse_benchmarks(text, source="b.jsonl")
    assert bench.problems == [f"b.jsonl:1: ReLU_a: {said}"]
    report = build_report(None, bench, threshold=1.5)
    assert [(s["name"], s["ratio"]) for s in report["slowdowns_vs_torch"]] == [("Tanh_a", 3.0)]


def test_a_ratio_its_medians_give_is_kept():
    bench = parse_benchmarks(json.dumps(_record("ReLU_a", 2e-3 / 1e-3)), source="b.jsonl")
    assert bench.problems == [] and [r["name"] for r in bench.records] == ["ReLU_a"]
