"""Defects, not cases: one entry per distinct Aidge defect of a run (issue 43, first version).

A run's Aidge findings (failed and xfailed records attributed to Aidge) are grouped by a
*signature* read from the record and its reproducer (:mod:`interop.diagnostics.reproducer`):

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
:func:`write_ledger` writes ``defects.json`` and ``defects.md`` into the run directory.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable

from ..categories import kind_of, row_attribution
from ..registry.identify import aidge_words, defect_id, identify, proposed_defect, row_signature, signature_of, title_of
from ..records.sources import NOT_AIDGE
from ..records.store import write_atomically
from . import text_escape

__all__ = ["row_signature", "is_aidge_finding", "triaged_releases", "ledger_headline",
           "format_ledger_html", "build_ledger", "write_ledger", "format_ledger_md", "ledger_summary",
           "slow_id", "slow_signature", "slow_entries", "read_slow_profile", "refresh_run",
           "slow_issue_text", "registry_entries_from_table", "proposed_entry", "torch_driven", "reached_text",
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
    from .. import registry

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
    named = re.findall(r"\(ONNX op (\w+)\)", line)
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
    from ..cases.failure_table import detected_by

    expected = record.get("expected") if isinstance(record.get("expected"), dict) else {}
    if expected.get("detected_by"):
        return str(expected["detected_by"])
    error = str(record.get("error") or "")
    return detected_by(str(record.get("category") or ""), error.split(": ", 1)[-1] if error.startswith("crash") else error) \
        or detected_by(str(record.get("category") or ""), error)


def _table_rows(table_dir: str | Path | None) -> dict[str, dict[str, Any]]:
    """``<release>/<file>#<index>`` -> the row, for every row of the expected-failure table."""
    from ..cases import failure_table as ft

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
    from packaging.version import InvalidVersion, Version

    from ..cases import failure_table as ft

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
    from ..cases import failure_table as ft

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
    from .. import registry
    from ..cases import failure_table as ft

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


def reached_text(e: dict[str, Any]) -> str:
    """One line for a page: whether torch-driven cases reach the entry, how many, and the table's
    torch-driven rows; for an ONNX-only defect, what was measured of torch's exporters."""
    if e.get("reached_from_torch") is None:
        return "-"
    rows = ", ".join(f"{s} {n}" for s, n in (e.get("torch_rows") or {}).items())
    if e["reached_from_torch"]:
        return (f"yes: {e.get('torch_cases') or 0} torch-driven case(s) in this run"
                + (f"; table rows of {rows}" if rows else ""))
    return "no" + (f" (torch's exporters, measured: {e['torch_export']})" if e.get("torch_export") else "")


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
    from ..cases import failure_table as ft
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
    # what is new first (failures no row says: this run's news), then by impact
    return sorted(entries.values(), key=lambda e: (0 if e["new"] and not e["known"] else 1, -len(e["cases"]),
                                                   -len(e["blocks"]["architectures"]) - len(e["blocks"]["models"]),
                                                   -len(e["sources"]), e["id"]))


def _installed() -> str | None:
    """The Aidge release the table applies to here (installed, or ``INTEROP_AIDGE_RELEASE``)."""
    from ..cases import failure_table as ft

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


