"""Keeping the expected-failure table from a run's records: a proposal reviewed as a diff.

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

:func:`write_proposal` writes ``proposal.json`` (the whole new text of every changed file, with
the hash of the text it replaces) and ``proposal.diff`` (a unified diff, what a maintainer
reads) into the run's own folder; :func:`apply_proposal` writes the reviewed proposal into the
table, all its files or none: it refuses, naming the proposal and the key, a file outside the table
folder or reached through a link, a file that changed since, rows the table's own validator
refuses, a proposal nested too deeply; nothing is written until every file is checked.
"""
from __future__ import annotations

import dataclasses
import difflib
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
from ..records.store import RunRecords, load_run, write_atomically
from ..registry.identify import identify, identify_row, signature_of
from ..oracle.attribution import invalid_graph_excuses  # what an invalid graph does not excuse: the one rule
from .ledger import is_aidge_finding
from ..records.sources import with_imported_fields  # the one importer of records without case fields
from .triage import quote_of

__all__ = ["Proposal", "propose", "write_proposal", "apply_proposal", "release_diff", "widen", "narrow",
           "PROPOSAL_FILE", "DIFF_FILE", "ProposalError"]

PROPOSAL_FILE = "proposal.json"
DIFF_FILE = "proposal.diff"
#: the Aidge releases the project follows (interop/aidge_releases.json, the one list; nox -s release-matrix):
#: what a narrowed range is checked against
RELEASES = tuple(json.loads((Path(__file__).resolve().parents[1] / "aidge_releases.json").read_text(encoding="utf-8"))
                 ["releases"])
_INDEX = re.compile(r"^s\d+_")


# ---------------------------------------------------------------------------------------
# release ranges
# ---------------------------------------------------------------------------------------
def _alternatives(spec) -> list[str]:
    return [spec] if isinstance(spec, str) else list(spec)


def _pack(alternatives: list[str]):
    return alternatives[0] if len(alternatives) == 1 else alternatives


def _bounds(alternative: str, op: str) -> list[str]:
    return [s.strip()[len(op):] for s in alternative.split(",") if s.strip().startswith(op)
            and not s.strip().startswith(op + "=")]


def widen(spec, release: str):
    """``spec`` made to hold ``release`` too: a lower bound just above it moves down to it,
    else ``==release`` is added as an alternative."""
    from packaging.version import Version

    if ft.release_matches(spec, release):
        return spec
    alternatives = _alternatives(spec)
    for i, alt in enumerate(alternatives):
        lower = _bounds(alt, ">=")
        if len(lower) == 1 and Version(release) < Version(lower[0]):
            candidate = alt.replace(f">={lower[0]}", f">={release}")
            if ft.release_matches(candidate, release):
                alternatives[i] = candidate
                return _pack(alternatives)
    return _pack(alternatives + [f"=={release}"])


def narrow(spec, release: str, releases=RELEASES):
    """``spec`` without ``release`` (fixed there): ``==release`` alternatives go; where
    ``release`` is the first known release an alternative holds, it starts at the next one;
    where it is the newest, it ends before it (``<release``); else ``!=release``. None when no
    known release is left."""
    from packaging.version import Version

    known = sorted({*releases, release}, key=Version)
    out = []
    for alt in _alternatives(spec):
        if not ft.release_matches(alt, release):
            out.append(alt)
            continue
        if alt.strip() == f"=={release}":
            continue
        held = [r for r in known if ft.release_matches(alt, r)]
        rest = [r for r in held if r != release]
        if rest and held[0] == release and f">={release}" in alt:  # the first release it held: starts later
            out.append(alt.replace(f">={release}", f">={rest[0]}"))
        elif held and held[-1] == release:
            out.append(f"{alt},<{release}")
        else:
            out.append(f"{alt},!={release}")
    out = [alt for alt in out if any(ft.release_matches(alt, r) for r in known)]
    return _pack(out) if out else None


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
    from ..exporters import EXPORTER_ENV

    run_dir = Path(run_dir)
    run = load_run(run_dir)
    if run is None:
        raise FileNotFoundError(f"{run_dir}: no records.jsonl (run the suite with records first)")
    routes = sorted({r.get("exporter") or "auto" for r in run.records if r.get("kind")})
    if len(routes) > 1:
        raise ValueError(f"{run_dir}: its records come from sessions on several routes to ONNX ({routes}): "
                         "propose from each route's run on its own")
    saved = os.environ.get(EXPORTER_ENV)
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


