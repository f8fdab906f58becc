"""Every benchmark case one click away on the asv site (a script, not an asv module).

    asv publish && python tools/case_index.py [--html-dir results/html]

asv's graph of a parametrised benchmark draws at most 8 of its parameter values unless the
URL selects others, and ``operators.Forward.time_aidge`` has one value per operator case
(about 500): most cases are unreachable from the grid. This script reads the published
``index.json`` and writes ``<html-dir>/cases.html``: per operator (and per model), one row
per case and one for all its cases, with links to each benchmark's graph with exactly those
cases selected (``index.html#operators.Forward.time_aidge?p-case='ReLU_rank_2'``, the URL
form asv's own pages use), forward and backward. It adds "All cases" and "Support matrix"
entries to the navigation bar of ``index.html`` (and "Porting readiness": ``porting.html``, the
table of ``nox -s architectures``, ``results/porting/porting.html``, else the latest findings
run's; and "Defects": ``defects.html``, the defect ledger of the same run as the support matrix,
with its ``defects/<id>/ISSUE.md`` reports; and "ONNX conformance": ``conformance.html``, the ONNX
backend scoreboard of the same run when it ran onnx's backend tests); each of those pages gets the site's navigation
(:func:`with_site_nav`); ``support.html`` is the support matrix of the
latest complete findings run (``results/latest/support.html``, written by ``nox -s report``;
a page saying there is none yet otherwise). Each case row also links ``pair.html``, which draws torch's and Aidge's
times of that case on one chart (from asv's own ``graphs/*.json``, no library needed) with a
table beside: per commit, and per Aidge release where the release matrix ran (one colour
per benchmark environment). The
files are written atomically. ``nox -s publish`` runs it.

It also mends asv's summary grid (``summarygrid.js``, :func:`patch_summary_grid`): asv draws each
panel as lines only, so with one benchmarked commit every panel is an empty box (one point, no
line); the grid now marks each commit with a dot as well, and a panel whose benchmark has no
figure at all (no case timed: skipped where Aidge cannot run it, e.g. the architectures'
backward, or not run) says "no measurement" instead of staying blank. ``tools/check_site.py`` fails when a panel
with figures draws nothing.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
KINDS = (("time_torch", "torch"), ("time_aidge", "aidge"), ("time_bridge", "bridge"),
         ("track_aidge_torch_ratio", "ratio"), ("time_ort", "onnxruntime"),
         ("track_aidge_ort_ratio", "ratio ort"))
SECTIONS = (("operators", "Operators"), ("models", "Models"))
PHASES = ("Forward", "Backward")
NAV_ENTRY = '<li id="nav-li-cases"><a href="cases.html">All cases</a></li>'
NAV_SUPPORT = '<li id="nav-li-support"><a href="support.html">Support matrix</a></li>'
NAV_PORTING = '<li id="nav-li-porting"><a href="porting.html">Porting readiness</a></li>'
NAV_DEFECTS = '<li id="nav-li-defects"><a href="defects.html">Defects</a></li>'
NAV_CONFORMANCE = '<li id="nav-li-conformance"><a href="conformance.html">ONNX conformance</a></li>'
#: the navigation the project's pages get on the site (their own links between the run's pages,
#: plus the way back to the benchmark grid and the case index)
SITE_PAGES = (("index.html", "Benchmark grid"), ("cases.html", "All cases"), ("support.html", "Support matrix"),
              ("porting.html", "Porting readiness"), ("defects.html", "Defects"), ("conformance.html", "ONNX conformance"))
#: the porting-readiness table: both routes (``nox -s architectures``), else the latest findings run's
PORTING_SOURCES = (ROOT / "results" / "porting" / "porting.html", ROOT / "results" / "latest" / "porting.html")
NO_PORTING_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Porting readiness</title></head>
<body><h1>Porting readiness</h1><p id="no-run">No architecture run yet: <code>nox -s architectures</code>
writes results/porting/porting.html, then <code>nox -s publish</code> copies it here.</p></body></html>
"""
#: the support matrix of the latest complete findings run (``nox -s report``)
SUPPORT_SOURCE = ROOT / "results" / "latest" / "support.html"
NO_SUPPORT_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Aidge support matrix</title></head>
<body><h1>Aidge support matrix</h1><p id="no-run">No complete findings run yet: <code>nox -s report</code>
writes results/runs/&lt;run&gt;/support.html, then <code>nox -s publish</code> copies it here.</p></body></html>
"""
#: the defect ledger of the same findings run as the support matrix (``defects.html`` beside
#: ``support.html``; its ``defects/<id>/`` reports are copied with it, the page links them)
NO_DEFECTS_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Aidge defects</title></head>
<body><h1>Aidge defects</h1><p id="no-run">No defect ledger yet: <code>nox -s report</code>
writes results/runs/&lt;run&gt;/defects.html, then <code>nox -s publish</code> copies it here.</p></body></html>
"""
#: the ONNX conformance scoreboard of the same run (``conformance.html`` beside ``support.html``:
#: a run of onnx's backend tests, :mod:`interop.reporting.onnx_scoreboard`; its defect ids link the ledger)
NO_CONFORMANCE_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ONNX backend conformance: Aidge</title></head>
<body><h1>ONNX backend conformance: Aidge</h1><p id="no-run">No ONNX backend tests in the published run:
<code>nox -s report</code> (or <code>nox -s onnx-backend</code>) writes results/runs/&lt;run&gt;/conformance.html,
then <code>nox -s publish</code> copies it here.</p></body></html>
"""
_NAV_ANCHOR = '<li id="nav-li-regressions">'


def site_nav(current: str) -> str:
    """The project's navigation on a published page (``current`` in bold, not a link)."""
    return ('<nav id="site-nav" style="margin-bottom:.8em">' + " ".join(
        f"<b>{html.escape(label)}</b>" if page == current else f'<a href="{page}">{html.escape(label)}</a>'
        for page, label in SITE_PAGES) + "</nav>")


