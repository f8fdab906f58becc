"""The per-node profile as text: the plain-text tables the CLI prints (:func:`table_lines`,
:func:`slow_lines`, :func:`backward_lines`) and the Markdown of ``node_profile.md``
(:func:`markdown`)."""
from __future__ import annotations

def _us(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    us = seconds * 1e6
    return f"{us:.0f}" if us >= 100 else f"{us:.1f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _total_line(p: dict) -> str:
    t = p["total"]
    a, o, oo, r, ro = t["aidge_s"], t["ort_s"], t["ort_optimized_s"], t["ratio"], t["ratio_optimized"]
    if not a.get("n"):
        return "no rounds"
    return (f"Aidge {_us(a['median'])} us [{_us(a['q1'])}-{_us(a['q3'])}], onnxruntime (no graph optimisation) "
            f"{_us(o['median'])} us [{_us(o['q1'])}-{_us(o['q3'])}], onnxruntime (optimised) {_us(oo['median'])} us; "
            f"Aidge/onnxruntime {r['median']:.2f} [{r['q1']:.2f}-{r['q3']:.2f}], against the optimised "
            f"{ro['median']:.2f} [{ro['q1']:.2f}-{ro['q3']:.2f}]"
            + (f"; torch {_us(t['torch_s']['median'])} us, Aidge/torch {t['ratio_torch']['median']:.2f}"
               if (t.get("torch_s") or {}).get("n") else "")
            + f" (thread CPU time per call, median [quartiles] of "
            f"{a['n']} rounds; load {p['loadavg_1min']['start']}-{p['loadavg_1min']['end']})")


def _node_label(r: dict) -> str:
    return r["onnx_name"] or ", ".join(r["aidge_names"])


def table_lines(p: dict, top: int | None = None) -> list[str]:
    """Plain-text tables of one profile (what the CLI prints)."""
    lines = [f"== {p['name']}: {p['onnx_nodes']} ONNX nodes", "  " + _total_line(p),
             f"  node sums (medians): Aidge's records {_us(p['total']['aidge_nodes_sum_s'])} us (wall), "
             f"each Aidge node "
             f"alone {_us(p['total']['aidge_cpu_nodes_sum_s'])} us (thread CPU), onnxruntime's profiler "
             f"{_us(p['total']['ort_nodes_sum_s'])} us (wall)",
             f"  {'operator':<22}{'nodes':>6}{'Aidge us':>11}{'share':>7}{'ort us':>10}{'share':>7}{'ratio':>9}"]
    for op in p["operators"]:
        lines.append(f"  {op['op_type']:<22}{op['nodes']:>6}{_us(op['aidge_s']):>11}{op['aidge_share']:>7.1%}"
                     f"{_us(op['ort_s']):>10}{op['ort_share']:>7.1%}{_ratio(op['ratio']):>9}")
    by_key = {(r["index"] if r["index"] is not None else r["aidge_names"][0]): r for r in p["nodes"]}
    lines.append(f"  hot nodes: {'node':<34}{'op':<14}{'Aidge us':>10}{'share':>7}{'ort us':>9}{'ratio':>9}  inputs")
    for key in p["hot"][:top]:
        r = by_key[key]
        label = _node_label(r)
        label = label if len(label) <= 41 else "..." + label[-38:]
        lines.append(f"    {label:<42}{r['op_type'][:13]:<14}{_us(r['aidge_s']):>10}"
                     f"{r['aidge_share']:>7.1%}{_us(r['ort_s']):>9}{_ratio(r['ratio']):>9}  {r['input_shapes']}")
    if p["unmatched_aidge"]:
        lines.append(f"  Aidge nodes matched to no ONNX node: {p['unmatched_aidge']}")
    return lines


def slow_lines(slow: list[dict], limit: int | None = None) -> list[str]:
    """Plain-text lines of :func:`slow_nodes` entries."""
    lines = []
    for entry in slow[:limit]:
        where = ", ".join(f"{o['model']} {o['share']:.1%}" for o in entry["occurrences"][:4])
        more = len(entry["occurrences"]) - 4
        lines.append(f"  {entry['op_type']:<20}x{entry['ratio']:<8.1f}{_us(entry['cost_s']):>9} us  "
                     f"{entry['input_shapes']}  {where}{f' (+{more})' if more > 0 else ''}")
    return lines


def markdown(profiles: list[dict], header: str = "", top: int | None = None) -> str:
    """The profiles as Markdown: per model the totals, the operator types' shares, the hot nodes."""
    out = [header] if header else []
    for p in profiles:
        if "error" in p:
            out += [f"## {p['name']}", "", f"Not profiled: {p['error']}", ""]
            continue
        out += [f"## {p['name']}", "", _total_line(p) + ".", "",
                "| operator | nodes | Aidge us | Aidge share | onnxruntime us | ort share | Aidge/ort |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for op in p["operators"]:
            out.append(f"| {op['op_type']} | {op['nodes']} | {_us(op['aidge_s'])} | {op['aidge_share']:.1%} | "
                       f"{_us(op['ort_s'])} | {op['ort_share']:.1%} | {_ratio(op['ratio'])} |")
        out += ["", f"Node sums (medians): Aidge's scheduling records {_us(p['total']['aidge_nodes_sum_s'])} us (wall "
                f"clock), each Aidge node alone {_us(p['total']['aidge_cpu_nodes_sum_s'])} us (thread CPU time), "
                f"onnxruntime's profiler {_us(p['total']['ort_nodes_sum_s'])} us (wall clock).", "",
                "| hot node | op | input shapes | Aidge us [q1-q3] | share | Aidge alone, CPU us "
                "| onnxruntime us [q1-q3] "
                "| Aidge/ort |",
                "|---|---|---|---:|---:|---:|---:|---:|"]
        by_key = {(r["index"] if r["index"] is not None else r["aidge_names"][0]): r for r in p["nodes"]}
        for key in p["hot"][:top]:
            r = by_key[key]
            shapes = " ".join(str(s).replace(" ", "") for s in (r["input_shapes"] or []))
            out.append(f"| `{_node_label(r)}` | {r['op_type']} | {shapes} | {_us(r['aidge_s'])} "
                       f"[{_us(r['aidge_q1_s'])}-{_us(r['aidge_q3_s'])}] | {r['aidge_share']:.1%} | "
                       f"{_us(r['aidge_cpu_s'])} | {_us(r['ort_s'])} "
                       f"[{_us(r['ort_q1_s'])}-{_us(r['ort_q3_s'])}] | {_ratio(r['ratio'])} |")
        if p["unmatched_aidge"]:
            out.append(f"\nAidge nodes matched to no ONNX node: {', '.join(p['unmatched_aidge'])}")
        out.append("")
    return "\n".join(out)


def backward_lines(p: dict) -> list[str]:
    """Plain-text lines of a :func:`profile_backward` result."""
    t = p["total"]
    if not t["aidge_s"].get("n"):
        return [f"== {p['name']} (backward): no rounds"]
    lines = [f"== {p['name']} (backward): Aidge {_us(t['aidge_s']['median'])} us [{_us(t['aidge_s']['q1'])}-"
             f"{_us(t['aidge_s']['q3'])}], torch {_us(t['torch_s']['median'])} us; Aidge/torch "
             f"{t['ratio_torch']['median']:.2f} [{t['ratio_torch']['q1']:.2f}-{t['ratio_torch']['q3']:.2f}] (thread "
             f"CPU time, {p['rounds']} rounds, one thread; load {p['loadavg_1min']['start']}-"
             f"{p['loadavg_1min']['end']})",
             "  " + ", ".join(f"{op['op_type']} {op['share']:.0%}" for op in p["operators"][:6])]
    for r in p["nodes"][:5]:
        bf = f"{r['backward_over_forward']:.1f}x its forward" if r.get("backward_over_forward") else ""
        lines.append(f"    {(r['onnx_name'] or ', '.join(r['aidge_names']))[-44:]:<45}{r['op_type'][:14]:<15}"
                     f"{_us(r['backward_s']):>9} us {r['share']:>6.1%}  {bf}")
    return lines
