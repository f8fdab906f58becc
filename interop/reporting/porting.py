"""The porting-readiness table: for each architecture of :data:`interop.zoo.architectures.ARCHITECTURES`
(MONAI, Hugging Face ``transformers``), each route to ONNX a run took, whether torch exported it
(and how many ONNX nodes), whether Aidge imported and compiled the graph, whether the forward
and the backward match torch, and the first Aidge node that blocks it with Aidge's error,
quoted: generated from runs' records (``tests/test_architectures.py``), never from text.

    python -m interop.reporting.porting RUN_DIR [RUN_DIR ...] [--markdown | --json] [--write DIR]
        [--defects results/latest/defects.json]

Each run directory holds a ``records.jsonl``; a run with ``--exporter=torchscript`` and one
with ``--exporter=dynamo`` (``nox -s architectures`` makes both) give both routes side by side;
an ``auto`` run gives the route each case took. Columns per route:

- ``exports``: ``N nodes`` when the route exported (the node count of that graph), ``no``
  when it did not (the error is the blocking cell), ``?`` when the case died before saying;
- ``import``: Aidge's import and compile of that graph: ``ok``, ``no``, or ``-`` when nothing
  exported;
- ``forward``: eval and train mode (two calls each): ``ok`` or the category;
- ``backward``: input and parameter gradients, in the first mode whose forward matched
  (train, else eval): ``ok``, the category, or ``-`` when no forward matched;
- ``blocked by``: the operator and node of the first failure (eval before train; the
  earliest phase), with the first line of the error (the whole error behind a disclosure on the
  page), and the defect ids of the ledger (``defects.json`` beside the table) its cases belong to.

The operator named beside a node is that node's own (:func:`node_operator`): the one the bridge
names with the node (``Aidge import failed (operator IsNaN, node 'node_IsNaN_198')``), else the
ONNX op the import gap lists for it, else the node the ONNX checker refused in an invalid
export; the expected-failure table's operator (which names the row, not the node: ``CumSum``
for a graph whose first unsupported node is an ``IsNaN``) is used only where no node is known.
An import blocked by missing operators lists every ONNX op that has none, with its node count.

Nothing here imports torch or Aidge; :func:`write_porting` writes ``porting.json``,
``porting.md`` and ``porting.html`` (self-contained) atomically.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from . import text_escape
from .models import PortingRow, checked_all, page_entries
# the links between a run's pages moved to .pages (NAV_OPTIONAL, nav_html: said here still)
from .pages import NAV, NAV_OPTIONAL, macro, nav_html, render  # noqa: F401
from .text_escape import terminal
from ..records.store import load_run, write_atomically

__all__ = ["porting_table", "format_markdown", "format_html", "write_porting", "PORTING_FILES", "main",
           "node_operator", "unsupported_ops", "defects_by_case", "load_defects", "attach_defects", "nav_html",
           "link_run_pages", "defect_links", "NAV", "load_speeds", "attach_speeds"]

PORTING_FILES = ("porting.json", "porting.md", "porting.html")
_DEFECT_LINKS = macro("macros.html.j2", "defect_links")
_PHASE_ORDER = ("export", "import", "compile", "forward", "backward", "step")
_RAN = ("passed", "failed", "error", "xfailed", "xpassed")
_QUOTE = 160


def _route_of(rec: dict[str, Any]) -> str:
    chosen = rec.get("exporter") or "auto"
    return chosen if chosen != "auto" else (rec.get("export_route") or "auto")


def _failed_phase(rec: dict[str, Any]) -> str | None:
    """The phase the case failed in (None: it passed)."""
    if rec.get("outcome") in ("passed", "xpassed"):  # said once where the record is written or read
        return None  # passed, or an expected failure that passed
    return rec.get("phase") or "forward"


def _first_line(text: str | None) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= _QUOTE else line[:_QUOTE - 3] + "..."


#: the bridge's own words: "Aidge import failed (operator IsNaN, node 'node_IsNaN_198'): ..."
_BRIDGE_NODE = re.compile(r"\(operator (?P<op>[^,\s()]+), node '(?P<node>[^']*)'\)")
#: the import gap's list: "'node_IsNaN_198' (ONNX op IsNaN), 'node_cumsum' (ONNX op CumSum)"
_GAP_NODE = re.compile(r"'(?P<node>[^']*)' \(ONNX op (?P<op>[A-Za-z0-9_]+)\)")
#: the ONNX checker on an invalid export: "(op_type:Gather, node name: /Gather)"
_CHECKER_NODE = re.compile(r"op_type:(?P<op>[A-Za-z0-9_]+), node name: (?P<node>[^)]*)\)")


def node_operator(rec: dict[str, Any]) -> dict[str, str | None]:
    """``{"operator", "node", "from"}``: the node a failure quotes and *that node's* operator.

    ``from`` says who named them: ``bridge`` (the bridge's error names the node and its
    operator), ``import`` (the list of nodes imported without an Aidge operator), ``checker``
    (the ONNX checker's refusal of an invalid export names the node), ``table`` (no node known:
    the expected-failure row's or the record's operator), or None (nothing named)."""
    node = rec.get("aidge_node")
    texts = [str(rec.get(k) or "") for k in ("message", "error")]
    if node:
        for text in texts:
            for m in _BRIDGE_NODE.finditer(text):
                if m["node"] == node:
                    return {"operator": m["op"], "node": node, "from": "bridge"}
        for text in texts:
            for m in _GAP_NODE.finditer(text):
                if m["node"] == node:
                    return {"operator": m["op"], "node": node, "from": "import"}
    m = _CHECKER_NODE.search(str(rec.get("attribution_reason") or ""))
    if m and not node:
        return {"operator": m["op"], "node": m["node"], "from": "checker"}
    operator = rec.get("aidge_operator") or (rec.get("expected") or {}).get("operator")
    if operator and operator == rec.get("operator") and rec.get("kind") in ("architecture", "model"):
        # the architecture's (the model's) own name is no operator
        operator = None
    return {"operator": operator, "node": node, "from": "table" if operator else None}


def unsupported_ops(error: str | None) -> list[tuple[str, int]]:
    """``[(ONNX op, nodes)]`` of an import gap's list, in the order first met."""
    return list(Counter(m["op"] for m in _GAP_NODE.finditer(error or "")).items())


