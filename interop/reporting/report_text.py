"""The report as text: :func:`format_report` of what :func:`~interop.reporting.report.build_report`
returns, one section per question. Nothing here prints or writes files."""
from __future__ import annotations

import math
from typing import Any

from ..import_gaps import onnx_ops_named
from ..records.store import COUNTED_OUTCOMES as OUTCOMES
from .aidge_files import format_aidge_files
from .backends import format_backend_matrix
from .history import format_trend
from .text_escape import controls

__all__ = ["format_report", "format_summary", "sig3", "escape_controls"]

from ..records.benchmarks import MIN_ROBUST_SAMPLES

def escape_controls(text: str) -> str:
    """``text`` with every control character written as a visible escape (ESC -> ``\\x1b``, a
    newline -> ``\\n``, U+202E -> ``\\u202e``): a configuration file's name or a record's field
    holding a terminal escape sequence used to reach ``report.txt`` and the console raw (issue
    44). Applied to every line the report and the summary write (:func:`_lines`), whatever
    formatter wrote it: the report's own words hold no control character. The one escape of
    the reports' writers (:func:`interop.reporting.text_escape.controls`: C0 and C1 controls, DEL,
    the bidirectional overrides and isolates, every other non-printable character)."""
    return controls(text)


def _lines(out: list[str]) -> str:
    """The report's text: its lines, each with the data's control characters escaped."""
    return "\n".join(escape_controls(line) for line in out) + "\n"


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"x{sig3(x)}"


def sig3(x: float) -> str:
    """``x`` with 3 significant digits, never in scientific notation (``1357`` -> ``1360``,
    ``0.2674`` -> ``0.267``; ``x1.36e+03`` used to appear in the report)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    digits = math.floor(math.log10(abs(x)))
    decimals = max(0, 2 - digits)
    return f"{round(x, 2 - digits):.{decimals}f}"


def _fmt_ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f} ms"


def _fmt_times(e: dict[str, Any]) -> str:
    """``(torch 0.135 ms, Aidge 0.012 ms, bridge +0.030 ms; medians of 397/92 calls)``:
    Aidge's own time (its scheduler, when the record says so), the bridge's overhead apart,
    what the figure rests on."""
    aidge = "Aidge" if e.get("aidge_timed") in (None, "aidge scheduler") else "model2 call"
    bridge = f", bridge +{_fmt_ms(e['bridge_ms'])}" if e.get("bridge_ms") is not None else ""
    n1, n2 = e.get("samples1"), e.get("samples2")
    calls = f"{n1}/{n2}" if n1 != n2 else f"{n1}"
    if e.get("figure") == "alone":
        load = f", load average {e['loadavg']:g}" if isinstance(e.get("loadavg"), (int, float)) else ""
        clock = "CPU time" if e.get("clock") == "thread CPU time" else "wall clock" if e.get("clock") else ""
        rests = (f"; timed alone after the tests, median of {e.get('rounds')} rounds"
                 + (f" on {clock}" if clock else "") + f"{load}; in the run {_fmt_ratio(e.get('tester_ratio'))}")
        if e.get("asv_ratio") is not None:
            rests += f", asv {_fmt_ratio(e['asv_ratio'])}"
    elif e.get("figure") == "mean":
        rests = f"; mean of {calls} call(s), NOT ROBUST"
    elif e.get("figure") == "contended":
        rests = f"; medians of {calls} calls beside {e.get('test_workers')} test workers: CONTENDED, not ranked"
    else:
        rests = f"; medians of {calls} calls" + ("" if e.get("robust") or e.get("figure") == "asv" else ", NOT ROBUST")
    if e.get("figure") == "asv":
        rests += f"; asv ratio, ModelTester's {_fmt_ratio(e.get('tester_ratio'))}"
    return f"(torch {_fmt_ms(e['torch_ms'])}, {aidge} {_fmt_ms(e['aidge_ms'])}{bridge}{rests})"


#: what each kind of speed figure is, in the report's words
FIGURE_WORDS = (("alone", "timed alone after the tests (the run's timing pass)"), ("asv", "asv's of the same commit"),
                ("median", "ModelTester medians of a serial run"), ("mean", "means of older records"),
                ("contended", "taken beside other test workers (contended: not ranked)"))


def _figures_said(figures: dict[str, int]) -> str:
    return ", ".join(f"{figures[key]} {words}" for key, words in FIGURE_WORDS if figures.get(key))


def _clip(text: str | None, width: int = 160) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= width else text[:width - 3] + "..."


#: what a crash on an invalid export is, beside the export's fault (issue 49)
CRASH_CATEGORIES = ("crash",)


def aidge_operator_words(bug: dict[str, Any], operator: str) -> str:
    """`` -> Aidge X`` after a finding, only where X is an operator Aidge (or its importer) named:
    an import gap names every ONNX op without an Aidge operator (not the table row's one); a name
    that is the torch function's own (``index_select`` for ``torch.index_select``: the
    expected-failure row's, not Aidge's) is not given as Aidge's; a crash without a node says so."""
    name = bug.get("aidge_operator")
    if bug.get("category") == "unsupported_operator":
        ops = list(dict.fromkeys(onnx_ops_named(bug.get("error") or "")))
        if ops:
            return f" -> no Aidge operator for ONNX {', '.join(ops)}"
    torch_name = str(operator).rsplit(".", 1)[-1]
    if name and name == torch_name and name[:1].islower():
        name = None  # the torch function's name, from the table row
    if not name:
        return " -> the process died before Aidge named a node" if bug.get("category") in CRASH_CATEGORIES else ""
    return f" -> Aidge {name}" if name != operator else ""


