"""Issue 59: the kinds of attack of this round, as a whole, beside the earlier rounds' (issue 44's table,
:data:`test_attack_table.ATTACKS`, which holds issue 44's and issue 34's kinds).

:data:`ATTACKS` lists each kind issue 59 names ("Why": code execution from data, silent wrong facts,
``python -m interop check``'s bad inputs, text that reaches people unescaped, what was left from before)
and the kinds its work added (every environment variable, a variable read but declared nowhere, a stop
signal at each step of a run's end), each with the tests that make it happen.

``python tests/unit/test_attack_table_injection.py [--json OUT]`` runs every kind of every round against HEAD in
a fresh clone (``git clone`` of this checkout into a temporary folder) and prints, per kind, held or
broke, and held / total by round and family. Under pytest, this module checks that every test the table
names exists (the table cannot rot)."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNIT = "tests/unit"
G, M, C, T, R = ("test_generated_scripts.py", "test_merge_proves.py", "test_check_cli_inputs.py",
                 "test_text_escape.py", "test_run_environment.py")
I = "test_interrupt_race.py"

#: (family, kind, [test file::function, ...]): the kind holds when every test it names passes
ATTACKS: list[tuple[str, str, list[str]]] = [
    # ---- code execution from data --------------------------------------------------------------
    ("code from data", 'a configuration label renamed to relu6"""+os.system(...)+""" (the config-label injection)',
     [f"{G}::test_a_factory_bundle_of_a_renamed_config_case_runs_only_its_check"]),
    ("code from data", '""" or \'\'\' in a node id, an Aidge message, an operator or node name, a parametrize id',
     [f"{G}::test_every_field_of_every_repro_script_is_data",
      f"{G}::test_a_real_bundle_whose_case_and_message_are_hostile_runs_only_its_check"]),
    ("code from data", "backslashes (C:\\Users, \\N) or a NUL byte in a message: repro.py a SyntaxError",
     [f"{G}::test_script_literal_round_trips_and_refuses_what_is_not_data",
      f"{G}::test_every_field_of_every_repro_script_is_data"]),
    ("code from data", "standalone.py embeds the hostile text",
     [f"{G}::test_standalone_script_holds_the_defect_s_id_and_title_as_data"]),
    # ---- silent wrong facts ---------------------------------------------------------------------
    ("wrong facts", "--merge of a shard whose records' outcome alone was edited (xfailed -> passed)",
     [f"{M}::test_a_shard_whose_outcome_alone_was_edited_is_refused_by_folder_nodeid_and_key",
      f"{M}::test_a_shard_whose_records_disagree_with_its_session_counts_is_refused",
      f"{M}::test_a_strict_xpass_flag_its_statuses_do_not_say_is_refused",
      f"{M}::test_consistent_shards_merge_with_counts_recomputed_from_their_records"]),
    ("wrong facts", "a shard's repro.py (or harness) replaced by other code, re-published by the merge",
     [f"{M}::test_a_shard_s_replaced_repro_py_is_not_republished_in_the_merged_run",
      f"{M}::test_an_edited_harness_is_not_republished_the_merged_run_generates_its_own"]),
    ("wrong facts", "a truncated, empty or directory model.onnx: exit 1 DEFECT PRESENT instead of 2",
     [f"{G}::test_an_unreadable_model_exits_2_not_defect_present", f"{G}::test_every_cut_of_the_model_exits_2",
      f"{G}::test_a_truncated_tensor_exits_2"]),
    ("wrong facts", "a FIFO as input_0.pb hangs repro.py", [f"{G}::test_a_fifo_in_the_bundle_exits_2_without_hanging"]),
    ("wrong facts", "repro.py --save-actual without a folder saves nothing, silently",
     [f"{G}::test_a_wrong_command_line_is_an_argparse_error_exit_2",
      f"{G}::test_save_actual_with_a_folder_saves_and_help_states_the_case"]),
    # ---- python -m interop check ----------------------------------------------------------------
    ("check", "a factory raising RuntimeError, OSError, KeyError",
     [f"{C}::test_a_raising_factory_is_the_models_own_error_in_one_line"]),
    ("check", "a forward that raises",
     [f"{C}::test_a_raising_forward_is_the_models_own_error_not_a_blocker",
      f"{C}::test_a_raising_forward_with_no_modules_is_no_blocker_either"]),
    ("check", "--input-shape 100000,100000,1000 and 99999999999999999999999,1",
     [f"{C}::test_a_shape_past_the_memory_estimate_is_refused_by_name", f"{C}::test_a_shape_is_positive_integers"]),
    ("check", "a factory that sleeps (the timeout did not cover it)",
     [f"{C}::test_a_factory_that_sleeps_is_stopped_at_the_timeout"]),
    ("check", "a forward that sleeps (_leaf_calls ran torch in the parent)",
     [f"{C}::test_a_forward_that_sleeps_is_stopped_at_the_timeout"]),
    ("check", "--timeout=-5 or nan: a false Aidge hang blocker",
     [f"{C}::test_a_timeout_is_finite_and_positive",
      f"{C}::test_the_library_check_refuses_a_bad_timeout_and_a_huge_shape"]),
    ("check", "--json: the factory's and the forward's prints before the JSON",
     [f"{C}::test_with_json_stdout_holds_only_the_report"]),
    # ---- text that reaches people unescaped -----------------------------------------------------
    ("text", "raw <script>, <img onerror> outside code spans in ISSUE.md and defects.md",
     [f"{T}::test_prose_is_shown_not_acted_on", f"{T}::test_defects_md_quotes_every_record_field",
      f"{T}::test_issue_md_quotes_every_record_field", f"{T}::test_slow_issue_md_quotes_every_record_field",
      f"{T}::test_a_code_span_holds_its_text_whatever_backticks_it_has",
      f"{T}::test_a_code_span_in_a_table_cell_keeps_the_cell",
      f"{T}::test_a_fence_is_longer_than_any_backtick_run_and_never_closes_early"]),
    ("text", "raw ESC/BEL bytes in defects.md and ISSUE.md (the terminal's title changed by cat)",
     [f"{T}::test_controls_are_escapes_and_printable_text_is_kept",
      f"{T}::test_the_porting_command_line_prints_no_raw_control"]),
    ("text", "the same in support.md and porting.md from record fields",
     [f"{T}::test_support_and_porting_markdown_quote_record_fields"]),
    # ---- left from before -----------------------------------------------------------------------
    ("left from before", "results/runs grows without bound (190 MB a run, nothing prunes or warns)",
     [f"{R}::test_prune_keeps_the_last_complete_runs_latest_and_the_historys_last", f"{R}::test_prune_needs_a_count",
      f"{R}::test_a_runs_folder_above_its_bound_is_a_warning_naming_its_size"]),
    ("left from before", "INTEROP_TIMING_PASS=banana: the tests ran, then a ValueError traceback, no report.txt",
     [f"{R}::test_a_run_deciding_value_that_is_no_value_is_one_line_before_pytest_starts",
      f"{R}::test_every_bad_value_is_named_at_once"]),
    ("left from before", "plain pytest on a read-only results/: an INTERNALERROR traceback",
     [f"{R}::test_a_read_only_results_folder_is_one_line_naming_it",
      f"{R}::test_a_read_only_results_dir_variable_is_one_line_naming_it"]),
    ("left from before", "a Ctrl-C the moment pytest.txt appears: exit 3 yet latest and a history line",
     [f"{I}::test_a_stop_signal_the_moment_pytest_txt_appears_is_a_stopped_run"]),
    ("left from before", "wrap(nn.Linear(16,4), (1,3)) prints torch's traceback before its ExportError",
     ["test_wrap_prints_nothing.py::test_an_export_that_fails_on_every_route_prints_nothing"]),
    # ---- added by this round's work -------------------------------------------------------------
    ("added", "any INTEROP_* variable read only inside pytest given a bad value (seed, timeouts, memory, "
              "shards, samples, dtypes, paths, flags, choices)",
     [f"{R}::test_a_bad_value_of_any_variable_stops_plain_pytest_before_anything_runs",
      f"{R}::test_a_bad_value_of_any_variable_stops_a_findings_run_before_pytest",
      f"{R}::test_a_findings_run_with_a_bad_seed_is_one_line_exit_2_nothing_written",
      f"{R}::test_an_option_on_the_command_line_decides_in_place_of_its_variable"]),
    ("added", "a variable read somewhere and declared nowhere (so checked nowhere)",
     [f"{R}::test_every_variable_the_package_names_is_declared_once"]),
    ("added", "a stop signal between the timing pass and the analysis, or after the analysis before the commit",
     [f"{I}::test_a_ctrl_c_between_the_timing_pass_and_the_analysis_is_a_stopped_run",
      f"{I}::test_a_ctrl_c_after_the_analysis_and_before_the_run_is_committed_is_a_stopped_run"]),
    ("added", "a stop signal once the run is committed (run.json, history, latest): exit 3 for a complete run",
     [f"{I}::test_a_ctrl_c_once_the_run_is_committed_changes_nothing_it_said",
      f"{I}::test_a_run_without_a_signal_is_complete"]),
]