def format_ledger_md(ledger: list[dict[str, Any]], *, complete: bool = True, headline: str | None = None) -> str:
    """defects.md. Every record-borne field goes through :mod:`.text_escape` (prose escaped, quoted
    text in code spans, control characters as escapes): a message's ``<script>``, a ``|`` or an ESC
    byte stays text in the page and in a terminal."""
    md, code = text_escape.text, text_escape.code

    def link(e: dict[str, Any]) -> str:
        return f"[{md(e['id'])}](#{text_escape.anchor(e['id'])})"

    lines = ["# Aidge defects of this run", ""] + ([md(headline), ""] if headline else [])
    if not complete:
        lines += ["**This run is incomplete: the ledger lists what it saw, not every defect.**", ""]
    by_kind: dict[str, int] = {}
    for e in ledger:
        by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
    lines.append(f"{len(ledger)} distinct defect(s) in {sum(len(e['cases']) for e in ledger)} case(s): "
                 + ", ".join(f"{md(k)} {n}" for k, n in sorted(by_kind.items(), key=lambda kv: -kv[1])))
    unexpected = [e for e in ledger if e["new"] and not e["known"]]
    if unexpected:
        lines += ["", f"**Not in the expected-failure table ({len(unexpected)}): new in this run, listed first.**"]
    news = [e for e in ledger if (e.get("since") or "").startswith("new since")]
    if news:
        lines += ["", f"{md(news[0]['since'].capitalize())} (by the table's rows; {len(news)}): "
                  + ", ".join(f"{link(e)} {md(e['title'])}" for e in news[:20])
                  + (f" and {len(news) - 20} more" if len(news) > 20 else "")]
    lines += ["", "| id | component | defect | cases | blocks | releases | sources | from torch | reproducer |",
              "|---|---|---|---|---|---|---|---|---|"]
    for e in ledger:
        sources = ", ".join(f"{md(s)} {n}" for s, n in sorted(e["sources"].items()))
        repro = f"{code(e['reproducer'], table=True)} ({md(e['reproducer_nodes'])} node(s))" \
            if e.get("reproducer") else "none"
        blocks = e.get("blocks") or {}
        blocked = len(blocks.get("architectures") or ()) + len(blocks.get("models") or ())
        lines.append(f"| {link(e)} | {md(e['component'])} | {md(e['title'])} | {len(e['cases'])} | "
                     f"{blocked or ''} | {', '.join(md(r) for r in e.get('releases') or [])} | {sources} | "
                     f"{_torch_cell(e)} | {repro} |")
    lines.append("")
    for e in ledger:
        lines += [f"## {md(e['id'])}: {md(e['title'])}", "",
                  f"- kind: {md(e['kind'])}; component: {md(e['component'])}; phase: {md(e['phase'])}; "
                  f"backend: {md(e['backend'])}" + (f"; dtype: {md(e['dtype'])}" if e.get("dtype") else ""),
                  f"- component from: {md(e.get('evidence') or 'the signature')}",
                  ("- in the registry (interop/registry/defects.json)" if e.get("registered") else
                   "- **proposed**: no registry entry holds it yet (`python -m interop.triage registry` after the "
                   "table names it)"),
                  f"- cases: {len(e['cases'])} ({e['known']} known, {e['new']} new)",
                  f"- the suite saw: {code(e['error'])}"]
        if e.get("aidge_said"):
            lines.append(f"- Aidge said: {code(e['aidge_said'])}")
        if e.get("reproducer") and e["kind"] == "slow":
            lines.append(f"- timing reproducer: {code(str(e['reproducer']) + '/time_aidge.py')} (Aidge alone, then "
                         "onnxruntime)")
        elif e.get("reproducer"):
            lines.append(f"- reproducer: {code(str(e['reproducer']) + '/repro.py')}: "
                         + (code(e['repro_line']) if e.get('repro_line') else ""))
        if e.get("issue"):
            lines.append(f"- upstream report: {code(e['issue'])}" + (f", one-file script {code(e['standalone'])}"
                                                                      if e.get("standalone") else ""))
        blocks = e.get("blocks") or {}
        if blocks.get("architectures") or blocks.get("models"):
            lines.append("- blocks: " + ", ".join(md(b) for b in list(blocks.get("architectures") or [])
                                                  + list(blocks.get("models") or [])))
        if e.get("releases"):
            lines.append(f"- releases (the table): {', '.join(md(r) for r in e['releases'])}"
                         + (f"; {md(e['since'])}" if e.get("since") else "")
                         + (f"; rows {', '.join(md(r) for r in e['rows'])}" if e.get("rows") else ""))
        if e.get("reached_from_torch") is not None:
            lines.append(f"- reached from torch: {md(reached_text(e))}")
        lines.append("- affected: " + ", ".join(code(c) for c in e["cases"][:12])
                     + (f" and {len(e['cases']) - 12} more" if len(e["cases"]) > 12 else ""))
        lines.append("")
    return "\n".join(lines)