def with_site_nav(page: str, current: str) -> str:
    """A run page as published: the run's own links between its pages (a ``<nav>`` naming the
    support matrix) replaced by the site's, or the site's put first in the body; idempotent."""
    if 'id="site-nav"' in page:
        return page
    nav = site_nav(current)
    m = re.search(r"<nav>.*?</nav>", page, re.DOTALL)
    if m and any(name in m.group(0) for name in ("support.html", "porting.html", "defects.html")):
        return page[:m.start()] + nav + page[m.end():]
    body = re.search(r"<body[^>]*>", page)
    return page[:body.end()] + nav + page[body.end():] if body else nav + page


def group_of(case: str) -> str:
    """The operator (or model) of a case id: its prefix up to the first ``_``."""
    return case.split("_", 1)[0] or case


def graph_url(benchmark: str, values: list[str]) -> str:
    """asv's URL of ``benchmark``'s graph with exactly the parameter values ``values``
    (their repr, as asv stores them) selected."""
    query = "&".join(f"p-case={quote(v, safe='')}" for v in values)
    return f"index.html#{benchmark}" + (f"?{query}" if query else "")


def collect(index: dict) -> dict[str, dict[str, dict[str, list[str]]]]:
    """``{module: {group: {phase: [case reprs]}}}`` from asv's ``index.json``."""
    out: dict[str, dict[str, dict[str, list[str]]]] = {}
    for name, bench in sorted(index.get("benchmarks", {}).items()):
        parts = name.split(".")
        if len(parts) != 3 or parts[2] != "time_aidge" or parts[1] not in PHASES:
            continue
        if bench.get("param_names") != ["case"]:
            continue
        for value in bench["params"][0]:
            case = value.strip("'\"")
            phases = out.setdefault(parts[0], {}).setdefault(group_of(case), {})
            phases.setdefault(parts[1], []).append(value)
    return out


def _links(module: str, phase: str, values: list[str] | None, present: set[str]) -> str:
    if not values:
        return "-"
    links = []
    for kind, label in KINDS:
        name = f"{module}.{phase}.{kind}"
        if name in present:
            links.append(f'<a href="{html.escape(graph_url(name, values))}">{label}</a>')
    return " · ".join(links) or "-"


