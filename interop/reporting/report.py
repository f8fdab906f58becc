"""The report: :func:`build_report` turns a run's records (:class:`~interop.records.store.RunRecords`,
or a :class:`TextRun`: the rows :mod:`interop.console` reads out of a saved pytest output for
``analyze_results.py``) and a :class:`~interop.records.benchmarks.BenchData` into a JSON-able dict (what
``analyze_results.py --json`` prints), :func:`format_report` into text, one section per
question: Aidge bugs to report, expected failures by category, unexpected passes,
slowdowns vs torch, test-strategy issues, skips, benchmarks per operator.

Slowdowns are Aidge's own time over torch's, ranked on the steadiest figure there is for a
case: the run's timing pass (``timings.jsonl``: each case the run timed, timed again alone after
the tests in asv's rounds on the thread's CPU time, :mod:`tools.timing_pass`), else asv's
``track_aidge_torch_ratio`` of the same commit (:mod:`.asv_results`), else the median ratio of
ModelTester's repeated calls (``samples1``/``samples2`` say how many calls each median rests
on; an older record, one call per epoch, is shown as a mean of its few calls). ModelTester's
figure from a parallel run (the record's ``test_workers`` > 1) measured the machine's load as
much as Aidge: it is listed as contended, never ranked. Speed-ups (a ratio at or under 1) are
not slowdowns. "Regressions" (a change over time) are asv's business (``asv compare``), not
this report's.

Aidge bugs are grouped by the Aidge operator the error names when it names one (``Aidge
backward failed (operator MatMul)`` for ``FC_no_bias``), else by the operator of the case.

Nothing here prints or writes files.
"""
from __future__ import annotations

import dataclasses
import datetime
import math
import statistics
from typing import Any, Iterable

from ..categories import CATEGORY_TABLE, kind_of
from ..records.benchmarks import BenchData, MIN_ROBUST_SAMPLES, number_or_none
from ..records.sources import NOT_AIDGE, operator_of, per_source, source_of
from ..records.store import COUNTED_OUTCOMES as OUTCOMES, RunRecords, check_counts, records_counts
from .aidge_files import aidge_file_rows
from .asv_results import AsvRatios

__all__ = ["build_report", "row_of", "TextRun", "MIN_ROBUST_SAMPLES"]


@dataclasses.dataclass
class TextRun:
    """A run known by its text alone, no records (a saved pytest output: :func:`interop.console.text_run`
    makes one for ``analyze_results.py``): its results as rows of the records' shape, and what the
    text says of the run as a whole."""

    #: one row per test, with a record's keys (what the text does not show: None)
    records: list[dict[str, Any]]
    source: str
    #: counts by outcome
    counts: dict[str, int]
    #: pytest's own totals line, None when absent
    pytest_totals: dict[str, int] | None
    duration_s: float | None
    #: why the run cannot be taken as complete (empty: it can)
    incomplete: list[str]
    #: ``-ra``'s skip lines as ``{count, reason}`` (one per reason)
    skip_lines: list[dict[str, Any]]

def _detail(row: dict[str, Any]) -> str | None:
    """The comparator's figures of a record (count, worst element, tolerances), else the
    console reading's detail."""
    m = row.get("mismatch")
    if not isinstance(m, dict):
        return row.get("detail")
    bits = []
    if row.get("epoch") is not None:
        bits.append(f"epoch {row['epoch']}")
    if m.get("n_mismatched") is not None:
        bits.append(f"{m['n_mismatched']} / {m.get('n_total')} elements")
        if _number(m.get("max_abs")):
            bits.append(f"max abs diff {m['max_abs']:.3g}")
        if _number(m.get("max_rel")):
            bits.append(f"max rel diff {m['max_rel']:.3g}")
        if m.get("worst_index") is not None:
            bits.append(f"worst at {tuple(m['worst_index'])}: {m.get('worst_actual')} vs {m.get('worst_expected')}")
        if m.get("atol") is not None:
            bits.append(f"atol {m['atol']:g}, rtol {m.get('rtol'):g}")
    else:
        bits.append(f"shapes or structure differ at {m.get('path')}")
    return ", ".join(bits) or None


def row_of(record: dict[str, Any]) -> dict[str, Any]:
    """A record (or a console row) as the report reads it: the operator the torch one when known
    (its outcome is said once, where the record is written or read: records.outcome)."""
    row = dict(record)
    row.setdefault("case", row.get("nodeid"))
    row["operator"] = row.get("operator") or operator_of(row.get("case") or "")
    row["detail"] = _detail(row)
    return row