def _torch_cell(e: dict[str, Any]) -> str:
    """The ledger table's "from torch" cell: ``yes N`` (this run's torch-driven cases), ``no``, or ``-``."""
    if e.get("reached_from_torch") is None:
        return "-"
    return f"yes {e.get('torch_cases') or 0}" if e["reached_from_torch"] else "no"


_HTML_STYLE = """body{font-family:sans-serif;margin:1em;max-width:100%}table{border-collapse:collapse;width:100%}
th,td{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top;font-size:13px}
th{background:#eee;position:sticky;top:0}tr:target{background:#ffd}code{font-size:12px;word-break:break-all}
.kind{white-space:nowrap}.n{text-align:right}details{margin:2px 0}#q{width:30em;font-size:14px;padding:3px}
.warn{color:#a00;font-weight:bold}nav a,nav b{margin-right:1em}"""
_HTML_SCRIPT = """function f(){var q=document.getElementById('q').value.toLowerCase(),
k=document.getElementById('k').value;var n=0;document.querySelectorAll('tbody tr').forEach(function(r){
var ok=r.textContent.toLowerCase().indexOf(q)>=0&&(!k||r.dataset.kind==k);r.style.display=ok?'':'none';if(ok)n++;});
document.getElementById('shown').textContent=n;}"""


def format_ledger_html(ledger: list[dict[str, Any]], *, complete: bool = True, headline: str | None = None,
                       title: str = "Aidge defects") -> str:
    """One self-contained page (no script, style or font from the network): a row per defect, with
    an anchor per id (``defects.html#D-xxxxxxxx``), a search box and a filter by kind."""
    import html

    from .porting import nav_html  # the links between a run's pages, as the support matrix and porting page have

    esc = html.escape
    kinds = sorted({e["kind"] for e in ledger})
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
           f"<title>{esc(title)}</title><style>{_HTML_STYLE}</style><script>{_HTML_SCRIPT}</script></head><body>",
           nav_html("defects.html"), f"<h1>{esc(title)}</h1>"]
    if not complete:
        out.append("<p class='warn'>This run is incomplete: the ledger lists what it saw, not every defect.</p>")
    if headline:
        out.append(f"<p>{esc(headline)}</p>")
    out.append("<p><label>Search <input id='q' oninput='f()' placeholder='operator, kind, case, id...'></label> "
               "<label>Kind <select id='k' onchange='f()'><option value=''>all</option>"
               + "".join(f"<option>{esc(k)}</option>" for k in kinds)
               + f"</select></label> <span id='shown'>{len(ledger)}</span> of {len(ledger)} shown</p>")
    out.append("<table><thead><tr><th>id</th><th>component</th><th>kind</th><th>defect</th><th>cases</th>"
               "<th>blocks</th><th>releases</th><th>from torch</th><th>report</th></tr></thead><tbody>")
    for e in ledger:
        blocks = e.get("blocks") or {}
        blocked = ", ".join(list(blocks.get("architectures") or []) + list(blocks.get("models") or []))
        cases = e.get("cases") or []
        sources = ", ".join(f"{s} {n}" for s, n in sorted((e.get("sources") or {}).items()))
        report = []
        if e.get("issue"):
            report.append(f"<a href='{esc(e['issue'])}'>ISSUE.md</a>")
        if e.get("standalone"):
            report.append(f"<a href='{esc(e['standalone'])}'>standalone.py</a>")
        if e.get("reproducer"):
            report.append(f"<code>{esc(str(e['reproducer']))}</code> ({esc(str(e.get('reproducer_nodes')))} node(s))")
        said = e.get("aidge_said") or e.get("error") or ""
        out.append(
            f"<tr id='{esc(e['id'])}' data-kind='{esc(e['kind'])}'><td><a href='#{esc(e['id'])}'>{esc(e['id'])}</a></td>"
            f"<td>{esc(e['component'])}</td><td class='kind'>{esc(e['kind'])}</td>"
            f"<td>{esc(e['title'])}<details><summary>Aidge said</summary><code>{esc(said)}</code></details></td>"
            f"<td class='n'>{len(cases)}<details><summary>{esc(sources)}</summary>"
            + "<br>".join(f"<code>{esc(str(c))}</code>" for c in cases) + "</details></td>"
            f"<td>{esc(blocked)}</td><td>{esc(', '.join(e.get('releases') or []))}"
            f"{'<br>' + esc(e['since']) if e.get('since') else ''}</td>"
            f"<td title='{esc(reached_text(e))}'>{esc(_torch_cell(e))}"
            + (f"<details><summary>why</summary>{esc(reached_text(e))}</details>"
               if e.get("reached_from_torch") is not None else "") + f"</td><td>{' '.join(report)}</td></tr>")
    out.append("</tbody></table></body></html>")
    return "\n".join(out)


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


