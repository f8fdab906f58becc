"""Defects, not cases: one entry per distinct Aidge defect of a run (issue 43, first version).

A run's Aidge findings (failed and xfailed records attributed to Aidge) are grouped by a
*signature* read from the record and its reproducer (:mod:`interop.reproducers`):

- **kind**: no importer, converter failure, no kernel, no backward, wrong values, wrong shape,
  memory-unsafe, accepts invalid input, error (Aidge refuses a valid graph), silently wrong result
  (Aidge computes nothing on an empty tensor and leaves the previous outputs in place);
- **component**: aidge_onnx (import), aidge_backend_cpu (kernels), aidge_export_cpp, aidge_core;
- **operator**: Aidge's operator (the first diverging node's Aidge type for a mismatch, so that a
  case built from Aidge's own configurations and an ONNX case of one defect agree), the ONNX op
  for an import gap;
- **dtype** for a missing kernel (the registrar key's), the **phase**, and Aidge's message with
  its numbers, shapes and node names normalised.

Which defect a record is: :func:`identify`, the one answer (the registry's entry,
:mod:`interop.registry`, else an id the signature proposes: a hash of it, ``D-xxxxxxxx``, with the
component decided from evidence). The same defect has the same id from run to run and across
shards and sources (an OpInfo sample and a ModuleInfo sample of one padding Slice
land in one entry). :func:`build_ledger` returns the entries by impact (cases, sources), each with
a title, expected against actual, Aidge's words, the smallest reproducer and every affected case;
:func:`write_ledger` writes ``defects.json``, ``defects.md`` and ``defects.html`` into the run directory
(the pages: :mod:`.ledger_pages`, from templates; the slow nodes of a per-node profile:
:mod:`.ledger_slow`).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable

from packaging.version import InvalidVersion, Version

from .. import registry
from ..cases import failure_table as ft
from ..cases.failure_table import detected_by
from ..import_gaps import onnx_ops_named
from ..categories import kind_of, row_attribution
from ..registry.identify import aidge_words, identify, proposed_defect, row_signature, signature_of, title_of
from ..records.sources import NOT_AIDGE
from ..records.store import load_run, write_atomically
from . import text_escape
from .ledger_pages import format_ledger_html, format_ledger_md
from .ledger_slow import profile_ort_ratios, read_slow_profile, slow_entries, write_slow_issues
from .models import DefectEntry, checked_all
from .porting import link_run_pages, porting_table, write_porting
from .report_text import format_report

__all__ = ["row_signature", "is_aidge_finding", "triaged_releases", "ledger_headline", "build_ledger", "write_ledger",
           "ledger_summary", "refresh_run", "registry_entries_from_table", "proposed_entry", "torch_driven",
           "TORCH_EXPORTS"]

def registry_entries_from_table(rows: Iterable[Any], ledger: dict[str, dict] | None = None) -> list[dict[str, Any]]:
    """Registry entries for the defects the expected-failure table names (its rows' ``defect``
    ids) that the registry does not hold yet: one per id, from its rows' own words (kind,
    operators, phases, backend, their quotes as patterns), the component decided from evidence.
    Entries with the same title, kind and backend are one defect (the variants of one Aidge class:
    a node class name or an optional input in the message): merged, the other ids kept as
    ``aliases``, so that the rows that name them still name the entry. ``ledger`` (id -> entry of a
    findings run's ledger): an id it holds is taken from there (:func:`proposed_entry`: the records'
    own signature, which the reproducer refines, not the rows' words), merged by title alike."""
    held = {n for d in registry.load() for n in (d.id, *d.aliases)}
    groups: dict[str, list[Any]] = {}
    for row in rows:
        if row.defect and row.defect not in held and row_attribution(row.attribution, row.category, row.phase) == "aidge":
            groups.setdefault(row.defect, []).append(row)
    by_title: dict[tuple, dict[str, Any]] = {}
    for did in sorted(groups):
        made = _entry_from_ledger(ledger[did]) if ledger and did in ledger else _entry_from_rows(did, groups[did])
        key = (made["title"], made["kind"], made["backend"])
        entry = by_title.get(key)
        if entry is None:
            entry = by_title[key] = {"id": did, "title": made["title"], "component": made["component"],
                                     "evidence": made["evidence"], "operators": [], "kind": made["kind"], "phases": [],
                                     "backend": made["backend"], "pattern": [], "aliases": []}
        else:
            entry["aliases"].append(did)
        for name in ("operators", "phases", "pattern"):
            entry[name] += [v for v in made[name] if v not in entry[name]]
    out = []
    for entry in by_title.values():
        pats = entry["pattern"]
        entry["pattern"] = pats[0] if len(pats) == 1 else "|".join(f"(?:{p})" for p in pats)
        if not entry["aliases"]:
            del entry["aliases"]
        out.append(entry)
    return out


def _entry_from_ledger(found: dict[str, Any]) -> dict[str, Any]:
    """A registry entry's fields from a findings run's ledger entry (:func:`proposed_entry`), its
    pattern as a list (the merge's form)."""
    made = proposed_entry(found)
    return dict(made, pattern=[made["pattern"]] if made["pattern"] else [])


def _entry_from_rows(did: str, group: list[Any]) -> dict[str, Any]:
    """A registry entry's fields from the rows that name ``did``: their signatures' operators and
    phases, their quotes as patterns (a list), the component decided from evidence."""
    sigs = [row_signature(r) for r in group]
    first = sigs[0]
    words = [aidge_words(r.quotes[0]) for r in group if r.quotes] if first["message"] else []
    proposed = proposed_defect(first, words[0] if words else "", did)
    operators = list(dict.fromkeys(sig["operator"] for sig in sigs))
    phases = list(dict.fromkeys(sig["phase"] for sig in sigs if sig["phase"] not in (None, "?")))
    return {"title": title_of(first), "component": proposed["component"], "evidence": proposed["evidence"],
            "operators": operators, "kind": first["kind"], "phases": phases, "backend": first["backend"],
            "pattern": sorted({_pattern_of(w) for w in words if w})}


_VARYING = re.compile(r"'[^']*'|(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?(?![\w])")
_NUMBER_RE = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"


def _literal(text: str) -> str:
    return re.escape(text).replace("\\ ", " ")


def _pattern_of(words: str) -> str:
    """A registry pattern for Aidge's ``words``: the fixed text escaped (a name holding digits,
    ``float16``, ``N5Aidge6Neg_OpE``, kept as it is), quoted names and standalone numbers as
    wildcards (a registrar's key in double quotes is kept: its dtype is the defect), the registrar's
    key list dropped, the first 160 characters."""
    text = re.sub(r"Available registrar keys are:.*", "", aidge_words(words))[:160].strip()
    out, at = [], 0
    for m in _VARYING.finditer(text):
        out.append(_literal(text[at:m.start()]))
        token = m.group(0)
        out.append("'[^']*'" if token[0] == "'" else _NUMBER_RE)
        at = m.end()
    out.append(_literal(text[at:]))
    return "".join(out)


def proposed_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The registry entry a ledger entry no registry entry holds proposes (its id, title, evidence,
    and Aidge's words as a pattern), for a maintainer to review and add to
    ``interop/registry/defects.json``."""
    words = entry.get("message") and entry.get("error") or ""
    return {"id": entry["id"], "title": entry["title"], "component": entry["component"],
            "evidence": entry.get("evidence", ""), "operators": [entry["operator"]], "kind": entry["kind"],
            "phases": [entry["phase"]] if entry.get("phase") not in (None, "?") else [],
            "backend": entry.get("backend") or "cpu", "pattern": _pattern_of(words) if words else ""}


def _repro_fits(repro: dict[str, Any], sig: dict[str, Any]) -> bool:
    """Whether a case's reproducer shows the entry's own defect: for a missing importer, the ONNX op its
    line names is the entry's (measured 2026-12-07: a case holding ConstantOfShape and Elu, both without
    an importer, reproduced Elu's, and the ConstantOfShape entry's ISSUE.md attached that script)."""
    if sig["kind"] not in ("no importer", "converter failure"):
        return True
    line = str(repro.get("line") or "")
    named = onnx_ops_named(line)
    return not named or sig["operator"] in named


def is_aidge_finding(record: dict[str, Any]) -> bool:
    """Whether a record is a finding of the ledger: failed or xfailed, in an Aidge category, attributed
    to Aidge, of a case (the framework's own unit tests are none)."""
    if record.get("outcome") not in ("failed", "error", "xfailed"):
        return False
    if str(record.get("nodeid") or "").startswith("tests/unit/"):  # the framework's own tests: no Aidge finding
        return False
    category = record.get("category") or "unknown"
    return kind_of(category) == "aidge" and record.get("attribution") not in NOT_AIDGE


def _said_about(said: Any, operator: str, *, kind: str) -> str | None:
    """Aidge's log line that says why an import failed (a converter's own words, which the error
    the suite sees does not hold); None for the other kinds, where the error the suite saw is
    Aidge's own message (a full model's log opens with warnings about other nodes)."""
    lines = [str(x) for x in said] if isinstance(said, list) else []
    if kind not in ("converter failure", "no importer") or not lines:
        return None
    op = operator.lower()
    return next((x for x in lines if op and op in x.lower()), lines[0] if kind == "converter failure" else None)


def _detected_by(record: dict[str, Any]) -> str | None:
    """The suite's check that saw a record's failure when its message is the suite's words (the
    table row's ``detected_by``, else the table's rule on the record's error)."""
    expected = record.get("expected") if isinstance(record.get("expected"), dict) else {}
    if expected.get("detected_by"):
        return str(expected["detected_by"])
    error = str(record.get("error") or "")
    return detected_by(str(record.get("category") or ""), error.split(": ", 1)[-1] if error.startswith("crash") else error) \
        or detected_by(str(record.get("category") or ""), error)


def _table_rows(table_dir: str | Path | None) -> dict[str, dict[str, Any]]:
    """``<release>/<file>#<index>`` -> the row, for every row of the expected-failure table."""
    folder = Path(table_dir) if table_dir is not None else ft.TABLE_DIR
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*/*.json")):
        ft.read_table_file(path)  # checked as the test run reads it
        for i, row in enumerate(json.loads(path.read_text(encoding="utf-8"))["rows"]):
            if isinstance(row, dict):
                out[f"{path.parent.name}/{path.name}#{i}"] = row
    return out


def triaged_releases(table_dir: str | Path | None = None) -> list[str]:
    """The Aidge releases the table was triaged for (its release folders), oldest first."""
    folder = Path(table_dir) if table_dir is not None else ft.TABLE_DIR
    names = []
    for p in folder.iterdir() if folder.is_dir() else ():
        try:
            names.append((Version(p.name), p.name))
        except InvalidVersion:
            continue
    return [n for _, n in sorted(names)]


def _quotes(row: dict[str, Any]) -> str:
    return " || ".join([row["quote"]] if isinstance(row.get("quote"), str) else list(row.get("quote") or []))


def _row_of(record: dict[str, Any], rows: dict[str, dict[str, Any]]) -> str | None:
    """The table row that decided ``record`` (its reference, or the row that says the same)."""
    expected = record.get("expected") if isinstance(record.get("expected"), dict) else None
    if not expected:
        return None
    ref = expected.get("row")
    if isinstance(ref, str) and ref in rows:
        return ref
    # records written before rows were referenced: the row of this source that says exactly this
    for key, row in rows.items():
        if (row.get("source") == record.get("kind") and row.get("operator") == expected.get("operator")
                and row.get("phase") == expected.get("phase") and row.get("category") == expected.get("category")
                and _quotes(row) == expected.get("quote")):
            return key
    return None


def _blocked(cases: list[str]) -> dict[str, list[str]]:
    """The architectures and zoo models among ``cases`` (their names, without the mode)."""
    out: dict[str, set[str]] = {"architectures": set(), "models": set()}
    for nodeid in cases:
        m = _ARCH.search(str(nodeid))
        if m:
            out["architectures"].add(m.group(1))
            continue
        m = _MODEL.search(str(nodeid))
        if m:
            out["models"].add(m.group(1))
    return {k: sorted(v) for k, v in out.items()}


_FORWARD_PHASES = ("export", "import", "compile", "forward")
#: the MONAI and transformers architectures (the catalog's shared-tensor cases run in that suite too: not architectures)
_ARCH = re.compile(r"test_architecture\[arch_((?:monai|transformers)_.+?)_(?:eval|train)\]$")
_MODEL = re.compile(r"tests/test_models\.py::test_model\[(.+?)_(?:eval|train)\]$")


def _releases_of(entry: dict[str, Any], rows: dict[str, dict[str, Any]], triaged: list[str], installed: str | None,
                 checked: dict[str, set[str]]) -> None:
    """``releases`` (where a row of the defect holds), ``first_seen`` and ``since`` of ``entry``."""
    held = [r for r in triaged if any(ft.release_matches(rows[k]["aidge"], r) for k in entry["rows"])]
    if installed and entry["new"] and installed not in held:
        held.append(installed)  # failures no row says yet: this release, unexpected
    entry["releases"] = held
    entry["first_seen"] = held[0] if held else installed
    entry["since"] = None
    if installed in triaged and triaged.index(installed) > 0:
        before = triaged[triaged.index(installed) - 1]
        if before in held:
            entry["since"] = f"holds since {entry['first_seen']}"
        elif set(entry["source_kinds"]) & checked.get(before, set()):
            entry["since"] = f"new since {before}"
        else:
            entry["since"] = f"not checked on {before}"


#: the case kinds (and their sources' names) that reach Aidge without torch's exporters: onnx's own
#: backend tests (any ONNX producer's graphs) and Aidge's own operator configurations (the Aidge
#: operator built from its factory); every other case comes through a torch export
NOT_TORCH_KINDS = ("onnx_backend", "aidge_config")
NOT_TORCH_SOURCES = ("ONNX backend tests", "Aidge configs (aidge-benchmark)")

#: what docs/onnx-conformance.md measured (2026-12-07, torch 2.13.0, opset 18, both routes,
#: ``interop.verify(fn, *args, backward=False, exporter=route)``) of whether torch's exporters emit
#: the op and attributes of a defect no torch-driven case reaches; kept, not re-measured
TORCH_EXPORTS = {
    "D-f30d21bb": "x[:, 10:] + 1 exports as this Slice on both routes and fails (output_shape_differs, aidge): "
                  "torch users meet it",
    "D-f01f5e71": "F.grid_sample(x, g, mode='bilinear') exports as GridSample (no If) on both routes, but aidge_onnx "
                  "imports it as GenericOperator: refused at import, no wrong value reaches a torch user",
    "D-79a481de": "nn.Conv2d(padding='same') exports as Conv auto_pad SAME_UPPER (TorchScript) or explicit pads "
                  "(dynamo) and passes: torch allows 'same' at stride 1 only, the failing test is at stride 2",
    "D-9d216552": "torch.tril of a (0, 5) tensor exports as Trilu, refused by the bridge's empty-tensor guard: no "
                  "wrong shape reaches a torch user",
    "D-053a1d69": "torch.split(x, 3) exports as Split with explicit sizes and passes (the uneven test uses "
                  "num_outputs, which torch does not emit)",
    "D-4f709f1f": "an eval export drops nn.Dropout (no node); a TRAINING export's Dropout is random: not reached",
    "D-92c08569": "torch emits no SAME pooling (nn.AvgPool2d exports explicit pads, auto_pad NOTSET): not reached",
    "D-47a4b890": "torch emits no SAME pooling (nn.MaxPool2d exports explicit pads, auto_pad NOTSET): not reached",
}


def torch_driven(record: dict[str, Any]) -> bool:
    """Whether a record's case reaches Aidge through torch's exporters: any case but those of
    :data:`NOT_TORCH_KINDS` (by its ``kind``, else its ``source``)."""
    return (str(record.get("kind") or record.get("source") or "") not in NOT_TORCH_KINDS
            and str(record.get("source") or "") not in NOT_TORCH_SOURCES)


def _torch_rows_by_defect(rows: dict[str, dict[str, Any]], release: str | None) -> dict[str, dict[str, int]]:
    """Ledger id -> {torch-driven source: rows}: the expected-failure table's rows of torch-driven
    sources that name a defect (``defect``, an alias read as its registry entry's id), holding in
    ``release`` (every release's when None). What the triaged runs of those sources saw, whatever
    sources this run ran."""
    out: dict[str, dict[str, int]] = {}
    for row in rows.values():
        source, named = str(row.get("source") or ""), row.get("defect")
        if not named or not source or not torch_driven({"kind": source}):
            continue
        try:
            if release and not ft.release_matches(row["aidge"], release):
                continue
        except Exception:  # noqa: BLE001  a row without a readable release: counted
            pass
        found = registry.by_id(named)
        did = found.id if found is not None else named
        out.setdefault(did, {})
        out[did][source] = out[did].get(source, 0) + 1
    return out


def _reached_from_torch(entry: dict[str, Any], table: dict[str, int]) -> None:
    """``torch_cases`` (this run's torch-driven cases of the entry), ``torch_rows`` (the table's
    torch-driven rows naming it, by source), ``reached_from_torch`` (either), and for a defect no
    torch-driven case or row reaches, ``torch_export``: what was measured of torch's exporters
    (:data:`TORCH_EXPORTS`), where it was. In place."""
    entry["torch_rows"] = dict(sorted(table.items()))
    entry["reached_from_torch"] = bool(entry.get("torch_cases") or table)
    entry["torch_export"] = None if entry["reached_from_torch"] else TORCH_EXPORTS.get(entry["id"])


def build_ledger(records: Iterable[dict[str, Any]], *, table_dir: str | Path | None = None,
                 release: str | None = None) -> list[dict[str, Any]]:
    """The distinct Aidge defects of ``records``, by impact (cases, architectures and models blocked,
    sources). Each entry also names the table rows that hold its expected cases (``rows``), the
    releases those rows hold in (``releases``, ``first_seen``, ``since``: new since the release
    before ``release``, when that release's run checked one of its sources) and the architectures and
    zoo models it blocks."""
    records = [r for r in records if isinstance(r, dict)]
    try:
        rows = _table_rows(table_dir)
        triaged = triaged_releases(table_dir)
    except Exception:  # noqa: BLE001  a table that cannot be read is the test run's error, not the ledger's
        rows, triaged = {}, []
    entries: dict[str, dict[str, Any]] = {}
    for rec in records:
        if not is_aidge_finding(rec):
            continue
        sig = signature_of(rec)
        ident = identify(rec, signature=sig)
        did = ident["id"]
        entry = entries.setdefault(did, {**sig, **ident, "cases": [], "sources": {},
                                         "aidge_said": None, "error": None, "reproducer": None,
                                         "reproducer_nodes": None, "known": 0, "new": 0, "rows": [],
                                         "table_defects": [], "torch_cases": 0})
        repro = rec.get("reproducer") if isinstance(rec.get("reproducer"), dict) else {}
        entry["cases"].append(rec.get("nodeid"))
        source = rec.get("source") or "?"
        entry["sources"][source] = entry["sources"].get(source, 0) + 1
        entry["torch_cases"] += int(torch_driven(rec))
        entry["known" if rec.get("outcome") == "xfailed" else "new"] += 1
        entry["error"] = entry["error"] or str(rec.get("error") or "")[:400]
        if "detected_by" not in entry:  # the suite's words, or Aidge's own (None)
            entry["detected_by"] = _detected_by(rec)
        ref = _row_of(rec, rows)
        if ref and ref not in entry["rows"]:
            entry["rows"].append(ref)
            said = rows[ref].get("defect")
            if said and said not in entry["table_defects"]:
                entry["table_defects"].append(said)
        if not entry["aidge_said"]:
            entry["aidge_said"] = _said_about(repro.get("aidge_said"), sig["operator"], kind=sig["kind"])
        if repro.get("reproduces") and _repro_fits(repro, sig):
            where = repro.get("reduced") or repro.get("path")
            nodes = repro.get("reduced_nodes") or repro.get("nodes")
            if where and (entry["reproducer_nodes"] is None or (nodes or 1e9) < entry["reproducer_nodes"]):
                entry["reproducer"], entry["reproducer_nodes"] = where, nodes
                entry["repro_line"] = repro.get("line")
                # a merged run's record: its bundle lies in the run it was merged from
                entry["reproducer_root"] = rec.get("merged_from") if isinstance(rec.get("merged_from"), str) else None
    # the sources each triaged release's runs checked: those of the rows that hold in it
    checked: dict[str, set[str]] = {r: {row.get("source") for row in rows.values()
                                        if ft.release_matches(row["aidge"], r)} for r in triaged}
    kinds = {rec.get("source") or "?": rec.get("kind") for rec in records}
    installed = release or _installed()
    by_table = _torch_rows_by_defect(rows, installed)
    for entry in entries.values():
        entry["rows"].sort()
        entry["blocks"] = _blocked(entry["cases"])
        entry["source_kinds"] = sorted({str(kinds.get(s) or s) for s in entry["sources"]})
        _releases_of(entry, rows, triaged, installed, checked)
        _reached_from_torch(entry, by_table.get(entry["id"], {}))
    # what is new first (failures no row says: this run's news), then by impact; each entry typed (models)
    return checked_all(DefectEntry, sorted(entries.values(), key=lambda e: (
        0 if e["new"] and not e["known"] else 1, -len(e["cases"]),
        -len(e["blocks"]["architectures"]) - len(e["blocks"]["models"]), -len(e["sources"]), e["id"])))


def _installed() -> str | None:
    """The Aidge release the table applies to here (installed, or ``INTEROP_AIDGE_RELEASE``)."""
    try:
        return ft.aidge_release()
    except Exception:  # noqa: BLE001
        return None


def ledger_headline(ledger: list[dict[str, Any]], records: Iterable[dict[str, Any]], *, complete: bool = True) -> str:
    """"N distinct Aidge defects (K new since R), blocking M of A architectures", from a ledger and its run."""
    slow = [e for e in ledger if e.get("kind") == "slow"]
    ledger = [e for e in ledger if e.get("kind") != "slow"]
    archs = {m.group(1) for r in records if isinstance(r, dict) for m in [_ARCH.search(str(r.get("nodeid") or ""))] if m}
    blocked = {a for e in ledger for a in e["blocks"]["architectures"]}
    # an architecture case checks backward in eval mode too: inference is blocked by a defect before backward
    inference = {a for e in ledger if e["phase"] in _FORWARD_PHASES for a in e["blocks"]["architectures"]}
    new = [e for e in ledger if (e.get("since") or "").startswith("new since")]
    since = new[0]["since"].removeprefix("new since ") if new else None
    unexpected = sum(1 for e in ledger if e["new"] and not e["known"])
    text = f"{len(ledger)} distinct Aidge defect(s)"
    extra = []
    if since:
        extra.append(f"{len(new)} new since {since}")
    if unexpected:
        extra.append(f"{unexpected} not in the table")
    if extra:
        text += f" ({', '.join(extra)})"
    if archs:
        text += f", blocking {len(blocked)} of {len(archs)} architectures ({len(inference)} in inference)"
    if slow:
        text += (f"; {len(slow)} slow node(s) (Aidge over {slow[0].get('threshold', 3):g}x onnxruntime, "
                 f"per-node profile)")
    return text + ("" if complete else " (run incomplete: what it saw)")


def ledger_summary(ledger: list[dict[str, Any]], *, complete: bool = True, top: int = 15,
                   records: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """What the report says of the ledger: its headline (:func:`ledger_headline`, with the run's
    ``records``), the count by kind and component, and the top entries."""
    by_kind: dict[str, int] = {}
    by_component: dict[str, int] = {}
    for e in ledger:
        by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
        by_component[e["component"]] = by_component.get(e["component"], 0) + 1
    return {"count": len(ledger), "headline": ledger_headline(ledger, list(records), complete=complete),
            "cases": sum(len(e["cases"]) for e in ledger), "by_kind": by_kind,
            "by_component": by_component, "complete": complete,
            "files": ["defects.md", "defects.json", "defects.html", "defects/<id>/ISSUE.md"],
            "top": [{k: e.get(k) for k in ("id", "title", "component", "reproducer", "reproducer_nodes", "issue", "since",
                                               "reached_from_torch", "torch_cases")}
                    | {"cases": len(e["cases"])} for e in [e for e in ledger if e.get("kind") != "slow"][:top]],
            "slow": [{k: e.get(k) for k in ("id", "operator", "op_type", "attributes", "input_shapes", "ratio_ort",
                                            "ratio_torch", "torch_op", "cost_s", "models", "reproducer", "issue",
                                            "aidge_alone_s", "ort_alone_s", "torch_alone_s", "threshold")}
                     for e in ledger if e.get("kind") == "slow"] or None}


def refresh_run(run_dir: Path) -> str:
    """A findings run's ledger and report rebuilt after its per-node profile was added (the
    profile's CLI, ``--run-dir``): ``defects.*`` from its records and profile, and the report's
    defects section (report.json, report.txt) with them. Returns the ledger's headline."""
    run_dir = Path(run_dir)
    run = load_run(run_dir)
    if run is None:
        raise ValueError(f"{run_dir}: no records.jsonl")
    ledger = write_ledger(run_dir, run.records, complete=run.complete)
    report_path = run_dir / "report.json"
    if report_path.is_file():
        report = json.loads(report_path.read_text(encoding="utf-8"))
        report["defects"] = ledger_summary(ledger, complete=run.complete, records=run.records)
        profile_ort_ratios(report, read_slow_profile(run_dir))
        if (run_dir / "porting.json").is_file():  # its speed columns, from the profile now beside it
            try:
                commit = json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("commit")
            except (OSError, ValueError, AttributeError):
                commit = None
            write_porting(run_dir, porting_table(run.records),
                          lines=[f"run {run_dir.name}" + (f", commit {commit}" if commit else "")])
        write_atomically(report_path, json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
        write_atomically(run_dir / "report.txt", format_report(report))
    link_run_pages(run_dir)  # the run's pages link only those it holds
    return ledger_headline(ledger, run.records, complete=run.complete)


def write_ledger(run_dir: Path, records: list[dict[str, Any]], *, complete: bool = True,
                 table_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """``defects.json``, ``defects.md``, ``defects.html`` and ``defects/<id>/ISSUE.md`` (with
    ``standalone.py``) of a run, each file atomically; returns the ledger (its entries name their
    ``issue`` and ``standalone`` files)."""
    from .defect_issue_write import versions_of, write_issues

    run_dir = Path(run_dir)
    records = list(records)
    ledger = build_ledger(records, table_dir=table_dir)
    write_issues(run_dir, ledger, versions=versions_of(run_dir))
    slow_error = None
    try:
        slow = slow_entries(read_slow_profile(run_dir), release=_installed())
    except ValueError as exc:  # the profile's own fault: said in the ledger, the run's defects still listed
        slow, slow_error = [], str(exc)
    write_slow_issues(run_dir, slow, versions=versions_of(run_dir))
    # the entries as written (their issue and standalone files named), each typed (models.DefectEntry)
    ledger = checked_all(DefectEntry, ledger + slow, where=run_dir / "defects.json")
    headline = ledger_headline(ledger, records, complete=complete)
    write_atomically(run_dir / "defects.json",
                     json.dumps({"complete": complete, "headline": headline, "defects": ledger}
                                | ({"slow_error": slow_error} if slow_error else {}), indent=1, default=str))
    write_atomically(run_dir / "defects.md", format_ledger_md(ledger, complete=complete, headline=headline))
    write_atomically(run_dir / "defects.html", format_ledger_html(ledger, complete=complete, headline=headline))
    return ledger


def main(argv: list[str] | None = None) -> int:
    """``python -m interop.reporting.ledger RUN_DIR``: the ledger of a run rebuilt from its records
    (after the table gained defect ids, or for a run written before the ledger's last change) and
    its per-node profile, with the report's defects section and the porting table."""
    parser = argparse.ArgumentParser(prog="python -m interop.reporting.ledger", description=main.__doc__)
    parser.add_argument("run_dir")
    args = parser.parse_args(argv)
    run = load_run(Path(args.run_dir))
    if run is None:
        parser.error(f"{args.run_dir}: no records.jsonl")
    # the ledger, and the report's defects section and porting table with it (a per-node profile
    # added to the run since: node_profile --run-dir)
    sys.stdout.write(text_escape.terminal(refresh_run(Path(args.run_dir))) + "\n"
                     + text_escape.terminal(Path(args.run_dir) / "defects.md") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