def _bug_lines(add, group: dict[str, Any], bug: dict[str, Any], note: str = "") -> None:
    state = "known" if bug["known"] else "NEW"
    phase = f" [{bug['phase']}]" if bug["phase"] else ""
    node = aidge_operator_words(bug, group["operator"])
    add(f"  {bug['emoji']} {bug['category']} ({state}){phase}{node}{note}: {_clip(bug['error'])}")
    for case in bug["cases"]:
        detail = f" ({_clip(case['detail'], 120)})" if case["detail"] else ""
        add(f"      - {case['case']}{detail}")
        if case.get("repro"):
            add(f"        repro: {_clip(case['repro'], 150)}")


def crashes_on_invalid_exports(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The export findings where Aidge *crashed* on the invalid graph: the export's fault, and
    Aidge's failure to reject the graph (listed in both sections)."""
    out = []
    for group in report.get("export_findings") or []:
        bugs = [b for b in group["bugs"] if b["category"] in CRASH_CATEGORIES]
        if bugs:
            out.append(dict(group, bugs=bugs, new=sum(len(b["cases"]) for b in bugs if not b["known"]),
                            known=sum(len(b["cases"]) for b in bugs if b["known"])))
    return out


def _bug_section(add, bugs: list[dict[str, Any]], title: str, *, also: list[dict[str, Any]] = (),
                 crash_note: str = "") -> None:
    """One section of grouped findings (Aidge bugs, export findings, precision findings);
    ``also``: the crashes on invalid exports, listed after the Aidge bugs as Aidge's failure to
    reject the graph; ``crash_note``: said beside each crash of the export findings."""
    new = sum(g["new"] for g in bugs)
    known = sum(g["known"] for g in bugs)
    add("")
    add(f"== {title}: {len(bugs)} operator(s), {new} new failure(s), {known} known (xfail) ==")
    if not bugs:
        add("  none")
    for group in bugs:
        add(f"{group['operator']}")
        for bug in group["bugs"]:
            _bug_lines(add, group, bug, crash_note if bug["category"] in CRASH_CATEGORIES else "")
    if also:
        n = sum(len(b["cases"]) for g in also for b in g["bugs"])
        add("")
        add(f"-- and Aidge's failure to reject an invalid graph: {n} case(s) of {len(also)} operator(s) where "
            "the export is invalid (the ONNX checker or onnxruntime refuses it) and Aidge crashed instead of "
            "refusing it (the export's fault too: under Export findings) --")
        for group in also:
            add(f"{group['operator']}")
            for bug in group["bugs"]:
                _bug_lines(add, group, bug, " [invalid export, not rejected]")


def _head(report: dict[str, Any]) -> list[str]:
    """The report's first lines: what it read, RUN INCOMPLETE and why, pytest's counts, the
    support headline (the full report and the terminal summary both open with them)."""
    out: list[str] = []
    add = out.append
    sources = ", ".join(f"{k}: {v}" for k, v in report["sources"].items()) or "no input"
    add(f"Aidge <-> PyTorch interop results ({sources})")
    if report.get("incomplete"):
        add("")
        add("== RUN INCOMPLETE: the counts below are partial, do not read them as a clean run ==")
        for why in report["incomplete"]:
            add(f"  ⚠️ {why}")
        add("")
    if "counts" in report:
        counts = report["counts"]
        line = ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o))
        strict = sum(1 for p in report["unexpected_passes"] if p.get("strict"))
        note = f" (strict XPASS counted by pytest as failed: {strict})" if strict else ""
        took = f" in {report['duration_s']:.1f}s" if report.get("duration_s") is not None else ""
        add(f"pytest: {line or 'no tests'}{took}{note}")

    trends = report.get("trend") or {}
    support = report.get("support") or {}
    for backend, line in (support.get("headlines") or {}).items():
        trend = trends.get(backend)
        add(f"support: {trend['headline'] if trend else line} (the matrix: "
            f"{next((f for f in support.get('files', []) if f.endswith('.html')), 'support.html')})")
    porting = report.get("porting") or {}
    for line in porting.get("headlines") or []:
        add(f"porting readiness, {line} (the table: "
            f"{next((f for f in porting.get('files', []) if f.endswith('.md')), 'porting.md')})")
    return out