PAIR_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>torch and Aidge side by side</title>
<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}svg{border:1px solid #ccc}
.torch{stroke-dasharray:6 4}.ort{stroke-dasharray:2 3}</style></head>
<body><p><a href="cases.html">&larr; every case</a> &middot; <a id="asv-torch">asv: torch</a> &middot;
<a id="asv-aidge">asv: Aidge</a> &middot; <a id="asv-ort">asv: onnxruntime</a></p>
<h1 id="what">torch, Aidge and onnxruntime side by side</h1>
<p>Seconds per call of the case, torch (dashed), Aidge's scheduler (solid) and onnxruntime on the
same ONNX graph Aidge imported (dotted; forward only: onnxruntime has no backward here), per commit;
one colour per benchmark environment (one per Aidge release where the release matrix ran). The
y axis starts at 0.</p><div id="chart"></div><div id="table"></div>
<p id="why">"Aidge / torch" and "Aidge / onnxruntime" are asv's ratio benchmarks
(<code>track_aidge_torch_ratio</code>, <code>track_aidge_ort_ratio</code>): both sides
timed in interleaved rounds of ~2 ms in one process (the report's timing pass takes the same
rounds, on CPU time). The
quotient of the two times beside it is not the same figure: <code>time_torch</code> and
<code>time_aidge</code> are separate benchmarks, sampled in separate processes minutes apart, so the
machine's own speed drift (measured up to 1.9x, docs/noise-floor.md) enters the quotient and
cancels in the ratio; for the same reason <code>time_aidge</code> can read above
<code>time_bridge</code>, which contains it.</p>
<script>
// pair.html#<module>.<Phase>|<case repr, URL-encoded>; data: asv's index.json and graphs/*.json
// (the path rule of asv.js graph_to_path / sanitize_filename).
function sanitize(name) { return name.replace(/[<>:"\/\\^|?*\x00-\x1f]/g, "_"); }
function graphPath(bench, state) {
  var parts = Object.keys(state).map(function (k) {
    var v = state[k]; return sanitize(v === null ? k + "-null" : (v ? k + "-" + v : k)); });
  parts.sort(); parts.unshift("graphs"); parts.push(sanitize(bench));
  return parts.map(encodeURIComponent).join("/") + ".json";
}
function fetchJson(url) { return fetch(url).then(function (r) { return r.ok ? r.json() : null; }); }
function fmt(x) { return x === null || x === undefined ? "-" : (x * 1e3).toPrecision(3) + " ms"; }
// 3 significant digits, never an exponent (1357 -> "1360"): the report's sig3
function sig3(x) { return x === 0 ? "0" : Number(x.toPrecision(3)).toFixed(Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))))); }
var COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
// every value from the data (a machine name, an environment, a commit) enters the page as text
// or as an attribute value, never as markup: the page builds its nodes and parses no HTML (issue 44)
var SVG_NS = "http://www.w3.org/2000/svg";
function node(ns, tag, attrs, children) {
  var e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
  (children || []).forEach(function (c) { e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
  return e;
}
function h(tag, attrs, children) { return node(null, tag, attrs, children); }
function s(tag, attrs, children) { return node(SVG_NS, tag, attrs, children); }
function fill(id, children) {
  var box = document.getElementById(id); box.textContent = "";
  children.forEach(function (c) { box.appendChild(c); });
}
function draw(series, revs) {
  var W = 900, H = 360, L = 70, B = 30, ymax = 0;
  series.forEach(function (t) { t.points.forEach(function (p) { ymax = Math.max(ymax, p[1]); }); });
  if (!ymax || !revs.length) { return h("p", {}, ["no measurement of this case yet"]); }
  function x(r) { var i = revs.indexOf(r); return L + (revs.length < 2 ? (W - L) / 2 : i * (W - L - 20) / (revs.length - 1)); }
  function y(v) { return H - B - v / ymax * (H - B - 10); }
  var chart = s("svg", {width: W, height: H});
  for (var k = 0; k <= 4; k++) { var v = ymax * k / 4;
    chart.appendChild(s("line", {x1: L, x2: W, y1: y(v), y2: y(v), stroke: "#eee"}));
    chart.appendChild(s("text", {x: L - 5, y: y(v) + 4, "text-anchor": "end", "font-size": 11}, [fmt(v)])); }
  series.forEach(function (t) {
    var pts = t.points.map(function (p) { return x(p[0]) + "," + y(p[1]); }).join(" ");
    chart.appendChild(s("polyline", {"class": t.side, fill: "none", "stroke-width": 2, stroke: t.colour, points: pts}));
    t.points.forEach(function (p) {
      chart.appendChild(s("circle", {r: 3, fill: t.colour, cx: x(p[0]), cy: y(p[1])},
                          [s("title", {}, [t.label + " " + fmt(p[1])])])); });
  });
  return chart;
}
function show() {
  var parts = location.hash.slice(1).split("|");
  if (parts.length !== 2) { document.getElementById("what").textContent = "no case selected (pair.html#module.Phase|case)"; return; }
  var prefix = parts[0], value = decodeURIComponent(parts[1]);
  document.getElementById("what").textContent = prefix + " " + value + ": torch, Aidge and onnxruntime side by side";
  ["torch", "aidge", "ort"].forEach(function (side) {
    document.getElementById("asv-" + side).href = "index.html#" + prefix + ".time_" + side + "?p-case=" + parts[1]; });
  fetchJson("index.json").then(function (index) {
    var bench = index.benchmarks[prefix + ".time_aidge"];
    var i = bench ? bench.params[0].indexOf(value) : -1;
    if (i < 0) { document.getElementById("chart").textContent = "unknown case " + value; return; }
    var envs = index.graph_param_list, varying = Object.keys(index.params).filter(function (k) { return index.params[k].length > 1; });
    var loads = [];
    var RATIOS = {ratio: ".track_aidge_torch_ratio", ortratio: ".track_aidge_ort_ratio"};
    envs.forEach(function (env, e) { ["torch", "aidge", "ort", "ratio", "ortratio"].forEach(function (side) {
      var name = prefix + (RATIOS[side] || ".time_" + side);
      loads.push(fetchJson(graphPath(name, env)).then(function (data) {
        var label = (varying.map(function (k) { return k + " " + env[k]; }).join(", ") || "this machine") + ": " + side;
        var points = (data || []).map(function (row) { return [row[0], Array.isArray(row[1]) ? row[1][i] : row[1]]; })
                                  .filter(function (p) { return p[1] !== null && p[1] !== undefined; });
        return {side: side, env: e, label: label, colour: COLOURS[e % COLOURS.length], points: points}; })); }); });
    Promise.all(loads).then(function (all) {
      var series = all.filter(function (t) { return !RATIOS[t.side]; });
      var revs = []; series.forEach(function (t) { t.points.forEach(function (p) { if (revs.indexOf(p[0]) < 0) revs.push(p[0]); }); });
      revs.sort(function (a, b) { return a - b; });
      var legend = h("p");
      series.forEach(function (t, n) {
        if (n) { legend.appendChild(document.createTextNode("\u00a0 ")); }
        legend.appendChild(h("span", {style: "color:" + t.colour},
                             [({torch: "- - ", ort: ": : "}[t.side] || "\u2014 ") + t.label])); });
      fill("chart", [draw(series, revs), legend]);
      var table = h("table", {}, [h("tr", {}, ["commit", "environment", "torch", "Aidge", "Aidge / torch (ratio benchmark)",
                                               "time_aidge / time_torch", "onnxruntime",
                                               "Aidge / onnxruntime (ratio benchmark)"]
                                              .map(function (c) { return h("th", {}, [c]); }))]);
      revs.forEach(function (r) { envs.forEach(function (env, e) {
        function at(side) { var t = all.filter(function (u) { return u.env === e && u.side === side; })[0];
          var p = t && t.points.filter(function (q) { return q[0] === r; })[0]; return p ? p[1] : null; }
        var t = at("torch"), a = at("aidge"), q = at("ratio"), o = at("ort"), qo = at("ortratio");
        if (t === null && a === null) return;
        table.appendChild(h("tr", {}, [String(index.revision_to_hash[r] || r).slice(0, 8),
                                       varying.map(function (k) { return env[k]; }).join(", ") || "-",
                                       fmt(t), fmt(a), q === null ? "-" : sig3(q), t && a ? sig3(a / t) : "-",
                                       fmt(o), qo === null ? "-" : sig3(qo)]
                                      .map(function (c) { return h("td", {}, [String(c)]); }))); }); });
      fill("table", [table]);
    });
  });
}
window.addEventListener("hashchange", show); show();
</script></body></html>
"""


def pair_url(module: str, phase: str, value: str) -> str:
    """``pair.html``'s address for one case: torch's and Aidge's graph side by side."""
    return f"pair.html#{module}.{phase}|{quote(value, safe='')}"


def _pair_links(module: str, selected: dict[str, list[str] | None]) -> str:
    links = [f'<a href="{html.escape(pair_url(module, p, values[0]))}">{p.lower()}</a>'
             for p in PHASES for values in [selected[p]] if values and len(values) == 1]
    return " · ".join(links) or "-"


def render(index: dict) -> str:
    groups = collect(index)
    present = set(index.get("benchmarks", {}))
    total = sum(len(v) for mod in groups.values() for g in mod.values() for v in g.values())
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(str(index.get('project', 'benchmarks')))}: every case</title>",
           "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1em}"
           "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}tr.all{background:#eef}"
           "nav a{margin-right:.6em}</style></head><body>",
           '<p><a href="index.html">&larr; benchmark grid</a></p>',
           "<h1>Every benchmark case</h1>",
           f"<p>{total} case-phases. asv's graphs draw at most 8 cases unless the address selects "
           "others: each link below opens one benchmark's graph with exactly that case (or all cases "
           "of the operator) selected. <i>torch</i>, <i>aidge</i> (Aidge's scheduler alone), "
           "<i>bridge</i> (the AidgeModule call), <i>onnxruntime</i> (the same ONNX graph, forward) are "
           "seconds per call; <i>ratio</i> is Aidge/torch (track_aidge_torch_ratio), <i>ratio ort</i> "
           "Aidge/onnxruntime (track_aidge_ort_ratio); <i>side by side</i> opens torch's, Aidge's and "
           "onnxruntime's graphs of the case next to each other.</p>"]
    # every benchmark module of the index gets its section (the architectures' had none: 801
    # case links missing, found by nox -s site-check on 2026-12-03)
    sections = list(SECTIONS) + [(m, m.capitalize()) for m in sorted(groups) if m not in dict(SECTIONS)]
    for module, title in sections:
        if module not in groups:
            continue
        names = sorted(groups[module], key=str.lower)
        out.append(f"<h2>{html.escape(title)}</h2><nav>" + "".join(
            f'<a href="#{html.escape(module)}-{html.escape(g)}">{html.escape(g)}</a>' for g in names) + "</nav>")
        for group in names:
            phases = groups[module][group]
            cases = list(dict.fromkeys(v for p in PHASES for v in phases.get(p, [])))
            out.append(f'<h3 id="{html.escape(module)}-{html.escape(group)}">{html.escape(group)} '
                       f"({len(cases)} case{'s' if len(cases) != 1 else ''})</h3>")
            out.append("<table><tr><th>case</th>" + "".join(f"<th>{p.lower()}</th>" for p in PHASES)
                       + "<th>side by side</th></tr>")
            rows = ([("all", f"all {len(cases)}", {p: phases.get(p) for p in PHASES})] if len(cases) > 1 else [])
            rows += [("", v.strip("'\""), {p: [v] if v in phases.get(p, []) else None for p in PHASES})
                     for v in cases]
            for css, label, selected in rows:
                cells = "".join(f"<td>{_links(module, p, selected[p], present)}</td>" for p in PHASES)
                cells += f"<td>{_pair_links(module, selected) if css != 'all' else '-'}</td>"
                out.append(f'<tr class="{css}"><td>{html.escape(label)}</td>{cells}</tr>')
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def rerendered_support(run_dir: Path) -> str | None:
    """The support matrix of a run written before the page had its search, filter and defect links,
    rendered again from the run's ``support.json`` (and ``defects.json``: a cell's failing cases
    matched to the ledger by their case id); None when the run has no readable ``support.json``."""
    sys.path.insert(0, str(ROOT))
    from interop.reporting.porting import load_defects
    from interop.reporting.support import format_html, load_support

    matrix = load_support(run_dir)  # its cells typed: a wrong one names the file, the cell and the key
    if matrix is None:
        return None
    by_case: dict[str, list[str]] = {}
    for entry in load_defects(run_dir):
        for nodeid in entry.get("cases") or []:
            m = re.search(r"\[(.*)\]$", str(nodeid))
            ids = by_case.setdefault(m.group(1) if m else str(nodeid), [])
            if entry["id"] not in ids:
                ids.append(entry["id"])
    for cell in matrix["cells"]:  # the ledger's keys are node ids; these cells hold case ids
        cell.setdefault("failing_nodeids", list(cell.get("failing") or []))
    return format_html(matrix, lines=[f"run {run_dir.resolve().name} (page rendered again from its support.json)"],
                       defects=by_case)


