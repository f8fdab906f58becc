"""Issue 46: the records travel through pytest's own channel. The process that ran a test hands its
record over in the teardown report's ``user_properties`` (the case's fields in the setup
report's); one process, the session's main one, writes them, whether the session is plain or
spread over xdist workers; the entries are taken out before ``--junitxml`` reads the
properties, and a test's own ``record_property`` of the same name is left alone."""
from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET

import pytest

from interop.records.store import check_counts, load_run, records_counts

pytest_plugins = ["pytester"]

SUITE = textwrap.dedent("""
    import json
    import os
    from pathlib import Path

    import pytest

    def _parts():
        root = Path(os.environ["RECORDS_OUT"]) / "records.d"
        return sorted(p.name for p in root.glob("*/*.jsonl"))

    @pytest.mark.parametrize("i", range(6))
    def test_many(i):
        # the part files while the session runs: the main process's alone, whoever runs the test
        Path(os.environ["RECORDS_OUT"], f"parts-{i}.json").write_text(json.dumps(_parts()))

    def test_own_property(record_property):
        record_property("interop_record", "the test's own value")
        record_property("mine", 1)

    def test_fails():
        assert 1 == 2

    @pytest.mark.xfail(strict=True, reason="known")
    def test_xfails():
        raise ValueError("known")
""")


def _run(pytester, monkeypatch, *args):
    pytester.makepyfile(test_transport=SUITE)
    out, junit = pytester.path / "records", pytester.path / "junit.xml"
    monkeypatch.setenv("RECORDS_OUT", str(out))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", str(out), f"--junitxml={junit}", *args)
    return result, out, junit


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_one_process_writes_every_record_and_junit_sees_only_the_tests_own_properties(pytester, monkeypatch, workers):
    result, out, junit = _run(pytester, monkeypatch, *workers)
    run = load_run(out)
    recs = {r["nodeid"].split("::")[-1]: r for r in run.records}
    assert set(recs) == {f"test_many[{i}]" for i in range(6)} | {"test_own_property", "test_fails", "test_xfails"}
    assert check_counts(run) == [] and run.complete
    assert records_counts(run.records)["failed"] == 1 and records_counts(run.records)["xfailed"] == 1
    # the case's fields and the failure travelled with the reports
    assert all(isinstance(r.get("source"), str) for r in recs.values())  # the start line's fields reached the record
    assert "assert 1 == 2" in recs["test_fails"]["message"] and recs["test_xfails"]["outcome"] == "xfailed"
    # every record was made by the process that ran the test (an xdist worker's name and pid)
    runners = {r["worker"] for r in run.records}
    assert runners == ({"main"} if not workers else runners - {"main"}) and runners
    # one writer: while the tests ran, the session's folder held one part file, the main process's
    seen = {(out / f"parts-{i}.json").read_text() for i in range(6)}
    assert len(seen) == 1 and len(json.loads(seen.pop())) == 1, seen
    # junit: the test's own properties, both of them, and none of the records' entries
    props = {(p.get("name"), p.get("value")) for p in ET.parse(junit).getroot().iter("property")}
    assert props == {("interop_record", "the test's own value"), ("mine", "1")}
    assert result.ret == 1


def test_a_worker_that_dies_in_setup_has_a_record_that_says_its_fields_never_came(pytester):
    pytester.makepyfile(test_setup_death=textwrap.dedent("""
        import os, signal
        import pytest

        @pytest.fixture
        def dies():
            os.kill(os.getpid(), signal.SIGKILL)

        def test_dies_in_setup(dies):
            pass

        def test_after():
            pass
    """))
    out = pytester.path / "records"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--records", str(out))
    run = load_run(out)
    recs = {r["nodeid"].split("::")[-1]: r for r in run.records}
    dead = recs["test_dies_in_setup"]
    # the signal read from xdist's gateway (records.plugin._signal_of: no public hook gives it)
    assert (dead["outcome"], dead["category"], dead["signal"]) == ("failed", "killed", "SIGKILL")
    assert "before the test's setup report" in dead["fields_error"]
    assert recs["test_after"]["outcome"] == "passed" and recs["test_after"]["source"]
    assert check_counts(run) == [] and records_counts(run.records) == {
        "passed": 1, "failed": 1, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
    assert result.ret == 1


def test_a_report_carrying_a_line_that_is_not_its_record_is_said_never_written(pytester):
    # a plugin (or a bug) putting another test's line under the records' key: the main process
    # checks each carried line (a record of the report's own test) before writing it
    pytester.makeconftest(textwrap.dedent("""
        import pytest

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_logreport(report):
            # a wrapper runs before every plain implementation: the line is the last of its key
            if report.when == "teardown" and report.nodeid.endswith("test_forged"):
                report.user_properties.append(
                    ("interop_record", '{"event": "record", "nodeid": "elsewhere::test_x", "outcome": "passed"}'))
            yield
    """))
    pytester.makepyfile(test_forge="def test_forged():\n    pass\n\ndef test_plain():\n    pass\n")
    out = pytester.path / "records"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", str(out))
    run = load_run(out)
    ids = {r["nodeid"] for r in run.records}
    assert "elsewhere::test_x" not in ids
    forged = next(r for r in run.records if r["nodeid"].endswith("test_forged"))
    assert "could not be read" in forged["record_error"] and "elsewhere::test_x" not in json.dumps(
        {k: v for k, v in forged.items() if k != "record_error"})
