"""The records (issue 28): one JSON record per test from the process that ran it, combined
atomically at the end; pass, fail, xfail, xpass, skip, error, a crash, a child killed from
outside, a timeout, a killed xdist worker; counts equal to pytest's own summary; shards."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from interop.records.store import (COUNTED_OUTCOMES, PartWriter, check_counts, combine, load_run,
                                   records_counts)

pytest_plugins = ["pytester"]

OUTCOMES_SUITE = textwrap.dedent("""
    import pytest

    def test_pass():
        pass

    def test_fail():
        assert 1 == 2

    @pytest.mark.xfail(strict=True, reason="should fail")
    def test_xpass_strict():
        pass

    @pytest.mark.xfail(reason="not strict")
    def test_xpass_loose():
        pass

    @pytest.mark.xfail(reason="known")
    def test_xfail():
        raise ValueError("boom")

    def test_skip():
        pytest.skip("not here")

    @pytest.fixture
    def broken():
        raise RuntimeError("setup broke")

    def test_setup_error(broken):
        pass

    @pytest.fixture
    def bad_teardown():
        yield
        raise RuntimeError("teardown broke")

    def test_fails_and_teardown_errors(bad_teardown):
        assert 0
""")

PROCESSES_SUITE = textwrap.dedent("""
    import os, signal, time
    from interop.equivalence.isolation import run_isolated

    def _killed():
        os.kill(os.getpid(), signal.SIGKILL)

    def _segv():
        os.kill(os.getpid(), signal.SIGSEGV)

    def test_child_killed_from_outside():
        run_isolated(_killed)

    def test_child_crash():
        run_isolated(_segv)

    def test_child_timeout():
        run_isolated(time.sleep, 30, timeout=0.5)
