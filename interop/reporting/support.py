"""The support matrix: which torch operators and models Aidge computes as torch does, forward
and backward, per backend and dtype, generated from a run's records.

:func:`support_matrix` turns records into cells, one per (operator, source, phase, backend,
dtype): ``passed`` of ``total`` cases, the categories of the others, their case ids, the Aidge
operators the failures name; :func:`write_support` writes ``support.json``, ``support.md`` and
``support.html`` (one self-contained page: no script, style or font from the network).

A cell also counts the routes to ONNX its cases took (``routes``: torchscript / dynamo, from the
records' ``export_route``); its text names them where a case took the dynamo route.

A case counts in the ``forward`` cell when it ran (passed, failed, xfailed, xpassed; a skip is
counted apart, a test killed from outside is no verdict: ``lost``). It counts in the
``backward`` cell when it trains (its phases hold ``backward``): passed when the whole case
passed, failed with its category when it failed in ``backward`` or ``step``, and failed as
``not_reached`` when its forward already failed. Rows: the torch operator as the user writes it
(``torch.nn.Conv2d``, ``torch.nn.functional.conv2d``) or the model's name; only tests that run
a case of the database (not the framework's unit tests).

An operator *passes* on a backend when every one of its cases there passed forward, and
backward where they train; the headline counts them.
"""
from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

__all__ = ["support_matrix", "operator_status", "headline", "write_support", "format_markdown", "format_html",
           "SUPPORT_FILES"]

SUPPORT_FILES = ("support.json", "support.md", "support.html")
_FORWARD_PHASES = ("export", "import", "compile", "forward")
_RAN = ("passed", "failed", "error", "xfailed", "xpassed")


def _row_key(rec: dict[str, Any]) -> str | None:
    return rec.get("torch_op") or rec.get("operator")


def _outcome(rec: dict[str, Any]) -> str:
    return "xpassed" if rec.get("xpass_strict") else str(rec.get("outcome"))


