"""Data of the OpInfo rows of the expected-failure table for the **full run's shard 1/15**
(``INTEROP_OPINFO_SAMPLES=all INTEROP_OPINFO_DTYPES=all INTEROP_OPINFO_SHARD=1/15``: 2,039 of the
30,202 cases, every entry, every dtype), in the format of :mod:`interop.cases._opinfo_failures`:
``(Aidge operator, phase, category, quoted error, attribution, cases)``, kept as data in
``opinfo_shard_1_of_15.json`` next to this module (1,800 case keys).

Proposed by :mod:`interop.reporting.triage` from run 20261201T110414 (torch 2.13.0, Aidge 0.10.1
CPU; 240 rows for 1,800 failed cases), reviewed by reason (the classes new to the suite are in
docs/aidge-notes.md, "The full run, shard 1/15") and re-run: 212 pass, 1,825 strict expected
failures, 0 XPASS. One row per reason and OpInfo entry (missing kernels under
the Aidge operator their error names), so a reason already in ``OPINFO_FAILURES``, quoted the same
way, appears here again for the shard's samples. These rows make ``nox -s opinfo`` on that shard a
strict, fully triaged reference: a fixed Aidge shows up there as an XPASS, a new defect as a
failure. The other 14 shards are not triaged: their report proposes their rows in ``triage.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

_DATA = json.loads((Path(__file__).with_name("opinfo_shard_1_of_15.json")).read_text(encoding="utf-8"))

OPINFO_SHARD_FAILURES: tuple[tuple, ...] = tuple(
    (op, phase, category, error, who, tuple(cases)) for op, phase, category, error, who, cases in _DATA["rows"])

#: Heap-dependent rows (``memory_unsafe``), ``(..., attribution, other categories, cases)``:
#: max_pool2d with a dilation, where the exporter writes a MaxPool whose ``dilations`` attribute has
#: the wrong size (onnxruntime rejects the model: "Attribute dilations has incorrect size", hence
#: attribution ``export``) and Aidge, instead of rejecting it, reads out of bounds. Runs of the shard
#: gave 5 of these samples different outcomes (a crash in one, a wrong output shape in another; a
#: ``std::bad_alloc``, a wrong shape; an output with negative dims, which the bridge refuses to read
#: back), so one row accepts all four.
OPINFO_SHARD_MEMORY_UNSAFE: tuple[tuple, ...] = tuple(
    (op, phase, category, error, who, tuple(others), tuple(cases))
    for op, phase, category, error, who, others, cases in _DATA["memory_unsafe"])