#: what the Defects page links under ``defects/<id>/``: the report to file upstream and its script
_REPORT_FILES = ("ISSUE.md", "standalone.py")


def _copy_reports(source: Path, target: Path) -> int:
    """``defects/<id>/ISSUE.md`` and ``standalone.py`` of the run (plain files only, no link
    followed) into the site; the site's previous copy is replaced. Returns the files copied."""
    import shutil

    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    n = 0
    for entry in sorted(source.iterdir()):
        if not re.fullmatch(r"D-[0-9a-f]{8}", entry.name) or entry.is_symlink() or not entry.is_dir():
            continue
        for name in _REPORT_FILES:
            f = entry / name
            if f.is_file() and not f.is_symlink():
                (target / entry.name).mkdir(parents=True, exist_ok=True)
                write_atomically(target / entry.name / name, f.read_text(encoding="utf-8"))
                n += 1
    return n


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def add_nav_entry(page: str) -> str:
    """``index.html`` with "All cases", "Support matrix", "Porting readiness", "Defects" and "ONNX conformance"
    entries before asv's "Regressions" (once each)."""
    for entry in (NAV_ENTRY, NAV_SUPPORT, NAV_PORTING, NAV_DEFECTS, NAV_CONFORMANCE):
        if entry not in page and _NAV_ANCHOR in page:
            page = page.replace(_NAV_ANCHOR, entry + "\n\t" + _NAV_ANCHOR, 1)
    return page