def _finding(row: dict[str, Any]) -> dict[str, Any]:
    category = row.get("category") or "unknown"
    if category not in CATEGORY_TABLE:
        category = "unknown"
    group = row.get("torch_op") or row.get("aidge_operator") or row.get("operator")
    return {
        "case": row["case"],
        "nodeid": row["nodeid"],
        "outcome": row["outcome"],
        "when": row.get("when"),
        "category": category,
        "emoji": CATEGORY_TABLE[category][0],
        "kind": kind_of(category),
        "source": row.get("source") or source_of(row["nodeid"]),
        "attribution": row.get("attribution"),  # decided once, when the record (or console row) was made
        "operator": group,
        "aidge_operator": row.get("aidge_operator"),
        "aidge_node": row.get("aidge_node"),
        "phase": row.get("phase"),
        "error": row.get("error") or "",
        "detail": row.get("detail"),
        "signal": row.get("signal"),
        "message": row.get("message") or "",
        "replay": row.get("replay"),
        "reproducer": row.get("reproducer") if isinstance(row.get("reproducer"), dict) else None,
        "first_diverging": row.get("first_diverging") if isinstance(row.get("first_diverging"), dict) else None,
    }


def repro_pointer(finding: dict[str, Any]) -> str | None:
    """Where a finding's reproducer is and what it shows, in a few words (None: no bundle)."""
    r = finding.get("reproducer") or {}
    if not r.get("written"):
        return None
    where = r.get("reduced") or r.get("path")
    size = f"{r.get('reduced_nodes') or r.get('nodes')} node(s)"
    state = "reproduces" if r.get("reproduces") else "does not reproduce alone"
    node = finding.get("first_diverging") or {}
    # onnx's node tests name no node: the op alone, not an empty name before it
    named = f"{node.get('onnx_node')} ({node.get('op_type')})" if node and node.get("onnx_node") else \
        str((node or {}).get("op_type"))
    diverging = f", first diverging node {named}" if node else ""
    return f"{where}: {size}, {state}{diverging}"