# ---------------------------------------------------------------------------------------------
# Slow nodes (issue 47): an operator at a shape class where Aidge is over a threshold slower than
# onnxruntime on the same node of the same graph, from the run's per-node profile
# (interop.diagnostics.node_profile --run-dir RUN: RUN/node-profile/node_profile.json)
# ---------------------------------------------------------------------------------------------
#: the run's per-node profile, relative to the run (node_profile.PROFILE_DIR)
SLOW_PROFILE = "node-profile/node_profile.json"


def slow_signature(entry: dict[str, Any]) -> dict[str, Any]:
    """:func:`interop.diagnostics.node_profile.slow_signature` (the profile says what a slow entry is)."""
    from ..diagnostics.node_profile import slow_signature as signature

    return signature(entry)


def slow_id(entry: dict[str, Any]) -> str:
    """The ledger id of a slow entry: :func:`defect_id` of its :func:`slow_signature` (the profile's
    CLI names the timing reproducers' folders by it: node_profile.slow_id, the same hash)."""
    return defect_id(slow_signature(entry))


def read_slow_profile(run_dir: Path) -> dict[str, Any] | None:
    """The run's per-node profile (``RUN/node-profile/node_profile.json``), read under the rule of a
    run's files; None when the run has none. A profile that cannot be read is a ValueError naming it."""
    from ..reading import MAX_LOG_BYTES, UnsafeInputError, read_confined

    path = Path(run_dir) / SLOW_PROFILE
    if not path.exists():
        return None
    try:
        data = json.loads(read_confined(path, Path(run_dir), max_bytes=MAX_LOG_BYTES).decode("utf-8"))
    except (OSError, ValueError, UnsafeInputError) as exc:
        raise ValueError(f"{path}: the run's per-node profile cannot be read ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("slow"), list):
        raise ValueError(f"{path}: no 'slow' list (not a node_profile.json)")
    return data


def _us_text(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return "-"
    us = seconds * 1e6
    return f"{us:.0f} us" if us >= 100 else f"{us:.1f} us"


def _slowtitle_of(e: dict[str, Any]) -> str:
    shapes = " ".join(str(x).replace(" ", "") for x in e.get("input_shapes") or [])
    attrs = ", ".join(f"{k}={v}" for k, v in (e.get("attributes") or {}).items()
                      if k in ("mode", "coordinate_transformation_mode", "kernel_shape", "strides", "group", "axis"))
    return (f"{e['operator']} is {e['ratio_ort']:.0f}x slower than onnxruntime on {shapes}"
            + (f" ({attrs})" if attrs else ""))


def slow_entries(profile: dict[str, Any] | None, *, release: str | None = None) -> list[dict[str, Any]]:
    """The ledger entries of kind ``slow`` of a per-node profile (``node_profile.json``): one per
    entry of its ``slow`` list (an operator, attributes and input shapes where Aidge took more than
    the threshold times onnxruntime's time on the same node), with the ratio against onnxruntime
    (in the graph: the profile's median over the entry's nodes) and against torch's equivalent op
    (the node alone, where one is mapped), the Aidge time it costs each model (``models``: model ->
    share of its Aidge node time, cost), sorted by the time it costs. The entries carry the keys
    the ledger's pages read (``cases`` are the profiled nodes, ``model: node``)."""
    if not profile:
        return []
    meta = profile.get("meta") if isinstance(profile.get("meta"), dict) else {}
    out = []
    for raw in profile.get("slow") or []:
        if not isinstance(raw, dict) or not isinstance(raw.get("occurrences"), list):
            continue
        sig = slow_signature(raw)
        alone = raw.get("alone") if isinstance(raw.get("alone"), dict) else {}
        models: dict[str, dict[str, float]] = {}
        for o in raw["occurrences"]:
            m = models.setdefault(str(o.get("model")), {"share": 0.0, "cost_s": 0.0, "nodes": 0})
            m["share"] += float(o.get("share") or 0.0)
            m["cost_s"] += float(o.get("aidge_s") or 0.0) - float(o.get("ort_s") or 0.0)
            m["nodes"] += 1
        entry = {"id": raw.get("id") or defect_id(sig), **sig, "op_type": raw.get("op_type"),
                 "attributes": raw.get("attributes") or {}, "input_shapes": raw.get("input_shapes"),
                 "ratio_ort": float(raw.get("ratio") or 0.0), "threshold": raw.get("threshold"),
                 "cost_s": float(raw.get("cost_s") or 0.0), "models": models,
                 "ratio_torch": alone.get("ratio_torch"), "torch_op": alone.get("torch_op"),
                 "aidge_alone_s": alone.get("aidge_s"), "ort_alone_s": alone.get("ort_s"),
                 "ort_optimized_alone_s": alone.get("ort_optimized_s"), "torch_alone_s": alone.get("torch_s"),
                 "ratio_ort_optimized_alone": alone.get("ratio_ort_optimized"),
                 "alone_rounds": alone.get("rounds"), "alone_error": raw.get("alone_error"),
                 "occurrences": raw["occurrences"], "profiled": {k: meta.get(k) for k in
                                                                 ("started", "command", "uptime_at_end", "rounds")},
                 "cases": [f"{o.get('model')}: {o.get('node')}" for o in raw["occurrences"]],
                 "sources": {"node-profile": len(raw["occurrences"])}, "source_kinds": ["node-profile"],
                 "known": 0, "new": 0, "rows": [], "table_defects": [], "blocks": {"architectures": [], "models": []},
                 "releases": [release] if release else [], "first_seen": release, "since": None,
                 "aidge_said": None, "detected_by": "per-node profile (interop.diagnostics.node_profile)",
                 "reproducer": raw.get("reproducer"), "reproducer_nodes": 1 if raw.get("reproducer") else None,
                 "reproducer_error": raw.get("reproducer_error"), "reproducer_root": None}
        entry["title"] = _slowtitle_of(entry)
        entry["error"] = (f"Aidge {_us_text(sum(o.get('aidge_s') or 0 for o in raw['occurrences']))} against "
                          f"onnxruntime {_us_text(sum(o.get('ort_s') or 0 for o in raw['occurrences']))} on "
                          f"{len(raw['occurrences'])} node(s) (x{entry['ratio_ort']:.1f}, over the "
                          f"x{raw.get('threshold') or 3:g} threshold)")
        out.append(entry)
    return sorted(out, key=lambda e: -e["cost_s"])


def slow_issue_text(e: dict[str, Any], *, versions: dict[str, str] | None = None) -> str:
    """The Markdown of an upstream report for one slow entry: what is slow, by how much against
    onnxruntime and torch, what it costs each model, and how to time it without the suite."""
    versions = versions or {}
    md, code = text_escape.text, text_escape.code
    aidge = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()) if k.startswith("aidge"))
    shapes = " ".join(str(x).replace(" ", "") for x in e.get("input_shapes") or [])
    lines = [f"# [{md(e['component'])}] {md(e['title'])}", "",
             f"Found by aidge_torch_interop's per-node profile ({md(e['id'])}: slow, phase forward, backend cpu, one "
             f"thread).", "", f"**Versions**: {md(aidge or 'see the run')}.", "", "## What happens", "",
             f"ONNX {code(e.get('op_type'))} (Aidge {code(e['operator'])}), inputs {md(shapes)}, attributes "
             f"{code(json.dumps(e.get('attributes') or {}, sort_keys=True))}.", "",
             f"- In the model's graph (each runtime's own per-node records, median of the profile's rounds): "
             f"Aidge/onnxruntime x{e['ratio_ort']:.1f} (threshold x{e.get('threshold') or 3:g}).",
             ]
    if e.get("aidge_alone_s"):
        lines.append(f"- The node alone ({e.get('alone_rounds')} interleaved rounds, thread CPU time): Aidge "
                     f"{_us_text(e['aidge_alone_s'])}, onnxruntime {_us_text(e.get('ort_alone_s'))} (optimised "
                     f"{_us_text(e.get('ort_optimized_alone_s'))}), torch's {code(e.get('torch_op'))} "
                     f"{_us_text(e.get('torch_alone_s'))}"
                     + (f": Aidge/torch x{e['ratio_torch']:.1f}" if e.get("ratio_torch") else "") + ".")
    elif e.get("alone_error"):
        lines.append(f"- Not timed alone: {code(e['alone_error'])}")
    lines += ["", "## What it costs", "", "| model | nodes | share of Aidge's node time | Aidge time over onnxruntime |",
              "|---|---:|---:|---:|"]
    for model, m in sorted((e.get("models") or {}).items(), key=lambda kv: -kv[1]["cost_s"]):
        lines.append(f"| {md(model)} | {m['nodes']} | {m['share']:.1%} | {_us_text(m['cost_s'])} |")
    lines += ["", "## Reproduce", ""]
    if e.get("reproducer"):
        lines += [f"{code(str(e['reproducer']) + '/')}: `model.onnx` (the node alone), `inputs.npz` (what it "
                  "receives in the model), `time_aidge.py` (needs numpy, onnx, aidge_core, aidge_backend_cpu, "
                  "aidge_onnx; times Aidge alone, then onnxruntime when installed):", "",
                  *text_escape.fence(f"python {e['reproducer']}/time_aidge.py"), ""]
    else:
        lines += [f"No timing reproducer: {md(e.get('reproducer_error') or 'only the costliest entries get one')}.",
                  ""]
    prof = e.get("profiled") or {}
    lines += [f"Profiled {md(prof.get('started'))}, {code(prof.get('command'))}, {md(prof.get('rounds'))} rounds; "
              f"`uptime` at the end: {code(prof.get('uptime_at_end'))}.", ""]
    return "\n".join(lines)


