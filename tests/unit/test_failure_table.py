"""The expected-failure table as data (interop.cases.failure_table) and the tool that keeps it
(python -m interop.triage): bad files are named to the key; a real run of the operator suite with
ten rows deleted gets them proposed back; a row whose cases pass is proposed for deletion; a
reworded message is proposed as an edit; a row of another release is widened, not duplicated."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from interop.cases import failure_table as ft
from interop.cases.expected_failures import expected_failure
from interop.reporting.triage_apply import apply_proposal, write_proposal
from interop.reporting.triage_changelog import release_diff
from interop.reporting.triage_propose import _case_of, propose
from interop.reporting.triage_ranges import narrow, widen

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------------------
# the data files
# ---------------------------------------------------------------------------------------
ROW = {"source": "operator", "operator": "Abs", "phase": "backward", "category": "backward_not_implemented",
       "quote": "Backward not yet implemented for Abs_Op on backend cpu", "attribution": None, "aidge": ">=0.10.1",
       "backends": None, "note": "", "cases": ["Abs:*"]}


def _table(tmp_path: Path, rows: list[dict], release: str = "0.10.1") -> Path:
    root = tmp_path / "table"
    (root / release).mkdir(parents=True, exist_ok=True)
    (root / release / "operator.backward_not_implemented.json").write_text(json.dumps({"release": release,
                                                                                       "rows": rows}))
    return root


def test_the_shipped_table_is_data_only_and_loads():
    files = sorted(ft.TABLE_DIR.glob("*/*.json"))
    assert files and not list(Path(ft.__file__).parent.glob("_*failures*.py"))
    entries = ft.load_table(ft.TABLE_DIR)
    assert len(entries) > 500
    assert all(e.file and e.index >= 0 for e in entries)
    # writing a file back gives the same text (one layout, readable diffs)
    for path in files:
        data = json.loads(path.read_text())
        assert ft.format_rows(data["release"], data["rows"]) == path.read_text(), path


@pytest.mark.parametrize("change, message", [
    ({"phase": "later"}, "key 'phase': unknown phase 'later'"),
    ({"colour": "red"}, "unknown key 'colour'"),
    ({"quote": ""}, "key 'quote'"),
    ({"aidge": "0.10"}, "key 'aidge': not a PEP 440 specifier set"),
    ({"aidge": ">=0.11"}, "does not hold 0.10.1"),
    ({"cases": ["Abs"]}, "key 'cases'"),
    ({"cases": ["opinfo:s*_5x5_cd74e810"]}, "sample hash"),
    ({"other_categories": ["hang"]}, "only with memory_unsafe"),
    # the types come from the one schema (TableRow), named the same way
    ({"memory_unsafe": 1}, "key 'memory_unsafe': wrong type int"),
    ({"backends": ["cpu", 2]}, "key 'backends': a list of names"),
    ({"quote": ["a quote", 2]}, "key 'quote': quote Aidge's error text"),
    ({"cases": ["Abs:*", None]}, "key 'cases': '<Operator>:<label pattern>' strings"),
    ({"note": None}, "key 'note': wrong type NoneType"),
])
def test_a_bad_row_is_named_by_file_row_and_key(tmp_path, change, message):
    root = _table(tmp_path, [ROW, dict(ROW, **change)])
    with pytest.raises(ft.TableError) as err:
        ft.load_table(root)
    assert "operator.backward_not_implemented.json row 1 (Abs)" in str(err.value) and message in str(err.value)


def test_a_missing_key_and_a_file_in_the_wrong_folder(tmp_path):
    row = dict(ROW)
    del row["category"]
    with pytest.raises(ft.TableError, match="row 0 .*missing key 'category'"):
        ft.load_table(_table(tmp_path / "a", [row]))
    root = _table(tmp_path / "b", [ROW])
    shutil.move(root / "0.10.1", root / "0.10.0")
    with pytest.raises(ft.TableError, match="key 'release' is '0.10.1' but the file sits in 0.10.0/"):
        ft.load_table(root)


def test_rows_apply_to_their_releases_and_the_lookup_uses_the_index(tmp_path, monkeypatch):
    old = dict(ROW, aidge="==0.10.0.post3", quote="old words")
    root = _table(tmp_path, [ROW])
    (root / "0.10.0.post3").mkdir()
    (root / "0.10.0.post3" / "operator.backward_not_implemented.json").write_text(ft.format_rows("0.10.0.post3", [old]))
    entries = ft.load_table(root)
    assert [e.error for e in ft.applicable(entries, "0.10.1")] == [ROW["quote"]]
    assert [e.error for e in ft.applicable(entries, "0.10.0.post3")] == ["old words"]
    assert ft.applicable(entries, "0.9.1.post2") == ()
    index = ft.TableIndex(entries)
    assert len(index.candidates("operator", "Abs")) == 2 and index.candidates("operator", "Neg") == []


def test_release_ranges_widen_and_narrow():
    assert widen(">=0.10.1", "0.10.0.post3") == ">=0.10.0.post3"
    assert widen(">=0.10.1,<0.11", "0.12") == [">=0.10.1,<0.11", "==0.12"]
    assert widen(">=0.10.1", "0.10.2") == ">=0.10.1"  # already held
    assert narrow(">=0.10.1", "0.10.1") is None  # fixed where it was seen: the row goes
    assert narrow(">=0.10.0.post3", "0.10.1") == ">=0.10.0.post3,<0.10.1"  # fixed in 0.10.1
    assert narrow(">=0.9.1.post2", "0.10.0.post3") == ">=0.9.1.post2,!=0.10.0.post3"
    assert narrow([">=0.10.1", "==0.9.1.post2"], "0.9.1.post2") == ">=0.10.1"
    assert narrow(">=0.10.0.post3", "0.10.0.post3") == ">=0.10.1"  # a widened row narrowed back


def test_the_release_diff_lists_defects_fixed_new_and_changed(tmp_path):
    both = dict(ROW, aidge=">=0.10.0.post3", defect="D-0000000b")
    fixed = dict(ROW, operator="Neg", cases=["Neg:*"], aidge="==0.10.0.post3", defect="D-0000000f")
    new = dict(ROW, operator="Erf", cases=["Erf:*"], aidge=">=0.10.1", defect="D-0000000e")
    # one defect, reworded by Aidge: a row per release, the same defect id
    old_words = dict(ROW, operator="Sin", cases=["Sin:*"], quote="old words", aidge="==0.10.0.post3",
                     defect="D-0000000c")
    new_words = dict(ROW, operator="Sin", cases=["Sin:*", "Sin:x"], aidge=">=0.10.1", defect="D-0000000c")
    export = dict(ROW, operator="Cos", cases=["Cos:*"], aidge=">=0.10.0.post3", attribution="export")
    root = _table(tmp_path, [both, new, new_words, export])
    (root / "0.10.0.post3").mkdir()
    (root / "0.10.0.post3" / "operator.backward_not_implemented.json").write_text(
        ft.format_rows("0.10.0.post3", [fixed, old_words]))
    text = release_diff("0.10.0.post3", "0.10.1", root)
    assert text.startswith("Aidge defects on 0.10.0.post3: 3 (3 rows); on 0.10.1: 3 (3 rows). Fixed in 0.10.1: 1; "
                           "new in 0.10.1: 1; holding on both: 2, 1 of them changed")
    assert "the 1 rows attributed to the export or to precision are no Aidge defect" in text
    assert "**Defects fixed in 0.10.1 (rows of 0.10.0.post3, none on 0.10.1): 1**" in text and "| D-0000000f |" in text
    assert "**Defects new in 0.10.1 (rows of 0.10.1, none on 0.10.0.post3): 1**" in text and "| D-0000000e |" in text
    assert "| D-0000000c | Sin has no backward on cpu | 1 | 1 | 1 -> 2 |" in text
    assert "D-0000000b" not in text  # holds, unchanged


def test_a_row_without_a_defect_id_is_its_own_signature_s_defect(tmp_path):
    from interop.registry.identify import defect_id, row_signature

    root = _table(tmp_path, [dict(ROW, aidge=">=0.10.1")])
    (root / "0.10.0.post3").mkdir()  # a row of the source on the older release: the source was checked there
    (root / "0.10.0.post3" / "operator.backward_not_implemented.json").write_text(
        ft.format_rows("0.10.0.post3", [dict(ROW, operator="Neg", cases=["Neg:*"], aidge="==0.10.0.post3")]))
    (entry,) = [e for e in ft.load_table(root) if e.operator == "Abs"]
    text = release_diff("0.10.0.post3", "0.10.1", root)
    assert f"| {defect_id(row_signature(entry))} |" in text.split("Defects new in 0.10.1")[1]


def test_a_source_the_older_release_never_checked_is_left_out_of_the_diff(tmp_path):
    root = _table(tmp_path, [dict(ROW, aidge=">=0.10.1"), dict(ROW, source="architecture", operator="Erf",
                                                              cases=["ResNet:train"], aidge=">=0.10.1")])
    (root / "0.10.0.post3").mkdir()
    (root / "0.10.0.post3" / "operator.backward_not_implemented.json").write_text(
        ft.format_rows("0.10.0.post3", [dict(ROW, aidge="==0.10.0.post3")]))
    text = release_diff("0.10.0.post3", "0.10.1", root)
    assert "left out, as no run of 0.10.0.post3 checked them: architecture" in text and "Erf" not in text


def test_a_defect_id_is_checked(tmp_path):
    with pytest.raises(ft.TableError, match="key 'defect'"):
        ft.load_table(_table(tmp_path, [dict(ROW, defect="Slice is broken")]))


# ---------------------------------------------------------------------------------------
# the tool on a real run of the operator suite
# ---------------------------------------------------------------------------------------
#: ten rows of the shipped table, deleted from the run's table: (file, index) as shipped
DELETED = {"operator.aidge_error.json": [0, 1], "operator.compile_error.json": [0],
           "operator.output_shape_differs.json": [0, 1, 2, 3], "operator.unsupported_operator.json": [0, 1, 2]}
SELECTION = ("Pad_interop or Flatten_interop or ConvDepthwise2D_interop or Reduce or ELU_interop or Conv2D_interop "
             "or LayerNorm_interop")
#: a case of the selection that passes: a row made up for it must come back as "fixed"
PASSING = "Conv2D:attributes_kernel_square"
REWORDED = "Backward not yet implemented for LayerNorm_Op on backend cpu (old wording)"


def _rows(path: Path) -> list[dict]:
    return json.loads(path.read_text())["rows"]


@pytest.fixture(scope="module")
def run_with_ten_rows_deleted(tmp_path_factory):
    """(run folder, its table, the deleted rows): the operator suite's selection run with a copy
    of the table that lacks ten rows, has one row reworded and one row made up for a passing case."""
    tmp = tmp_path_factory.mktemp("triage")
    table = tmp / "table"
    shutil.copytree(ft.TABLE_DIR, table)
    folder = table / "0.10.1"
    deleted = []
    for name, indices in DELETED.items():
        rows = _rows(folder / name)
        deleted += [rows[i] for i in indices]
        ft.write_table_file(folder / name, "0.10.1", [r for i, r in enumerate(rows) if i not in indices])
    rows = _rows(folder / "operator.backward_not_implemented.json")
    (layer_norm,) = [r for r in rows if r["cases"] == ["LayerNorm:*"]]
    layer_norm["quote"] = REWORDED
    made_up = dict(ROW, operator="Conv2D", phase="forward", category="outputs_differ",
                   quote="output differs between model1 (Conv2D) and model2 (AidgeModule)", detected_by="comparator",
                   cases=[PASSING])
    ft.write_table_file(folder / "operator.backward_not_implemented.json", "0.10.1", rows)
    ft.write_table_file(folder / "operator.outputs_differ.json", "0.10.1",
                        _rows(folder / "operator.outputs_differ.json") + [made_up])
    assert len(deleted) == 10
    run = tmp / "run"
    env = dict(os.environ, INTEROP_EXPECTED_FAILURES=str(table), INTEROP_RECORDS_DIR=str(run))
    env.pop("INTEROP_SHARD", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--records", str(run), "tests/test_operators.py", "-k", SELECTION],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # the deleted rows' cases fail
    return run, table, deleted


def _case(key: str, kind: str = "operator"):
    operator, label = key.split(":")
    return types.SimpleNamespace(kind=kind, operator=operator, label=label, backend="cpu",
                                 phases=("export", "import", "compile", "forward", "backward", "step"),
                                 params={}, id=f"{operator}_{label}")


def test_deleted_rows_are_proposed_back_and_the_applied_table_decides_their_cases(run_with_ten_rows_deleted):
    run, table, deleted = run_with_ten_rows_deleted
    proposal = propose(run, table)
    added = [c["after"] for c in proposal.changes if c["action"] == "add"]
    assert added and not proposal.left_out
    originals = [ft.entry_of(r) for r in deleted]
    for original in originals:
        covered = [row for row in added
                   if any(ft.entry_of(row).covers("operator", *key.split(":")) for key in row["cases"]
                          for _ in [0] if original.covers("operator", *key.split(":")))]
        assert covered, f"no proposed row for the deleted {original.operator} {original.cases}"
        for row in covered:
            assert (row["phase"], row["category"]) == (original.phase, original.category), row
            assert row["quote"] in original.error or original.error in row["quote"], (row["quote"], original.error)
    # the diff is what a maintainer reads; --apply writes it; the table then decides each case as before
    data, diff = write_proposal(proposal)
    assert data.parent == run / "triage" and "+   \"cases\": [" in diff.read_text()
    applied = tmp = table.parent / "applied"
    shutil.copytree(table, tmp)
    moved = json.loads(data.read_text())
    moved["files"] = {k.replace(str(table), str(tmp)): v for k, v in moved["files"].items()}
    moved["table_dir"] = str(tmp)
    (run / "moved.json").write_text(json.dumps(moved))
    apply_proposal(run / "moved.json")
    entries = ft.applicable(ft.load_table(applied), "0.10.1")
    for row in added:
        for key in row["cases"]:
            got = expected_failure(_case(key), table=entries)
            assert got is not None and (got.phase, got.category) == (row["phase"], row["category"]), key


def test_a_row_whose_cases_all_pass_is_proposed_for_deletion(run_with_ten_rows_deleted):
    run, table, _ = run_with_ten_rows_deleted
    proposal = propose(run, table)
    (fixed,) = [c for c in proposal.changes if c["action"] == "fixed"]
    assert fixed["operator"] == "Conv2D" and fixed["after"] is None and fixed["cases"] == [
        "Conv2D_attributes_kernel_square"]
    new_text = proposal.files[str(table / "0.10.1" / "operator.outputs_differ.json")][1]
    assert PASSING not in new_text


def test_a_reworded_message_is_proposed_as_an_edit(run_with_ten_rows_deleted):
    run, table, _ = run_with_ten_rows_deleted
    proposal = propose(run, table)
    edits = [c for c in proposal.changes if c["action"] == "edit"]
    assert [(c["operator"], c["before"], c["after"]) for c in edits] == [
        ("LayerNorm", {"quote": REWORDED}, {"quote": "Backward not yet implemented for LayerNorm_Op on backend cpu"})]


def test_a_row_of_another_release_is_widened_instead_of_added(run_with_ten_rows_deleted, tmp_path):
    run, table, deleted = run_with_ten_rows_deleted
    other = tmp_path / "table"
    shutil.copytree(table, other)
    old = [dict(r, aidge="==0.10.0.post3") for r in deleted]
    ft.write_table_file(other / "0.10.0.post3" / "operator.mixed.json", "0.10.0.post3", old)
    proposal = propose(run, other)
    actions = {c["action"] for c in proposal.changes}
    assert "add" not in actions, [c for c in proposal.changes if c["action"] == "add"]
    widened = [c for c in proposal.changes if c["action"] == "widen"]
    assert len(widened) == 10 and all(c["after"] == ["==0.10.0.post3", "==0.10.1"] for c in widened)


def test_the_command_line(run_with_ten_rows_deleted, tmp_path):
    run, table, _ = run_with_ten_rows_deleted
    cmd = [sys.executable, "-m", "interop.triage"]
    proc = subprocess.run(cmd + ["update", str(run), "--table", str(table)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "review " in proc.stdout and "add" in proc.stdout, proc.stderr
    assert not list(tmp_path.iterdir())  # nothing written into the current directory
    proc = subprocess.run(cmd + ["update", str(tmp_path / "nothing")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no records.jsonl" in proc.stderr


def test_a_mismatch_with_its_row_carries_the_failures_own_fields():
    """The triage tool reads what the failure is, typed, not the guard's text about it."""
    from interop.cases.expected_failures import ExpectedFailure, ExpectedFailureMismatch, expected_failure_guard
    from interop.errors import AidgeError

    entry = ExpectedFailure("Op", "forward", "aidge_error", "Step (-1) is negative", ("Op:*",))
    with pytest.raises(ExpectedFailureMismatch) as err:
        with expected_failure_guard(entry):
            raise AidgeError("compile", "Slice: Step (-1) is negative, we must have End (")
    assert (err.value.category, err.value.phase) == ("compile_error", "compile")