#: asv's summary-grid panel options: lines only (one commit: nothing drawn)
_GRID_LINES = re.compile(r"lines:\s*\{\s*show:\s*true,\s*lineWidth:\s*2\s*\},")
_GRID_DOTS = "points: {show: true, radius: 2, fill: true}, /* interop: one commit draws */"
_GRID_FAIL = "// TODO: Handle failure"
_GRID_NO_DATA = ("plot_div.addClass('no-measurement').text('no measurement: no case of it was timed (skipped, failed or not run)'); "
                 "/* interop: no figure */")
_GRID_DONE = ".done(function(data) {"
_GRID_EMPTY = (".done(function(data) { /* interop: a panel without any figure says so */ "
               "if (!data || !data.some(function (p) { return p[1] !== null && p[1] !== undefined; })) { "
               "plot_div.addClass('no-measurement').text('no measurement: no case of it was timed (skipped, failed or not run)'); return; }")


class GridPatchError(RuntimeError):
    pass


def patch_summary_grid(html_dir: Path) -> bool:
    """Make asv's summary grid draw with one commit (a dot per commit beside the line) and say
    "no measurement" in a panel without figures; idempotent. False when already patched or when
    there is no ``summarygrid.js``; raises
    :class:`GridPatchError` when ``summarygrid.js`` is not the asv 0.6 code it expects."""
    path = html_dir / "summarygrid.js"
    if not path.is_file():  # no asv grid in this directory: nothing to mend
        return False
    text = path.read_text(encoding="utf-8")
    if "/* interop: one commit draws */" in text:
        return False
    lines = _GRID_LINES.search(text)
    if not lines or _GRID_FAIL not in text or text.count(_GRID_DONE) != 1:
        raise GridPatchError(f"{path}: not asv 0.6's summary grid (update patch_summary_grid in {Path(__file__).name})")
    text = text[:lines.end()] + " " + _GRID_DOTS + text[lines.end():]
    text = text.replace(_GRID_FAIL, _GRID_NO_DATA).replace(_GRID_DONE, _GRID_EMPTY)
    write_atomically(path, text)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--html-dir", type=Path, default=ROOT / "results" / "html")
    parser.add_argument("--support", type=Path, default=SUPPORT_SOURCE,
                        help="the support matrix page to publish (default: results/latest/support.html); "
                             "the defect ledger defects.html beside it is published with it")
    parser.add_argument("--porting", type=Path, default=None,
                        help="the porting-readiness page to publish (default: results/porting/porting.html, "
                             "else results/latest/porting.html)")
    args = parser.parse_args(argv)
    index_json = args.html_dir / "index.json"
    if not index_json.exists():
        print(f"case_index: {index_json} not found: run `asv publish` first", file=sys.stderr)
        return 1
    index = json.loads(index_json.read_text(encoding="utf-8"))
    write_atomically(args.html_dir / "cases.html", render(index))
    write_atomically(args.html_dir / "pair.html", PAIR_PAGE)
    # the support matrix (one self-contained page) of the latest complete findings run
    support = args.support.read_text(encoding="utf-8") if args.support.is_file() else NO_SUPPORT_PAGE
    if args.support.is_file() and 'id="controls"' not in support:
        support = rerendered_support(args.support.parent) or support
    write_atomically(args.html_dir / "support.html", with_site_nav(support, "support.html"))
    porting = next((p for p in ([args.porting] if args.porting else PORTING_SOURCES) if p.is_file()), None)
    write_atomically(args.html_dir / "porting.html", with_site_nav(
        porting.read_text(encoding="utf-8") if porting is not None else NO_PORTING_PAGE, "porting.html"))
    # the defect ledger of the same run (its ids are what the matrix and the table link to)
    ledger = args.support.parent / "defects.html"
    defects = ledger.read_text(encoding="utf-8") if args.support.is_file() and ledger.is_file() else NO_DEFECTS_PAGE
    write_atomically(args.html_dir / "defects.html", with_site_nav(defects, "defects.html"))
    # the ONNX conformance scoreboard of the same run (its defect ids link that ledger)
    scoreboard = args.support.parent / "conformance.html"
    conformance = scoreboard.read_text(encoding="utf-8") if args.support.is_file() and scoreboard.is_file() \
        else NO_CONFORMANCE_PAGE
    write_atomically(args.html_dir / "conformance.html", with_site_nav(conformance, "conformance.html"))
    reports = args.support.parent / "defects"
    if defects is not NO_DEFECTS_PAGE and reports.is_dir() and not reports.is_symlink():
        _copy_reports(reports, args.html_dir / "defects")
    elif (args.html_dir / "defects").is_dir() and not (args.html_dir / "defects").is_symlink():
        import shutil

        shutil.rmtree(args.html_dir / "defects")  # another run's reports: not this ledger's
    page = args.html_dir / "index.html"
    if page.exists():
        write_atomically(page, add_nav_entry(page.read_text(encoding="utf-8")))
    try:
        patch_summary_grid(args.html_dir)
    except GridPatchError as exc:
        print(f"case_index: {exc}", file=sys.stderr)
        return 1
    print(f"{args.html_dir / 'cases.html'}: every case, linked from the navigation bar")
    print(f"{args.html_dir / 'support.html'}: the support matrix "
          + (f"of {args.support.resolve().parent.name}" if args.support.is_file() else "(no findings run yet)"))
    print(f"{args.html_dir / 'defects.html'}: the defect ledger "
          + (f"of {args.support.resolve().parent.name}" if defects is not NO_DEFECTS_PAGE else "(no ledger yet)"))
    print(f"{args.html_dir / 'conformance.html'}: the ONNX conformance scoreboard "
          + (f"of {args.support.resolve().parent.name}" if conformance is not NO_CONFORMANCE_PAGE
             else "(no ONNX backend tests in that run)"))
    print(f"{args.html_dir / 'porting.html'}: the porting-readiness table "
          + (f"from {porting}" if porting is not None else "(no architecture run yet)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
