"""The ONNX conformance scoreboard of a run: per ONNX operator, onnx's node tests passed / run, as
the ONNX backend scoreboard (onnx/backend-scoreboard) shows a backend's line, with each failure's
category and the ledger defects of its failing cases (each linked to its entry of the run's
``defects.html``); then the model test groups (pytorch-converted, pytorch-operator, simple, light)
and the skips by reason.

Read from a run's records (``records.jsonl``: the source's cases, kind ``onnx_backend``), never from
pytest's console. A failure the table expects (xfailed) counts as a failure, by its category. A
failing case's defects are the ledger's entries that list it (the run's ``defects.json``: the ids
``defects.html`` has an anchor for); without a ledger, its table row's ``defect``.

A findings run (:mod:`interop.reporting.run`) writes ``conformance.json`` / ``.md`` / ``.html`` when
its records hold the source, linked from the run's other pages (``porting.NAV``); for an existing
run folder:

    python -m interop.reporting.onnx_scoreboard RUN_DIR     # writes RUN_DIR/conformance.json, .md, .html

Nothing is printed but the paths written; nothing is written outside RUN_DIR.
"""
from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable

from ..cases.case import Case
from ..cases.expected_failures import expected_failure
from ..records.store import write_atomically
from . import text_escape
from .pages import render
from .porting import defects_by_case, link_run_pages, load_defects

__all__ = ["scoreboard", "render_markdown", "render_html", "write_scoreboard", "main", "CONFORMANCE_FILES"]

#: the files of the scoreboard in a run folder
CONFORMANCE_FILES = ("conformance.json", "conformance.md", "conformance.html")

_FAILED = ("failed", "xfailed", "error")


def _defect_of(record: dict) -> str | None:
    """The ledger defect of a failed case: its table row's ``defect`` (None without a row, or a row
    naming none)."""
    operator, label = record.get("operator") or "", record.get("case_key") or record.get("label") or ""
    if not operator or not label:
        return None
    case = Case(id=record.get("case") or label, op_class=None, operator=operator, path=label, kind="onnx_backend",
                backend=record.get("backend") or "cpu", test_backward=False, training=False)
    try:
        row = expected_failure(case)
    except Exception:  # noqa: BLE001 - no table for this release: no defect named
        return None
    return getattr(row, "defect", None) if row is not None else None


def _table_defect(record: dict) -> str | None:
    """The defect a failed case's table row names (the record's own copy of the row, else the row
    looked up)."""
    expected = record.get("expected") if isinstance(record.get("expected"), dict) else None
    if expected is not None and "defect" in expected:
        return expected.get("defect") or None
    return _defect_of(record)


