"""Defects, not cases: one entry per distinct Aidge defect of a run (issue 43, first version).

A run's Aidge findings (failed and xfailed records attributed to Aidge) are grouped by a
*signature* read from the record and its reproducer (:mod:`interop.diagnostics.reproducer`):

- **kind**: no importer, converter failure, no kernel, no backward, wrong values, wrong shape,
  memory-unsafe, accepts invalid input, error (Aidge refuses a valid graph);
- **component**: aidge_onnx (import), aidge_backend_cpu (kernels), aidge_export_cpp, aidge_core;
- **operator**: Aidge's operator (the first diverging node's Aidge type for a mismatch, so that a
  case built from Aidge's own configurations and an ONNX case of one defect agree), the ONNX op
  for an import gap;
- **dtype** for a missing kernel (the registrar key's), the **phase**, and Aidge's message with
  its numbers, shapes and node names normalised.

The id is a hash of the signature (``D-xxxxxxxx``): the same defect has the same id from run to
run and across shards and sources (an OpInfo sample and a ModuleInfo sample of one padding Slice
land in one entry). :func:`build_ledger` returns the entries by impact (cases, sources), each with
a title, expected against actual, Aidge's words, the smallest reproducer and every affected case;
:func:`write_ledger` writes ``defects.json`` and ``defects.md`` into the run directory.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable

from ..categories import kind_of
from ..records.sources import NOT_AIDGE
from ..records.store import write_atomically

__all__ = ["signature_of", "defect_id", "build_ledger", "write_ledger", "format_ledger_md", "ledger_summary",
           "KIND_OF_CATEGORY"]

#: failure category -> defect kind
KIND_OF_CATEGORY = {
    "unsupported_operator": "no importer",
    "forward_not_implemented": "no kernel",
    "backward_not_implemented": "no backward",
    "outputs_differ": "wrong values",
    "gradients_differ": "wrong values",
    "training_diverges": "wrong values",
    "output_shape_differs": "wrong shape",
    "crash": "memory-unsafe",
    "hang": "memory-unsafe",
    "accepts_invalid_input": "accepts invalid input",
    "import_error": "error",
    "compile_error": "error",
    "aidge_error": "error",
    "cuda_kernel_image": "packaging",
}
_COMPONENT = {"no importer": "aidge_onnx", "converter failure": "aidge_onnx", "no kernel": "aidge_backend_cpu",
              "no backward": "aidge_backend_cpu"}
_ONNX_OP = re.compile(r"\(ONNX op (\w+)\)")
_KEY_DTYPE = re.compile(r'registrar key: "\[(\w+)')
_NUMBERS = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _normalise(message: str) -> str:
    """Aidge's message with what varies from case to case removed: numbers, quoted names, shapes."""
    text = " ".join(str(message or "").split())
    text = re.sub(r"^(crash|Aidge \w+ failed)[^:]*:\s*", "", text)
    text = re.sub(r"Available registrar keys are:.*", "", text)
    text = _QUOTED.sub("'…'", text)
    text = _NUMBERS.sub("N", text)
    return text[:160].strip()


def signature_of(record: dict[str, Any]) -> dict[str, Any]:
    """The fields that decide which defect a record belongs to."""
    category = record.get("category") or "unknown"
    kind = KIND_OF_CATEGORY.get(category, "error")
    repro = record.get("reproducer") if isinstance(record.get("reproducer"), dict) else {}
    error = str(record.get("error") or "")
    if kind == "no importer" and repro.get("import_kind") == "converter failure":
        kind = "converter failure"
    operator = None
    m = _ONNX_OP.search(error)
    if kind in ("no importer", "converter failure") and m:
        operator = m.group(1)
    first = record.get("first_diverging") if isinstance(record.get("first_diverging"), dict) else None
    if operator is None and first:  # Aidge's name for it, as the cases without ONNX (Aidge's configurations) say
        operator = first.get("aidge_type") or first.get("op_type")
    if operator is None:
        operator = record.get("aidge_operator") or record.get("operator") or "?"
    backend = record.get("backend") or "cpu"
    component = "aidge_export_cpp" if backend == "export_cpp" else _COMPONENT.get(kind, "aidge_core")
    dtype = None
    if kind == "no kernel":
        dm = _KEY_DTYPE.search(error)
        dtype = dm.group(1) if dm else None
    phase = record.get("phase") or "?"
    words = error
    if kind in ("no importer",):
        words = ""  # the op is the defect: the message only repeats the node's name
    elif kind == "converter failure":
        said = repro.get("aidge_said") or []
        words = said[0] if said else ""
    elif kind in ("wrong values", "wrong shape"):
        words = ""  # numbers differ from case to case; the operator and phase are the defect
    return {"kind": kind, "component": component, "operator": str(operator), "dtype": dtype,
            "phase": phase, "backend": backend, "message": _normalise(words)}


def defect_id(signature: dict[str, Any]) -> str:
    text = json.dumps(signature, sort_keys=True)
    return "D-" + hashlib.sha1(text.encode()).hexdigest()[:8]


def _is_aidge(record: dict[str, Any]) -> bool:
    if record.get("outcome") not in ("failed", "error", "xfailed"):
        return False
    category = record.get("category") or "unknown"
    return kind_of(category) == "aidge" and record.get("attribution") not in NOT_AIDGE


