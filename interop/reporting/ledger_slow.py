"""Slow nodes (issue 47), the ledger's entries of kind ``slow``: an operator at a shape class where
Aidge is over a threshold slower than onnxruntime on the same node of the same graph, from the run's
per-node profile (``interop.node_profile --run-dir RUN``: ``RUN/node-profile/node_profile.json``):
:func:`read_slow_profile`, :func:`slow_entries` (with :func:`slow_signature` and :func:`slow_id`), each
entry's upstream report (:func:`slow_issue_text`, :func:`write_slow_issues`), and the report's
Aidge/onnxruntime figures of the profiled models (:func:`profile_ort_ratios`). :mod:`.ledger`
re-exports these names."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..node_profile.slow import slow_signature as profile_slow_signature
from ..reading import MAX_LOG_BYTES, UnsafeInputError, confined, read_confined
from ..registry.identify import defect_id
from ..records.store import write_atomically
from . import text_escape
from .models import DefectEntry, checked_all

__all__ = ["SLOW_PROFILE", "slow_signature", "slow_id", "read_slow_profile", "slow_entries", "slow_issue_text",
           "write_slow_issues", "profile_ort_ratios"]

#: the run's per-node profile, relative to the run (interop.node_profile.cli.PROFILE_DIR)
SLOW_PROFILE = "node-profile/node_profile.json"


def slow_signature(entry: dict[str, Any]) -> dict[str, Any]:
    """:func:`interop.node_profile.slow.slow_signature` (the profile says what a slow entry is)."""
    return profile_slow_signature(entry)


def slow_id(entry: dict[str, Any]) -> str:
    """The ledger id of a slow entry: :func:`defect_id` of its :func:`slow_signature` (the profile's
    CLI names the timing reproducers' folders by it: interop.node_profile.slow.slow_id, the same hash)."""
    return defect_id(slow_signature(entry))


def read_slow_profile(run_dir: Path) -> dict[str, Any] | None:
    """The run's per-node profile (``RUN/node-profile/node_profile.json``), read under the rule of a
    run's files; None when the run has none. A profile that cannot be read is a ValueError naming it."""
    path = Path(run_dir) / SLOW_PROFILE
    if not path.exists():
        return None
    try:
        data = json.loads(read_confined(path, Path(run_dir), max_bytes=MAX_LOG_BYTES).decode("utf-8"))
    except (OSError, ValueError, UnsafeInputError) as exc:
        raise ValueError(f"{path}: the run's per-node profile cannot be read ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("slow"), list):
        raise ValueError(f"{path}: no 'slow' list (not a node_profile.json)")
    return data


def _us_text(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return "-"
    us = seconds * 1e6
    return f"{us:.0f} us" if us >= 100 else f"{us:.1f} us"


def _slowtitle_of(e: dict[str, Any]) -> str:
    shapes = " ".join(str(x).replace(" ", "") for x in e.get("input_shapes") or [])
    attrs = ", ".join(f"{k}={v}" for k, v in (e.get("attributes") or {}).items()
                      if k in ("mode", "coordinate_transformation_mode", "kernel_shape", "strides", "group", "axis"))
    return (f"{e['operator']} is {e['ratio_ort']:.0f}x slower than onnxruntime on {shapes}"
            + (f" ({attrs})" if attrs else ""))


def slow_entries(profile: dict[str, Any] | None, *, release: str | None = None) -> list[dict[str, Any]]:
    """The ledger entries of kind ``slow`` of a per-node profile (``node_profile.json``): one per
    entry of its ``slow`` list (an operator, attributes and input shapes where Aidge took more than
    the threshold times onnxruntime's time on the same node), with the ratio against onnxruntime
    (in the graph: the profile's median over the entry's nodes) and against torch's equivalent op
    (the node alone, where one is mapped), the Aidge time it costs each model (``models``: model ->
    share of its Aidge node time, cost), sorted by the time it costs. The entries carry the keys
    the ledger's pages read (``cases`` are the profiled nodes, ``model: node``)."""
    if not profile:
        return []
    meta = profile.get("meta") if isinstance(profile.get("meta"), dict) else {}
    out = []
    for raw in profile.get("slow") or []:
        if not isinstance(raw, dict) or not isinstance(raw.get("occurrences"), list):
            continue
        sig = slow_signature(raw)
        alone = raw.get("alone") if isinstance(raw.get("alone"), dict) else {}
        models: dict[str, dict[str, float]] = {}
        for o in raw["occurrences"]:
            m = models.setdefault(str(o.get("model")), {"share": 0.0, "cost_s": 0.0, "nodes": 0})
            m["share"] += float(o.get("share") or 0.0)
            m["cost_s"] += float(o.get("aidge_s") or 0.0) - float(o.get("ort_s") or 0.0)
            m["nodes"] += 1
        entry = {"id": raw.get("id") or defect_id(sig), **sig, "op_type": raw.get("op_type"),
                 "attributes": raw.get("attributes") or {}, "input_shapes": raw.get("input_shapes"),
                 "ratio_ort": float(raw.get("ratio") or 0.0), "threshold": raw.get("threshold"),
                 "cost_s": float(raw.get("cost_s") or 0.0), "models": models,
                 "ratio_torch": alone.get("ratio_torch"), "torch_op": alone.get("torch_op"),
                 "aidge_alone_s": alone.get("aidge_s"), "ort_alone_s": alone.get("ort_s"),
                 "ort_optimized_alone_s": alone.get("ort_optimized_s"), "torch_alone_s": alone.get("torch_s"),
                 "ratio_ort_optimized_alone": alone.get("ratio_ort_optimized"),
                 "alone_rounds": alone.get("rounds"), "alone_error": raw.get("alone_error"),
                 "occurrences": raw["occurrences"], "profiled": {k: meta.get(k) for k in
                                                                 ("started", "command", "uptime_at_end", "rounds")},
                 "cases": [f"{o.get('model')}: {o.get('node')}" for o in raw["occurrences"]],
                 "sources": {"node-profile": len(raw["occurrences"])}, "source_kinds": ["node-profile"],
                 "known": 0, "new": 0, "rows": [], "table_defects": [], "blocks": {"architectures": [], "models": []},
                 "releases": [release] if release else [], "first_seen": release, "since": None,
                 "aidge_said": None, "detected_by": "per-node profile (interop.node_profile)",
                 "reproducer": raw.get("reproducer"), "reproducer_nodes": 1 if raw.get("reproducer") else None,
                 "reproducer_error": raw.get("reproducer_error"), "reproducer_root": None}
        entry["title"] = _slowtitle_of(entry)
        entry["error"] = (f"Aidge {_us_text(sum(o.get('aidge_s') or 0 for o in raw['occurrences']))} against "
                          f"onnxruntime {_us_text(sum(o.get('ort_s') or 0 for o in raw['occurrences']))} on "
                          f"{len(raw['occurrences'])} node(s) (x{entry['ratio_ort']:.1f}, over the "
                          f"x{raw.get('threshold') or 3:g} threshold)")
        out.append(entry)
    return checked_all(DefectEntry, sorted(out, key=lambda e: -e["cost_s"]))  # each typed (models)


def slow_issue_text(e: dict[str, Any], *, versions: dict[str, str] | None = None) -> str:
    """The Markdown of an upstream report for one slow entry: what is slow, by how much against
    onnxruntime and torch, what it costs each model, and how to time it without the suite."""
    versions = versions or {}
    md, code = text_escape.text, text_escape.code
    aidge = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()) if k.startswith("aidge"))
    shapes = " ".join(str(x).replace(" ", "") for x in e.get("input_shapes") or [])
    lines = [f"# [{md(e['component'])}] {md(e['title'])}", "",
             f"Found by aidge_torch_interop's per-node profile ({md(e['id'])}: slow, phase forward, backend cpu, one "
             f"thread).", "", f"**Versions**: {md(aidge or 'see the run')}.", "", "## What happens", "",
             f"ONNX {code(e.get('op_type'))} (Aidge {code(e['operator'])}), inputs {md(shapes)}, attributes "
             f"{code(json.dumps(e.get('attributes') or {}, sort_keys=True))}.", "",
             f"- In the model's graph (each runtime's own per-node records, median of the profile's rounds): "
             f"Aidge/onnxruntime x{e['ratio_ort']:.1f} (threshold x{e.get('threshold') or 3:g}).",
             ]
    if e.get("aidge_alone_s"):
        lines.append(f"- The node alone ({e.get('alone_rounds')} interleaved rounds, thread CPU time): Aidge "
                     f"{_us_text(e['aidge_alone_s'])}, onnxruntime {_us_text(e.get('ort_alone_s'))} (optimised "
                     f"{_us_text(e.get('ort_optimized_alone_s'))}), torch's {code(e.get('torch_op'))} "
                     f"{_us_text(e.get('torch_alone_s'))}"
                     + (f": Aidge/torch x{e['ratio_torch']:.1f}" if e.get("ratio_torch") else "") + ".")
    elif e.get("alone_error"):
        lines.append(f"- Not timed alone: {code(e['alone_error'])}")
    lines += ["", "## What it costs", "", "| model | nodes | share of Aidge's node time | Aidge time over onnxruntime |",
              "|---|---:|---:|---:|"]
    for model, m in sorted((e.get("models") or {}).items(), key=lambda kv: -kv[1]["cost_s"]):
        lines.append(f"| {md(model)} | {m['nodes']} | {m['share']:.1%} | {_us_text(m['cost_s'])} |")
    lines += ["", "## Reproduce", ""]
    if e.get("reproducer"):
        lines += [f"{code(str(e['reproducer']) + '/')}: `model.onnx` (the node alone), `inputs.npz` (what it "
                  "receives in the model), `time_aidge.py` (needs numpy, onnx, aidge_core, aidge_backend_cpu, "
                  "aidge_onnx; times Aidge alone, then onnxruntime when installed):", "",
                  *text_escape.fence(f"python {e['reproducer']}/time_aidge.py"), ""]
    else:
        lines += [f"No timing reproducer: {md(e.get('reproducer_error') or 'only the costliest entries get one')}.",
                  ""]
    prof = e.get("profiled") or {}
    lines += [f"Profiled {md(prof.get('started'))}, {code(prof.get('command'))}, {md(prof.get('rounds'))} rounds; "
              f"`uptime` at the end: {code(prof.get('uptime_at_end'))}.", ""]
    return "\n".join(lines)


def write_slow_issues(run_dir: Path, slow: list[dict[str, Any]], *, versions: dict[str, str]) -> None:
    from .defect_issue_write import ISSUES_DIR

    for e in slow:
        folder = confined(run_dir / ISSUES_DIR / e["id"], run_dir, kind="dir", missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / "ISSUE.md", slow_issue_text(e, versions=versions))
        e["issue"] = f"{ISSUES_DIR}/{e['id']}/ISSUE.md"


def profile_ort_ratios(report: dict[str, Any], profile: dict[str, Any] | None) -> None:
    """The report's slowdown entries of a profiled model (``LeNet_eval``: the zoo's LeNet;
    ``arch_monai_X_eval``: architecture monai_X) without asv's Aidge/onnxruntime get the profile's
    (Aidge over onnxruntime with its default optimisations, median of the rounds' ratios, one
    thread): ``ort_ratio``, ``ort_figure`` "node profile". In place."""
    totals = {}
    for p in (profile or {}).get("profiles") or []:
        ratio = ((p.get("total") or {}).get("ratio_optimized") or {}).get("median") if isinstance(p, dict) else None
        if isinstance(ratio, (int, float)) and ratio > 0:
            totals[str(p.get("name"))] = ratio
    if not totals:
        return
    bench = report.get("benchmarks") or {}
    for e in list(report.get("slowdowns_vs_torch") or []) + list(bench.get("worst_forward") or []):
        if not isinstance(e, dict) or e.get("ort_ratio") or e.get("phase") != "forward":
            continue
        m = re.fullmatch(r"(?:arch_)?(.+)_eval", str(e.get("name") or ""))
        if m and m.group(1) in totals:
            e.update(ort_ratio=totals[m.group(1)], ort_figure="node profile")