def porting_table(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``{"routes": [...], "rows": [{architecture, library, family, routes: {route: cell}}]}``
    from the records of architecture cases (other records are ignored)."""
    by_arch: dict[str, dict[str, dict[str, dict]]] = {}
    meta: dict[str, dict[str, str]] = {}
    routes: list[str] = []
    for rec in records:
        if rec.get("kind") != "architecture" or rec.get("outcome") not in _RAN:
            continue
        name = rec.get("operator") or rec.get("case", "")
        mode = "train" if str(rec.get("case", "")).endswith("_train") else "eval"
        route = _route_of(rec)
        if route not in routes:
            routes.append(route)
        by_arch.setdefault(name, {}).setdefault(route, {})[mode] = rec
        meta.setdefault(name, {"library": name.split("_", 1)[0]})
    rows = []
    for name in sorted(by_arch, key=lambda n: (meta[n]["library"], n.lower())):
        cells = {route: _cell(by_mode) for route, by_mode in by_arch[name].items()}
        rows.append({"architecture": name, "library": meta[name]["library"], "routes": cells})
    order = [r for r in ("torchscript", "dynamo", "auto") if r in routes] + [r for r in routes
                                                                         if r not in ("torchscript", "dynamo", "auto")]
    return {"routes": order, "rows": checked_all(PortingRow, rows), "architectures": len(rows),
            "summary": _summary(rows, order)}


def _cell(by_mode: dict[str, dict]) -> dict[str, Any]:
    failures = []
    for mode in ("eval", "train"):
        rec = by_mode.get(mode)
        if rec is None:
            continue
        phase = _failed_phase(rec)
        if phase is not None:
            failures.append((mode, phase, rec))
    exported = [rec for rec in by_mode.values() if rec.get("export_route")]
    nodes = next((rec.get("onnx_nodes") for rec in exported if rec.get("onnx_nodes") is not None), None)
    export_failed = any(phase == "export" for _, phase, _ in failures)
    if exported:
        exports = f"{nodes} nodes" if nodes is not None else "yes"
    elif export_failed:
        exports = "no"
    else:
        exports = "?"
    imported = "no" if any(p in ("import", "compile") for _, p, _ in failures) else (
        "ok" if exported or not failures else "-" if export_failed else "?")

    def forward_of(mode):
        rec = by_mode.get(mode)
        if rec is None:
            return None
        phase = _failed_phase(rec)
        if phase is None or phase in ("backward", "step"):
            return "ok"
        return rec.get("category") or "failed"

    forward = {mode: forward_of(mode) for mode in ("eval", "train") if mode in by_mode}
    # the backward of the first mode whose forward matched (train, else eval)
    reached = [by_mode[m] for m in ("train", "eval") if forward.get(m) == "ok"]
    if not forward:
        backward = None
    elif not reached:
        backward = "-"
    else:
        phase = _failed_phase(reached[0])
        backward = "ok" if phase is None else (reached[0].get("category") or "failed")
    blocking = None
    if failures:
        mode, phase, rec = min(failures, key=lambda f: (_PHASE_ORDER.index(f[1]) if f[1] in _PHASE_ORDER else 9,
                                                        f[0] != "eval"))
        operator = rec.get("aidge_operator") or (rec.get("expected") or {}).get("operator")  # the table's row names it
        named = node_operator(rec)
        blocking = {"mode": mode, "phase": phase, "operator": named["operator"], "node": named["node"],
                    "operator_from": named["from"], "table_operator": operator,
                    "unsupported": [list(pair) for pair in unsupported_ops(rec.get("error"))],
                    "category": rec.get("category"), "attribution": rec.get("attribution"),
                    "error": _first_line(rec.get("error")), "full_error": (rec.get("error") or "").strip(),
                    "case": rec.get("case"), "expected": rec.get("outcome") == "xfailed"}
    # every failing case of the cell (pytest node ids): what the ledger's defects are keyed by
    cases = [rec["nodeid"] for _, _, rec in failures if rec.get("nodeid")]
    return {"exports": exports, "nodes": nodes, "import": imported, "forward": forward, "backward": backward,
            "blocking": blocking, "cases": cases, "defects": []}


def _summary(rows: list[dict], routes: list[str]) -> dict[str, dict[str, int]]:
    out = {}
    for route in routes:
        cells = [r["routes"][route] for r in rows if route in r["routes"]]
        out[route] = {
            "architectures": len(cells),
            "exports": sum(c["exports"] not in ("no", "?") for c in cells),
            "imports": sum(c["import"] == "ok" for c in cells),
            "forward_eval": sum(c["forward"].get("eval") == "ok" for c in cells),
            "forward_train": sum(c["forward"].get("train") == "ok" for c in cells),
            "backward": sum(c["backward"] == "ok" for c in cells),
        }
    return out


def _blocking_text(blocking: dict | None, *, error: bool = True, markdown: bool = False) -> str:
    """The blocking failure in words; ``markdown``: each record-borne part escaped for a Markdown
    table cell (:mod:`.text_escape`; ``|`` read as ``/``, as the plain text's cell had it), the node
    in a code span."""
    if not blocking:
        return ""
    q = (lambda v: text_escape.text(str(v).replace("|", "/"))) if markdown else str
    where = q(blocking.get("operator") or blocking.get("category") or blocking.get("phase"))
    node = "" if not blocking.get("node") else (
        f" {text_escape.code(str(blocking['node']).replace('|', '/'))}" if markdown else f" `{blocking['node']}`")
    who = f" [{q(blocking['attribution'])}]" if blocking.get("attribution") not in (None, "", "aidge") else ""
    gap = blocking.get("unsupported") or []
    if gap:  # every ONNX op the import has no Aidge operator for, not only the first node's
        ops = ", ".join(f"{q(op)} ({n} node{'s' if n != 1 else ''})" for op, n in gap)
        return (f"no Aidge operator for ONNX {ops}; first: {where}{node} ({q(blocking['phase'])}, "
                f"{q(blocking['mode'])}){who}")
    return f"{where}{node} ({q(blocking['phase'])}, {q(blocking['mode'])}){who}" + (
        f": {q(blocking['error'])}" if error else "")


def load_defects(directory: Path) -> list[dict[str, Any]]:
    """The ledger's entries (``defects.json`` in ``directory``; [] when absent or not JSON), each
    validated (:class:`.models.DefectEntry`): a wrong entry is a :class:`.models.PageFileError`
    naming the file, its id and the key."""
    path = Path(directory) / "defects.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return page_entries(data, path)


def defects_by_case(defects: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """pytest node id -> the ids of the ledger's entries that list it (each id once, in order)."""
    out: dict[str, list[str]] = {}
    for entry in defects:
        for case in entry.get("cases") or []:
            ids = out.setdefault(str(case), [])
            if entry["id"] not in ids:
                ids.append(entry["id"])
    return out


def attach_defects(table: dict[str, Any], defects: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Each cell's ``defects``: the ledger ids of its failing cases (in place; returns ``table``)."""
    by_case = defects_by_case(defects)
    for row in table["rows"]:
        for cell in row["routes"].values():
            ids: list[str] = []
            for case in cell.get("cases") or []:
                ids += [i for i in by_case.get(case, []) if i not in ids]
            cell["defects"] = ids
    return table


#: the run's per-node profile (interop.node_profile --run-dir): the speed columns' source
PROFILE_FILE = Path("node-profile") / "node_profile.json"


def load_speeds(directory: Path) -> dict[str, dict[str, float]]:
    """Architecture -> ``{"torch": Aidge/torch, "ort": Aidge/onnxruntime}`` of its forward, from the
    run's per-node profile beside the table (one thread each, the same inputs, interleaved rounds,
    thread CPU time; onnxruntime with its default optimisations on the ONNX graph Aidge imported);
    {} when there is none or it cannot be read (the ledger names a broken profile)."""
    try:
        data = json.loads((Path(directory) / PROFILE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, dict[str, float]] = {}
    for p in (data.get("profiles") if isinstance(data, dict) else None) or []:
        total = p.get("total") if isinstance(p, dict) else None
        if not isinstance(total, dict):
            continue
        figures = {side: (total.get(key) or {}).get("median") for side, key in
                   (("torch", "ratio_torch"), ("ort", "ratio_optimized"))}
        figures = {k: float(v) for k, v in figures.items() if isinstance(v, (int, float)) and v > 0}
        if figures:
            out[str(p.get("name"))] = figures
    return out


def attach_speeds(table: dict[str, Any], speeds: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Each row's ``speed`` (:func:`load_speeds`), or None (in place; returns ``table``)."""
    for row in table["rows"]:
        row["speed"] = speeds.get(row["architecture"])
    table["speed_source"] = "per-node profile (forward, one thread)" if speeds else None
    return table


def _speed_text(speed: dict | None) -> str:
    if not speed:
        return "-"
    return " / ".join(f"x{speed[k]:.3g}" if k in speed else "-" for k in ("torch", "ort"))


def _forward_text(forward: dict[str, str]) -> str:
    return " / ".join(f"{mode} {value}" for mode, value in forward.items())


def headline(table: dict[str, Any]) -> list[str]:
    """One line per route: how many architectures export, import, match forward and backward."""
    lines = []
    for route, s in table["summary"].items():
        lines.append(f"{route}: of {s['architectures']} architectures, {s['exports']} export, {s['imports']} import "
                     f"and compile in Aidge, forward matches torch on {s['forward_eval']} (eval) and "
                     f"{s['forward_train']} (train), backward on {s['backward']}")
    return lines


def format_markdown(table: dict[str, Any], *, title: str = "Porting readiness", lines: Iterable[str] = (),
                    limit: int | None = None) -> str:
    """The table as Markdown (``limit``: the first rows only, for the README); record-borne text
    (architectures, routes, blocking errors, defect ids) through :mod:`.text_escape`
    (``templates/porting.md.j2``)."""
    rows = []
    for row in table["rows"] if limit is None else table["rows"][:limit]:
        for route in table["routes"]:
            cell = row["routes"].get(route)
            if cell is not None:
                rows.append({"architecture": row["architecture"], "route": route, "exports": cell["exports"],
                             "imported": cell["import"], "forward": _forward_text(cell["forward"]),
                             "backward": cell["backward"] or "", "speed": _speed_text(row.get("speed")),
                             "blocking": _blocking_text(cell["blocking"], markdown=True),
                             "defects": cell.get("defects") or []})
    return render("porting.md.j2", title=title, lines=list(lines), headline=headline(table), rows=rows)


def link_run_pages(directory: Path) -> None:
    """Each run page in ``directory`` links only the run pages that are there: a run folder's writers
    (``interop.reporting.run``, the ledger's rebuild) call it once its pages are written, so that every
    link of a run folder resolves. A link in place of a page is left alone."""
    directory = Path(directory)
    pages = [directory / page for page, _ in NAV]
    present = {p.name for p in pages if p.is_file() and not p.is_symlink()}
    for name in present:
        text = (directory / name).read_text(encoding="utf-8")
        new = re.sub(r"<nav>.*?</nav>", lambda _: nav_html(name, present), text, count=1, flags=re.DOTALL)
        if new != text:
            write_atomically(directory / name, new)


def defect_links(ids: Iterable[str], page: str = "defects.html") -> str:
    """Links to the ledger's entries on the Defects page (``defects.html#D-xxxxxxxx``)."""
    return str(_DEFECT_LINKS(list(ids), page))


def _td(value: str | None, good: bool | None = None) -> dict[str, str | None]:
    """A cell of the page: its text and its class (``ok``, ``bad``, none)."""
    return {"text": value or "", "cls": None if good is None else ("ok" if good else "bad")}


def format_html(table: dict[str, Any], *, title: str = "Porting readiness", lines: Iterable[str] = ()) -> str:
    """One self-contained page (inline style and script, nothing fetched; ``templates/porting.html.j2``)."""
    rows = []
    for row in table["rows"]:
        speed = row.get("speed") or {}
        for route in table["routes"]:
            cell = row["routes"].get(route)
            if cell is None:
                continue
            forward_ok = all(v == "ok" for v in cell["forward"].values()) if cell["forward"] else None
            blocking = cell["blocking"]
            rows.append({"architecture": row["architecture"], "route": route, "defects": cell.get("defects") or [],
                         "cells": [_td(cell["exports"], cell["exports"] not in ("no", "?")),
                                   _td(cell["import"], cell["import"] == "ok"),
                                   _td(_forward_text(cell["forward"]), forward_ok),
                                   _td(cell["backward"], cell["backward"] == "ok" if cell["backward"] else None)]
                         + [_td(f"x{speed[k]:.3g}" if k in speed else "-") for k in ("torch", "ort")],
                         # the whole error, never clipped, one click away
                         "blocking": None if not blocking else {
                             "text": _blocking_text(blocking, error=not blocking.get("full_error")),
                             "full": blocking.get("full_error"), "summary": blocking["error"] or "error"}})
    return render("porting.html.j2", page="porting.html", title=title, lines=list(lines), headline=headline(table),
                  routes=table["routes"], rows=rows)


def write_porting(directory: Path, table: dict[str, Any], *, lines: Iterable[str] = (),
                  defects: list[dict[str, Any]] | None = None) -> list[Path]:
    """``porting.json`` / ``.md`` / ``.html`` into ``directory``, each written atomically; rows link
    the ledger's entries (``defects``, else ``defects.json`` in ``directory`` when there is one)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    lines = list(lines)
    # the run's ledger, when written before the table
    attach_defects(table, load_defects(directory) if defects is None else defects)
    attach_speeds(table, load_speeds(directory))
    checked_all(PortingRow, table["rows"], where=directory / "porting.json")  # as written: defects, speed
    write_atomically(directory / "porting.json", json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    write_atomically(directory / "porting.md", format_markdown(table, lines=lines))
    write_atomically(directory / "porting.html", format_html(table, lines=lines))
    return [directory / name for name in PORTING_FILES]


def _records_of(run_dir: Path) -> list[dict[str, Any]]:
    run = load_run(run_dir)
    if run is None:
        raise FileNotFoundError(f"{run_dir}: no records.jsonl (run the suite with --records {run_dir})")
    return list(run.records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.reporting.porting", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (each with records.jsonl)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.add_argument("--write", type=Path, help="write porting.json/.md/.html into this directory")
    parser.add_argument("--defects", type=Path,
                        help="a findings run's defects.json (results/latest/defects.json): rows link its entries")
    args = parser.parse_args(argv)
    records: list[dict[str, Any]] = []
    try:
        for run in args.runs:
            records.extend(_records_of(run))
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"interop.reporting.porting: {terminal(exc)}\n")
        return 2
    table = porting_table(records)
    if not table["rows"]:
        sys.stderr.write(f"interop.reporting.porting: no architecture case in {', '.join(map(str, args.runs))} "
                         "(tests/test_architectures.py)\n")
        return 1
    lines = [f"from {', '.join(str(r) for r in args.runs)}"]
    ledger = None
    if args.defects:
        if args.defects.name != "defects.json" or not args.defects.is_file():
            sys.stderr.write(f"interop.reporting.porting: --defects {args.defects}: no such defects.json\n")
            return 2
        try:
            ledger = load_defects(args.defects.parent)
        except ValueError as exc:  # an entry of the wrong type: the file, its id and the key named
            sys.stderr.write(f"interop.reporting.porting: {terminal(exc)}\n")
            return 2
    if ledger is not None:
        attach_defects(table, ledger)
    if args.write:
        write_porting(args.write, table, lines=lines, defects=ledger)
    sys.stdout.write(json.dumps(table, indent=1) + "\n" if args.json else format_markdown(table, lines=lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