def scoreboard(records: Iterable[dict], defects_by_case: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """``{"operators": {op: counts}, "groups": {group: counts}, "skipped": {reason: n}, "totals": counts}``;
    counts: ``run`` (not skipped), ``passed``, ``failed`` (category -> n), ``skipped``, ``defects`` (ids).
    ``defects_by_case``: pytest node id -> the ledger's ids (:func:`interop.reporting.porting.defects_by_case`);
    None: each failed case's table row's ``defect``."""
    def empty():
        return {"run": 0, "passed": 0, "failed": collections.Counter(), "skipped": 0, "defects": set()}

    operators: dict[str, dict] = collections.defaultdict(empty)
    groups: dict[str, dict] = collections.defaultdict(empty)
    totals = empty()
    skipped = collections.Counter()
    for r in records:
        if r.get("kind") != "onnx_backend":
            continue
        case = str(r.get("case") or "")
        group = case.split("_", 2)[1] if case.startswith("onnx_") and case.count("_") >= 2 else "?"
        rows = [groups[group], totals] + ([operators[r.get("operator") or "?"]] if group == "node" else [])
        outcome = r.get("outcome")
        if outcome == "skipped":
            reason = str(r.get("skip_reason") or "no reason").split(":", 1)[0]
            skipped[reason] += 1
            for c in rows:
                c["skipped"] += 1
            continue
        if outcome not in _FAILED:
            defects = []
        elif defects_by_case is not None:
            defects = defects_by_case.get(str(r.get("nodeid") or ""), [])
        else:
            defects = [d for d in [_table_defect(r)] if d]
        for c in rows:
            c["run"] += 1
            if outcome in ("passed", "xpassed"):
                c["passed"] += 1
            elif outcome in _FAILED:
                c["failed"][r.get("category") or "unknown"] += 1
                c["defects"].update(defects)

    def plain(c):
        return {**c, "failed": dict(sorted(c["failed"].items())), "defects": sorted(c["defects"])}

    return {"operators": {k: plain(v) for k, v in sorted(operators.items())},
            "groups": {k: plain(v) for k, v in groups.items()},
            "skipped": dict(skipped.most_common()), "totals": plain(totals)}


def _failed_text(failed: dict) -> str:
    return ", ".join(f"{n} {cat}" for cat, n in sorted(failed.items(), key=lambda kv: -kv[1])) or "-"


def has_source(records: Iterable[dict]) -> bool:
    """Whether ``records`` hold a case of the source (kind ``onnx_backend``)."""
    return any(isinstance(r, dict) and r.get("kind") == "onnx_backend" for r in records)


_SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")


def _linkable(defect: str, linked: set[str] | None) -> bool:
    """An id the run's ledger holds (``defects.html`` has its row), made of characters a link keeps as they are."""
    return linked is not None and defect in linked and bool(_SAFE_ID.fullmatch(defect))


def _page_rows(counts: dict[str, dict], linked: set[str] | None) -> list[dict[str, Any]]:
    """A page's rows (test groups, operators): name, verdict, counts, failures in words, defect ids
    (each with whether it links to the ledger's row)."""
    return [{"name": name, "verdict": _verdict(c), "passed": c["passed"], "run": c["run"], "skipped": c["skipped"],
             "failed": _failed_text(c["failed"]), "defects": [{"id": i, "linked": _linkable(i, linked)}
                                                              for i in c["defects"]]}
            for name, c in counts.items()]


def _page(board: dict, linked: set[str] | None) -> dict[str, Any]:
    t = board["totals"]
    return {"totals": {"passed": t["passed"], "run": t["run"], "skipped": t["skipped"],
                       "failed": _failed_text(t["failed"])},
            "groups": _page_rows(board["groups"], linked), "operators": _page_rows(board["operators"], linked),
            "skipped": list(board["skipped"].items())}


def render_markdown(board: dict, *, linked: set[str] | None = None, lines: Iterable[str] = ()) -> str:
    """``conformance.md``: every record-borne word through :mod:`.text_escape`; ``linked``: the ids the
    run's ledger holds (each one a link to ``defects.html#<id>``; ``templates/conformance.md.j2``)."""
    return render("conformance.md.j2", lines=list(lines), **_page(board, linked))


def _verdict(c: dict) -> str:
    return "none" if not c["run"] else "ok" if c["passed"] == c["run"] else "some" if c["passed"] else "bad"


def render_html(board: dict, *, linked: set[str] | None = None, lines: Iterable[str] = (),
                title: str = "ONNX backend conformance: Aidge") -> str:
    """``conformance.html``: one self-contained page (inline style, no script, nothing fetched), the
    run's navigation at the top, each defect id the ledger holds linked to ``defects.html#<id>``
    (``templates/conformance.html.j2``); record text with its controls escaped
    (:func:`text_escape.controls`), then HTML's characters."""
    return render("conformance.html.j2", page="conformance.html", title=text_escape.controls(title),
                  lines=[text_escape.controls(line) for line in lines], **_page(board, linked))


def write_scoreboard(run_dir: Path, records: Iterable[dict] | None = None, *, lines: Iterable[str] = ()) -> list[Path]:
    """RUN_DIR/conformance.json, .md and .html from ``records`` (default: RUN_DIR/records.jsonl), each
    defect named by the run's ledger (RUN_DIR/defects.json, written before) and linked to its row of
    defects.html; without a ledger, the table rows' defects, unlinked. Nothing written (returns [])
    when the records hold no case of the source."""
    run_dir = Path(run_dir)
    if records is None:
        records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
                   if line.strip()]
    records = [r for r in records if isinstance(r, dict)]
    if not has_source(records):
        return []
    ledger = load_defects(run_dir) if (run_dir / "defects.json").is_file() else None
    board = scoreboard(records, defects_by_case(ledger) if ledger is not None else None)
    linked = {e["id"] for e in ledger} if ledger is not None else None
    lines = list(lines)
    paths = [run_dir / name for name in CONFORMANCE_FILES]
    write_atomically(paths[0], json.dumps(dict(board, ledger=ledger is not None), indent=1) + "\n")
    write_atomically(paths[1], render_markdown(board, linked=linked, lines=lines))
    write_atomically(paths[2], render_html(board, linked=linked, lines=lines))
    return paths


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m interop.reporting.onnx_scoreboard RUN_DIR\n")
        return 2
    try:
        written = write_scoreboard(Path(args[0]))
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"error: {text_escape.terminal(exc)}\n")
        return 2
    if not written:
        sys.stderr.write(f"{text_escape.terminal(args[0])}: no case of the ONNX backend tests (kind onnx_backend)\n")
        return 1

    link_run_pages(Path(args[0]))  # the run's other pages link the scoreboard now
    sys.stdout.write("".join(f"{text_escape.terminal(p)}\n" for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