""")


def _records(directory: Path) -> dict[str, dict]:
    run = load_run(directory)
    assert run is not None, f"no records in {directory}"
    return {r["nodeid"].rsplit("::", 1)[-1]: r for r in run.records}


def _summary_counts(result) -> dict[str, int]:
    return {o: result.parseoutcomes().get(o if o != "error" else "errors", 0)
            or result.parseoutcomes().get(o, 0) for o in COUNTED_OUTCOMES}


def test_each_outcome_has_its_record_and_the_counts_are_pytests_own(pytester):
    pytester.makepyfile(test_outcomes=OUTCOMES_SUITE)
    out = pytester.path / "records"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", str(out))
    recs = _records(out)
    assert set(recs) == {"test_pass", "test_fail", "test_xpass_strict", "test_xpass_loose", "test_xfail",
                         "test_skip", "test_setup_error", "test_fails_and_teardown_errors"}
    assert recs["test_pass"]["outcome"] == "passed" and "category" not in recs["test_pass"]
    assert recs["test_fail"]["outcome"] == "failed" and "assert 1 == 2" in recs["test_fail"]["message"]
    assert recs["test_xpass_strict"]["outcome"] == "xpassed" and recs["test_xpass_strict"]["xpass_strict"]
    assert recs["test_xpass_loose"]["outcome"] == "xpassed"
    assert recs["test_xfail"]["outcome"] == "xfailed" and "boom" in recs["test_xfail"]["message"]
    assert recs["test_skip"]["outcome"] == "skipped" and recs["test_skip"]["skip_reason"] == "not here"
    assert recs["test_setup_error"]["outcome"] == "error"
    statuses = [r["status"] for r in recs["test_fails_and_teardown_errors"]["reports"] if r["status"]]
    assert statuses == ["failed", "error"]  # one item, counted twice by pytest: so by the records
    run = load_run(out)
    assert run.complete and run.session["exitstatus"] == 1
    summary = _summary_counts(result)
    assert records_counts(run.records) == summary == {o: run.session["pytest_counts"][o] for o in COUNTED_OUTCOMES}
    assert check_counts(run) == []
    for rec in recs.values():
        assert rec["duration_s"] >= 0 and rec["schema"] == 1 and rec["pid"] > 0
        if rec["outcome"] != "passed" and rec["outcome"] != "skipped":
            assert "python -m pytest" in rec["replay"] and rec["nodeid"] in rec["replay"]
    assert not (out / "records.d").exists()  # the parts are gone once combined


def test_a_crash_a_child_killed_from_outside_and_a_timeout_are_three_outcomes(pytester):
    # before: a case child killed by SIGKILL was listed under "Aidge bugs to report" as crash (NEW)
    pytester.makepyfile(test_processes=PROCESSES_SUITE)
    out = pytester.path / "records"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", str(out))
    recs = _records(out)
    killed, crash, hang = (recs[f"test_child_{n}"] for n in ("killed_from_outside", "crash", "timeout"))
    assert (killed["category"], killed["signal"], killed["attribution"]) == ("killed", "SIGKILL", None)
    # the SIGSEGV comes from the test's own code (no bridge phase on the dying stack): nothing says Aidge's
    # code was running, so nobody is named (issue 46, one rule with verify's Verdict; before: "aidge")
    assert (crash["category"], crash["signal"], crash["attribution"]) == ("crash", "SIGSEGV", "unknown")
    assert (hang["category"], hang["timed_out"]) == ("hang", True)
    assert all(r["decided"] == "raise" for r in (killed, crash, hang))  # from AidgeCrash's own fields


def test_a_killed_xdist_worker_leaves_a_killed_record_with_its_signal(pytester):
    # before: "crash (NEW)" under Aidge bugs, and xdist does not report the signal
    pytester.makepyfile(test_worker=textwrap.dedent("""
        import os, signal

        def test_kills_its_worker():
            os.kill(os.getpid(), signal.SIGKILL)

        def test_after():
            pass
    """))
    out = pytester.path / "records"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--records", str(out))
    recs = _records(out)
    dead = recs["test_kills_its_worker"]
    assert (dead["outcome"], dead["category"], dead["signal"]) == ("failed", "killed", "SIGKILL")
    assert "killed by SIGKILL" in dead["error"] and recs["test_after"]["outcome"] == "passed"
    run = load_run(out)
    assert check_counts(run) == [] and records_counts(run.records) == _summary_counts(result)


def test_an_expected_failure_keeps_the_runs_own_mismatch_figures(pytester):
    # before: an xfail showed only the table's quote, never this run's figures
    pytester.makepyfile(test_known=textwrap.dedent("""
        import pytest, torch
        from interop import ModelTester
        from interop.cases.expected_failures import ExpectedAidgeFailure, ExpectedFailure, expected_failure_guard

        ENTRY = ExpectedFailure(operator="FC", phase="forward", category="outputs_differ",
                                error="Tensors are not close at output", cases=("FC:*",))

        class Doubled(torch.nn.Module):
            def forward(self, x):
                return 2 * torch.tanh(x)

        @pytest.mark.xfail(reason=ENTRY.reason, strict=True, raises=ExpectedAidgeFailure)
        def test_known_mismatch():
            with expected_failure_guard(ENTRY):
                ModelTester(torch.nn.Tanh(), Doubled(), test_backward=False, epochs=1, benchmark=False,
                            max_slowdown_ratio=None).test_multiple_step((2, 3))
    """))
    out = pytester.path / "records"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", str(out))
    rec = _records(out)["test_known_mismatch"]
    assert rec["outcome"] == "xfailed" and rec["decided"] == "table"
    assert (rec["category"], rec["phase"], rec["aidge_operator"]) == ("outputs_differ", "forward", "FC")
    assert rec["expected"]["quote"] == "Tensors are not close at output"
    m = rec["mismatch"]
    assert m["n_total"] == 6 and 0 < m["n_mismatched"] <= 6 and m["max_abs"] > 0 and m["atol"] > 0
    assert len(m["worst_index"]) == 2 and rec["seed"] is not None and "INTEROP_SEED=" in rec["replay"]


def test_an_interrupted_session_says_so_and_keeps_what_ran(pytester):
    pytester.makepyfile(test_stop=textwrap.dedent("""
        def test_first():
            pass

        def test_interrupts():
            raise KeyboardInterrupt

        def test_never_runs():
            pass
    """))
    out = pytester.path / "records"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--records", str(out))
    assert result.ret == 2
    run = load_run(out)
    assert not run.complete and "interrupted" in run.session["ended"]
    recs = {r["nodeid"].rsplit("::", 1)[-1]: r for r in run.records}
    assert recs["test_first"]["outcome"] == "passed" and "test_never_runs" not in recs


def test_a_test_that_started_and_never_ended_is_killed_and_the_run_incomplete(tmp_path):
    writer = PartWriter(tmp_path, "gw0")
    writer.write({"event": "start", "nodeid": "t.py::test_a", "time": "2026-01-01T00:00:00", "worker": "gw0",
                  "pid": 1})
    writer.write({"event": "record", "nodeid": "t.py::test_a", "outcome": "passed", "reports": [
        {"when": "call", "status": "passed", "duration": 0.1}], "time": "2026-01-01T00:00:01"})
    writer.write({"event": "start", "nodeid": "t.py::test_b", "time": "2026-01-01T00:00:02", "worker": "gw0",
                  "pid": 1})
    writer.close()
    (tmp_path / "records.d" / "broken.jsonl").write_text('{"event": "record", "nodeid": \n[1, 2]\n')
    run = load_run(tmp_path)  # nobody combined: the session died; the reader does
    recs = {r["nodeid"]: r for r in run.records}
    assert recs["t.py::test_a"]["outcome"] == "passed"
    assert recs["t.py::test_b"]["category"] == "killed" and recs["t.py::test_b"]["reported"] is False
    assert not run.complete and run.session["lost"] == ["t.py::test_b"]
    assert any("broken.jsonl:1: not valid JSON" in p for p in run.problems)
    assert any("broken.jsonl:2: not a record" in p for p in run.problems)


def test_shards_are_disjoint_stable_and_cover_every_source(pytester, monkeypatch):
    pytester.makepyfile(test_a="import pytest\n@pytest.mark.parametrize('i', range(30))\ndef test_a(i):\n    pass\n",
                        test_b="def test_b1():\n    pass\n\ndef test_b2():\n    pass\n")
    seen = []
    for k in (1, 2, 3):
        out = pytester.path / f"shard{k}"
        xdist = ["-n", "2"] if k == 2 else []  # the workers get the shard from their controller
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *xdist, "--shard", f"{k}/3",
                                               "--records", str(out))
        recs = load_run(out).records
        assert recs and result.parseoutcomes()["passed"] == len(recs)
        if not xdist:  # (xdist's summary leaves out what its workers deselected)
            assert result.parseoutcomes()["deselected"] == 32 - len(recs)
        assert load_run(out).session["shard"] == f"{k}/3"
        seen.append({r["nodeid"] for r in recs})
    assert sum(len(s) for s in seen) == 32 and len(set().union(*seen)) == 32
    # an inner session (started by a test, as here) ignores the outer run's INTEROP_SHARD: found
    # by a sharded full run, where the unit tests' inner sessions deselected their own tests
    monkeypatch.setenv("INTEROP_SHARD", "1/3")
    inner = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert inner.parseoutcomes() == {"passed": 32}
    # a top-level session reads it, and refuses a bad value (without the outer session's folders:
    # a top-level session would write its records there)
    for name in ("PYTEST_CURRENT_TEST", "INTEROP_RECORDS_SESSION", "INTEROP_RESULTS_DIR", "INTEROP_RECORDS_DIR"):
        monkeypatch.delenv(name, raising=False)
    top = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert top.parseoutcomes()["passed"] == len(seen[0])
    monkeypatch.setenv("INTEROP_SHARD", "4/3")
    bad = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert bad.ret == 4 and "INTEROP_SHARD='4/3': expected K/N" in bad.stderr.str()


def test_a_session_inside_another_sessions_test_writes_no_records_unless_told(pytester, monkeypatch, tmp_path):
    # the outer session's INTEROP_RESULTS_DIR must not collect an inner session's records
    # (nox -s report sets INTEROP_RECORDS_DIR for its session: its unit tests' inner sessions
    # wrote their records into the run's directory, found by a full run)
    monkeypatch.setenv("INTEROP_RESULTS_DIR", str(tmp_path / "outer"))
    monkeypatch.setenv("INTEROP_RECORDS_DIR", str(tmp_path / "outer-records"))
    pytester.makepyfile(test_inner="def test_inner():\n    pass\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert not (tmp_path / "outer").exists() and not (tmp_path / "outer-records").exists()


def test_an_interrupted_plain_session_leaves_the_published_files_untouched(tmp_path):
    # before: Ctrl-C replaced the complete results/benchmarks.jsonl with its 3 partial records
    from interop.equivalence.benchlog import publish_session, start_session

    results = tmp_path / "results"
    results.mkdir()
    (results / "benchmarks.jsonl").write_text('{"name": "complete"}\n')
    staging = start_session(results)
    (staging / "benchmarks.jsonl").write_text('{"name": "partial"}\n')
    (staging / "session.json").write_text(json.dumps({"complete": False, "ended": "interrupted (KeyboardInterrupt)"}))
    kept = publish_session(staging, results, exitstatus=2)
    assert (results / "benchmarks.jsonl").read_text() == '{"name": "complete"}\n'
    assert kept.name.startswith("partial-") and (kept / "benchmarks.jsonl").read_text() == '{"name": "partial"}\n'
    assert "interrupted" in (kept / "PARTIAL").read_text()
    staging = start_session(results)
    (staging / "benchmarks.jsonl").write_text('{"name": "next"}\n')
    (staging / "session.json").write_text(json.dumps({"complete": True}))
    assert publish_session(staging, results, exitstatus=0) is None
    assert (results / "benchmarks.jsonl").read_text() == '{"name": "next"}\n' and not staging.exists()


def test_check_says_when_records_and_pytests_summary_disagree(tmp_path, capsys):
    from interop.records.__main__ import main

    (tmp_path / "records.jsonl").write_text(json.dumps({"nodeid": "t::a", "outcome": "passed", "reports": [
        {"when": "call", "status": "passed", "duration": 0}]}) + "\n")
    (tmp_path / "session.json").write_text(json.dumps({"complete": True, "pytest_counts": {"passed": 2}}))
    assert main(["check", str(tmp_path)]) == 1
    assert "passed: 1 recorded, 2 in pytest's summary" in capsys.readouterr().out
    (tmp_path / "session.json").write_text(json.dumps({"complete": True, "pytest_counts": {"passed": 1}}))
    assert main(["check", str(tmp_path)]) == 0


def test_a_record_with_nan_figures_is_written_and_the_session_goes_on(pytester):
    # found by a full run: a mismatch whose worst element is NaN made the record unwritable
    # (strict JSON has no NaN) and the worker died with an INTERNALERROR
    pytester.makepyfile(test_nan=textwrap.dedent("""
        from interop.equivalence.tester import EquivalenceError

        def test_nan_mismatch():
            raise EquivalenceError("output differs", test="t", epoch=0, what="output", seed=1,
                                   mismatch={"path": "output", "n_mismatched": 1, "n_total": 4,
                                             "max_abs": float("nan"), "max_rel": float("inf"),
                                             "worst_index": (0,), "worst_actual": float("nan"),
                                             "worst_expected": 1.0, "rtol": 1e-5, "atol": 1e-6})

        def test_after():
            pass
    """))
    out = pytester.path / "records"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--records", str(out))
    assert result.ret == 1 and "INTERNALERROR" not in result.stdout.str()
    recs = _records(out)
    assert recs["test_nan_mismatch"]["mismatch"]["max_abs"] == "nan"
    assert recs["test_nan_mismatch"]["category"] == "outputs_differ" and recs["test_after"]["outcome"] == "passed"
    assert load_run(out).complete


def test_in_process_inner_sessions_never_write_into_the_outer_sessions_folder(pytester, monkeypatch, tmp_path):
    # found by a full run: the second in-process inner session of a test (PYTEST_CURRENT_TEST is
    # removed at each inner test's end) wrote into the outer run's folder and its combine removed
    # the outer session's parts: 952 records for 3,249 tests
    monkeypatch.setenv("INTEROP_RECORDS_DIR", str(tmp_path / "outer"))
    monkeypatch.setenv("INTEROP_RECORDS_SESSION", "outer-session")
    pytester.makepyfile(test_inner="def test_inner():\n    pass\n")
    for _ in range(2):
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not (tmp_path / "outer").exists()


def test_a_session_combines_and_removes_its_own_parts_only(tmp_path):
    mine, other = PartWriter(tmp_path, "gw0", "mine"), PartWriter(tmp_path, "gw0", "other")
    for writer, nodeid in ((mine, "t::a"), (other, "t::b")):
        writer.write({"event": "record", "nodeid": nodeid, "outcome": "passed", "time": "1",
                      "reports": [{"when": "call", "status": "passed", "duration": 0}]})
        writer.close()
    records, _ = combine(tmp_path, {"complete": True}, session_id="mine")
    assert [r["nodeid"] for r in records] == ["t::a"] and other.path.exists() and not mine.path.exists()


def test_a_record_names_the_backend_the_case_ran_on(pytester):
    # a review found the catalog parameter's backend (cpu) in the record of a run on another
    # backend: the case as it runs is the fixture's
    pytester.makepyfile(test_backend=textwrap.dedent("""
        import pytest
        from interop.cases.case import Case

        CASE = Case(id="Relu_a", op_class="torch.nn:ReLU", operator="ReLU", input_size=(2, 3))

        @pytest.mark.parametrize("case", [CASE], ids=[CASE.id])
        def test_case(case, aidge_backend):
            pass
    """))
    out = pytester.path / "records"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--backend=export_cpp", "--records", str(out))
    rec = _records(out)["test_case[Relu_a]"]
    assert (rec["case"], rec["backend"]) == ("Relu_a", "export_cpp")


def test_an_unclassified_assert_is_one_line_with_its_statement_and_explanation():
    # before: the report showed pytest's message cut at its first line,
    # "AssertionError: assert ('aidge scheduler' == 'aidge scheduler'" (issue 32)
    from interop.records.classify import ASSERTION_LIMIT, finding_of

    s = {"timed2": "aidge scheduler", "ratio": 3.0}
    try:
        assert (s["timed2"] == "aidge scheduler"
                and s["ratio"] < 2.0), "ratio\n  too high"
    except AssertionError as exc:
        found = finding_of(exc)
    assert found["category"] == "unknown" and "\n" not in found["error"]
    assert found["error"].startswith("AssertionError: assert (s[\"timed2\"] == \"aidge scheduler\"")
    assert "[ratio too high assert ('aidge scheduler' == 'aidge scheduler' aidge scheduler and 3.0 < 2.0)]" \
        in found["error"]
    try:
        assert False, "x" * 1000
    except AssertionError as exc:
        assert len(finding_of(exc)["error"]) == ASSERTION_LIMIT
