"""A case that passes only by the float32-error rule says so in its record (``precision``): the
notes travel from ``verify``'s check and ``ModelTester``, through a forked child, to the record
(:mod:`interop.case_notes`). Before 2026-12-07 the records said nothing of it."""
from __future__ import annotations

import json
import textwrap

import pytest

from interop.case_notes import case_notes, note

pytest.importorskip("aidge_core")
pytest_plugins = ["pytester"]


def test_notes_reach_every_open_collector_and_only_known_kinds():
    with case_notes() as outer:
        with case_notes() as inner:
            note("precision", ["output differs by float32 rounding only"])
        note("precision", ["grad of w differs by float32 rounding only"])
    assert inner == {"precision": ["output differs by float32 rounding only"]}
    assert outer["precision"] == ["output differs by float32 rounding only", "grad of w differs by float32 rounding only"]
    note("precision", ["nobody listens: nothing kept"])
    with pytest.raises(ValueError, match="unknown kind"):
        note("speed", ["x"])


def test_a_forked_child_s_notes_come_back():
    from interop.equivalence.isolation import run_isolated

    def child():
        note("precision", ["from the child"])
        return 1

    with case_notes() as got:
        assert run_isolated(child, timeout=60) == 1
    assert got == {"precision": ["from the child"]}


def test_the_record_of_a_case_passing_by_precision_says_so(pytester):
    """A pytest session with records over one test that notes precision (as verify's check does
    on a pass by the float32 rule) and one that does not, through an xdist worker."""
    pytester.makepyfile(test_rounding=textwrap.dedent("""
        from interop.case_notes import note

        def test_rounding():
            note("precision", ["output (call 1) differs by float32 rounding only"])

        def test_plain():
            pass
    """))
    out = pytester.path / "records"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "1", "--records", str(out))
    records = [json.loads(line) for f in sorted(out.rglob("*.jsonl")) for line in f.read_text().splitlines() if line]
    by_test = {r["nodeid"].split("::")[-1]: r for r in records if r.get("nodeid") and r.get("outcome")}
    assert by_test["test_rounding"].get("precision") == ["output (call 1) differs by float32 rounding only"]
    assert not by_test["test_plain"].get("precision")