def proposal_diff(proposal: Proposal) -> str:
    out = []
    for path, (_, new_text) in sorted(proposal.files.items()):
        old = Path(path).read_text(encoding="utf-8").splitlines(keepends=True) if Path(path).exists() else []
        rel = _relative(path, proposal.table_dir)
        out.extend(difflib.unified_diff(old, new_text.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"))
    return "".join(out)


def _relative(path: str, table_dir: str) -> str:
    try:
        return str(Path(path).relative_to(Path(table_dir).parent))
    except ValueError:
        return path


def write_proposal(proposal: Proposal, directory: str | Path | None = None) -> tuple[Path, Path]:
    """``proposal.json`` and ``proposal.diff`` in ``directory`` (default: ``<run>/triage``)."""
    directory = Path(directory or Path(proposal.run_dir) / "triage")
    directory.mkdir(parents=True, exist_ok=True)
    data = dataclasses.asdict(proposal)
    data["counts"] = proposal.counts()
    write_atomically(directory / PROPOSAL_FILE, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    write_atomically(directory / DIFF_FILE, proposal_diff(proposal))
    return directory / PROPOSAL_FILE, directory / DIFF_FILE


#: the largest proposal read: 32 MiB (the whole table is 652 KB; a proposal holds the new text of
#: each file it changes, its rows before and after)
MAX_PROPOSAL_BYTES = 32 << 20


class ProposalError(ValueError):
    """A proposal that cannot be applied: one line naming the proposal, the key and why."""


def _proposal_files(path: Path, data: Any, table: Path) -> list[tuple[Path, str, str, str]]:
    """(file, its key in the proposal, sha of the text it replaces, new text) of each file the proposal names, each
    checked: a file of the table (``<table>/<release>/<name>.json``, inside it, no link out),
    two strings."""
    from ..reading import UnsafeInputError, confined

    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise ProposalError(f"{path}: not a triage proposal (no 'files' object)")
    out, seen = [], {}
    for file, value in data["files"].items():
        key = f"files[{file!r}]"
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
            raise ProposalError(f"{path}: {key}: [sha256 of the text it replaces, the new text] (two strings), got "
                                f"{type(value).__name__}")
        target = Path(os.path.abspath(table / file if not Path(file).is_absolute() else file))
        try:
            rel = target.relative_to(Path(os.path.abspath(table)))
        except ValueError:
            rel = None
        if rel is None or len(rel.parts) != 2 or rel.parts[0].startswith(".") or not rel.parts[1].endswith(".json") \
                or rel.parts[1].startswith("."):
            raise ProposalError(f"{path}: {key}: not a file of the table {table} (<release>/<name>.json inside it): "
                                "refused")
        try:
            confined(target, table, missing_ok=True)
        except (UnsafeInputError, OSError) as exc:
            raise ProposalError(f"{path}: {key}: {exc}: refused") from None
        if target in seen:
            raise ProposalError(f"{path}: {key}: the same file as files[{seen[target]!r}]")
        seen[target] = file
        out.append((target, key, value[0], value[1]))
    return out


def _table_of(path: Path, data: dict, table_dir: str | Path | None) -> Path:
    named = data.get("table_dir")
    if not isinstance(named, str) or not named:
        raise ProposalError(f"{path}: key 'table_dir': the table folder the proposal was made against (a string)")
    table = Path(table_dir) if table_dir is not None else Path(named)
    if Path(named).resolve() != table.resolve():
        raise ProposalError(f"{path}: key 'table_dir': made against the table {named}, not {table}: propose again "
                            f"against {table} (or apply it with --table {named})")
    if not table.is_dir():
        raise ProposalError(f"{path}: key 'table_dir': {table} is not a folder")
    return table


def apply_proposal(path: str | Path, table_dir: str | Path | None = None) -> list[str]:
    """Write a (reviewed) proposal into the table, all its files or none. ``table_dir``: the
    table it must have been made against (None: the one it names). Everything is checked before
    anything is written: each file is one of the table's (inside it, no link out), unchanged
    since the proposal was made, and its new rows load with the table's own validator (each
    new text is written to a temporary in its folder and read back by
    :func:`interop.cases.failure_table.read_table_file`); then every temporary is renamed into
    place (a failing rename puts back the files already renamed). Raises
    :class:`ProposalError` (a ``ValueError``), one line naming the proposal and the key, for
    any bad proposal; OSError when the table cannot be written. Returns the files written."""
    from ..reading import UnsafeInputError, loads_json, read_confined, read_user_bytes

    path = Path(path)
    try:
        data = loads_json(read_user_bytes(path, max_bytes=MAX_PROPOSAL_BYTES).decode("utf-8"), path)
    except UnsafeInputError as exc:
        raise ProposalError(str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProposalError(f"{path}: not a JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise ProposalError(f"{path}: not a triage proposal (a JSON object), got {type(data).__name__}")
    table = _table_of(path, data, table_dir)
    files = _proposal_files(path, data, table)
    before: dict[Path, str | None] = {}
    for target, key, sha, text in files:
        try:
            now = read_confined(target, table, max_bytes=MAX_PROPOSAL_BYTES).decode("utf-8") \
                if os.path.lexists(target) else None
        except (UnsafeInputError, OSError, UnicodeDecodeError) as exc:
            raise ProposalError(f"{path}: {key}: {exc}: refused") from None
        if _sha(now or "") != sha:
            raise ProposalError(f"{path}: {key}: the file changed since the proposal was made: propose again")
        before[target] = now
        if text:
            try:
                loads_json(text, f"{path}: {key}")
            except UnsafeInputError as exc:
                raise ProposalError(str(exc)) from None
            except json.JSONDecodeError as exc:
                raise ProposalError(f"{path}: {key}: the new text is not JSON ({exc})") from None
    temporaries: dict[Path, Path] = {}
    made: list[Path] = []  # release folders created for the temporaries
    done: list[Path] = []
    try:
        for target, key, _, text in files:
            if not text:
                continue
            if not target.parent.is_dir():
                target.parent.mkdir()
                made.append(target.parent)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.proposed")
            write_atomically(tmp, text, root=table)
            temporaries[target] = tmp
            try:
                ft.read_table_file(tmp)
            except ft.TableError as exc:
                why = " ".join(str(exc).replace(str(tmp), str(target)).split())
                raise ProposalError(f"{path}: {key}: its rows do not load: {why}") from None
        written = []
        for target, _, _, text in files:  # every file checked: now all of them, or none
            if text:
                os.replace(temporaries.pop(target), target)
            elif before[target] is not None:
                target.unlink()
            else:
                continue
            done.append(target)
            written.append(str(target))
    except BaseException:
        for target in done:  # put back what was renamed before the failure
            if before[target] is None:
                target.unlink(missing_ok=True)
            else:
                write_atomically(target, before[target], root=table)
        raise
    finally:
        for tmp in temporaries.values():
            tmp.unlink(missing_ok=True)
        for folder in made:
            if not done:
                try:
                    folder.rmdir()
                except OSError:
                    pass
    ft.forget_loaded()
    try:
        ft.load_table(table)  # the whole table still loads and validates
    except ft.TableError as exc:
        raise ProposalError(f"{path}: applied, but the table no longer loads: {exc}") from None
    return written


def release_diff(old: str, new: str, table_dir: str | Path | None = None, backend: str | None = "cpu",
                 all_runs: bool = False) -> str:
    """Markdown: the changelog from Aidge ``old`` to ``new`` as defects (:mod:`.ledger`): each row
    names its defect (a row that names none: the id of its own signature, :func:`interop.registry.identify.row_signature`).
    A defect is *fixed* when rows of it hold on ``old`` and none on ``new``, *new* when the reverse,
    *changed* when it holds on both but its rows differ (reworded, cases added or gone), and holds
    otherwise. Over the rows of ``backend`` (None: all) and of the default run (``all_runs``: the rows
    of other runs too, such as an OpInfo shard's), so that only what both releases were measured on
    is compared; the rows attributed to the export or to precision are no Aidge defect and are left out."""
    every = ft.load_table(table_dir)
    table = [e for e in every if (all_runs or not e.run) and row_attribution(e.attribution, e.category, e.phase) == "aidge" and (
        backend is None or e.backend is None or backend == e.backend
        or (isinstance(e.backend, tuple) and backend in e.backend))]
    # only the sources both releases' runs were checked on (a source with rows for each of them)
    checked = {e.kind for e in table if ft.release_matches(e.aidge, old)} & \
        {e.kind for e in table if ft.release_matches(e.aidge, new)}
    unchecked = sorted({e.kind for e in table} - checked)
    table = [e for e in table if e.kind in checked]
    defects: dict[str, dict[str, Any]] = {}
    for e in table:
        ident = identify_row(e)
        did = ident["id"]
        d = defects.setdefault(did, {"id": did, "title": ident["title"], "component": ident["component"],
                                     "old": [], "new": []})
        for release, key in ((old, "old"), (new, "new")):
            if ft.release_matches(e.aidge, release):
                d[key].append(e)
    fixed = [d for d in defects.values() if d["old"] and not d["new"]]
    added = [d for d in defects.values() if d["new"] and not d["old"]]
    both = [d for d in defects.values() if d["old"] and d["new"]]
    changed = [d for d in both if {id(e) for e in d["old"]} != {id(e) for e in d["new"]}]
    n_old = sum(1 for d in defects.values() if d["old"])
    n_new = sum(1 for d in defects.values() if d["new"])
    rows_old = sum(len(d["old"]) for d in defects.values())
    rows_new = sum(len(d["new"]) for d in defects.values())
    lines = [f"Aidge defects on {old}: {n_old} ({rows_old} rows); on {new}: {n_new} ({rows_new} rows). "
             f"Fixed in {new}: {len(fixed)}; new in {new}: {len(added)}; holding on both: {len(both)}, "
             f"{len(changed)} of them changed"
             + (f" (backend {backend}" if backend else " (every backend")
             + (", every run" if all_runs else ", the default run's rows; the rows of other runs, such as the full "
                                               "OpInfo run's shard, are left out")
             + f"; the {sum(1 for e in every if (e.attribution or 'aidge') != 'aidge')} rows attributed to the export "
               f"or to precision are no Aidge defect). Sources compared: {', '.join(sorted(checked))}"
             + (f"; left out, as no run of {old} checked them: {', '.join(unchecked)}" if unchecked else "")
             + f". Table: {len(every)} rows in all.", ""]

    def cases(entries) -> int:
        return sum(len(e.cases) for e in entries)

    def table_of(items, key: str, header: str) -> None:
        lines.append(f"**{header}: {len(items)}**")
        lines.append("")
        if not items:
            return
        lines.extend(["| defect | component | what | rows | selectors | quote |", "|---|---|---|---|---|---|"])
        for d in sorted(items, key=lambda d: (-cases(d[key]), d["id"])):
            e = d[key][0]
            quote = e.quotes[0].replace("|", "\\|")
            quote = quote if len(quote) <= 70 else quote[:67] + "..."
            sources = ", ".join(sorted({x.kind for x in d[key]}))
            lines.append(f"| {d['id']} | {d['component']} | {d['title']} ({sources}) | {len(d[key])} | "
                         f"{cases(d[key])} | {quote} |")
        lines.append("")

    table_of(fixed, "old", f"Defects fixed in {new} (rows of {old}, none on {new})")
    table_of(added, "new", f"Defects new in {new} (rows of {new}, none on {old})")
    lines.append(f"**Defects changed from {old} to {new} (rows of both releases, not the same rows): {len(changed)}**")
    lines.append("")
    if changed:
        lines.extend(["| defect | what | rows on " + old + " | rows on " + new + " | selectors " + old + " -> " + new + " |",
                      "|---|---|---|---|---|"])
        for d in sorted(changed, key=lambda d: (-cases(d["new"]), d["id"])):
            lines.append(f"| {d['id']} | {d['title']} | {len(d['old'])} | {len(d['new'])} | "
                         f"{cases(d['old'])} -> {cases(d['new'])} |")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# a row's operator from the records of the cases it holds (issue 42: never a torch name)
# ---------------------------------------------------------------------------------------
_AIDGE_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")
_IMPL_REGISTRAR = re.compile(r"OperatorImpl_\w+?INS_(\d+)(\w+)")


def aidge_operator_of(record: dict[str, Any], run_dir: str | Path | None = None) -> str | None:
    """The operator a failure's record blames: the Aidge operator the ledger's signature reads
    (:func:`interop.registry.identify.signature_of`: the first diverging node, the operator Aidge's message names,
    the one node of the smallest graph), or the ONNX op of an import gap. For the empty-tensor
    rows (the signature's "any operator on an empty tensor") the node Aidge ran. Where that is the
    ONNX op of a one-node graph, or nothing, and ``run_dir`` holds the case's bundle, the one Aidge
    type aidge_onnx imports the bundle's graph as (ONNX ``Log`` is Aidge's ``Ln``). None when the
    record names none but the case's torch op."""
    signature = signature_of(record)
    operator = signature["operator"]
    if signature["kind"] == "silently wrong result":
        operator = signature_of(dict(record, error=""))["operator"]
    if not _AIDGE_NAME.fullmatch(str(operator)) or operator == record.get("operator"):
        operator = None
    if operator is None:  # a CPU kernel's registrar: ...OperatorImpl_cpuINS_9Expand_Op... (a length-prefixed name)
        m = _IMPL_REGISTRAR.search(str(record.get("error") or ""))
        if m and m.group(2)[:int(m.group(1))].endswith("_Op"):
            operator = m.group(2)[:int(m.group(1)) - 3]
    repro = record.get("reproducer") if isinstance(record.get("reproducer"), dict) else {}
    import_gap = signature["kind"] in ("no importer", "converter failure")
    if run_dir is not None and not import_gap and (operator is None or operator == repro.get("op")) \
            and isinstance(repro.get("path"), str) and repro.get("written"):
        from ..diagnostics.repro_fields import bundle_aidge_types

        types_ = bundle_aidge_types(Path(run_dir) / repro["path"])
        if types_ and len(types_) == 1:
            operator = types_[0]
    return operator


def row_operators(records, run_dir: str | Path | None = None) -> dict[str, dict[str | None, list[str]]]:
    """``{"<release>/<file>#<index>": {Aidge operator: ["<torch op>:<case key>", ...]}}`` over the
    xfailed records a table row decided (``expected.row``); a record that names no Aidge operator
    counts under None."""
    out: dict[str, dict[str | None, list[str]]] = {}
    for record in records:
        expected = record.get("expected") if isinstance(record.get("expected"), dict) else {}
        ref = expected.get("row")
        if not ref or record.get("outcome") != "xfailed":
            continue
        op = aidge_operator_of(record, run_dir)
        out.setdefault(ref, {}).setdefault(op, []).append(f"{record.get('operator')}:{record.get('case_key')}")
    return out


def operator_changes(by_row: dict[str, dict[str | None, list[str]]], table_dir: str | Path | None = None):
    """What the records say of each reached row whose ``operator`` is not yet CamelCase (a torch
    name): ``(the files' rows, changes)``. A row whose every reached case names the same Aidge
    operator gets it; a row whose cases name several is split, one row per operator, only when
    every selector of the row was reached and holds cases of one operator; any other row is left,
    with why (a case that names no operator, a selector no run reached). Every other key is kept,
    so the rows match what they matched before."""
    table = Path(table_dir) if table_dir else ft.TABLE_DIR
    files: dict[Path, list[dict]] = {}
    changes = []
    for ref in sorted(by_row, key=lambda r: (r.split("#")[0], int(r.split("#")[1]))):
        name, index = ref.split("#")
        path = table / name
        if path not in files:
            files[path] = json.loads(path.read_text(encoding="utf-8"))["rows"]
        row = files[path][int(index)]
        if _AIDGE_NAME.fullmatch(row["operator"]):
            continue  # already an Aidge operator or an ONNX op: a run does not overrule the row's reading
        ops = {op: cases for op, cases in by_row[ref].items() if op is not None}
        change = {"row": ref, "before": row["operator"], "cases": {str(k): len(v) for k, v in by_row[ref].items()}}
        if not ops:
            changes.append(dict(change, after=None, why="no record names an Aidge operator"))
        elif None in by_row[ref]:
            changes.append(dict(change, after=None, why="some of its cases name no Aidge operator"))
        elif len(ops) == 1:
            (op,) = ops
            changes.append(dict(change, after=op))
        else:
            entry = ft.entry_of(row)
            owner: dict[str, set] = {}
            for op, cases in ops.items():
                for case in cases:
                    torch_op, key = case.split(":", 1)
                    owner.setdefault(entry.selector_for(torch_op, normalized_label(key)) or case, set()).add(op)
            if any(len(v) > 1 for v in owner.values()):
                changes.append(dict(change, after=None, why="one selector holds cases of several Aidge operators: "
                                                            + ", ".join(sorted(ops))))
            elif set(_selectors(row)) - set(owner):
                changes.append(dict(change, after=None, why="its cases name several Aidge operators ("
                                    + ", ".join(sorted(ops)) + ") and some of its selectors no run reached"))
            else:
                written = _selectors(row)  # the selector as the entry reads it -> as the row writes it
                changes.append(dict(change, after=sorted(ops), split={
                    op: sorted(written[s] for s, o in owner.items() if o == {op}) for op in sorted(ops)}))
    return files, changes


def _selectors(row: dict) -> dict[str, str]:
    """``{selector as the row's entry matches it (:meth:`ExpectedFailure.selector_for`): selector as
    the row writes it}``: the entry normalises a label (``1.5`` -> ``1_5``)."""
    out = {}
    for written in row["cases"]:
        for op, patterns in ft.entry_of(dict(row, cases=[written])).patterns_by_operator.items():
            for pattern in patterns:
                out[f"{op}:{pattern}"] = written
    return out


def apply_operator_changes(files: dict[Path, list[dict]], changes: list[dict]) -> list[Path]:
    """Write ``changes`` (:func:`operator_changes`) into the table files, each through
    :func:`failure_table.write_table_file` (atomic, :func:`failure_table.format_rows`). A split row
    becomes one row per operator in its place, each with its own selectors."""
    by_file: dict[Path, dict[int, dict]] = {}
    for change in changes:
        if change.get("after") is None:
            continue
        name, index = change["row"].split("#")
        path = next(p for p in files if p.as_posix().endswith(name))
        by_file.setdefault(path, {})[int(index)] = change
    written = []
    for path, edits in by_file.items():
        rows = []
        for index, row in enumerate(files[path]):
            change = edits.get(index)
            if change is None:
                rows.append(row)
            elif isinstance(change["after"], str):
                rows.append(dict(row, operator=change["after"]))
            else:
                for op in change["after"]:
                    mine = set(change["split"][op])
                    rows.append(dict(row, operator=op, cases=[c for c in row["cases"] if c in mine]))
        release = json.loads(path.read_text(encoding="utf-8"))["release"]
        ft.write_table_file(path, release, rows)
        written.append(path)
    return written
