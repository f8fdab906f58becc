"""Keeping the expected-failure table from a run's records (``python -m interop.triage``): the proposal.

:func:`propose` reads one run (``records.jsonl`` + ``session.json``) against the table
(:mod:`interop.cases.failure_table`) for the run's Aidge release and proposes, never applies:

- **add**: new rows for the run's unexpected failures, of every source and backend, one row per
  reason (Aidge operator, phase, category, quote, attribution, backend, dtype); the quote is
  stripped of per-sample shapes, byte counts and addresses (:func:`.triage.quote_of`); OpInfo
  selectors say ``s*_`` for the sample index;
- **widen**: where a row of another release already says exactly this (same case, phase,
  category, its quote in the message), its ``aidge`` range is widened to the run's release
  instead of a new row;
- **edit**: a row whose case now fails with another message (Aidge reworded it), or in another
  category or phase, gets the new quote / category / phase;
- **fixed**: a row whose every case the run reached passed (strict XPASS): its range stops
  before the run's release ("fixed in X"), or the row goes when no release is left; a selector
  that only passing cases matched is dropped;
- **unreached**: rows of the release that no case of the run reached (listed, kept: the run may
  be a selection).

Here: the :class:`Proposal` (those rows; what they mean for the ledger's defects), the records read as
cases (:func:`selector_of`, the selector a new row gives a case) and the rows that say a failure. The
triage's other parts: :mod:`.triage_apply` (the proposal written and applied), :mod:`.triage_ranges` (a
row's release range widened or narrowed), :mod:`.triage_changelog` (the changelog from one release to
another) and :mod:`.triage_operators` (a row's Aidge operator from its cases' records).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import types
from pathlib import Path
from typing import Any

from ..categories import row_attribution
from ..cases import failure_table as ft
from ..cases.case import PHASES, normalized_label  # normalized_label: the one normalisation of labels
from ..cases.expected_failures import disagreements, expected_failure, quotes_failure
from ..records.store import RunRecords, load_run
from ..env import given
from ..registry.identify import identify
from ..oracle.attribution import invalid_graph_excuses  # what an invalid graph does not excuse: the one rule
from .ledger import is_aidge_finding
from ..records.sources import with_imported_fields  # the one importer of records without case fields
from .triage import quote_of
from .triage_ranges import RELEASES, narrow, widen
from ..exporters import EXPORTER_ENV

__all__ = ["Proposal", "propose", "selector_of"]

_INDEX = re.compile(r"^s\d+_")


# ---------------------------------------------------------------------------------------
# records -> cases
# ---------------------------------------------------------------------------------------
def _case_of(record: dict[str, Any]):
    """What the lookup needs of a record's case, read from the record's fields (None: the test
    runs no case). A record written without them (an old run) gets them back from its ids in
    :func:`interop.records.sources.imported_fields`, the one importer."""
    fields = with_imported_fields(record)
    kind, operator, label = fields.get("kind"), fields.get("operator"), fields.get("label")
    if not kind or not operator or label is None:
        return None
    return types.SimpleNamespace(kind=kind, operator=operator, label=label, phases=tuple(fields.get("phases") or ()),
                                 backend=fields.get("backend") or "cpu", id=fields.get("case") or "",
                                 params={"dtype": fields.get("dtype") or "float32"})


def selector_of(case) -> str:
    """The selector a new row gives a case: its label (OpInfo: any sample index)."""
    label = _INDEX.sub("s*_", case.label) if case.kind == "opinfo" else case.label
    return f"{case.operator}:{label}"


def _outcome(record: dict[str, Any]) -> str:
    return str(record.get("outcome"))  # said once where the record is written or read (records.outcome)


# ---------------------------------------------------------------------------------------
# the proposal
# ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class Proposal:
    release: str
    table_dir: str
    run_dir: str
    #: each change: action, file, why, cases, and the row before/after
    changes: list[dict[str, Any]]
    #: (file, row index, operator, cases) of the release's rows no case reached
    unreached: list[dict[str, Any]]
    #: failures that could not become a row, and why
    left_out: list[dict[str, Any]]
    #: path -> (sha256 of the text now, the proposed text; "" removes the file)
    files: dict[str, tuple[str, str]]
    #: why the run is incomplete (interrupted, a dead worker...), None when it ran to its end: a
    #: proposal from a partial run says so
    incomplete: str | None = None
    #: the proposal in terms of defects (:mod:`.ledger`): ``new`` (a defect no row names yet),
    #: ``fixed`` (every row naming it is fixed), ``changed`` (its rows move: reworded, widened,
    #: narrowed, selectors dropped, a row's defect id set or changed), each a list of
    #: ``{"id", "title", "rows", "cases"}``
    defects: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for change in self.changes:
            out[change["action"]] = out.get(change["action"], 0) + 1
        return dict(out, unreached=len(self.unreached), left_out=len(self.left_out))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _run_release(run: RunRecords, release: str | None) -> str:
    release = release or run.session.get("aidge_release") or (run.session.get("versions") or {}).get("aidge_core")
    if not release:
        raise ValueError(f"{run.source}: the run does not say which Aidge release it ran on (session.json has no "
                         "versions.aidge_core): pass --release")
    return str(release)


def propose(run_dir: str | Path, table_dir: str | Path | None = None, release: str | None = None) -> Proposal:
    """The proposal for the run in ``run_dir`` against the table in ``table_dir`` (default: the
    shipped one). The rows are read as the run's sessions read them: for the route to ONNX its
    records name (``exporter``; rows with ``exporters`` apply to their routes only)."""
    run_dir = Path(run_dir)
    run = load_run(run_dir)
    if run is None:
        raise FileNotFoundError(f"{run_dir}: no records.jsonl (run the suite with records first)")
    routes = sorted({r.get("exporter") or "auto" for r in run.records if r.get("kind")})
    if len(routes) > 1:
        raise ValueError(f"{run_dir}: its records come from sessions on several routes to ONNX ({routes}): "
                         "propose from each route's run on its own")
    saved = given(EXPORTER_ENV)
    os.environ[EXPORTER_ENV] = routes[0] if routes else "auto"
    try:
        return _propose(run_dir, run, table_dir, release)
    finally:
        if saved is None:
            os.environ.pop(EXPORTER_ENV, None)
        else:
            os.environ[EXPORTER_ENV] = saved


def _propose(run_dir: Path, run: RunRecords, table_dir, release) -> Proposal:
    release = _run_release(run, release)
    table_dir = Path(table_dir or ft.TABLE_DIR)
    everything = list(ft.load_table(table_dir))
    current = [e for e in everything if ft.release_matches(e.aidge, release)]
    others = [e for e in everything if not ft.release_matches(e.aidge, release)]

    # rows as data, per file, to edit
    files = {path: json.loads(path.read_text(encoding="utf-8")) for path in sorted(table_dir.glob("*/*.json"))}
    changes: list[dict[str, Any]] = []
    left_out: list[dict[str, Any]] = []
    reached: dict[int, list[tuple[str, str, str]]] = {}  # id(entry) -> [(selector, case id, outcome)]
    new_rows: dict[tuple, dict[str, Any]] = {}
    widened: dict[int, dict[str, Any]] = {}
    edits: dict[tuple, dict[str, Any]] = {}
    #: rows attributed to Aidge whose cases' exports onnx or onnxruntime refuses (the reproducer's export check)
    refused: dict[int, dict[str, Any]] = {}

    #: id(entry) -> the ledger's defect ids of the Aidge findings it decided (xfailed) or met (failed)
    row_defects: dict[int, dict[str, int]] = {}
    titles: dict[str, str] = {}
    for record in run.records:
        case = _case_of(record)
        if case is None:
            continue
        outcome = _outcome(record)
        entry = expected_failure(case, case.backend, case.phases, table=current)
        finding = None
        if is_aidge_finding(record):
            ident = identify(record)
            finding = ident["id"]
            titles[finding] = ident["title"]
        if entry is not None:
            reached.setdefault(id(entry), []).append((entry.selector_for(case.operator, case.label), case.id, outcome))
            if finding and outcome == "xfailed":
                counts = row_defects.setdefault(id(entry), {})
                counts[finding] = counts.get(finding, 0) + 1
            repro = record.get("reproducer") if isinstance(record.get("reproducer"), dict) else {}
            # an error row only: a mismatch's attribution is the comparator's own (an EquivalenceError carries it,
            # and a row that disagrees with it fails the case: expected_failures.disagreements). What an invalid
            # graph does not excuse (a crash, a hang, a missing importer) is the oracle's one rule
            if outcome == "xfailed" and repro.get("export_valid") is False and row_attribution(entry.attribution, entry.category, entry.phase) == "aidge" \
                    and entry.category not in ("outputs_differ", "gradients_differ", "output_shape_differs",
                                               "training_diverges") and invalid_graph_excuses(entry.category):
                refused.setdefault(id(entry), {"entry": entry, "cases": [],
                                               "why": record.get("attribution_reason") or ""})["cases"].append(case.id)
        if outcome not in ("failed", "error"):
            continue
        old = _row_that_says_it(others, case, record)
        if old is not None and (entry is None or PHASES.index(old.phase) < PHASES.index(entry.phase)):
            widened.setdefault(id(old), {"entry": old, "cases": []})["cases"].append(case.id)
            continue
        if entry is not None and _row_that_says_it([entry], case, record) is entry:
            left_out.append({"case": case.id, "why": f"{Path(entry.file).name} row {entry.index} says this failure, "
                                                     "but the test was not marked (it takes no case object?)"})
            continue
        defect = finding
        finding = quote_of(record)
        if finding is None or isinstance(finding, str):
            left_out.append({"case": case.id, "why": finding or "no quote"})
            continue
        operator, phase, category, quote, attribution = finding
        if entry is not None and PHASES.index(phase) >= PHASES.index(entry.phase):
            # the row's phase is reached and fails otherwise (reworded, another category), or now
            # passes and the case fails later: the row is edited. A failure before the row's phase is
            # a defect of its own (a new row; the row stays for its phase).
            key = (id(entry), phase, category, quote, attribution)
            edit = edits.setdefault(key, {"entry": entry, "phase": phase, "category": category, "quote": quote,
                                          "attribution": attribution, "cases": []})
            edit["cases"].append(case.id)
            continue
        dtype = case.params["dtype"]
        # a run on one route (--exporter=torchscript / dynamo) says what that route meets
        route = record.get("exporter") or "auto"
        key = (case.kind, operator, phase, category, quote, attribution, case.backend,
               dtype if case.kind == "opinfo" else None, route, defect)
        row = new_rows.setdefault(key, _say_who_saw({
                                        "source": case.kind, "operator": operator, "phase": phase,
                                        "category": category, "quote": quote,
                                        **({"defect": defect} if defect else {}), "attribution": attribution,
                                        "aidge": f"=={release}" if others else f">={release}",
                                        "backends": [case.backend],
                                        **({"dtypes": [dtype]} if case.kind == "opinfo" else {}),
                                        **({"exporters": [route]} if route != "auto" else {}),
                                        # no note: one says something specific about its row, or nothing
                                        # (a placeholder asking for one landed unedited on 26 rows)
                                        "cases": []}))
        selector = selector_of(case)
        if selector not in row["cases"]:
            row["cases"].append(selector)
        if ft.SAMPLE_HASH.search(selector):
            row["sample_hash"] = True

    # --- apply the decisions to the rows in memory ---------------------------------------
    by_file = {path: data["rows"] for path, data in files.items()}

    def locate(entry) -> tuple[Path, int]:
        return Path(entry.file), entry.index

    for item in widened.values():
        path, index = locate(item["entry"])
        row = by_file[path][index]
        before = dict(row)
        row["aidge"] = widen(row["aidge"], release)
        changes.append({"action": "widen", "file": str(path), "row": index, "operator": row["operator"],
                        "before": before["aidge"], "after": row["aidge"], "cases": sorted(item["cases"]),
                        "why": f"the row's failure reproduces on Aidge {release}"})
    for key, item in refused.items():
        hits = reached.get(key, [])
        if len(set(item["cases"])) != len({h[1] for h in hits if h[2] == "xfailed"}):
            continue  # some of the cases it decides have a valid export: the row is not the exporter's alone
        path, index = locate(item["entry"])
        row = by_file[path][index]
        reason = item["why"].removeprefix("the exported graph is invalid, so Aidge is not blamed: ")
        row["attribution"] = "export"
        row["note"] = (f"{row.get('note', '')} [Export, not Aidge: the exported graph of every case the run reached "
                       f"is refused by onnx's checker or onnxruntime ({run_dir.name}): {reason[:300]}]").strip()
        changes.append({"action": "attribute", "file": str(path), "row": index, "operator": row["operator"],
                        "before": {"attribution": item["entry"].attribution}, "after": {"attribution": "export"},
                        "cases": sorted(item["cases"]),
                        "why": f"onnx's checker or onnxruntime refuses the export of each of its cases: {reason[:200]}"})
    split_rows: list[dict[str, Any]] = []
    by_entry: dict[int, list[dict[str, Any]]] = {}
    for item in edits.values():
        by_entry.setdefault(id(item["entry"]), []).append(item)
    for items in by_entry.values():
        entry = items[0]["entry"]
        path, index = locate(entry)
        row = by_file[path][index]
        quotes = [row["quote"]] if isinstance(row["quote"], str) else list(row["quote"])
        failing = {c for item in items for c in item["cases"]}
        old_way = [h for h in reached.get(id(entry), ()) if h[2] == "xfailed" and h[1] not in failing]
        held = [r for r in sorted({*RELEASES, release}) if ft.release_matches(row["aidge"], r)]
        cases = sorted(failing)
        if len(items) == 1 and (held == [release] or not old_way):
            item = items[0]
            what = {k: item[k] for k in ("phase", "category") if row.get(k) != item[k]}
            if row_attribution(row.get("attribution"), row.get("category"), row.get("phase")) \
                    != row_attribution(item["attribution"], item["category"], item["phase"]):
                what["attribution"] = item["attribution"]
            if item["quote"] not in quotes:
                what["quote"] = item["quote"]
            if held == [release]:  # the row is this release's alone: edited in place
                changes.append({"action": "edit", "file": str(path), "row": index, "operator": row["operator"],
                                "before": {k: row.get(k) for k in what}, "after": what, "cases": cases,
                                "why": f"its cases fail another way on Aidge {release} (Aidge reworded its error, or "
                                       "the failure moved)"})
                row.update(what)
                _say_who_saw(row)
            else:  # other releases keep the row as it is; this release gets its own
                before = row["aidge"]
                row["aidge"] = narrow(row["aidge"], release) or row["aidge"]
                changes.append({"action": "narrow", "file": str(path), "row": index, "operator": row["operator"],
                                "before": before, "after": row["aidge"], "cases": cases,
                                "why": f"on Aidge {release} its cases fail another way ({', '.join(sorted(what))}): "
                                       "a row of its own below"})
                split_rows.append(_say_who_saw(dict(
                    row, **what, aidge=f"=={release}",
                    note=f"{row.get('note', '')} [On Aidge {release}: {', '.join(sorted(what))} "
                         f"differ, proposed by python -m interop.triage from {run_dir.name}.]".strip())))
        elif all((i["phase"], i["category"], i["attribution"] or row.get("attribution"))
                 == (row["phase"], row["category"], row.get("attribution") or i["attribution"]) for i in items):
            new = [i["quote"] for i in items if i["quote"] not in quotes]
            changes.append({"action": "edit", "file": str(path), "row": index, "operator": row["operator"],
                            "before": {"quote": row["quote"]}, "after": {"quote": quotes + new}, "cases": cases,
                            "why": f"some of its cases fail with other words on Aidge {release}: either quote matches"})
            row["quote"] = quotes + new
        else:
            left_out.extend({"case": c, "why": f"{path.name} row {index} ({row['operator']}): its cases fail in "
                                               f"several ways on Aidge {release}; split the row by hand"} for c in cases)
    deleted: set[tuple[Path, int]] = set()
    for entry in current:
        hits = reached.get(id(entry))
        path, index = locate(entry)
        if not hits:
            continue  # listed as unreached below
        passed = [h for h in hits if h[2] in ("xpassed", "passed")]
        failing = [h for h in hits if h[2] not in ("xpassed", "passed", "skipped")]
        if passed and not failing:
            row = by_file[path][index]
            after = narrow(row["aidge"], release)
            changes.append({"action": "fixed", "file": str(path), "row": index, "operator": row["operator"],
                            "before": row["aidge"], "after": after, "cases": sorted(h[1] for h in passed),
                            "why": f"every case of the row the run reached passed on Aidge {release} (strict XPASS)"})
            if after is None:
                deleted.add((path, index))
            else:
                row["aidge"] = after
        elif passed:
            fixed = {h[0] for h in passed} - {h[0] for h in failing}
            if fixed:
                row = by_file[path][index]
                row["cases"] = [c for c in row["cases"] if c not in fixed]
                changes.append({"action": "drop_selectors", "file": str(path), "row": index,
                                "operator": row["operator"], "before": sorted(fixed), "after": None,
                                "cases": sorted(h[1] for h in passed if h[0] in fixed),
                                "why": "only passing cases matched these selectors"})
    for entry in current:
        counts = row_defects.get(id(entry))
        path, index = locate(entry)
        if not counts or (path, index) in deleted:
            continue
        best = max(sorted(counts), key=lambda d: counts[d])
        row = by_file[path][index]
        if row.get("defect") != best:
            others = {d: n for d, n in counts.items() if d != best}
            changes.append({"action": "defect", "file": str(path), "row": index, "operator": row["operator"],
                            "before": row.get("defect"), "after": best,
                            "cases": sorted(h[1] for h in reached.get(id(entry), ()) if h[2] == "xfailed"),
                            "why": f"its cases fail by defect {best} ({titles.get(best, '?')}): the ledger's signature "
                                   "of their records" + (f"; {sum(others.values())} of them by other defects "
                                                         f"({', '.join(sorted(others))}): split the row by hand"
                                                         if others else "")})
            row["defect"] = best
    unreached = [{"file": str(Path(e.file)), "row": e.index, "operator": e.operator, "cases": list(e.cases)}
                 for e in current if id(e) not in reached and _run_collects(e, run)]
    for row in split_rows + sorted(new_rows.values(),
                                   key=lambda r: (r["source"], r["operator"].lower(), r["phase"], r["quote"])):
        row["cases"].sort()
        entry = ft.entry_of(row)
        path = table_dir / release / f"{ft.file_stem(entry)}.json"  # a new row lives with its release
        files.setdefault(path, {"release": path.parent.name, "rows": []})
        by_file.setdefault(path, files[path]["rows"])
        by_file[path].append(row)
        changes.append({"action": "add", "file": str(path), "row": len(by_file[path]) - 1,
                        "operator": row["operator"], "before": None, "after": row, "cases": list(row["cases"]),
                        "why": f"a row of its own for Aidge {release} (see the narrow above)"
                        if any(row is r for r in split_rows) else f"unexpected failure on Aidge {release}, no row"})
    out_files: dict[str, tuple[str, str]] = {}
    for path, data in files.items():
        rows = [r for i, r in enumerate(data["rows"]) if (path, i) not in deleted]
        old_text = path.read_text(encoding="utf-8") if path.exists() else ""
        new_text = ft.format_rows(data["release"], rows) if rows else ""
        if new_text != old_text:
            out_files[str(path)] = (_sha(old_text), new_text)
    incomplete = None if run.complete else (run.session.get("ended") or "the run did not finish")
    return Proposal(release, str(table_dir), str(run_dir), changes, unreached, left_out, out_files, incomplete,
                    _defect_changes(changes, everything, by_file, deleted, titles))


def _defect_changes(changes: list[dict[str, Any]], everything, by_file, deleted, titles) -> dict[str, list]:
    """The proposal in terms of defects: new, fixed, changed (see :attr:`Proposal.defects`)."""
    def ref(change) -> str:
        return f"{Path(change['file']).parent.name}/{Path(change['file']).name}#{change['row']}"

    named = {e.defect for e in everything if e.defect}
    out: dict[str, dict[str, dict[str, Any]]] = {"new": {}, "fixed": {}, "changed": {}}

    def note(bucket: str, did: str | None, change) -> None:
        if not did:
            return
        item = out[bucket].setdefault(did, {"id": did, "title": titles.get(did, ""), "rows": [], "cases": 0})
        item["rows"].append(ref(change))
        item["cases"] += len(change.get("cases") or ())

    fixed_rows: dict[str, list] = {}
    for change in changes:
        row = (by_file.get(Path(change["file"])) or [])
        current = row[change["row"]] if change["row"] < len(row) else {}
        did = change["after"].get("defect") if change["action"] == "add" and isinstance(change["after"], dict) \
            else current.get("defect") if isinstance(current, dict) else None
        if change["action"] == "add":
            note("new" if did not in named else "changed", did, change)
        elif change["action"] == "fixed":
            entry = next((e for e in everything if Path(e.file) == Path(change["file"]) and e.index == change["row"]),
                         None)
            did = entry.defect if entry is not None else did
            fixed_rows.setdefault(did or "", []).append(change)
        else:
            note("changed", did or change.get("after") if change["action"] == "defect" else did, change)
    for did, rows in fixed_rows.items():
        still = [e for e in everything if e.defect == did and (Path(e.file), e.index) not in deleted
                 and not any(Path(c["file"]) == Path(e.file) and c["row"] == e.index for c in rows)]
        for change in rows:
            note("changed" if still else "fixed", did, change)
    return {bucket: sorted(items.values(), key=lambda i: (-i["cases"], i["id"])) for bucket, items in out.items()}


def _say_who_saw(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with ``detected_by`` as its (first) quote calls for (:func:`~interop.cases.failure_table.detected_by`)."""
    quote = row["quote"] if isinstance(row["quote"], str) else row["quote"][0]
    row.pop("detected_by", None)
    check = ft.detected_by(row["category"], quote)
    if check:
        row["detected_by"] = check
    return row