def _slow_nodes_section(add, defects: dict[str, Any] | None) -> None:
    """The ledger's ``slow`` entries (the run's per-node profile), by the Aidge time they cost the
    models profiled: Aidge/onnxruntime on the node in its graph, Aidge/torch on the node alone."""
    add("")
    slow = (defects or {}).get("slow")
    if not slow:
        add("== Slow nodes (Aidge vs onnxruntime, node by node): none in the ledger (no per-node profile in this "
            "run, or no node over the threshold: nox -s profile, docs/node-profile.md) ==")
        return
    threshold = next((e.get("threshold") for e in slow if e.get("threshold")), 3)
    add(f"== Slow nodes (Aidge over x{threshold:g} onnxruntime on the same node, one thread; by the model time "
        f"they cost): {len(slow)} ==")
    for e in slow[:SLOW_LINES]:
        shapes = " ".join(str(x).replace(" ", "") for x in e.get("input_shapes") or [])
        models = e.get("models") or {}
        where = ", ".join(f"{m} {v['share']:.0%}" for m, v in sorted(models.items(), key=lambda kv: -kv[1]["cost_s"])[:3])
        more = f" +{len(models) - 3}" if len(models) > 3 else ""
        torch_ratio = _fmt_ratio(e["ratio_torch"]) if e.get("ratio_torch") else "-"
        add(f"  {e['id']} {e['operator']:<18} {shapes:<28} ort {_fmt_ratio(e.get('ratio_ort')):>8}  torch "
            f"{torch_ratio:>8}  costs {e.get('cost_s', 0) * 1e3:.2f} ms  ({where}{more})"
            + (f"  {e['reproducer']}" if e.get("reproducer") else ""))
    if len(slow) > SLOW_LINES:
        add(f"  ... and {len(slow) - SLOW_LINES} more, each with its report: defects.md (kind slow)")


#: slow-node lines the report prints (the rest are in the ledger's pages)
SLOW_LINES = 25