def _write_slow_issues(run_dir: Path, slow: list[dict[str, Any]], *, versions: dict[str, str]) -> None:
    from ..reading import confined
    from .defect_issue import ISSUES_DIR

    for e in slow:
        folder = confined(run_dir / ISSUES_DIR / e["id"], run_dir, kind="dir", missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / "ISSUE.md", slow_issue_text(e, versions=versions))
        e["issue"] = f"{ISSUES_DIR}/{e['id']}/ISSUE.md"


def _profile_ort_ratios(report: dict[str, Any], profile: dict[str, Any] | None) -> None:
    """The report's slowdown entries of a profiled model (``LeNet_eval``: the zoo's LeNet;
    ``arch_monai_X_eval``: architecture monai_X) without asv's Aidge/onnxruntime get the profile's
    (Aidge over onnxruntime with its default optimisations, median of the rounds' ratios, one
    thread): ``ort_ratio``, ``ort_figure`` "node profile". In place."""
    totals = {}
    for p in (profile or {}).get("profiles") or []:
        ratio = ((p.get("total") or {}).get("ratio_optimized") or {}).get("median") if isinstance(p, dict) else None
        if isinstance(ratio, (int, float)) and ratio > 0:
            totals[str(p.get("name"))] = ratio
    if not totals:
        return
    bench = report.get("benchmarks") or {}
    for e in list(report.get("slowdowns_vs_torch") or []) + list(bench.get("worst_forward") or []):
        if not isinstance(e, dict) or e.get("ort_ratio") or e.get("phase") != "forward":
            continue
        m = re.fullmatch(r"(?:arch_)?(.+)_eval", str(e.get("name") or ""))
        if m and m.group(1) in totals:
            e.update(ort_ratio=totals[m.group(1)], ort_figure="node profile")