def _run_collects(entry, run: RunRecords) -> bool:
    """Whether the run was one that collects ``entry``'s cases (a shard row needs its shard run)."""
    if not entry.run:
        return True
    if entry.run == ft.SHARD_RUN:
        return run.session.get("shard") is not None and "opinfo" in " ".join(run.session.get("args") or [])
    # another named run (more samples of each entry): the run collects the row's cases when it
    # holds a record of one of them, whatever its outcome
    return any(r.get("kind") == entry.kind and entry.covers(entry.kind, str(r.get("operator") or ""),
                                                            normalized_label(str(r.get("case_key") or "")),
                                                            r.get("backend") or "cpu")
               for r in run.records)


def _row_that_says_it(entries, case, record: dict[str, Any]):
    """The earliest-phase row among ``entries`` that would accept this failure as the guard does
    (:func:`~interop.cases.expected_failures.quotes_failure`, no
    :func:`~interop.cases.expected_failures.disagreements`)."""
    message = record.get("message") or ""
    hits = [e for e in entries
            if e.covers(case.kind, case.operator, case.label, case.backend, case.params["dtype"])
            and quotes_failure(e, message)
            and not disagreements(e, record.get("category"), record.get("phase"), record.get("attribution"))]
    return min(hits, key=lambda e: PHASES.index(e.phase), default=None)
