"""The pipeline's verdict on a merged findings run (``.gitlab-ci.yml``'s merge jobs; docs/ci.md).

    python ci/gate.py RUNS_DIR [--merge-status N] [--publish DIR] [--complete-only]

RUNS_DIR is ``results/runs`` (the newest ``*-merged-*`` run in it is the one judged) or a run
directory itself (``results/latest``). It prints the report's headline, the defect ledger's new
defects and every unexpected outcome, copies the run's report files (not its reproducers) into
``--publish DIR`` (what a merge request links), then exits:

- the merge's own status when it failed (``--merge-status``: 2 refused, a shard missing or given
  twice, named above by the merge; 3 the merged run is incomplete). A status of 1 with a merged run
  whose run.json says complete is the runner's "unexpected outcomes" (nox says 1 for any failure
  too): the gate counts those itself, below;
- 3 when the run is incomplete (a shard that did not finish: its reasons are printed);
- 1 when a test failed or errored without an expected failure, or a strict expected failure passed
  (the table's row of a fixed defect): what ``nox -s tests-cpu`` fails on, counted from the records
  (not with ``--complete-only``: the full OpInfo and ModuleInfo selections, whose failures the table
  does not all hold, are triage material, ``triage/proposal.diff``);
- 0 otherwise.

The ledger (``defects.json``) is read through the typed model the pages use
(:func:`interop.reporting.models.page_entries`, :class:`~interop.reporting.models.DefectEntry`): a
malformed entry stops the gate naming the file, the entry and the key, as the pages do. So the gate
runs with the CPU stack's python (``.nox/cpu-stack/bin/python``, or a developer's venv), which has
the package and pydantic.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from interop.reporting.models import PageFileError, page_entries

#: a run's files a merge request links (its reproducers stay in the shard jobs' artifacts)
PUBLISHED = ("report.txt", "report.json", "support.html", "support.md", "support.json", "defects.md",
             "defects.json", "defects.html", "porting.html", "porting.md", "porting.json", "run.json",
             "session.json", "records.jsonl", "defects", "triage")
#: the outcomes that fail the gate (a strict XPASS is recorded as ``xpassed``)
UNEXPECTED = ("failed", "error", "xpassed")
SHOWN = 30


def newest_run(path: Path) -> Path | None:
    """``path`` when it is a run (has ``run.json``), else its newest ``*-merged-*`` run."""
    if (path / "run.json").exists():
        return path.resolve()
    runs = sorted(p for p in path.glob("*-merged-*") if p.is_dir())
    return runs[-1] if runs else None


def _json(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"ci/gate.py: {path}: unreadable ({exc})") from None
    if not isinstance(doc, dict):
        raise SystemExit(f"ci/gate.py: {path}: expected a JSON object")
    return doc


def unexpected(run: Path) -> list[tuple[str, str]]:
    """``(outcome, node id)`` of every record whose outcome fails the gate."""
    out = []
    path = run / "records.jsonl"
    if not path.exists():
        return out
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise SystemExit(f"ci/gate.py: {path}:{number}: not JSON") from None
        if rec.get("outcome") in UNEXPECTED:
            out.append((rec["outcome"], f"{rec.get('nodeid')} [{rec.get('backend') or 'cpu'}]"))
    return sorted(out)


def publish(run: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in PUBLISHED:
        source = run / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        elif source.is_file():
            shutil.copy2(source, target / name)
    (target / "RUN").write_text(run.name + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python ci/gate.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--merge-status", type=int, default=0)
    parser.add_argument("--publish", type=Path, default=None)
    parser.add_argument("--complete-only", action="store_true")
    args = parser.parse_args(argv)
    run = newest_run(args.runs)
    if run is None:
        print(f"ci/gate.py: no merged run in {args.runs}: the merge wrote none (exit {args.merge_status}; "
              "its reasons are above: a shard missing or given twice, runs that do not belong together)")
        return args.merge_status or 2
    if args.publish:
        publish(run, args.publish)
        print(f"report files of {run.name} -> {args.publish}")
    meta = _json(run / "run.json")
    report = _json(run / "report.json") if (run / "report.json").exists() else {}
    print(f"merged run: {run.name} (from {len(meta.get('merged_from') or [])} run(s))")
    headline = (report.get("trend") or {}).get("cpu", {}).get("headline")
    if headline:
        print(f"  {headline}")
    defects = report.get("defects") or {}
    if defects:
        print(f"  {defects.get('count')} distinct Aidge defect(s), {defects.get('cases')} case(s)")
    ledger = run / "defects.json"
    if ledger.exists():
        try:
            entries = page_entries(_json(ledger), ledger)
        except PageFileError as exc:
            raise SystemExit(f"ci/gate.py: {exc}") from None
        new = [d for d in entries if d.get("new")]
        print(f"  defects with cases no expected failure holds (new): {len(new)}")
        for d in new[:SHOWN]:
            print(f"    {d.get('id')} {d.get('title')}: {d.get('new')} new case(s)")
    incomplete = list(report.get("incomplete") or []) or ([] if meta.get("complete") else [str(meta.get("ended")
                                                                                              or "incomplete")])
    # the runner's exit 1 (complete, with unexpected outcomes) is judged below, like any complete run
    merge_failed = args.merge_status and not (args.merge_status == 1 and meta.get("complete") is True)
    if merge_failed:
        print(f"FAILED: the merge failed (exit {args.merge_status}; its reasons above)" + (f": {'; '.join(incomplete)}" if incomplete else ""))
        return args.merge_status
    if incomplete:
        print("FAILED: RUN INCOMPLETE: " + "; ".join(incomplete))
        return 3
    if args.complete_only:
        print("complete (unexpected failures are this selection's triage: triage/proposal.diff)")
        return 0
    bad = unexpected(run)
    if bad:
        print(f"FAILED: {len(bad)} unexpected outcome(s) (no expected failure holds them, or a strict one passed):")
        for outcome, nodeid in bad[:SHOWN]:
            print(f"  {outcome}: {nodeid}")
        if len(bad) > SHOWN:
            print(f"  ... and {len(bad) - SHOWN} more (report.txt)")
        return 1
    print("passed: complete, no unexpected failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
