"""The slow nodes of the profiles (:func:`slow_nodes`: Aidge more than :data:`SLOW_RATIO` times
onnxruntime on a node, grouped by operator, attributes and input shapes over the models) and what
the defect ledger knows them by (:func:`slow_signature`, :func:`slow_id`)."""
from __future__ import annotations

import hashlib
import json
import statistics
from typing import Any

#: a node is slow when Aidge takes more than this many times onnxruntime's time on it. The same
#: figure moved by up to 1.7x between two runs minutes apart on the loaded 2-core VM (Anomaly's
#: total 11.5 then 6.7; BERT's LayerNorm nodes x39 then x28, 2026-12-03, docs/node-profile.md),
#: and asv's regressions_thresholds take a 2x change of a time for noise (docs/noise-floor.md):
#: 3x is above both
SLOW_RATIO = 3.0
#: and when both sides are long enough for their profilers' 1 us ticks: Aidge at least 20 us,
#: onnxruntime at least 3 us (a ratio on fewer ticks moves by a third with one tick)
SLOW_MIN_AIDGE_S = 20e-6
#: a node at least this long on thread CPU time (run alone) is judged on that figure, not on its
#: wall-clock records (docs/node-profile.md: a node longer than a time slice is over-counted under load)
CPU_NODE_S = 1e-3
SLOW_MIN_ORT_S = 3e-6


def slow_signature(entry: dict[str, Any]) -> dict[str, Any]:
    """What decides which slow entry of the defect ledger a profiled node belongs to: Aidge's
    operator, the ONNX op, its attributes and input shapes (its shape class). The ratio and the
    time are not in it (they move from run to run; the id does not)."""
    attrs = json.dumps(entry.get("attributes") or {}, sort_keys=True)
    shapes = json.dumps(entry.get("input_shapes"))
    return {"kind": "slow", "component": "aidge_backend_cpu",
            "operator": str(entry.get("aidge_type") or entry.get("op_type") or "?"), "dtype": "float32",
            "phase": "forward", "backend": "cpu", "message": f"{entry.get('op_type')} {attrs} {shapes}"}


def slow_id(entry: dict[str, Any]) -> str:
    """The ledger id (``D-xxxxxxxx``) of a :func:`slow_nodes` entry: the hash of its signature, as
    :func:`interop.registry.identify.defect_id` hashes every defect's (a test holds them equal)."""
    return "D-" + hashlib.sha1(json.dumps(slow_signature(entry), sort_keys=True).encode()).hexdigest()[:8]



def slow_nodes(profiles: list[dict], threshold: float = SLOW_RATIO) -> list[dict[str, Any]]:
    """The slow nodes of ``profiles`` (:func:`profile_onnx` results), one entry per operator,
    attributes and input shapes, over all the models where it occurs: ``kind`` ``"slow"``,
    ``op_type``, ``attributes``, ``input_shapes``, ``ratio`` (the median of its nodes' Aidge/
    onnxruntime ratios), ``cost_s`` (the Aidge time it costs above onnxruntime's, summed over its
    nodes, one call of each model), ``occurrences`` (model, node, times, ratio, the node's share of
    its model's Aidge node time). Sorted by ``cost_s``, largest first."""
    entries: dict[tuple, dict] = {}
    for p in profiles:
        if "error" in p:
            continue
        for r in p["nodes"]:
            ratio = r.get("ratio")
            aidge_s, clock = r["aidge_s"], "records"
            cpu = r.get("aidge_cpu_s")
            if cpu and cpu >= CPU_NODE_S and r.get("ort_s"):
                # a node longer than a time slice is preempted in most rounds on a loaded machine: its
                # wall-clock records count the waits (SegResNet's Resize 66 ms of records, 25 ms of CPU);
                # the node run alone on thread CPU time is the figure then (its floor, 20-80 us, is small)
                aidge_s, clock = cpu, "cpu alone"
                ratio = cpu / r["ort_s"]
            if (ratio is None or ratio <= threshold or r["aidge_s"] < SLOW_MIN_AIDGE_S
                    or (r["ort_s"] or 0.0) < SLOW_MIN_ORT_S or r["index"] is None):
                continue
            key = (r["op_type"], json.dumps(r.get("attributes") or {}, sort_keys=True),
                   json.dumps(r["input_shapes"]))
            entry = entries.setdefault(key, {"kind": "slow", "op_type": r["op_type"],
                                             "aidge_type": (r.get("aidge_types") or [r["op_type"]])[0],
                                             "attributes": r.get("attributes") or {},
                                             "input_shapes": r["input_shapes"], "occurrences": []})
            entry["occurrences"].append({"model": p["name"], "node": r["onnx_name"], "aidge_s": aidge_s,
                                         "aidge_clock": clock, "aidge_records_s": r["aidge_s"],
                                         "ort_s": r["ort_s"], "ratio": ratio, "share": r["aidge_share"]})
    out = []
    for entry in entries.values():
        occ = entry["occurrences"]
        entry["ratio"] = statistics.median(o["ratio"] for o in occ)
        entry["cost_s"] = sum(o["aidge_s"] - o["ort_s"] for o in occ)
        entry["threshold"] = threshold
        out.append(entry)
    return sorted(out, key=lambda e: -e["cost_s"])