def reproducer_summary(findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How many failing and xfailing cases left a reproducer bundle, how many of those fail the same
    way in a fresh interpreter, the smallest graph each was reduced to, and why the others have none
    (None: the run wrote no reproducers)."""
    with_field = [f for f in findings if f["outcome"] in ("failed", "error", "xfailed") and f.get("reproducer")]
    if not with_field:
        return None
    written = [f for f in with_field if f["reproducer"].get("written")]
    reproducing = [f for f in written if f["reproducer"].get("reproduces")]
    sizes = {"1 node": 0, "2-3 nodes": 0, "4+ nodes": 0}
    for f in reproducing:
        r = f["reproducer"]
        n = r.get("reduced_nodes") or r.get("nodes") or 0
        sizes["1 node" if n <= 1 else "2-3 nodes" if n <= 3 else "4+ nodes"] += 1
    missing: dict[str, int] = {}
    for f in with_field:
        if not f["reproducer"].get("written"):
            why = str(f["reproducer"].get("why") or "unknown")
            missing[why] = missing.get(why, 0) + 1
    return {"cases": len(with_field), "written": len(written), "reproducing": len(reproducing),
            "smallest": sizes, "not_written": missing,
            "export_invalid": sum(1 for f in written if f["reproducer"].get("export_valid") is False),
            "first_diverging": sum(1 for f in findings if f.get("first_diverging"))}


def _ratio_ok(stats: Any) -> bool:
    return (isinstance(stats, dict) and isinstance(stats.get("ratio"), (int, float))
            and math.isfinite(stats["ratio"]) and (stats.get("samples") or 0) > 0)




def _bench_entry(record: dict[str, Any], phase: str, asv: AsvRatios | None = None,
                 timings: dict[tuple[str, str], dict[str, Any]] | None = None) -> dict[str, Any]:
    """One case and phase: ``ratio`` is the figure it is ranked on, ``figure`` says which:
    ``alone`` (the run's timing pass, :mod:`tools.timing_pass`: the case timed by itself
    after the tests), ``asv`` (asv's ratio of the same commit), ``median`` of ModelTester's
    calls, ``mean`` for an older record, or ``contended``: ModelTester's median taken while
    other pytest-xdist workers ran beside it (``test_workers`` > 1), shown but never ranked
    (LeNet_eval x18.2 in such a run, x1.96 in asv). ``tester_ratio``: ModelTester's own."""
    stats = record[phase]
    median = _number(stats.get("median1")) and _number(stats.get("median2"))
    samples = stats.get("samples")
    counts = [stats.get("samples1", samples), stats.get("samples2", samples)]
    counts = [c if _number(c) else None for c in counts]
    bridge = stats.get("bridge2")
    workers = record.get("test_workers")
    contended = isinstance(workers, int) and workers > 1
    entry = {"name": record["name"], "operator": operator_of(record["name"]), "phase": phase,
             "ratio": stats["ratio"], "figure": ("contended" if contended else "median") if median else "mean",
             "tester_ratio": stats["ratio"], "test_workers": workers if isinstance(workers, int) else None,
             "torch_ms": _ms(stats.get("median1" if median else "mean1")),
             "aidge_ms": _ms(stats.get("median2" if median else "mean2")),
             "bridge_ms": _ms(bridge) if _number(bridge) else None,
             "aidge_timed": stats.get("timed2") if isinstance(stats.get("timed2"), str) else None,
             "samples": samples, "samples1": counts[0], "samples2": counts[1],
             "robust": bool(median) and not contended and all(c is not None and c >= MIN_ROBUST_SAMPLES
                                                               for c in counts)}
    asv_ratio = asv.get(record["name"], phase) if asv is not None else None
    ort_ratio = asv.get_ort(record["name"], phase) if asv is not None else None
    if ort_ratio is not None:  # the third column: Aidge/onnxruntime, asv's (forward), beside whatever ranks
        entry.update(ort_ratio=ort_ratio, ort_figure="asv")
    if asv_ratio is not None:
        entry.update(ratio=asv_ratio, figure="asv", robust=True, asv_ratio=asv_ratio)
    alone = (timings or {}).get((record["name"], phase))
    if alone and _number(alone.get("ratio")) and alone["ratio"] > 0:
        entry.update(ratio=alone["ratio"], figure="alone", robust=True, rounds=alone.get("rounds"), clock=alone.get("clock"),
                     torch_ms=_ms(alone.get("torch_s")), aidge_ms=_ms(alone.get("aidge_s")), aidge_timed=None,
                     bridge_ms=None, loadavg=alone.get("loadavg"))
    elif alone and alone.get("error"):
        entry["alone_error"] = alone["error"]
    return entry


#: the figures a slowdown is ranked on (a contended one is shown, never ranked)
RANKED_FIGURES = ("alone", "asv", "median", "mean")


def _number(value: Any) -> bool:
    return value is not None and number_or_none(value)


def _ms(seconds: Any) -> float | None:
    return None if seconds is None else seconds * 1e3


def _ratio_stats(values: list[float]) -> dict[str, Any] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "max": max(values), "min": min(values),
            "geomean": math.exp(statistics.fmean(math.log(v) for v in values)) if all(v > 0 for v in values) else None}


def _records_incomplete(run: RunRecords) -> list[str]:
    why = []
    session = run.session
    if not session.get("complete"):
        why.append(f"the session did not complete: {session.get('ended') or 'no session summary'}")
    lost = session.get("lost") or []
    if lost:
        why.append(f"{len(lost)} test(s) started without a result (their process was killed): "
                   + ", ".join(lost[:5]) + (" ..." if len(lost) > 5 else ""))
    if isinstance(session.get("pytest_counts"), dict) or session.get("complete"):
        differ = check_counts(run)
        if differ:
            why.append("the records and pytest's summary disagree: " + "; ".join(differ))
    return why


def build_report(run: RunRecords | TextRun | None = None, bench: BenchData | None = None, *,
                 threshold: float = 10.0, worst: int = 10, asv: AsvRatios | None = None,
                 timings: dict[tuple[str, str], dict[str, Any]] | None = None) -> dict[str, Any]:
    """The whole report as a JSON-able dict (what ``--json`` prints). ``run``: the records of a
    run (:class:`~interop.records.store.RunRecords`, what ``nox -s report`` reads) or the rows of
    a saved console output (:class:`TextRun`, ``analyze_results.py``).
    ``asv``: asv's ratios of the same commit, which then replace ModelTester's figure for the
    cases they hold; ``timings``: the run's timing pass (``(name, phase) -> line`` of
    ``timings.jsonl``), which replaces both."""
    report: dict[str, Any] = {"threshold": threshold, "sources": {}, "problems": []}
    findings: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    if isinstance(run, TextRun):
        rows = [row_of(r) for r in run.records]
        report["sources"]["pytest"] = run.source
        report["input"] = "console"
        report["counts"] = dict(run.counts)
        report["pytest_totals"] = run.pytest_totals
        report["duration_s"] = run.duration_s
        report["incomplete"] = list(run.incomplete)
        skip_lines = run.skip_lines
    elif run is not None:
        rows = [row_of(r) for r in run.records]
        report["sources"]["records"] = run.source
        report["input"] = "records"
        report["counts"] = {o: sum(1 for r in rows if r["outcome"] == o) for o in OUTCOMES}
        report["pytest_totals"] = run.session.get("pytest_counts")
        report["records_counts"] = records_counts(run.records)
        report["duration_s"] = _duration(run.session)
        report["incomplete"] = _records_incomplete(run)
        report["problems"].extend(run.problems)
        skip_lines = None
    for row in rows:
        if row["outcome"] not in ("passed", "skipped"):
            findings.append(_finding(row))
    failing = [f for f in findings if f["outcome"] in ("failed", "error")]
    xfailed = [f for f in findings if f["outcome"] == "xfailed"]
    if run is not None:
        report["per_source"] = per_source(rows, [f for f in findings if f["outcome"] != "xpassed"])
    report["aidge_bugs"] = _group_bugs([f for f in failing + xfailed
                                        if f["kind"] == "aidge" and f["attribution"] not in NOT_AIDGE])
    for who in NOT_AIDGE:
        report[f"{who}_findings"] = _group_bugs([f for f in failing + xfailed if f["attribution"] == who])
    report["expected_failures"] = _by_category(xfailed)
    report["reproducers"] = reproducer_summary(findings)
    report["unexpected_passes"] = [
        {k: f[k] for k in ("case", "nodeid", "category", "emoji", "operator", "phase", "error")} | {"strict": True}
        for f in findings if f["outcome"] == "xpassed"]
    order = list(CATEGORY_TABLE)
    failing.sort(key=lambda f: (order.index(f["category"]), f["case"]))
    report["test_strategy"] = [_short(f) for f in failing if f["kind"] == "test_strategy"]
    report["unclassified"] = [_short(f) for f in failing if f["kind"] == "unknown"]
    report["lost"] = [_short(f) for f in failing if f["kind"] == "run"]
    report["failures_by_category"] = {c: len(v["cases"]) for c, v in _by_category(failing).items()}
    if run is not None:
        report["skipped"] = _skips(rows, skip_lines)
        report["aidge_configs"] = aidge_file_rows(rows, guess_files=isinstance(run, TextRun))
    slowdowns = [dict(_short(f), source="pytest") for f in failing if f["kind"] == "performance"]
    if bench is not None:
        report["sources"]["benchmarks"] = bench.source
        if asv is not None:
            report["sources"]["asv"] = f"{asv.source} (commit {asv.commit[:8]}, {len(asv.ratios)} ratios)"
        report["problems"].extend(bench.problems)
        if timings is not None:
            report["sources"]["timing pass"] = f"{sum(1 for t in timings.values() if t.get('ratio'))} case phase(s)"
        entries = {phase: [_bench_entry(r, phase, asv, timings) for r in bench.records if _ratio_ok(r.get(phase))]
                   for phase in ("forward", "backward")}
        report["benchmarks"] = _bench_summary(bench, entries, worst)
        for phase in ("forward", "backward"):
            slowdowns += [dict(e, source="benchmarks", category="slowdown_vs_torch",
                               emoji=CATEGORY_TABLE["slowdown_vs_torch"][0])
                          for e in entries[phase] if e["ratio"] > threshold and e["figure"] in RANKED_FIGURES]
        slowdowns.sort(key=lambda r: -(r.get("ratio") or 0))
    report["slowdowns_vs_torch"] = slowdowns
    return report


def _short(f: dict[str, Any]) -> dict[str, Any]:
    keys = ("case", "nodeid", "outcome", "when", "category", "emoji", "operator", "aidge_operator", "phase", "error",
            "detail", "signal", "replay")
    return {k: f[k] for k in keys}


def _group_bugs(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (operator, Aidge operator, category, phase, error), grouped by the torch
    operator (the catalog's or the case's when the torch one is unknown)."""
    order = list(CATEGORY_TABLE)
    groups: dict[tuple, dict[str, Any]] = {}
    for f in findings:
        key = (f["operator"], f.get("aidge_operator"), f["category"], f["phase"], f["error"], f["outcome"] == "xfailed")
        group = groups.setdefault(key, {
            "operator": f["operator"], "aidge_operator": f.get("aidge_operator"), "category": f["category"],
            "emoji": f["emoji"], "phase": f["phase"], "error": f["error"], "known": f["outcome"] == "xfailed",
            "cases": []})
        group["cases"].append({"case": f["case"], "nodeid": f["nodeid"], "detail": f["detail"],
                               "repro": repro_pointer(f)})
    by_operator: dict[str, list[dict[str, Any]]] = {}
    for group in groups.values():
        by_operator.setdefault(group["operator"], []).append(group)
    out = []
    for operator in sorted(by_operator, key=lambda o: str(o).lower()):
        entries = sorted(by_operator[operator], key=lambda g: (g["known"], order.index(g["category"])
                                                               if g["category"] in order else len(order)))
        out.append({"operator": operator, "new": sum(len(g["cases"]) for g in entries if not g["known"]),
                    "known": sum(len(g["cases"]) for g in entries if g["known"]), "bugs": entries})
    return out


def _by_category(findings: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for f in findings:
        entry = out.setdefault(f["category"], {"emoji": f["emoji"], "count": 0, "cases": []})
        entry["count"] += 1
        entry["cases"].append(f["case"])
    order = list(CATEGORY_TABLE)
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def _skips(rows: list[dict[str, Any]], skip_lines: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Skip reasons with their counts: each test's own reason from the records; from a console
    output, ``-ra``'s ``SKIPPED [n] file:line: reason`` lines (pytest groups them there)."""
    reasons: dict[str, int] = {}
    if skip_lines:
        for line in skip_lines:
            reasons[line["reason"]] = reasons.get(line["reason"], 0) + line["count"]
    else:
        for r in rows:
            if r["outcome"] == "skipped":
                # an Aidge config's skip names its case ("<case id>: why"): one line per reason
                reason = r.get("skip_reason") or "(no reason shown)"
                case = r.get("case") or ""
                reason = reason[len(case) + 2:] if case and reason.startswith(f"{case}: ") else reason
                reasons[reason] = reasons.get(reason, 0) + 1
    return [{"reason": k, "count": v} for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])]