def refresh_run(run_dir: Path) -> str:
    """A findings run's ledger and report rebuilt after its per-node profile was added (the
    profile's CLI, ``--run-dir``): ``defects.*`` from its records and profile, and the report's
    defects section (report.json, report.txt) with them. Returns the ledger's headline."""
    from ..records.store import load_run
    from .report_text import format_report

    run_dir = Path(run_dir)
    run = load_run(run_dir)
    if run is None:
        raise ValueError(f"{run_dir}: no records.jsonl")
    ledger = write_ledger(run_dir, run.records, complete=run.complete)
    report_path = run_dir / "report.json"
    if report_path.is_file():
        report = json.loads(report_path.read_text(encoding="utf-8"))
        report["defects"] = ledger_summary(ledger, complete=run.complete, records=run.records)
        _profile_ort_ratios(report, read_slow_profile(run_dir))
        if (run_dir / "porting.json").is_file():  # its speed columns, from the profile now beside it
            from .porting import porting_table, write_porting

            try:
                commit = json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("commit")
            except (OSError, ValueError, AttributeError):
                commit = None
            write_porting(run_dir, porting_table(run.records),
                          lines=[f"run {run_dir.name}" + (f", commit {commit}" if commit else "")])
        write_atomically(report_path, json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
        write_atomically(run_dir / "report.txt", format_report(report))
    from .porting import link_run_pages

    link_run_pages(run_dir)  # the run's pages link only those it holds
    return ledger_headline(ledger, run.records, complete=run.complete)


def write_ledger(run_dir: Path, records: list[dict[str, Any]], *, complete: bool = True,
                 table_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """``defects.json``, ``defects.md``, ``defects.html`` and ``defects/<id>/ISSUE.md`` (with
    ``standalone.py``) of a run, each file atomically; returns the ledger (its entries name their
    ``issue`` and ``standalone`` files)."""
    from .defect_issue import versions_of, write_issues

    run_dir = Path(run_dir)
    records = list(records)
    ledger = build_ledger(records, table_dir=table_dir)
    write_issues(run_dir, ledger, versions=versions_of(run_dir))
    slow_error = None
    try:
        slow = slow_entries(read_slow_profile(run_dir), release=_installed())
    except ValueError as exc:  # the profile's own fault: said in the ledger, the run's defects still listed
        slow, slow_error = [], str(exc)
    _write_slow_issues(run_dir, slow, versions=versions_of(run_dir))
    ledger = ledger + slow
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
    import argparse

    from ..records.store import load_run

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