def format_report(report: dict[str, Any]) -> str:
    """The report as text, one section per question."""
    out = _head(report)
    add = out.append
    trends = report.get("trend") or {}
    defects = report.get("defects")
    if defects:
        add("")
        add("== " + defects_line(defects) + " ==")
        add("  by component: " + ", ".join(f"{c} {n}" for c, n in sorted(defects["by_component"].items(),
                                                                          key=lambda kv: -kv[1])))
        for e in defects["top"]:
            where = f" ({e['reproducer']}, {e['reproducer_nodes']} node(s))" if e.get("reproducer") else ""
            add(f"  {e['id']} [{e['component']}] {_clip(e['title'], 90)}: {e['cases']} case(s){where}"
                + (f"; report {e['issue']}" if e.get("issue") else ""))

    if report.get("per_source"):
        add("")
        add("== Per source: cases, passes, findings by category and attribution ==")
        for source, e in report["per_source"].items():
            add(f"  {source}: {e['cases']} case(s), {e['passed']} passed, {e['skipped']} skipped, "
                f"{e['findings']} finding(s)")
            if e["by_category"]:
                add("      by category: " + ", ".join(f"{c} {n}" for c, n in sorted(e["by_category"].items())))
            if e["by_attribution"]:
                add("      by attribution: " + ", ".join(f"{a} {n}" for a, n in sorted(e["by_attribution"].items())))
    _bug_section(add, report["aidge_bugs"], "Aidge bugs to report", also=crashes_on_invalid_exports(report))
    _bug_section(add, report.get("export_findings", []),
                 "Export findings (torch -> ONNX lowering or ONNX semantics differ; Aidge's part only where "
                 "it crashed instead of rejecting the graph)",
                 crash_note=" [also Aidge's: it crashed instead of rejecting the invalid graph]")
    _bug_section(add, report.get("precision_findings", []),
                 "Precision findings (Aidge as close to float64 as torch float32; tolerance questions)")
    repro = report.get("reproducers")
    if repro:
        add("")
        add("== " + reproducers_line(repro) + " ==")
        for why, n in sorted(repro["not_written"].items(), key=lambda kv: -kv[1]):
            add(f"  no bundle for {n} case(s): {why}")
        add("  how to run one and attach it upstream: docs/reproducers.md")
    add("")
    expected = report["expected_failures"]
    add(f"== Expected failures by category: {sum(v['count'] for v in expected.values())} ==")
    if not expected:
        add("  none")
    for category, entry in expected.items():
        add(f"  {entry['emoji']} {category:<32} {entry['count']:>4}")

    passes = report["unexpected_passes"]
    if passes:
        add("")
        add(f"== Unexpected passes (strict XPASS: Aidge fixed? python -m interop.triage proposes the rows' end): {len(passes)} ==")
        for p in passes:
            add(f"  ✅ {p['case']}: was expected {p['category']} ({p['operator']} {p['phase']}): {_clip(p['error'], 120)}")

    add("")
    slowdowns = report["slowdowns_vs_torch"]
    add(f"== Slowdowns vs torch (Aidge's own time / torch's, median ratio over x{report['threshold']:g}): "
        f"{len(slowdowns)} ==")
    add("  slower than torch in this run; a change from one commit to the next (a regression) is asv's: "
        "asv compare (docs/benchmarks.md); 'ort' beside: Aidge / onnxruntime on the same ONNX graph (asv's "
        "track_aidge_ort_ratio, or the run's per-node profile for a model), '-' where neither has it")
    if "benchmarks" not in report and not slowdowns:
        add("  no benchmark JSONL given (--bench results/benchmarks.jsonl)")
    elif not slowdowns:
        add("  none")
    for r in slowdowns:
        if r["source"] == "benchmarks":
            ort = _fmt_ratio(r["ort_ratio"]) if r.get("ort_ratio") else "-"
            add(f"  🐢 {r['name']:<36} {r['phase']:<8} {_fmt_ratio(r['ratio']):>9}  ort {ort:>8}  {_fmt_times(r)}")
        else:
            add(f"  🐢 {r['case']} (pytest): {_clip(r['error'], 120)}")
    _slow_nodes_section(add, defects)

    add("")
    strategy = report["test_strategy"]
    add(f"== Test-strategy issues (fix the suite, not Aidge): {len(strategy)} ==")
    if not strategy:
        add("  none")
    for f in strategy:
        when = f" ({f['outcome']} at {f['when']})" if f["outcome"] == "error" and f["when"] else ""
        detail = f" [{_clip(f['detail'], 80)}]" if f["detail"] else ""
        add(f"  {f['emoji']} {f['category']}: {f['case']}{when}: {_clip(f['error'], 140)}{detail}")

    for key, title in (("lost", "Lost to the run (a process killed from outside: no verdict, rerun them)"),
                       ("unclassified", "Unclassified failures (no rule matched)")):
        if report.get(key):
            add("")
            add(f"== {title}: {len(report[key])} ==")
            for f in report[key]:
                add(f"  {f['emoji']} {f['case']} ({f['outcome']}): {_clip(f['error'], 140)}")

    if report.get("skipped"):
        add("")
        add(f"== Skipped: {sum(s['count'] for s in report['skipped'])} ==")
        for s in report["skipped"]:
            add(f"  {s['count']:>4}  {_clip(s['reason'], 140)}")

    out.extend(format_aidge_files(report.get("aidge_configs") or []))
    for backend, trend in trends.items():
        out.extend(format_trend(trend, [r for r in report.get("releases") or [] if backend in r["headline"]]))
    out.extend(format_backend_matrix(report.get("backends")))

    bench = report.get("benchmarks")
    if bench is not None:
        add("")
        extra = f", {bench['superseded']} older duplicate(s) ignored" if bench["superseded"] else ""
        add(f"== Benchmarks per operator (Aidge time / torch time; {bench['records']} case(s){extra}) ==")
        add("  Aidge time = its scheduler's forward/backward inside the AidgeModule call; the bridge's "
            "overhead is shown apart (bridge +...)")
        figures = bench.get("figures") or {}
        add("  figures: " + (_figures_said(figures) or "none")
            + (f"; {bench['not_robust']} NOT ROBUST (fewer than {MIN_ROBUST_SAMPLES} calls a side)"
               if bench.get("not_robust") else ""))
        add(f"  {'operator':<20} {'cases':>5}  {'fwd median':>10} {'fwd max':>9}  {'bwd median':>10} {'bwd max':>9}")
        for name, op in bench["per_operator"].items():
            fwd, bwd = op["forward"] or {}, op["backward"] or {}
            add(f"  {name:<20} {op['cases']:>5}  {_fmt_ratio(fwd.get('median')):>10} {_fmt_ratio(fwd.get('max')):>9}"
                f"  {_fmt_ratio(bwd.get('median')):>10} {_fmt_ratio(bwd.get('max')):>9}")
        for phase in ("forward", "backward"):
            entries = bench[f"worst_{phase}"]
            add("")
            add(f"== Ten worst {phase} slowdowns vs torch ==")
            if not entries:
                add("  none: no timed case is slower than torch" if bench["per_operator"] else "  none timed")
            for i, e in enumerate(entries, 1):
                ort = _fmt_ratio(e["ort_ratio"]) if e.get("ort_ratio") else "-"
                add(f"  {i:>2}. {e['name']:<36} {_fmt_ratio(e['ratio']):>9}  ort {ort:>8}  {_fmt_times(e)}")
        contended = bench.get("contended") or []
        if contended:
            add("")
            add(f"== Timed under contention, not ranked ({len(contended)}: ModelTester's figure beside "
                f"{bench.get('workers')} test workers, with no timing pass or asv figure) ==")
            for e in sorted(contended, key=lambda x: -x["ratio"]):
                why = f" [timing pass: {_clip(e['alone_error'], 80)}]" if e.get("alone_error") else ""
                add(f"  {e['name']:<36} {e['phase']:<8} {_fmt_ratio(e['ratio']):>9}{why}")
        if bench["untimed"]:
            add(f"  no forward timing for: {', '.join(bench['untimed'])}")

    triage = report.get("triage")
    if triage and triage.get("error"):
        add("")
        add(f"== Expected-failure table: no proposal ({triage['error']}) ==")
    elif triage:
        counts = {k: v for k, v in triage["counts"].items() if v and k != "unreached"}
        add("")
        add(f"== Expected-failure table, Aidge {triage['release']}: changes proposed for {triage['cases']} case(s) ("
            + ", ".join(f"{n} {what}" for what, n in counts.items()) + ") ==")
        add(f"  review {triage['diff']}")
        add(f"  then: {triage['apply']}")

    if report["problems"]:
        add("")
        add(f"== Input problems (lines skipped): {len(report['problems'])} ==")
        for p in report["problems"]:
            add(f"  {p}")
    return _lines(out)


