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

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from ..records.store import write_atomically
from .models import SupportCell, checked, checked_all, page_entries
from .pages import render
from .porting import defects_by_case, load_defects, node_operator

__all__ = ["support_matrix", "operator_status", "headline", "write_support", "format_markdown", "format_html",
           "SUPPORT_FILES", "load_support"]

SUPPORT_FILES = ("support.json", "support.md", "support.html")
_FORWARD_PHASES = ("export", "import", "compile", "forward")
_RAN = ("passed", "failed", "error", "xfailed", "xpassed")


def _row_key(rec: dict[str, Any]) -> str | None:
    return rec.get("torch_op") or rec.get("operator")


def _outcome(rec: dict[str, Any]) -> str:
    return str(rec.get("outcome"))  # said once where the record is written or read (records.outcome)


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


def _aidge_name(rec: dict[str, Any]) -> str | None:
    """The operator a failure names, as the porting table names it (the node's own: the bridge's,
    the import gap's, the ONNX checker's; else the table row's), but not the torch function's own
    name that an expected-failure row carries (``index_select`` for ``torch.index_select``)."""
    name = node_operator(rec)["operator"]
    torch_name = str(rec.get("torch_op") or rec.get("operator") or "").rsplit(".", 1)[-1]
    if name and name == torch_name and name[:1].islower():
        return None
    return name


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
                                          "routes": Counter(), "failing_nodeids": []})
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
                    if rec.get("nodeid"):
                        cell["failing_nodeids"].append(rec["nodeid"])
                    named = _aidge_name(rec)
                    if named and category != "not_reached":
                        cell["aidge_operators"].add(named)
    out = []
    for key in sorted(cells, key=lambda k: (k[0].lower(), k[1], k[3], k[4], k[2], k[0])):
        cell = cells[key]
        out.append(dict(cell, categories=dict(sorted(cell["categories"].items())), failing=sorted(cell["failing"]),
                        failing_nodeids=sorted(cell["failing_nodeids"]),
                        aidge_operators=sorted(cell["aidge_operators"]), routes=dict(sorted(cell["routes"].items()))))
    columns = sorted({(c["phase"], c["backend"], c["dtype"]) for c in out},
                     key=lambda c: (c[1], c[2] != "float32", c[2], c[0] != "forward"))
    return {"cells": checked_all(SupportCell, out),  # each cell typed (models.SupportCell)
            "columns": [{"phase": p, "backend": b, "dtype": d} for p, b, d in columns],
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
    return {b: dict(sorted(ops.items(), key=lambda kv: (kv[0].lower(), kv[0]))) for b, ops in sorted(out.items())}


def headline(matrix: dict[str, Any], backend: str) -> str:
    ops = matrix["operators"].get(backend, {})
    ran = [e for e in ops.values() if e["forward"] is not None]
    passing = sum(1 for e in ran if e["passes"])
    return f"{passing} of {len(ran)} operators pass forward and backward on {backend}"


#: the cell's verdict as a word (the page's marks are text on a coloured badge: no emoji font needed)
MARK_WORDS = {"ok": "pass", "some": "part", "bad": "fail"}
_EMOJI = {"ok": "\u2705", "some": "\u26a0\ufe0f", "bad": "\u274c"}


def _verdict(cell: dict[str, Any]) -> str:
    """``ok`` (every case passed), ``bad`` (none), ``some``."""
    return "ok" if cell["passed"] == cell["total"] else ("bad" if cell["passed"] == 0 else "some")


def _cell_detail(cell: dict[str, Any]) -> str:
    """The categories of the failures, the Aidge operators they name, the route to ONNX."""
    why = ", ".join(f"{c} {n}" for c, n in cell["categories"].items())
    aidge = f" (Aidge {', '.join(cell['aidge_operators'])})" if cell["aidge_operators"] else ""
    # the route to ONNX, said where it is not the TorchScript one alone (auto fell back to dynamo)
    routes = cell.get("routes") or {}
    route = f" [export: {', '.join(f'{r} {n}' for r, n in routes.items())}]" if set(routes) - {"torchscript"} else ""
    return (f"{why}{aidge}" if why else "") + route


def _cell_text(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return ""
    if cell["total"] == 0:
        return "skipped" if cell["skipped"] else ("lost" if cell["lost"] else "")
    detail = _cell_detail(cell)
    return f"{_EMOJI[_verdict(cell)]} {cell['passed']}/{cell['total']}" + (f" {detail}" if detail else "")


def _column_name(col: dict[str, str]) -> str:
    return f"{col['phase']} {col['backend']} {col['dtype']}"


def row_group(operator: str, source: str) -> int:
    """Where a row stands: 0 torch operators (catalog, OpInfo, ModuleInfo), 1 models and
    architectures, 2 what has no torch counterpart (Aidge's own configurations ``aidge.*``,
    Aidge-only operators): torch first, the way a torch user looks for it."""
    if operator.startswith("aidge.") or source.lower().startswith("aidge") or "no torch counterpart" in operator:
        return 2
    if source.startswith(("model zoo", "architectures")):
        return 1
    return 0


GROUP_NAMES = ("torch operators", "models and architectures", "Aidge only (aidge.* configurations)")


def _grid(matrix: dict[str, Any]) -> tuple[list[dict[str, str]], list[tuple[str, str]], dict[tuple, dict]]:
    columns = matrix["columns"]
    index = {(c["operator"], c["source"], c["phase"], c["backend"], c["dtype"]): c for c in matrix["cells"]}
    rows = sorted({(c["operator"], c["source"]) for c in matrix["cells"]},
                  key=lambda r: (row_group(*r), r[0].lower(), r[1], r[0]))  # torch.T before torch.t, every run
    return columns, rows, index


def format_markdown(matrix: dict[str, Any], *, title: str = "Aidge support matrix", lines: list[str] = ()) -> str:
    """support.md; record-borne text (operators, sources, categories, Aidge names) through
    :mod:`.text_escape` (prose escaped, ``|`` kept in its cell, control characters as escapes;
    ``templates/support.md.j2``)."""
    columns, rows, index = _grid(matrix) if matrix["cells"] else ([], [], {})
    return render("support.md.j2", title=title, lines=list(lines),
                  headlines=[headline(matrix, b) for b in matrix["operators"]],
                  columns=[_column_name(c) for c in columns],
                  rows=[{"operator": operator, "source": source,
                         "cells": [_cell_text(index.get((operator, source, c["phase"], c["backend"], c["dtype"])))
                                   for c in columns]} for operator, source in rows])


def _defect_ids(cell: dict[str, Any], by_case: dict[str, list[str]]) -> list[str]:
    ids: list[str] = []
    for nodeid in cell.get("failing_nodeids") or []:
        ids += [i for i in by_case.get(nodeid, []) if i not in ids]
    return ids


def format_html(matrix: dict[str, Any], *, title: str = "Aidge support matrix", lines: list[str] = (),
                defects: dict[str, list[str]] | None = None) -> str:
    """One self-contained page (inline style and script, nothing fetched): torch rows first, a
    search box and a filter by source, the failing case ids behind a disclosure, the ledger's
    defect ids linked (``defects``: pytest node id -> ids), marks as text on coloured badges,
    a sticky header and first column in a scrolling box (``templates/support.html.j2``)."""
    columns, rows, index = _grid(matrix)
    by_case = defects or {}
    sources: dict[str, int] = {}
    for _, source in rows:
        sources[source] = sources.get(source, 0) + 1
    out, group = [], None
    for operator, source in rows:
        g = row_group(operator, source)
        header, group = (GROUP_NAMES[g] if g != group else None), g
        tds, failing_row = [], False
        for c in columns:
            cell = index.get((operator, source, c["phase"], c["backend"], c["dtype"]))
            if cell is None or cell["total"] == 0:
                tds.append({"verdict": None, "text": _cell_text(cell)})
                continue
            verdict = _verdict(cell)
            failing_row = failing_row or verdict != "ok"
            tds.append({"verdict": verdict, "mark": MARK_WORDS[verdict], "passed": cell["passed"],
                        "total": cell["total"], "detail": _cell_detail(cell), "defects": _defect_ids(cell, by_case),
                        "failing": cell["failing"]})
        out.append({"header": header, "group": g, "operator": operator, "source": source,
                    "failing": int(failing_row), "cells": tds})
    return render("support.html.j2", page="support.html", title=title, lines=list(lines),
                  headlines=[headline(matrix, b) for b in matrix["operators"]],
                  sources=sorted(sources.items(), key=lambda kv: (row_group("", kv[0]), kv[0].lower())),
                  columns=[_column_name(c) for c in columns], rows=out)


def write_support(directory: Path, matrix: dict[str, Any], *, lines: list[str] = (), meta: dict | None = None) -> list[Path]:
    """``support.json`` / ``.md`` / ``.html`` into ``directory``, each written atomically."""
    directory = Path(directory)
    # the run's ledger (written before the matrix): each cell names the defects of its failing cases
    by_case = defects_by_case(load_defects(directory))
    for cell in matrix["cells"]:
        cell["defects"] = _defect_ids(cell, by_case)
        checked(SupportCell, cell, where=directory / "support.json")
    data = dict(meta or {}, headlines={b: headline(matrix, b) for b in matrix["operators"]}, **matrix)
    write_atomically(directory / "support.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    write_atomically(directory / "support.md", format_markdown(matrix, lines=list(lines)))
    write_atomically(directory / "support.html", format_html(matrix, lines=list(lines), defects=by_case))
    return [directory / name for name in SUPPORT_FILES]


def load_support(directory: Path) -> dict[str, Any] | None:
    """The matrix of ``support.json`` in ``directory`` (its ``cells``, ``columns`` and ``operators``),
    None when absent, not JSON or without them; each cell validated (:class:`.models.SupportCell`): a
    wrong cell is a :class:`.models.PageFileError` naming the file, the cell and the key."""
    path = Path(directory) / "support.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        matrix = {"cells": data["cells"], "columns": data["columns"], "operators": data["operators"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    page_entries(data, path)
    return matrix