def test_every_kind_names_tests_that_exist():
    sys.path.insert(0, str(ROOT / UNIT))
    from test_attack_table import missing_tests  # the one check of every round's list

    assert not missing_tests(ATTACKS)


def _rounds() -> list[tuple[str, list[tuple[str, str, list[str]]]]]:
    sys.path.insert(0, str(ROOT / UNIT))
    try:
        import test_attack_table as earlier
    finally:
        sys.path.pop(0)
    last = [a for a in earlier.ATTACKS if a[0].startswith("last round")]
    return [("issue 34", last), ("issue 44", [a for a in earlier.ATTACKS if a not in last]), ("issue 59", ATTACKS)]


def run_all(clone: Path, timeout: float) -> list[dict]:
    """Every kind's tests of every round in ``clone`` (one pytest, two workers): one dict per kind."""
    rounds = _rounds()
    sys.path.insert(0, str(ROOT / UNIT))
    from test_attack_table import outcomes_of  # the one runner of every round's kinds

    outcomes = outcomes_of(clone, [t for _, table in rounds for _, _, tests in table for t in tests], timeout)
    out = []
    for round_name, table in rounds:
        for family, kind, tests in table:
            seen = [s for t in tests for s in outcomes.get(t, ["missing"])]
            held = bool(seen) and all(s == "passed" for s in seen)
            out.append({"round": round_name, "family": family, "kind": kind, "held": held, "items": len(seen),
                        "not passed": {t: outcomes.get(t, ["missing"]) for t in tests
                                       if any(s != "passed" for s in outcomes.get(t, ["missing"]))}})
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    from test_attack_table import summary  # the runners' one summary

    parser = argparse.ArgumentParser(description="every round's kinds of attack against HEAD, in a fresh clone")
    parser.add_argument("--json", type=Path, help="where the per-kind results go")
    parser.add_argument("--timeout", type=float, default=3000.0)
    parser.add_argument("--clone", type=Path, help="an existing clone to run in (default: a fresh one of HEAD)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="attacks-") as tmp:
        clone = args.clone
        if clone is None:
            clone = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        head = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=clone, capture_output=True,
                              text=True).stdout.strip()
        results = run_all(clone, args.timeout)
    totals: dict[str, list[int]] = {}
    for r in results:
        print(f"{'held ' if r['held'] else 'BROKE'}  [{r['round']}] {r['family']}: {r['kind']} ({r['items']} test "
              f"items)" + (f"  {r['not passed']}" if not r["held"] else ""))
        for key in (r["round"], f"{r['round']} / {r['family']}"):
            held, total = totals.setdefault(key, [0, 0])
            totals[key] = [held + r["held"], total + 1]
    return summary(head, started, totals, results, args.json, "all rounds")


if __name__ == "__main__":
    sys.exit(main())