def _duration(session: dict[str, Any]) -> float | None:
    try:
        start = datetime.datetime.fromisoformat(str(session["started"]))
        end = datetime.datetime.fromisoformat(str(session["finished"]))
    except (KeyError, ValueError, TypeError):
        return None
    return (end - start).total_seconds()


def _bench_summary(bench: BenchData, entries: dict[str, list[dict[str, Any]]], worst: int) -> dict[str, Any]:
    operators: dict[str, dict[str, Any]] = {}
    for record in bench.records:
        operators.setdefault(operator_of(record["name"]), {"cases": 0, "forward": [], "backward": []})["cases"] += 1
    for phase, phase_entries in entries.items():
        for e in phase_entries:
            if e["figure"] in RANKED_FIGURES:
                operators[e["operator"]][phase].append(e["ratio"])
    per_operator = {name: {"cases": v["cases"], "forward": _ratio_stats(v["forward"]),
                           "backward": _ratio_stats(v["backward"])}
                    for name, v in sorted(operators.items(), key=lambda kv: kv[0].lower())}
    # slowdowns only: a ratio at or under 1 is Aidge as fast as torch or faster (x0.267 used to be
    # listed among "the ten worst slowdowns"); per_operator above keeps every ranked ratio; a
    # figure taken beside other test workers is listed apart, never ranked
    ranked = {phase: sorted((x for x in e if x["ratio"] > 1.0 and x["figure"] in RANKED_FIGURES),
                            key=lambda x: -x["ratio"])[:worst]
              for phase, e in entries.items()}
    contended = [e for phase_entries in entries.values() for e in phase_entries if e["figure"] == "contended"]
    untimed = [r["name"] for r in bench.records if not _ratio_ok(r.get("forward"))]
    every = [e for phase_entries in entries.values() for e in phase_entries]
    figures = {f: sum(1 for e in every if e["figure"] == f) for f in RANKED_FIGURES + ("contended",)}
    return {"records": len(bench.records), "superseded": bench.superseded, "untimed": untimed,
            "figures": figures, "not_robust": sum(1 for e in every if not e["robust"] and e["figure"] in RANKED_FIGURES),
            "per_operator": per_operator, "worst_forward": ranked["forward"], "worst_backward": ranked["backward"],
            "contended": contended, "workers": max((e["test_workers"] or 1 for e in contended), default=None)}

