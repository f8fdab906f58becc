"""The porting-readiness table: for each architecture of :data:`interop.zoo.architectures.ARCHITECTURES`
(MONAI, Hugging Face ``transformers``), each route to ONNX a run took, whether torch exported it
(and how many ONNX nodes), whether Aidge imported and compiled the graph, whether the forward
and the backward match torch, and the first Aidge node that blocks it with Aidge's error,
quoted: generated from runs' records (``tests/test_architectures.py``), never from text.

    python -m interop.reporting.porting RUN_DIR [RUN_DIR ...] [--markdown | --json] [--write DIR]

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
- ``blocked by``: the Aidge operator and node of the first failure (eval before train; the
  earliest phase), with the first line of the error.

Nothing here imports torch or Aidge; :func:`write_porting` writes ``porting.json``,
``porting.md`` and ``porting.html`` (self-contained) atomically.
"""
from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path
from typing import Any, Iterable

__all__ = ["porting_table", "format_markdown", "format_html", "write_porting", "PORTING_FILES", "main"]

PORTING_FILES = ("porting.json", "porting.md", "porting.html")
_PHASE_ORDER = ("export", "import", "compile", "forward", "backward", "step")
_RAN = ("passed", "failed", "error", "xfailed", "xpassed")
_QUOTE = 160


def _route_of(rec: dict[str, Any]) -> str:
    chosen = rec.get("exporter") or "auto"
    return chosen if chosen != "auto" else (rec.get("export_route") or "auto")


def _failed_phase(rec: dict[str, Any]) -> str | None:
    """The phase the case failed in (None: it passed)."""
    if rec.get("outcome") in ("passed", "xpassed") and not rec.get("xpass_strict"):
        return None
    if rec.get("outcome") == "xpassed" or rec.get("xpass_strict"):
        return None  # an expected failure that passed: it passed
    return rec.get("phase") or "forward"


def _first_line(text: str | None) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= _QUOTE else line[:_QUOTE - 3] + "..."


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
    return {"routes": order, "rows": rows, "architectures": len(rows),
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
        blocking = {"mode": mode, "phase": phase, "operator": operator, "node": rec.get("aidge_node"),
                    "category": rec.get("category"), "attribution": rec.get("attribution"),
                    "error": _first_line(rec.get("error")), "case": rec.get("case"),
                    "expected": rec.get("outcome") == "xfailed"}
    return {"exports": exports, "nodes": nodes, "import": imported, "forward": forward, "backward": backward,
            "blocking": blocking}


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


def _blocking_text(blocking: dict | None) -> str:
    if not blocking:
        return ""
    where = blocking.get("operator") or blocking.get("category") or blocking.get("phase")
    node = f" `{blocking['node']}`" if blocking.get("node") else ""
    who = f" [{blocking['attribution']}]" if blocking.get("attribution") and blocking["attribution"] != "aidge" else ""
    return f"{where}{node} ({blocking['phase']}, {blocking['mode']}){who}: {blocking['error']}"


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
    """The table as Markdown (``limit``: the first rows only, for the README)."""
    out = [f"## {title}", ""] + [f"{line}  " for line in lines]
    out += [f"- {line}" for line in headline(table)] + [""]
    out.append("| architecture | route | exports | Aidge import | forward | backward | blocked by |")
    out.append("|---|---|---|---|---|---|---|")
    rows = table["rows"] if limit is None else table["rows"][:limit]
    for row in rows:
        for route in table["routes"]:
            cell = row["routes"].get(route)
            if cell is None:
                continue
            out.append(f"| {row['architecture']} | {route} | {cell['exports']} | {cell['import']} | "
                       f"{_forward_text(cell['forward'])} | {cell['backward'] or ''} | "
                       f"{_blocking_text(cell['blocking']).replace('|', '/')} |")
    return "\n".join(out) + "\n"


_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f3f3f3;position:sticky;top:0}td.ok{background:#e6f6e6}td.bad{background:#fbe3e3}
code{font-size:12px}"""


def format_html(table: dict[str, Any], *, title: str = "Porting readiness", lines: Iterable[str] = ()) -> str:
    """One self-contained page (inline style, no script, nothing fetched)."""
    esc = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>", f"<h1>{esc(title)}</h1>"]
    out += [f"<p>{esc(line)}</p>" for line in lines]
    out.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in headline(table)) + "</ul>")
    out.append('<table id="porting"><thead><tr><th>architecture</th><th>route</th><th>exports</th>'
               "<th>Aidge import</th><th>forward</th><th>backward</th><th>blocked by</th></tr></thead><tbody>")

    def td(value: str | None, good: bool | None = None) -> str:
        cls = "" if good is None else (' class="ok"' if good else ' class="bad"')
        return f"<td{cls}>{esc(value or '')}</td>"

    for row in table["rows"]:
        for route in table["routes"]:
            cell = row["routes"].get(route)
            if cell is None:
                continue
            forward_ok = all(v == "ok" for v in cell["forward"].values()) if cell["forward"] else None
            out.append(f"<tr><td><code>{esc(row['architecture'])}</code></td><td>{esc(route)}</td>"
                       + td(cell["exports"], cell["exports"] not in ("no", "?"))
                       + td(cell["import"], cell["import"] == "ok")
                       + td(_forward_text(cell["forward"]), forward_ok)
                       + td(cell["backward"], cell["backward"] == "ok" if cell["backward"] else None)
                       + td(_blocking_text(cell["blocking"])) + "</tr>")
    out.append("</tbody></table></body></html>")
    return "\n".join(out) + "\n"


def write_porting(directory: Path, table: dict[str, Any], *, lines: Iterable[str] = ()) -> list[Path]:
    """``porting.json`` / ``.md`` / ``.html`` into ``directory``, each written atomically."""
    from ..records.store import write_atomically

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    lines = list(lines)
    write_atomically(directory / "porting.json", json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    write_atomically(directory / "porting.md", format_markdown(table, lines=lines))
    write_atomically(directory / "porting.html", format_html(table, lines=lines))
    return [directory / name for name in PORTING_FILES]


def _records_of(run_dir: Path) -> list[dict[str, Any]]:
    from ..records.store import load_run

    run = load_run(run_dir)
    if run is None:
        raise FileNotFoundError(f"{run_dir}: no records.jsonl (run the suite with --records {run_dir})")
    return list(run.records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.reporting.porting", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (each with records.jsonl)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.add_argument("--write", type=Path, help="write porting.json/.md/.html into this directory")
    args = parser.parse_args(argv)
    records: list[dict[str, Any]] = []
    try:
        for run in args.runs:
            records.extend(_records_of(run))
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"interop.reporting.porting: {exc}\n")
        return 2
    table = porting_table(records)
    if not table["rows"]:
        sys.stderr.write(f"interop.reporting.porting: no architecture case in {', '.join(map(str, args.runs))} "
                         "(tests/test_architectures.py)\n")
        return 1
    lines = [f"from {', '.join(str(r) for r in args.runs)}"]
    if args.write:
        write_porting(args.write, table, lines=lines)
    sys.stdout.write(json.dumps(table, indent=1) + "\n" if args.json else format_markdown(table, lines=lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
