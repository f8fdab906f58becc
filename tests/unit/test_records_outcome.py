"""Issue 46, a strict XPASS said once: the records plugin writes ``outcome: "xpassed"`` (pytest
reports ``failed``), a run written before that is normalised when read (``store._read_lines``),
and the readers (report, support, porting, backends, progress, table triage) read the outcome
and decide nothing; pytest's count check still takes it as ``failed``."""
from __future__ import annotations

import json
import re
from pathlib import Path

from interop.records import outcome
from interop.records.store import load_run, records_counts

ROOT = Path(__file__).resolve().parents[2]
OLD = {"schema": 1, "nodeid": "tests/test_operators.py::test_op[Abs_a]", "case": "Abs_a", "source": "catalog JSON",
       "operator": "Abs", "kind": "operator", "outcome": "failed", "xpass_strict": True, "category": "aidge_error",
       "decided": "table", "attribution": "aidge", "phase": "forward",
       "reports": [{"when": "call", "status": "failed", "duration": 0.01}]}


def test_an_old_runs_strict_xpass_is_read_as_xpassed_and_counted_as_pytest_did(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    passed = dict(OLD, nodeid="tests/test_operators.py::test_op[Abs_b]", case="Abs_b", outcome="passed",
                  xpass_strict=False, reports=[{"when": "call", "status": "passed", "duration": 0.01}])
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (OLD, passed)))
    (run_dir / "session.json").write_text(json.dumps({"complete": True, "pytest_counts": {"failed": 1, "passed": 1}}))
    run = load_run(run_dir)
    assert [r["outcome"] for r in run.records] == ["xpassed", "passed"]
    assert records_counts(run.records)["failed"] == 1 and records_counts(run.records)["xpassed"] == 0
    # a record without its per-phase statuses (a dead worker's) is counted by pytest's outcome too
    assert records_counts([dict(outcome.normalized(OLD), reports=[])])["failed"] == 1


def test_the_readers_read_the_outcome_and_decide_nothing():
    readers = ["reporting/support.py", "reporting/backends.py", "records/progress.py",
               "reporting/report.py", "reporting/porting.py",
               # the table triage
               "reporting/triage_ranges.py", "reporting/triage_propose.py", "reporting/triage_apply.py",
               "reporting/triage_changelog.py", "reporting/triage_operators.py"]
    for name in readers:
        text = (ROOT / "interop" / name).read_text(encoding="utf-8")
        assert not re.search(r"xpass_strict|outcome_of", text), name
    from interop.reporting import porting, report, support

    rec = outcome.normalized(OLD)
    assert report.row_of(rec)["outcome"] == "xpassed"
    assert support._outcome(rec) == "xpassed" and porting._failed_phase(rec) is None
    # written by the plugin: already normalised, and normalising again changes nothing
    assert outcome.normalized(rec) is rec and outcome.outcome_of(rec) == "xpassed"


def test_progress_counts_an_old_part_line_as_xpassed(tmp_path):
    from interop.records import progress

    part = tmp_path / "records.d" / "session-1"
    part.mkdir(parents=True)
    (part / "part-1.jsonl").write_text(json.dumps({**OLD, "event": "record"}) + "\n")
    watcher = progress.Progress(tmp_path, previous=None)
    watcher.poll()
    assert watcher.outcomes["xpassed"] == 1 and watcher.outcomes["failed"] == 0
