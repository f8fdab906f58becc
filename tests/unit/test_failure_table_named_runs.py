"""Every expected-failure row is reached by a run that is named (issue 42, item 5): the default
run, or the run its ``run`` key names out of :data:`interop.cases.failure_table.NAMED_RUNS`."""
from __future__ import annotations

import json
import os

import pytest

from interop.cases import failure_table as ft


def _row(**over):
    row = {"source": "opinfo", "operator": "Sigmoid", "phase": "forward", "category": "aidge_error",
           "quote": "Aidge does not compute on empty tensors (it returns the previous outputs unchanged)",
           "detected_by": "bridge guard", "attribution": "aidge", "aidge": ">=0.10.1", "backends": ["cpu"],
           "cases": ["sigmoid:s*_1x0x3"]}
    row.update(over)
    return row


def test_a_run_the_project_does_not_name_is_refused_naming_file_row_and_key(tmp_path):
    folder = tmp_path / "0.10.1"
    folder.mkdir()
    path = folder / "opinfo.aidge_error.json"
    path.write_text(json.dumps({"release": "0.10.1", "rows": [_row(run="nightly")]}))
    with pytest.raises(ft.TableError) as err:
        ft.read_table_file(path)
    text = str(err.value)
    assert str(path) in text and "row 0" in text and "key 'run'" in text and "'nightly'" in text
    path.write_text(json.dumps({"release": "0.10.1", "rows": [_row(run="opinfo 2 samples")]}))
    assert ft.read_table_file(path)[0].run == "opinfo 2 samples"


def test_every_opinfo_row_without_a_run_is_reached_by_the_default_selection(monkeypatch):
    """The default run takes the first sample of each entry: a row whose cases only later samples
    hold says which run reaches them (``opinfo 2 samples``), or it would be listed as unreached by
    every default run's triage."""
    from interop.cases import opinfo
    from interop.cases.expected_failures import EXPECTED_FAILURES
    from interop.exporters import EXPORTER_CHOICES, EXPORTER_ENV

    try:
        cases = opinfo.opinfo_cases(cap=1)
    except opinfo.OpInfoUnavailable:
        pytest.skip("torch's OpInfo database cannot be imported")
    rows = [e for e in EXPECTED_FAILURES if e.kind == "opinfo" and not e.run]
    assert rows
    reached = set()
    for route in EXPORTER_CHOICES:
        monkeypatch.setenv(EXPORTER_ENV, route)
        reached |= {id(e) for e in rows if any(e.covers(c.kind, c.operator, c.label, e.backend or "cpu")
                                               for c in cases)}
    unreached = [(e.operator, e.cases[:2]) for e in rows if id(e) not in reached]
    assert not unreached, f"rows no default run reaches and that name no run: {unreached}"


def test_the_triage_lists_a_named_run_row_as_unreached_only_from_a_run_that_collects_its_cases():
    from interop.records.store import RunRecords
    from interop.reporting.triage_propose import _run_collects

    entry = ft.entry_of(_row(run="opinfo 2 samples"))
    default = RunRecords(records=[{"kind": "opinfo", "operator": "sigmoid", "case_key": "s0_20", "backend": "cpu"}],
                         session={"shard": None, "args": ["tests"]}, problems=[], source="x")
    assert not _run_collects(entry, default)
    more = RunRecords(records=default.records + [{"kind": "opinfo", "operator": "sigmoid", "case_key": "s1_1x0x3",
                                                   "backend": "cpu", "outcome": "passed"}],
                      session={"shard": None, "args": ["tests"]}, problems=[], source="x")
    assert _run_collects(entry, more)
    assert _run_collects(ft.entry_of(_row()), default)  # a default row: every run collects it


def test_a_note_says_something_of_its_row_or_nothing():
    """A pointer shared by hundreds of rows (``OpInfo sample; see docs/...``) or the triage's
    request for a note (``Proposed by python -m interop.triage ...: check the reason``) says
    nothing of the row it sits on: 455 such notes were removed on 2026-12-03."""
    import re

    from interop.cases.expected_failures import EXPECTED_FAILURES

    empty = re.compile(r"^(OpInfo sample; see docs/|Proposed by python -m interop\.triage|Forward differs; onnxruntime "
                       r"on the same ONNX model agrees with torch unless|Aidge kills the process in forward \(new class)")
    said = [(e.operator, e.cases[0], e.note[:60]) for e in ft.load_table() if e.note and empty.match(e.note)]
    assert not said
    assert EXPECTED_FAILURES  # the installed release's rows load without their notes