def _title(sig: dict[str, Any]) -> str:
    op, kind, phase = sig["operator"], sig["kind"], sig["phase"]
    dtype = f" for {sig['dtype']}" if sig.get("dtype") else ""
    texts = {"no importer": f"aidge_onnx has no importer for ONNX op {op}",
             "converter failure": f"aidge_onnx's {op} converter declines or fails on this node",
             "no kernel": f"no {sig['backend']} kernel for {op}{dtype}",
             "no backward": f"{op} has no backward on {sig['backend']}",
             "wrong values": f"{op} computes wrong values in {phase}",
             "wrong shape": f"{op} returns a wrong shape in {phase}",
             "memory-unsafe": f"{op}: the process dies in {phase}",
             "accepts invalid input": f"{op} accepts an input it should refuse",
             "error": f"{op} refuses a valid graph in {phase}"}
    return texts.get(kind, f"{op}: {kind} in {phase}")


def build_ledger(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct Aidge defects of ``records``, by impact (cases, then sources)."""
    entries: dict[str, dict[str, Any]] = {}
    for rec in records:
        if not isinstance(rec, dict) or not _is_aidge(rec):
            continue
        sig = signature_of(rec)
        did = defect_id(sig)
        entry = entries.setdefault(did, {"id": did, **sig, "title": _title(sig), "cases": [], "sources": {},
                                         "aidge_said": None, "error": None, "reproducer": None,
                                         "reproducer_nodes": None, "known": 0, "new": 0})
        repro = rec.get("reproducer") if isinstance(rec.get("reproducer"), dict) else {}
        entry["cases"].append(rec.get("nodeid"))
        source = rec.get("source") or "?"
        entry["sources"][source] = entry["sources"].get(source, 0) + 1
        entry["known" if rec.get("outcome") == "xfailed" else "new"] += 1
        entry["error"] = entry["error"] or str(rec.get("error") or "")[:400]
        if repro.get("aidge_said") and not entry["aidge_said"]:
            entry["aidge_said"] = repro["aidge_said"][0]
        if repro.get("reproduces"):
            where = repro.get("reduced") or repro.get("path")
            nodes = repro.get("reduced_nodes") or repro.get("nodes")
            if where and (entry["reproducer_nodes"] is None or (nodes or 1e9) < entry["reproducer_nodes"]):
                entry["reproducer"], entry["reproducer_nodes"] = where, nodes
                entry["repro_line"] = repro.get("line")
    return sorted(entries.values(), key=lambda e: (-len(e["cases"]), -len(e["sources"]), e["id"]))


def format_ledger_md(ledger: list[dict[str, Any]], *, complete: bool = True) -> str:
    lines = ["# Aidge defects of this run", ""]
    if not complete:
        lines += ["**This run is incomplete: the ledger lists what it saw, not every defect.**", ""]
    by_kind: dict[str, int] = {}
    for e in ledger:
        by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
    lines.append(f"{len(ledger)} distinct defect(s) in {sum(len(e['cases']) for e in ledger)} case(s): "
                 + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items(), key=lambda kv: -kv[1])))
    lines += ["", "| id | component | defect | cases | sources | reproducer |", "|---|---|---|---|---|---|"]
    for e in ledger:
        sources = ", ".join(f"{s} {n}" for s, n in sorted(e["sources"].items()))
        repro = f"`{e['reproducer']}` ({e['reproducer_nodes']} node(s))" if e.get("reproducer") else "none"
        lines.append(f"| {e['id']} | {e['component']} | {e['title']} | {len(e['cases'])} | {sources} | {repro} |")
    lines.append("")
    for e in ledger:
        lines += [f"## {e['id']}: {e['title']}", "",
                  f"- kind: {e['kind']}; component: {e['component']}; phase: {e['phase']}; backend: {e['backend']}"
                  + (f"; dtype: {e['dtype']}" if e.get("dtype") else ""),
                  f"- cases: {len(e['cases'])} ({e['known']} known, {e['new']} new)",
                  f"- the suite saw: {e['error']}"]
        if e.get("aidge_said"):
            lines.append(f"- Aidge said: {e['aidge_said']}")
        if e.get("reproducer"):
            lines.append(f"- reproducer: `{e['reproducer']}/repro.py`: {e.get('repro_line') or ''}")
        lines.append("- affected: " + ", ".join(f"`{c}`" for c in e["cases"][:12])
                     + (f" and {len(e['cases']) - 12} more" if len(e["cases"]) > 12 else ""))
        lines.append("")
    return "\n".join(lines)


def ledger_summary(ledger: list[dict[str, Any]], *, complete: bool = True, top: int = 15) -> dict[str, Any]:
    """What the report says of the ledger: the count by kind and component, and the top entries."""
    by_kind: dict[str, int] = {}
    by_component: dict[str, int] = {}
    for e in ledger:
        by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
        by_component[e["component"]] = by_component.get(e["component"], 0) + 1
    return {"count": len(ledger), "cases": sum(len(e["cases"]) for e in ledger), "by_kind": by_kind,
            "by_component": by_component, "complete": complete, "files": ["defects.md", "defects.json"],
            "top": [{k: e.get(k) for k in ("id", "title", "component", "reproducer", "reproducer_nodes")}
                    | {"cases": len(e["cases"])} for e in ledger[:top]]}


def write_ledger(run_dir: Path, records: list[dict[str, Any]], *, complete: bool = True) -> list[dict[str, Any]]:
    """``defects.json`` and ``defects.md`` of a run (atomically); returns the ledger."""
    ledger = build_ledger(records)
    write_atomically(Path(run_dir) / "defects.json",
                     json.dumps({"complete": complete, "defects": ledger}, indent=1, default=str))
    write_atomically(Path(run_dir) / "defects.md", format_ledger_md(ledger, complete=complete))
    return ledger
