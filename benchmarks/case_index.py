"""Every benchmark case one click away on the asv site (a script, not an asv module).

    asv publish && python benchmarks/case_index.py [--html-dir results/html]

asv's graph of a parametrised benchmark draws at most 8 of its parameter values unless the
URL selects others, and ``operators.Forward.time_aidge`` has one value per operator case
(about 500): most cases are unreachable from the grid. This script reads the published
``index.json`` and writes ``<html-dir>/cases.html``: per operator (and per model), one row
per case and one for all its cases, with links to each benchmark's graph with exactly those
cases selected (``index.html#operators.Forward.time_aidge?p-case='ReLU_rank_2'``, the URL
form asv's own pages use), forward and backward. It adds an "All cases" entry to the
navigation bar of ``index.html``. Both files are written atomically. ``nox -s publish``
runs it.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
KINDS = (("time_torch", "torch"), ("time_aidge", "aidge"), ("time_bridge", "bridge"),
         ("track_aidge_torch_ratio", "ratio"))
SECTIONS = (("operators", "Operators"), ("models", "Models"))
PHASES = ("Forward", "Backward")
NAV_ENTRY = '<li id="nav-li-cases"><a href="cases.html">All cases</a></li>'
_NAV_ANCHOR = '<li id="nav-li-regressions">'


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
           "<i>bridge</i> (the AidgeModule call) are seconds per call; <i>ratio</i> is Aidge/torch "
           "(track_aidge_torch_ratio).</p>"]
    for module, title in SECTIONS:
        if module not in groups:
            continue
        names = sorted(groups[module], key=str.lower)
        out.append(f"<h2>{title}</h2><nav>" + "".join(
            f'<a href="#{html.escape(module)}-{html.escape(g)}">{html.escape(g)}</a>' for g in names) + "</nav>")
        for group in names:
            phases = groups[module][group]
            cases = list(dict.fromkeys(v for p in PHASES for v in phases.get(p, [])))
            out.append(f'<h3 id="{html.escape(module)}-{html.escape(group)}">{html.escape(group)} '
                       f"({len(cases)} case{'s' if len(cases) != 1 else ''})</h3>")
            out.append("<table><tr><th>case</th>" + "".join(f"<th>{p.lower()}</th>" for p in PHASES) + "</tr>")
            rows = ([("all", f"all {len(cases)}", {p: phases.get(p) for p in PHASES})] if len(cases) > 1 else [])
            rows += [("", v.strip("'\""), {p: [v] if v in phases.get(p, []) else None for p in PHASES})
                     for v in cases]
            for css, label, selected in rows:
                cells = "".join(f"<td>{_links(module, p, selected[p], present)}</td>" for p in PHASES)
                out.append(f'<tr class="{css}"><td>{html.escape(label)}</td>{cells}</tr>')
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def add_nav_entry(page: str) -> str:
    """``index.html`` with an "All cases" entry before asv's "Regressions" (once)."""
    if NAV_ENTRY in page or _NAV_ANCHOR not in page:
        return page
    return page.replace(_NAV_ANCHOR, NAV_ENTRY + "\n\t" + _NAV_ANCHOR, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--html-dir", type=Path, default=ROOT / "results" / "html")
    args = parser.parse_args(argv)
    index_json = args.html_dir / "index.json"
    if not index_json.exists():
        print(f"case_index: {index_json} not found: run `asv publish` first", file=sys.stderr)
        return 1
    index = json.loads(index_json.read_text(encoding="utf-8"))
    write_atomically(args.html_dir / "cases.html", render(index))
    page = args.html_dir / "index.html"
    if page.exists():
        write_atomically(page, add_nav_entry(page.read_text(encoding="utf-8")))
    print(f"{args.html_dir / 'cases.html'}: every case, linked from the navigation bar")
    return 0


if __name__ == "__main__":
    sys.exit(main())