def _phase_results(rec: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    """phase -> (``passed`` / ``failed`` / ``skipped`` / ``lost``, category) for one record."""
    outcome = _outcome(rec)
    trains = "backward" in (rec.get("phases") or [])
    category = rec.get("category")
    if category == "killed":
        return {"forward": ("lost", category), **({"backward": ("lost", category)} if trains else {})}
    if outcome == "skipped":
        return {"forward": ("skipped", None), **({"backward": ("skipped", None)} if trains else {})}
    if outcome not in _RAN:
        return {}
    if outcome in ("passed", "xpassed"):
        return {"forward": ("passed", None), **({"backward": ("passed", None)} if trains else {})}
    phase = rec.get("phase")
    if phase in ("backward", "step"):
        return {"forward": ("passed", None), "backward": ("failed", category or "unknown")}
    out = {"forward": ("failed", category or "unknown")}
    if trains:
        out["backward"] = ("failed", "not_reached")
    return out


def support_matrix(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``{"cells": [...], "columns": [...], "operators": {...}}`` (see the module docstring)."""
    cells: dict[tuple, dict[str, Any]] = {}
    for rec in records:
        operator = _row_key(rec)
        if not operator or not rec.get("kind"):
            continue
        for phase, (state, category) in _phase_results(rec).items():
            key = (operator, rec.get("source") or "", phase, rec.get("backend") or "cpu", rec.get("dtype") or "float32")
            cell = cells.setdefault(key, {"operator": key[0], "source": key[1], "phase": phase, "backend": key[3],
                                          "dtype": key[4], "passed": 0, "total": 0, "skipped": 0, "lost": 0,
                                          "categories": Counter(), "failing": [], "aidge_operators": set(),
                                          "routes": Counter()})
            if rec.get("export_route"):
                cell["routes"][rec["export_route"]] += 1
            if state == "skipped":
                cell["skipped"] += 1
            elif state == "lost":
                cell["lost"] += 1
            else:
                cell["total"] += 1
                if state == "passed":
                    cell["passed"] += 1
                else:
                    cell["categories"][category] += 1
                    cell["failing"].append(rec.get("case") or rec["nodeid"])
                    if rec.get("aidge_operator") and category != "not_reached":
                        cell["aidge_operators"].add(rec["aidge_operator"])
    out = []
    for key in sorted(cells, key=lambda k: (k[0].lower(), k[1], k[3], k[4], k[2])):
        cell = cells[key]
        out.append(dict(cell, categories=dict(sorted(cell["categories"].items())), failing=sorted(cell["failing"]),
                        aidge_operators=sorted(cell["aidge_operators"]), routes=dict(sorted(cell["routes"].items()))))
    columns = sorted({(c["phase"], c["backend"], c["dtype"]) for c in out},
                     key=lambda c: (c[1], c[2] != "float32", c[2], c[0] != "forward"))
    return {"cells": out, "columns": [{"phase": p, "backend": b, "dtype": d} for p, b, d in columns],
            "operators": operator_status(out)}


def operator_status(cells: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """backend -> {operator: {"forward": bool|None, "backward": bool|None, "passes": bool}}:
    None where the operator has no case that ran in that phase."""
    out: dict[str, dict[str, Any]] = {}
    for cell in cells:
        entry = out.setdefault(cell["backend"], {}).setdefault(cell["operator"], {"forward": None, "backward": None})
        if cell["total"] == 0:
            continue
        ok = cell["passed"] == cell["total"]
        entry[cell["phase"]] = ok if entry[cell["phase"]] is None else (entry[cell["phase"]] and ok)
    for ops in out.values():
        for entry in ops.values():
            entry["passes"] = entry["forward"] is True and entry["backward"] in (True, None)
    return {b: dict(sorted(ops.items(), key=lambda kv: kv[0].lower())) for b, ops in sorted(out.items())}


def headline(matrix: dict[str, Any], backend: str) -> str:
    ops = matrix["operators"].get(backend, {})
    ran = [e for e in ops.values() if e["forward"] is not None]
    passing = sum(1 for e in ran if e["passes"])
    return f"{passing} of {len(ran)} operators pass forward and backward on {backend}"


def _cell_text(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return ""
    if cell["total"] == 0:
        return "skipped" if cell["skipped"] else ("lost" if cell["lost"] else "")
    mark = "✅" if cell["passed"] == cell["total"] else ("❌" if cell["passed"] == 0 else "⚠️")
    why = ", ".join(f"{c} {n}" for c, n in cell["categories"].items())
    aidge = f" (Aidge {', '.join(cell['aidge_operators'])})" if cell["aidge_operators"] else ""
    # the route to ONNX, said where it is not the TorchScript one alone (auto fell back to dynamo)
    routes = cell.get("routes") or {}
    route = f" [export: {', '.join(f'{r} {n}' for r, n in routes.items())}]" if set(routes) - {"torchscript"} else ""
    return f"{mark} {cell['passed']}/{cell['total']}" + (f" {why}{aidge}" if why else "") + route


def _column_name(col: dict[str, str]) -> str:
    return f"{col['phase']} {col['backend']} {col['dtype']}"


def _grid(matrix: dict[str, Any]) -> tuple[list[dict[str, str]], list[tuple[str, str]], dict[tuple, dict]]:
    columns = matrix["columns"]
    index = {(c["operator"], c["source"], c["phase"], c["backend"], c["dtype"]): c for c in matrix["cells"]}
    rows = sorted({(c["operator"], c["source"]) for c in matrix["cells"]}, key=lambda r: (r[0].lower(), r[1]))
    return columns, rows, index


def format_markdown(matrix: dict[str, Any], *, title: str = "Aidge support matrix", lines: list[str] = ()) -> str:
    columns, rows, index = _grid(matrix)
    out = [f"# {title}", "", *lines, ""] if lines else [f"# {title}", ""]
    if not matrix["cells"]:
        return "\n".join(out + ["No case of the case database ran in this run (only other tests)."]) + "\n"
    for backend in matrix["operators"]:
        out.append(f"- {headline(matrix, backend)}")
    out += ["", "| operator | source | " + " | ".join(_column_name(c) for c in columns) + " |",
            "|---|---|" + "---|" * len(columns)]
    for operator, source in rows:
        cells = [_cell_text(index.get((operator, source, c["phase"], c["backend"], c["dtype"]))) for c in columns]
        out.append(f"| `{operator}` | {source} | " + " | ".join(t.replace("|", "\\|") for t in cells) + " |")
    return "\n".join(out) + "\n"


_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f3f3f3;position:sticky;top:0}td.ok{background:#e6f6e6}td.bad{background:#fbe3e3}
td.some{background:#fff4d6}td.none{color:#999}code{font-size:12px}.case{font-size:11px;color:#555}"""


def format_html(matrix: dict[str, Any], *, title: str = "Aidge support matrix", lines: list[str] = ()) -> str:
    """One self-contained page (inline style, no script, nothing fetched)."""
    columns, rows, index = _grid(matrix)
    esc = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>", f"<h1>{esc(title)}</h1>"]
    out += [f"<p>{esc(line)}</p>" for line in lines]
    out.append("<ul>" + "".join(f"<li>{esc(headline(matrix, b))}</li>" for b in matrix["operators"]) + "</ul>")
    out.append('<table id="support"><thead><tr><th>operator</th><th>source</th>'
               + "".join(f"<th>{esc(_column_name(c))}</th>" for c in columns) + "</tr></thead><tbody>")
    for operator, source in rows:
        tds = []
        for c in columns:
            cell = index.get((operator, source, c["phase"], c["backend"], c["dtype"]))
            if cell is None or cell["total"] == 0:
                tds.append(f'<td class="none">{esc(_cell_text(cell))}</td>')
                continue
            cls = "ok" if cell["passed"] == cell["total"] else ("bad" if cell["passed"] == 0 else "some")
            failing = "".join(f'<div class="case">{esc(case)}</div>' for case in cell["failing"][:20])
            more = f'<div class="case">... {len(cell["failing"]) - 20} more</div>' if len(cell["failing"]) > 20 else ""
            tds.append(f'<td class="{cls}">{esc(_cell_text(cell))}{failing}{more}</td>')
        out.append(f"<tr><td><code>{esc(operator)}</code></td><td>{esc(source)}</td>{''.join(tds)}</tr>")
    out.append("</tbody></table></body></html>")
    return "\n".join(out) + "\n"


def write_support(directory: Path, matrix: dict[str, Any], *, lines: list[str] = (), meta: dict | None = None) -> list[Path]:
    """``support.json`` / ``.md`` / ``.html`` into ``directory``, each written atomically."""
    from ..records.store import write_atomically

    directory = Path(directory)
    data = dict(meta or {}, headlines={b: headline(matrix, b) for b in matrix["operators"]}, **matrix)
    write_atomically(directory / "support.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    write_atomically(directory / "support.md", format_markdown(matrix, lines=list(lines)))
    write_atomically(directory / "support.html", format_html(matrix, lines=list(lines)))
    return [directory / name for name in SUPPORT_FILES]
