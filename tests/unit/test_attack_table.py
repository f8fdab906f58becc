"""Issue 44: the kinds of attack of the last two rounds, as a whole.

:data:`ATTACKS` lists each kind once, by family, with the tests that make it happen: this round's
(issue 44's "Why": writes outside the project, half-written state, faults that ended in a
traceback, merge, history and table, pages and terminal, benchmark figures, environment,
resources, unusual callables) and the last round's (issue 34: configuration files and folders,
values, environment). Kinds no earlier test made happen are tests of this module (a records file
above its limit, links planted in the run directory by a test of the run).

``python tests/unit/test_attack_table.py [--json OUT]`` runs every kind against HEAD in a fresh
clone (``git clone`` of this checkout into a temporary folder: no file of this tree is read or
written by the tests) and prints, per kind, held or broke, and the totals by family: the figures
of docs/journal.md (issue 44). Under pytest, this module checks that every test the table names
exists (the table cannot rot) and runs its own kinds."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = "tests/unit"

#: (family, kind, [test file::function, ...]): the kind holds when every test it names passes
ATTACKS: list[tuple[str, str, list[str]]] = [
    # ---- this round (issue 44) --------------------------------------------------------------
    ("outside", "check/merge reads and deletes the *.jsonl of a folder a records.d link points to",
     ["test_outside_files.py::test_check_neither_reads_nor_deletes_the_folder_a_session_link_points_to",
      "test_merge_checks.py::test_merge_neither_deletes_an_outside_folder_nor_copies_an_outside_records_file"]),
    ("outside", "records.d itself a link out", ["test_outside_files.py::test_check_names_a_records_d_that_is_a_link_out",
     "test_records_errors.py::test_part_writer_refuses_a_records_folder_linking_out_before_making_anything",
     "test_records_errors.py::test_a_records_folder_linking_out_is_one_clear_error_before_any_test"]),
    ("outside", "records.jsonl a link to an outside file",
     ["test_outside_files.py::test_a_records_file_that_is_a_link_out_is_not_read"]),
    ("outside", "a link planted under the atomic writer's temporary name",
     ["test_outside_files.py::test_combining_writes_no_file_through_a_planted_link"]),
    ("outside", "links out, links as files, FIFOs, folders, '..' (the rule itself)",
     ["test_outside_files.py::test_the_rule_refuses_links_out_links_as_files_fifos_folders_and_dot_dot"]),
    ("outside", "triage apply writes or deletes a path outside the table",
     ["test_triage_apply.py::test_a_path_outside_the_table_is_never_written_nor_deleted"]),
    ("outside", "triage apply through a release folder that links out",
     ["test_triage_apply.py::test_a_release_folder_that_is_a_link_out_is_refused"]),
    ("outside", "a test of the run plants triage/ or defects/ as a link out of the run directory",
     ["test_attack_table.py::test_links_planted_in_the_run_lead_nowhere"]),
    ("outside", "a directory or a file planted at results/latest",
     ["test_attack_table.py::test_something_else_in_place_of_latest_is_left_alone_and_named"]),
    ("outside", "a test of the run makes directories named report.txt and run.json in the run",
     ["test_attack_table.py::test_directories_in_place_of_the_runs_files_are_moved_aside"]),
    ("half-written", "triage apply of rows the table refuses",
     ["test_triage_apply.py::test_rows_the_table_refuses_are_refused_before_anything_is_written"]),
    ("half-written", "a deeply nested proposal", ["test_triage_apply.py::test_a_deeply_nested_proposal_or_file_is_one_line_not_a_traceback"]),
    ("half-written", "a proposal of the wrong shapes", ["test_triage_apply.py::test_bad_shapes_are_named_by_key"]),
    ("half-written", "SIGKILL after the history line, before the report (run and merge)",
     ["test_history_safety.py::test_a_run_killed_before_its_report_is_in_place_adds_no_history_line",
      "test_history_safety.py::test_a_merge_killed_before_its_report_is_in_place_adds_no_history_line"]),
    ("half-written", "a full disk (RLIMIT_FSIZE) for the run, and while the report is written",
     ["test_report_run_faults.py::test_a_full_disk_is_one_clear_error_naming_the_file_and_leaves_no_partial_file",
      "test_report_run_faults.py::test_a_full_disk_while_the_report_is_written_leaves_no_partial_file"]),
    ("half-written", "a read-only results folder",
     ["test_report_run_faults.py::test_a_read_only_results_folder_is_one_clear_error_naming_it"]),
    ("half-written", "a part file that cannot be written",
     ["test_records_errors.py::test_a_part_file_that_cannot_be_written_is_said_once_and_the_session_is_incomplete"]),
    ("faults", "pytest killed by SIGKILL before any result",
     ["test_report_run_faults.py::test_pytest_killed_by_sigkill_before_any_result_gets_a_report"]),
    ("faults", "pytest killed by SIGKILL during a test",
     ["test_report_run_faults.py::test_pytest_killed_by_sigkill_during_a_test_gets_a_report",
      "test_report_run.py::test_pytest_killed_from_outside_after_its_tests_is_an_incomplete_run"]),
    ("faults", "Ctrl-C in the first seconds (before and while pytest starts)",
     ["test_report_run_faults.py::test_ctrl_c_while_pytest_starts_is_an_interrupted_run_with_its_report",
      "test_report_run_faults.py::test_ctrl_c_before_pytest_started_is_reported_and_pytest_is_never_started"]),
    ("faults", "Ctrl-C with SIGINT ignored by the parent shell",
     ["test_report_run.py::test_ctrl_c_stops_the_run_even_when_it_was_started_with_sigint_ignored"]),
    ("faults", "Ctrl-C during the tests", ["test_report_run.py::test_an_interrupted_run_is_reported_incomplete_and_never_latest"]),
    ("faults", "Ctrl-C, SIGTERM, SIGHUP during the analysis",
     ["test_report_run_faults.py::test_a_stop_signal_during_the_analysis_leaves_a_report_marked_incomplete",
      "test_report_run.py::test_ctrl_c_during_the_analysis_leaves_a_report_marked_incomplete_never_an_empty_one"]),
    ("faults", "SIGTERM or Ctrl-C during the timing pass",
     ["test_report_run.py::test_a_signal_during_the_timing_pass_stops_it_and_the_run_is_incomplete"]),
    ("faults", "a malformed INTEROP_SHARD under the report",
     ["test_report_run_faults.py::test_a_malformed_shard_option_is_named_in_the_report",
      "test_run_environment.py::test_a_bad_value_of_any_variable_stops_a_findings_run_before_pytest"]),
    ("faults", "SIGKILL of the report process (pytest ran on alone)",
     ["test_report_run_faults.py::test_pytest_and_its_children_never_outlive_a_killed_report_process"]),
    ("faults", "a merged directory without records", ["test_merge_checks.py::test_a_merged_run_without_records_gets_its_report"]),
    ("faults", "a run without records nor console output",
     ["test_report_run_faults.py::test_a_run_without_records_nor_console_output_gets_a_report"]),
    ("faults", "FIFOs among the run's files (benchmarks.jsonl, timings.jsonl)",
     ["test_report_run_faults.py::test_a_fifo_among_the_runs_files_is_named_never_a_hang"]),
    ("faults", "a FIFO or a line that is no object under the progress line",
     ["test_records_errors.py::test_the_progress_line_never_hangs_on_a_fifo_nor_dies_on_a_line_that_is_no_object"]),
    ("merge", "shard 1/2 alone", ["test_merge_checks.py::test_one_shard_alone_is_refused_naming_the_missing_shard"]),
    ("merge", "other commits, Aidge or torch versions, routes, shard counts, a shard twice",
     ["test_merge_checks.py::test_runs_that_do_not_belong_together_are_refused_by_name",
      "test_merge_checks.py::test_merge_mismatched_marks_the_run_mixed"]),
    ("merge", "a 1 GB records.jsonl (one line, and above the file limit)",
     ["test_outside_files.py::test_jsonl_is_read_a_bounded_line_at_a_time",
      "test_attack_table.py::test_a_records_file_above_its_limit_is_refused_unread"]),
    ("merge", "fields of the wrong type in records and session.json",
     ["test_merge_checks.py::test_fields_of_the_wrong_type_are_named_not_tracebacks"]),
    ("merge", "\"complete\": \"no\"", ["test_merge_checks.py::test_complete_no_is_not_complete"]),
    ("merge", "a FIFO in place of records.jsonl", ["test_merge_checks.py::test_a_fifo_in_place_of_records_is_refused_not_a_hang",
                                                   "test_outside_files.py::test_check_of_a_fifo_records_file_is_a_named_problem_not_a_hang"]),
    ("history and table", "garbage lines, lines of unexpected types in history.jsonl",
     ["test_history_safety.py::test_bad_lines_are_named_and_cost_only_themselves"]),
    ("history and table", "a directory or a FIFO in place of history.jsonl",
     ["test_history_safety.py::test_a_directory_or_a_fifo_in_place_of_the_history_is_named"]),
    ("history and table", "a malformed expected-failure file",
     ["test_failure_table_errors.py::test_a_broken_table_file_is_one_error_naming_file_row_and_key"]),
    ("history and table", "an unknown INTEROP_AIDGE_RELEASE",
     ["test_failure_table_errors.py::test_an_unknown_release_variable_is_named"]),
    ("history and table", "a missing table or configuration folder",
     ["test_failure_table_errors.py::test_a_missing_configuration_folder_is_one_error_naming_it",
      "test_failure_table_errors.py::test_a_missing_table_folder_is_named",
      "test_failure_table_errors.py::test_the_tools_own_tests_do_not_need_the_table"]),
    ("history and table", "a FIFO in the table", ["test_failure_table_errors.py::test_a_fifo_in_the_table_is_refused_by_name_never_a_hang"]),
    ("pages and terminal", "a crafted asv machine name in pair.html; names in the cases page",
     ["test_site_escaping.py::test_pair_page_writes_a_crafted_machine_name_as_text",
      "test_site_escaping.py::test_pair_page_script_assigns_no_html",
      "test_site_escaping.py::test_cases_page_escapes_every_name_of_the_index"]),
    ("pages and terminal", "terminal escapes in a file name or a record field",
     ["test_report_controls.py::test_no_control_character_of_the_data_is_written_raw",
      "test_report_controls.py::test_the_configuration_files_name_is_escaped_in_its_section",
      "test_report_controls.py::test_a_skip_reason_is_escaped"]),
    ("benchmark figures", "a ratio of 1e300 its own medians contradict",
     ["test_asv_figures.py::test_a_ratio_its_own_medians_contradict_is_a_named_problem_not_the_worst_rank",
      "test_bench_jsonl_figures.py::test_an_impossible_ratio_is_a_named_bad_line_not_a_rank"]),
    ("benchmark figures", "a 400-digit ratio or date", ["test_asv_figures.py::test_a_ratio_that_is_no_positive_number_is_named",
                                                       "test_asv_figures.py::test_a_400_digit_date_sorts_first_without_a_traceback"]),
    ("benchmark figures", "a deeply nested asv result file",
     ["test_asv_figures.py::test_a_deeply_nested_file_is_a_named_problem_and_the_others_are_read"]),
    ("environment", "INTEROP_SEED out of range", ["test_env_validation.py::test_a_seed_out_of_range_names_the_variable"]),
    ("environment", "INTEROP_TIMING_PASS=off/FALSE/banana",
     ["test_env_validation.py::test_the_timing_pass_switch_reads_every_spelling",
      "test_env_validation.py::test_a_timing_pass_switch_that_is_no_switch_names_the_variable"]),
    ("environment", "INTEROP_RESULTS_DIR naming a file", ["test_env_validation.py::test_a_results_dir_that_is_a_file_names_the_variable"]),
    ("resources", "a leaking case, a case dying at its memory bound",
     ["test_isolation_memory_bound.py::test_a_leaking_case_fails_in_its_child_and_the_verdict_says_memory",
      "test_isolation_memory_bound.py::test_a_child_that_dies_at_its_bound_is_called_memorys_death",
      "test_isolation_memory_bound.py::test_a_malformed_variable_is_named"]),
    ("callables", "a forward that updates its buffers",
     ["test_wrap_callables.py::test_a_forward_that_updates_its_buffers_is_refused_naming_them_and_the_model_is_left_as_it_was"]),
    ("callables", "an export that fails and prints", ["test_wrap_callables.py::test_an_export_that_fails_prints_nothing_and_keeps_what_the_exporter_printed"]),
    ("callables", "a callable that sleeps (blamed on Aidge)",
     ["test_wrap_callables.py::test_a_hang_in_the_callable_s_own_code_is_not_blamed_on_aidge"]),
    ("callables", "a callable that starts long-lived processes, a daemon, a hung case",
     ["test_isolation_processes.py::test_what_a_case_starts_never_outlives_it",
      "test_isolation_processes.py::test_a_hung_case_has_what_it_started_killed_too"]),
    ("callables", "a case child that crashes (SIGKILL, SIGSEGV, SIGABRT) after starting processes",
     ["test_isolation_processes.py::test_what_a_crashing_case_started_dies_with_it",
      "test_isolation_processes.py::test_an_interrupted_parent_leaves_nothing_of_the_case_behind"]),
    ("callables", "a descendant that leaves for a session of its own (setsid, a daemon), a crashed case's included",
     ["test_supervisor.py::test_a_descendant_that_called_setsid_is_killed_and_reaped_when_the_wait_ends",
      "test_supervisor.py::test_a_crashed_case_s_setsid_grandchild_dies_when_the_supervised_run_ends"]),
    # ---- the last round (issue 34) ----------------------------------------------------------
    ("last round: configuration files", "a configuration nested 100, 990, 5,000 levels; a deep data literal",
     ["test_bad_input_round_three.py::test_a_deeply_nested_configuration_is_a_config_error_naming_the_file",
      "test_bad_input_round_three.py::test_a_deep_data_literal_is_a_config_error"]),
    ("last round: configuration files", "a deep file in a pytest run costs only itself",
     ["test_bad_input_round_three.py::test_a_deep_file_costs_only_itself_in_a_pytest_run"]),
    ("last round: configuration files", "a FIFO named pipe.json (collection, aidge_table)",
     ["test_bad_input_round_three.py::test_a_fifo_in_the_directory_is_refused_not_read",
      "test_bad_input_round_three.py::test_the_aidge_table_does_not_hang_on_a_fifo"]),
    ("last round: configuration files", "a directory named like a file",
     ["test_bad_input_round_three.py::test_a_directory_named_like_a_file_is_refused"]),
    ("last round: configuration files", "a symlink out of the directory",
     ["test_bad_input_round_three.py::test_a_symlink_out_of_the_directory_is_refused_naming_the_link"]),
    ("last round: configuration files", "a file above the size limit",
     ["test_bad_input_round_three.py::test_a_file_above_the_size_limit_is_refused_before_reading",
      "test_bad_input_round_three.py::test_the_reading_policy_directly"]),
    ("last round: values", "ragged or string data", ["test_bad_input_round_three.py::test_bad_data_literals_are_refused_with_their_key",
                                                      "test_bad_input_round_three.py::test_special_values_as_strings_are_numbers"]),
    ("last round: values", "negative or string kernel_dims",
     ["test_bad_input_round_three.py::test_bad_kernel_dims_of_a_positive_case_are_refused",
      "test_bad_input_round_three.py::test_a_negative_case_keeps_its_invalid_attributes"]),
    ("last round: values", "a huge shape at batch 1", ["test_bad_input_round_three.py::test_the_element_budget_applies_at_batch_1"]),
    ("last round: environment", "INTEROP_CASE_TIMEOUT=inf, 1e309, nan, -5, abc",
     ["test_bad_input_round_three.py::test_impossible_numbers_in_the_environment_name_the_variable"]),
    ("last round: environment", "INTEROP_AIDGE_ELEMENT_BUDGET=abc, -5",
     ["test_bad_input_round_three.py::test_the_element_budget_variable_is_validated_when_read",
      "test_bad_input_round_three.py::test_switches_in_the_environment_are_validated"]),
    ("last round: golden files", "a deeply nested golden sidecar",
     ["test_bad_input_round_three.py::test_a_deeply_nested_golden_sidecar_names_the_file"]),
]


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def missing_tests(attacks) -> list[str]:
    """The tests a list of attack kinds names that do not exist (every round's list is checked so);
    an AssertionError for a kind without tests or a kind named twice."""
    missing = []
    for family, kind, tests in attacks:
        assert tests, kind
        for test in tests:
            file, _, function = test.partition("::")
            path = ROOT / UNIT / file
            if not path.is_file() or function not in _functions(path):
                missing.append(f"{family} / {kind}: {test}")
    assert len({kind for _, kind, _ in attacks}) == len(attacks)  # each kind once
    return missing


def test_every_kind_names_tests_that_exist():
    assert not missing_tests(ATTACKS)


# ---- kinds no earlier test made happen ---------------------------------------------------------
def _run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "results" / "runs" / "20260101T000000000000Z-nogit-1"
    run.mkdir(parents=True)
    record = {"schema": 1, "event": "record", "nodeid": "tests/test_operators.py::test_op[ReLU_1]", "case": "ReLU_1",
              "kind": "operator", "operator": "ReLU", "torch_op": "torch.relu", "phases": ["forward"], "backend": "cpu",
              "exporter": "auto", "outcome": "failed", "category": "aidge_error", "error": "AidgeError: boom",
              "phase": "forward", "time": "2026-01-01T00:00:00",
              "reports": [{"when": "call", "status": "failed", "duration": 0.0}]}
    (run / "records.jsonl").write_text(json.dumps(record) + "\n")
    (run / "session.json").write_text(json.dumps({"schema": 1, "complete": True, "ended": "ran to its end",
                                                  "pytest_counts": {"failed": 1},
                                                  "versions": {"aidge_core": "0.10.1", "torch": "2.13.0"}}))
    (run / "pytest.txt").write_text("tests/test_operators.py::test_op[ReLU_1] FAILED\n1 failed in 0.10s\n")
    return run


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_links_planted_in_the_run_lead_nowhere(tmp_path):
    # before: the table's proposal was written through a triage/ link into the folder it named,
    # and a defects/ link was a traceback (UnsafeInputError) that left the run without a report
    from interop.reporting.run_analysis import _analyse

    run = _run_dir(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("triage", "defects"):
        os.symlink(outside, run / name)
    status, text, report = _analyse(run)
    assert status == 0 and report is not None
    assert not list(outside.iterdir()), "something was written through a link out of the run"
    problems = "\n".join(report["problems"])
    assert f"{run / 'triage'}: a symbolic link" in problems and "the table's proposal was not written" in problems
    assert f"{run / 'defects'}" in problems and "the defect ledger was not finished" in problems
    assert (run / "report.txt").read_text() == text


def test_a_records_file_above_its_limit_is_refused_unread(tmp_path, monkeypatch, capsys):
    # before: read whole (a 1 GB file of records: MemoryError at 6.2 GB after 181 s). A sparse
    # file above the limit: refused by its size, before a byte is read
    from interop.records import store
    from interop.reporting.run import main

    run = _run_dir(tmp_path)
    with open(run / "records.jsonl", "r+b") as handle:
        handle.truncate(store.MAX_RECORDS_BYTES + 1)
    started = time.monotonic()
    loaded = store.load_run(run)
    assert time.monotonic() - started < 5  # nothing read (the file is above the limit)
    assert loaded.records == [] and loaded.complete is False
    assert any(p.startswith(f"{run / 'records.jsonl'}: {store.MAX_RECORDS_BYTES + 1:,} bytes, above the limit")
               for p in loaded.problems), loaded.problems
    # and a merge of it is refused by name, before anything is written
    assert main(["--merge", str(run)], results=tmp_path / "merged", cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert "above the limit" in err and "Traceback" not in err
    assert not (tmp_path / "merged" / "runs").exists() or not list((tmp_path / "merged" / "runs").iterdir())


@pytest.mark.parametrize("kind", ["directory", "file"])
def test_something_else_in_place_of_latest_is_left_alone_and_named(tmp_path, kind):
    # before: a directory at results/latest was an IsADirectoryError traceback at the end of a
    # complete run (and a file was replaced, whoever's it was)
    from interop.reporting.run_folder import point_latest

    results = tmp_path / "results"
    run = results / "runs" / "20260101T000000000000Z-nogit-1"
    run.mkdir(parents=True)
    latest = results / "latest"
    if kind == "directory":
        latest.mkdir()
        (latest / "mine.txt").write_text("kept")
    else:
        latest.write_text("kept")
    said = point_latest(results, run)
    assert said == (f"interop.reporting.run: {latest} is not a symbolic link (a {kind}): left as it is, "
                    f"not pointed at {run.name}")
    assert (latest / "mine.txt" if kind == "directory" else latest).read_text() == "kept"
    assert not list(results.glob(".*partial"))
    # a link is replaced, as always
    latest_link = tmp_path / "other" / "latest"
    (tmp_path / "other" / "runs" / "a").mkdir(parents=True)
    (tmp_path / "other" / "runs" / "b").mkdir(parents=True)
    assert point_latest(tmp_path / "other", tmp_path / "other" / "runs" / "a") is None
    assert point_latest(tmp_path / "other", tmp_path / "other" / "runs" / "b") is None
    assert latest_link.resolve() == (tmp_path / "other" / "runs" / "b").resolve()


def test_directories_in_place_of_the_runs_files_are_moved_aside(tmp_path):
    # before: the run's test made report.txt (and run.json) directories: an IsADirectoryError
    # traceback, no report, no run.json
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sample.py").write_text(
        "import os\n\ndef test_plants():\n    d = os.environ['INTEROP_RESULTS_DIR']\n"
        "    for name in ('report.txt', 'run.json'):\n        os.mkdir(os.path.join(d, name))\n"
        "        open(os.path.join(d, name, 'kept'), 'w').close()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTEROP_", "PYTEST_"))}
    env.update(PYTHONPATH=str(ROOT), INTEROP_TIMING_PASS="0", INTEROP_REPRODUCERS="0")
    done = subprocess.run([sys.executable, "-m", "interop.reporting.run", "test_sample.py"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = (project / "results" / "runs").iterdir()
    assert (run / "report.txt").is_file() and json.loads((run / "run.json").read_text())["complete"] is True
    for name in ("report.txt", "run.json"):
        (aside,) = run.glob(f"{name}.in-the-way-*")
        assert (aside / "kept").exists()  # moved, never deleted
        assert f"{run / name}: not a file" in (run / "report.txt").read_text()


# ---- the run as a whole: python tests/unit/test_attack_table.py ----------------------------------
def outcomes_of(clone: Path, tests, timeout: float) -> dict[str, list[str]]:
    """``tests`` (``file::function`` under tests/unit) run in ``clone`` (one pytest, two workers, none of
    the caller's INTEROP_/PYTEST_ variables): ``file::function`` -> the status of each of its items."""
    nodes = sorted({f"{UNIT}/{t}" for t in tests})
    xml = clone / "attacks.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTEROP_", "PYTEST_"))}
    env["PYTHONPATH"] = str(clone)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", f"--junitxml={xml}",
                    *nodes], cwd=clone, env=env, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    outcomes: dict[str, list[str]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        file = case.get("classname", "").rsplit(".", 1)[-1] + ".py"
        status = ("failed" if case.find("failure") is not None or case.find("error") is not None
                  else "skipped" if case.find("skipped") is not None else "passed")
        outcomes.setdefault(f"{file}::{name}", []).append(status)
    return outcomes




def run_all(clone: Path, timeout: float) -> list[dict]:
    """Every kind's tests in ``clone`` (one pytest, two workers): one dict per kind."""
    outcomes = outcomes_of(clone, [t for _, _, tests in ATTACKS for t in tests], timeout)
    out = []
    for family, kind, tests in ATTACKS:
        seen = [s for t in tests for s in outcomes.get(t, ["missing"])]
        held = bool(seen) and all(s == "passed" for s in seen)
        out.append({"family": family, "kind": kind, "held": held, "items": len(seen),
                    "not passed": {t: outcomes.get(t, ["missing"]) for t in tests
                                   if any(s != "passed" for s in outcomes.get(t, ["missing"]))}})
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="issue 44's kinds of attack against HEAD, in a fresh clone")
    parser.add_argument("--json", type=Path, help="where the per-kind results go")
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args(argv)
    head = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="attacks-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        results = run_all(clone, args.timeout)
    families: dict[str, list[int]] = {}
    for r in results:
        print(f"{'held ' if r['held'] else 'BROKE'}  {r['family']}: {r['kind']} ({r['items']} test items)"
              + (f"  {r['not passed']}" if not r["held"] else ""))
        held, total = families.setdefault(r["family"], [0, 0])
        families[r["family"]] = [held + r["held"], total + 1]
    return summary(head, started, families, results, args.json, "all")


def summary(head: str, started: float, totals: dict[str, list[int]], results: list[dict], json_path: Path | None,
            label: str) -> int:
    """The runners' last lines (held of total per group, then all) and their JSON; the exit status."""
    print(f"\nHEAD {head}, {time.monotonic() - started:.0f} s, load {os.getloadavg()[0]:.1f}:")
    for key, (held, total) in totals.items():
        print(f"  {key}: {held} of {total} held")
    print(f"  {label}: {sum(r['held'] for r in results)} of {len(results)} kinds held, "
          f"{sum(r['items'] for r in results)} test items")
    if json_path:
        json_path.write_text(json.dumps({"head": head, "kinds": results}, indent=1) + "\n")
    return 0 if all(r["held"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