def defects_line(defects: dict[str, Any]) -> str:
    """One line: the run's distinct Aidge defects (interop.reporting.ledger)."""
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(defects["by_kind"].items(), key=lambda kv: -kv[1]))
    if defects.get("headline"):
        return f"{defects['headline']}; {defects['cases']} case(s): {kinds} (defects.md, defects.html)"
    return (f"Aidge defects: {defects['count']} distinct in {defects['cases']} case(s)"
            + ("" if defects.get("complete", True) else " (run incomplete: what it saw)")
            + (f": {kinds}" if kinds else "") + " (defects.md)")


def reproducers_line(repro: dict[str, Any]) -> str:
    """One line: the reproducer bundles of the run (interop.reproducers)."""
    sizes = ", ".join(f"{n} to {k}" for k, n in repro["smallest"].items() if n)
    return (f"Reproducers (results run dir, reproducers/): {repro['written']} of {repro['cases']} failing case(s) "
            f"written, {repro['reproducing']} fail the same way without this suite" + (f" (smallest graph: {sizes})"
                                                                                    if sizes else "")
            + (f"; {repro['export_invalid']} export(s) refused by onnx/onnxruntime" if repro["export_invalid"] else ""))


def format_summary(report: dict[str, Any], *, full: str = "report.txt", limit: int = 8) -> str:
    """What a findings run prints on the terminal: the summary before the detail (at most about
    60 lines: the headline, the counts, what is new first, the first ``limit`` entries of each
    section), and where the full report is."""
    out = [line for line in _head(report) if line]
    add = out.append
    defects = report.get("defects")
    if defects:  # the report leads with defects, not cases
        add(defects_line(defects))
        for e in defects["top"][:3]:
            where = f"{e['reproducer_nodes']}-node reproducer" if e.get("reproducer") else "no reproducer"
            where = f" ({e['issue']}; {where})" if e.get("issue") else f" ({where})"
            add(f"  {e['id']} {_clip(e['title'], 90)}: {e['cases']} case(s){where}")
    new = [(g["operator"], b) for g in report["aidge_bugs"] for b in g["bugs"] if not b["known"]]
    known = sum(g["known"] for g in report["aidge_bugs"])
    add(f"Aidge bugs: {len(report['aidge_bugs'])} operator(s), {sum(g['new'] for g in report['aidge_bugs'])} "
        f"new failure(s) in {len(new)} group(s), {known} known (xfail)")
    crashes = crashes_on_invalid_exports(report)
    if crashes:
        add(f"  + {sum(len(b['cases']) for g in crashes for b in g['bugs'])} case(s) where Aidge crashed on an invalid "
            f"export instead of rejecting it ({', '.join(g['operator'] for g in crashes[:4])}"
            f"{', ...' if len(crashes) > 4 else ''}; the export's fault too)")
    for operator, bug in new[:limit]:
        node = aidge_operator_words(bug, operator)
        add(f"  NEW {operator}{node}: {bug['category']} [{bug['phase'] or '?'}] {_clip(bug['error'], 100)} "
            f"({len(bug['cases'])} case(s))")
    if len(new) > limit:
        add(f"  ... {len(new) - limit} more new group(s) in the full report")
    for key, title in (("test_strategy", "Test-strategy issues"), ("unclassified", "Unclassified failures"),
                       ("lost", "Lost to the run (killed from outside)"), ("unexpected_passes", "Unexpected passes")):
        items = report.get(key) or []
        if items:
            add(f"{title}: {len(items)}")
            for f in items[:limit]:
                add(f"  {f['case']}: {_clip(f.get('error'), 110)}")
            if len(items) > limit:
                add(f"  ... {len(items) - limit} more")
    expected = report["expected_failures"]
    if expected:
        add(f"Expected failures: {sum(v['count'] for v in expected.values())} ("
            + ", ".join(f"{c} {v['count']}" for c, v in expected.items()) + ")")
    slow = report["slowdowns_vs_torch"]
    add(f"Slowdowns vs torch over x{report['threshold']:g}: {len(slow)}"
        + (" (" + ", ".join(f"{s.get('name') or s.get('case')} {_fmt_ratio(s.get('ratio'))}" for s in slow[:5]) + ")"
           if slow else ""))
    bench = report.get("benchmarks")
    if bench:
        figures = bench.get("figures") or {}
        how = _figures_said(figures)
        slowest = "; ".join(f"slowest {phase} " + ", ".join(f"{e['name']} {_fmt_ratio(e['ratio'])}"
                                                          for e in bench[f"worst_{phase}"][:4])
                            for phase in ("forward", "backward") if bench.get(f"worst_{phase}"))
        add(f"Speed, Aidge / torch ({how or 'no figure'}): {slowest or 'no timed case slower than torch'}")
    for trend in (report.get("trend") or {}).values():
        for key, label in (("newly_failing", "NEWLY FAILING"), ("newly_passing", "newly passing")):
            if trend.get(key):
                add(f"{label}: {', '.join(trend[key][:limit])}" + (" ..." if len(trend[key]) > limit else ""))
    repro = report.get("reproducers")
    if repro:
        add(reproducers_line(repro))
    if report["problems"]:
        add(f"Input problems: {len(report['problems'])} (lines skipped; listed in the full report)")
    add(f"full report: {full}")
    return _lines(out)
