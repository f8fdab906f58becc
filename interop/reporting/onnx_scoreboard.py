"""The ONNX conformance scoreboard of a run: per ONNX operator, onnx's node tests passed / run, as
the ONNX backend scoreboard (onnx/backend-scoreboard) shows a backend's line, with each failure's
category and the ledger defects its table rows name; then the model test groups (pytorch-converted,
pytorch-operator, simple, light) and the skips by reason.

Read from a run's records (``records.jsonl``: the source's cases, kind ``onnx_backend``), never from
pytest's console. A failure the table expects (xfailed) counts as a failure, by its category.

    python -m interop.reporting.onnx_scoreboard RUN_DIR     # writes RUN_DIR/onnx-scoreboard.md and .json

Nothing is printed but the two paths; nothing is written outside RUN_DIR.
"""
from __future__ import annotations

import collections
import json
import sys
from pathlib import Path
from typing import Any, Iterable

__all__ = ["scoreboard", "render_markdown", "write_scoreboard", "main"]

_FAILED = ("failed", "xfailed", "error")


def _defect_of(record: dict) -> str | None:
    """The ledger defect of a failed case: its table row's ``defect`` (None without a row, or a row
    naming none)."""
    from ..cases.case import Case
    from ..cases.expected_failures import expected_failure

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


def scoreboard(records: Iterable[dict]) -> dict[str, Any]:
    """``{"operators": {op: counts}, "groups": {group: counts}, "skipped": {reason: n}, "totals": counts}``;
    counts: ``run`` (not skipped), ``passed``, ``failed`` (category -> n), ``skipped``, ``defects`` (ids)."""
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
        defect = _defect_of(r) if outcome in _FAILED else None
        for c in rows:
            c["run"] += 1
            if outcome in ("passed", "xpassed"):
                c["passed"] += 1
            elif outcome in _FAILED:
                c["failed"][r.get("category") or "unknown"] += 1
                if defect:
                    c["defects"].add(defect)

    def plain(c):
        return {**c, "failed": dict(sorted(c["failed"].items())), "defects": sorted(c["defects"])}

    return {"operators": {k: plain(v) for k, v in sorted(operators.items())},
            "groups": {k: plain(v) for k, v in groups.items()},
            "skipped": dict(skipped.most_common()), "totals": plain(totals)}


def _failed_text(failed: dict) -> str:
    return ", ".join(f"{n} {cat}" for cat, n in sorted(failed.items(), key=lambda kv: -kv[1])) or "-"


def render_markdown(board: dict) -> str:
    t = board["totals"]
    lines = ["# ONNX backend conformance: Aidge", "",
             f"{t['passed']} passed of {t['run']} run ({t['skipped']} skipped): "
             f"{_failed_text(t['failed'])}.", "",
             "| group | passed / run | failed by category | skipped |", "|---|---|---|---|"]
    for group, c in board["groups"].items():
        lines.append(f"| {group} | {c['passed']} / {c['run']} | {_failed_text(c['failed'])} | {c['skipped']} |")
    lines += ["", "Skipped, by reason:", ""] + [f"- {reason}: {n}" for reason, n in board["skipped"].items()]
    lines += ["", "## Node tests per ONNX operator", "",
              "| operator | passed / run | failed by category | skipped | defects |", "|---|---|---|---|---|"]
    for op, c in board["operators"].items():
        lines.append(f"| {op} | {c['passed']} / {c['run']} | {_failed_text(c['failed'])} | {c['skipped']} | "
                     f"{' '.join(c['defects']) or '-'} |")
    return "\n".join(lines) + "\n"


def write_scoreboard(run_dir: Path) -> list[Path]:
    """RUN_DIR/onnx-scoreboard.md and .json from RUN_DIR/records.jsonl."""
    from ..records.store import write_atomically

    run_dir = Path(run_dir)
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    board = scoreboard(records)
    md, js = run_dir / "onnx-scoreboard.md", run_dir / "onnx-scoreboard.json"
    write_atomically(md, render_markdown(board))
    write_atomically(js, json.dumps(board, indent=1) + "\n")
    return [md, js]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m interop.reporting.onnx_scoreboard RUN_DIR\n")
        return 2
    try:
        written = write_scoreboard(Path(args[0]))
    except OSError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    sys.stdout.write("".join(f"{p}\n" for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