def test_a_proposal_from_an_interrupted_run_says_so(run_with_ten_rows_deleted, tmp_path):
    run, table, _ = run_with_ten_rows_deleted
    partial = tmp_path / "partial"
    shutil.copytree(run, partial)
    session = json.loads((partial / "session.json").read_text())
    session.update(complete=False, ended="interrupted (KeyboardInterrupt or a signal): the records are partial")
    (partial / "session.json").write_text(json.dumps(session))
    assert propose(run, table).incomplete is None
    assert propose(partial, table).incomplete.startswith("interrupted")
    proc = subprocess.run([sys.executable, "-m", "interop.triage", "update", str(partial), "--table", str(table)],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("RUN INCOMPLETE (interrupted"), proc.stdout


def _with_refused_exports(run: Path, into: Path, nodeids: set[str]) -> Path:
    """A copy of ``run`` whose records of ``nodeids`` say the export check refused their graph."""
    shutil.copytree(run, into)
    lines = []
    for line in (run / "records.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("nodeid") in nodeids:
            rec["reproducer"] = {"written": True, "export_valid": False}
            rec["attribution_reason"] = ("the exported graph is invalid, so Aidge is not blamed: InvalidGraph: "
                                         "[ONNXRuntimeError] : 10 : INVALID_GRAPH : type int64 is not allowed")
        lines.append(json.dumps(rec))
    (into / "records.jsonl").write_text("\n".join(lines) + "\n")
    return into


def test_an_error_row_whose_exports_onnxruntime_refuses_is_proposed_as_the_export_s(run_with_ten_rows_deleted,
                                                                                      tmp_path):
    """issue 42: blamed on Aidge only after the export passes. A row all of whose reached cases have an
    export that onnx's checker or onnxruntime refuses moves to attribution export, the refusal quoted;
    one case with a valid export keeps the row Aidge's."""
    run, table, _ = run_with_ten_rows_deleted
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    reduce_mean = {r["nodeid"] for r in records if r.get("outcome") == "xfailed"
                  and r.get("category") == "backward_not_implemented" and r.get("aidge_operator") == "ReduceMean"}
    assert len(reduce_mean) > 1
    refused = _with_refused_exports(run, tmp_path / "all", reduce_mean)
    attributed = [c for c in propose(refused, table).changes if c["action"] == "attribute"]
    assert [(c["operator"], c["after"]) for c in attributed] == [("ReduceMean", {"attribution": "export"})]
    assert "INVALID_GRAPH" in attributed[0]["why"] and sorted(attributed[0]["cases"])
    partly = _with_refused_exports(run, tmp_path / "part", set(sorted(reduce_mean)[1:]))
    assert [c for c in propose(partly, table).changes if c["action"] == "attribute"] == []


def test_the_proposal_speaks_in_defects(run_with_ten_rows_deleted):
    from interop.registry.identify import identify
    from interop.records.store import load_run

    run, table, deleted = run_with_ten_rows_deleted
    proposal = propose(run, table)
    failed = [(_case_of(r), r) for r in load_run(run).records if r.get("outcome") in ("failed", "error")]
    added = [c for c in proposal.changes if c["action"] == "add"]
    listed = {d["id"] for bucket in ("new", "changed") for d in proposal.defects[bucket]}
    assert added
    for change in added:
        row = change["after"]
        entry = ft.entry_of(row)
        ids = {identify(r)["id"] for case, r in failed
               if case is not None and entry.covers(case.kind, case.operator, case.label, case.backend)
               and r.get("category") == row["category"] and r.get("phase") == row["phase"]}
        assert row.get("defect") in ids, (row, ids)  # a new row names the defect of the failures it decides
        assert row["defect"] in listed
    # a row whose quote Aidge reworded is an edit: its defect changed
    assert any(c["action"] == "edit" for c in proposal.changes)
    assert proposal.defects["changed"]


def test_a_row_quoting_the_suite_s_words_names_the_check_that_saw_it(tmp_path):
    ours = dict(ROW, category="outputs_differ", phase="forward", quote="Tensors are not close at output!")
    with pytest.raises(ft.TableError, match="the suite's words, seen by its comparator"):
        ft.load_table(_table(tmp_path / "a", [ours]))
    (entry,) = ft.load_table(_table(tmp_path / "b", [dict(ours, detected_by="comparator")]))
    assert entry.detected_by == "comparator"
    with pytest.raises(ft.TableError, match="the quote is Aidge's own words"):
        ft.load_table(_table(tmp_path / "c", [dict(ROW, detected_by="comparator")]))
    assert ft.detected_by("crash", "crash: process killed by SIGSEGV during forward") == "process supervisor"
    assert ft.detected_by("aidge_error", "Aidge does not compute on empty tensors") == "bridge guard"
    assert ft.detected_by("unsupported_operator", "(ONNX op Elu)") == "bridge guard"
    assert ft.detected_by("accepts_invalid_input", "Aidge accepts invalid input") == "negative case"
    assert ft.detected_by("aidge_error", "Slice: Step (-1) is negative, we must have End (") is None


def test_every_shipped_row_quoting_the_suite_s_words_says_so():
    entries = ft.load_table()
    ours = [e for e in entries if e.detected_by]
    assert ours and all(ft.detected_by(e.category, e.quotes[0]) == e.detected_by for e in entries)


def test_the_row_schema_is_written_once():
    """Issue 46 item 2 (the table's half): the keys, their types, which are required and the order a
    file writes them in all come from TableRow; a row read is a TableRow before it is an entry."""
    assert ft.KEY_ORDER == tuple(ft.TableRow.model_fields)  # a pydantic model (issue 46 item 2)
    assert set(ft._REQUIRED_KEYS) == {"source", "operator", "phase", "category", "quote", "aidge", "cases"}
    assert not hasattr(ft, "_REQUIRED") and not hasattr(ft, "_OPTIONAL")
    row = ft._check_row(dict(ROW), "here")
    assert isinstance(row, ft.TableRow) and ft.entry_of(row) == ft.entry_of(dict(ROW))
