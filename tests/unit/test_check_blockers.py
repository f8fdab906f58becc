"""interop.check (``python -m interop check``) lists every blocker, and only real ones: a leaf's
backward is checked whatever its forward verdict, float32 rounding is a note, in-place leaves are
compared on their own inputs, integer inputs for an embedding, lines cut at word boundaries with
the operator always named, and the defect id the ledger gives the same failure."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from interop.check import check
from interop.checking.defect_ids import ledger_record
from interop.checking.inputs import make_inputs, parse_dtype
from interop.checking.report import Blocker
from interop.checking.words import WORDS_LIMIT
from interop.checking import passes as check_passes
from interop.checking.leaves import _leaf_calls
from interop.checking.words import _words
from interop.equivalence import verdict as verdict_module
from interop.equivalence.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]


def _fake_verify(verdicts):
    """verify replaced by a table: the verdict of ``type(fn).__name__`` (pass where none is given)."""
    def fake(fn, *args, **kwargs):
        return verdicts.get(type(fn).__name__, Verdict("pass", summary="pass"))
    return fake


# -- 1. a leaf's backward is checked whatever its forward verdict ----------------------------------
def test_a_train_mode_batchnorm_lists_its_forward_mismatch_and_its_missing_backward():
    """The porter's case, reduced to its BatchNorm: Aidge ignores training mode (the forward
    differs), and BatchNorm2D has no backward; both are listed in one call (before: the forward
    mismatch hid the backward, only --eval showed it)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4)).train()
    report = check(model, (2, 3, 8, 8), ledger_ids=False)
    found = {(b.phase, b.category): b for b in report.blockers}
    assert ("forward", "outputs_differ") in found, report.lines()
    assert ("backward", "backward_not_implemented") in found, report.lines()
    assert found[("backward", "backward_not_implemented")].operator == "BatchNorm2D"
    assert "1 (BatchNorm2d)" in found[("backward", "backward_not_implemented")].where
    bn = next(m for m in report.modules if m["type"] == "BatchNorm2d")
    assert bn["outcome"] == "fail" and bn["backward"]["outcome"] == "error"
    assert model.training and model[1].training  # the caller's modes are kept
    # the forward line quotes the BatchNorm's own torch and Aidge values at its place (before: the
    # whole model's, in the suite's "model1 (torch) and model2 (AidgeModule)")
    forward = found[("forward", "outputs_differ")]
    values = bn["values"]
    assert forward.values_at["1 (BatchNorm2d)"] == values and values["elements"] == 2 * 4 * 8 * 8
    own = f"torch {values['torch']:.6g}, Aidge {values['Aidge']:.6g}"
    assert own in forward.words_at["1 (BatchNorm2d)"], forward.words_at
    assert f"in 1 (BatchNorm2d): output (call {values['call']}) differs between torch and Aidge" in forward.line()
    assert not any(w in line for line in report.lines() for w in ("model1", "model2", "AidgeModule")), report.lines()


def test_the_second_verdict_says_when_the_backward_runs(monkeypatch):
    """A leaf whose forward differs but whose backward runs: no backward blocker, the entry says so."""
    monkeypatch.setattr(verdict_module, "verify", _fake_verify({
        "Linear": Verdict("fail", category="outputs_differ", attribution="aidge", phase="forward",
                          summary="outputs_differ [aidge] output at call 1", message="output differs")}))
    report = check(torch.nn.Sequential(torch.nn.Linear(4, 3)), (2, 4), ledger_ids=False)
    leaf = report.modules[0]
    assert leaf["backward"]["outcome"] == "pass" and "runs" in leaf["backward"]["summary"]
    assert [(b.phase, b.operator) for b in report.blockers] == [("forward", "FC")]


# -- 2. float32 rounding is a note, never an Aidge blocker ------------------------------------------
def test_a_precision_difference_is_a_note_without_a_defect_id(monkeypatch):
    precision = Verdict("fail", category="gradients_differ", attribution="precision", phase="backward",
                        summary="gradients_differ [precision] grad of weight at call 2",
                        message="[verify, call 2] grad of weight differs ... Greatest relative difference: 5.4e-05\n"
                                "attribution: precision (Aidge's gradient is no farther from torch's float64 "
                                "gradient than torch float32's is)")
    monkeypatch.setattr(verdict_module, "verify", _fake_verify({"Conv2d": precision}))
    report = check(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()), (1, 3, 8, 8))
    assert report.blockers == [] and report.passed
    assert [(n.phase, n.attribution, n.defect_id) for n in report.notes] == [("backward", "precision", None)]
    lines = report.lines()
    assert "no blocker found" in lines[0]
    assert any(line.strip().startswith("note, not a blocker (float32 rounding)") for line in lines), lines
    assert report.as_dict()["notes"][0]["attribution"] == "precision"
    assert report.replaced is None  # nothing blocked: no leaf replaced


def test_the_rounding_a_passing_verdict_lists_is_a_note(monkeypatch):
    """verify goes on past a float32-rounding difference and lists it (``Verdict.precision``): check
    says it as a note, the model passes."""
    line = ("grad of weight differs by float32 rounding only: 8 of 216 elements beyond rtol 1.3e-06 / atol 1e-05, "
            "max |diff| 8.01e-05 (within torch float32's own error against float64)")
    monkeypatch.setattr(verdict_module, "verify", _fake_verify({"Conv2d": Verdict("pass", summary="pass",
                                                                                  precision=(line,))}))
    report = check(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3)), (1, 3, 8, 8))
    assert report.passed and report.blockers == []
    assert [(n.phase, n.operator, n.where) for n in report.notes] == [("backward", "Conv2D", ["0 (Conv2d)"])]


# -- 3. in-place leaves are compared, not called not_comparable -----------------------------------
def test_the_inputs_of_an_in_place_leaf_are_those_before_its_call():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(inplace=True))
    x = torch.randn(8, 4)
    calls = {c["path"]: c for c in _leaf_calls(model, [x])}
    expected = model[0](x).detach()
    assert torch.equal(calls["1"]["args"][0], expected) and bool((expected < 0).any())


def test_in_place_activations_are_checked_and_pass():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(inplace=True), torch.nn.Linear(4, 4),
                                torch.nn.ReLU6(inplace=True), torch.nn.Hardswish(inplace=True)).eval()
    report = check(model, (2, 4), ledger_ids=False)
    assert not any(b.category == "not_comparable" for b in report.blockers), report.lines()
    assert report.blockers == [], report.lines()
    in_place = [m for m in report.modules if m.get("in_place")]
    assert [m["type"] for m in in_place] == ["ReLU", "ReLU6", "Hardswish"]
    assert all(m["outcome"] == "pass" for m in in_place), in_place


# -- 4. integer inputs: --input-dtype, and an embedding first ---------------------------------------
def test_dtypes_parse_and_bad_text_is_named():
    assert parse_dtype("int64") is torch.int64 and parse_dtype("torch.float32") is torch.float32
    assert parse_dtype("long") is torch.int64
    for bad in ("int65", "Tensor", "__class__", "float32)"):
        with pytest.raises(ValueError, match=repr(bad).replace("(", r"\(").replace(")", r"\)")):
            parse_dtype(bad)


def test_an_embedding_first_gets_indices_in_its_range():
    model = torch.nn.Sequential(torch.nn.Embedding(7, 3), torch.nn.Flatten(), torch.nn.Linear(15, 2))
    (ids,) = make_inputs(model, [(4, 5)])
    assert ids.dtype == torch.int64 and int(ids.min()) >= 0 and int(ids.max()) < 7
    (x,) = make_inputs(torch.nn.Linear(3, 2), [(2, 3)])
    assert x.dtype == torch.float32
    a, b = make_inputs(torch.nn.Linear(3, 2), [(2, 3), (2,)], ["float64", "int32"])
    assert (a.dtype, b.dtype) == (torch.float64, torch.int32)
    with pytest.raises(ValueError):
        make_inputs(torch.nn.Linear(3, 2), [(2, 3)], ["float32", "int64"])


def test_check_runs_a_model_that_starts_with_an_embedding():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 8), torch.nn.Flatten(), torch.nn.Linear(40, 4))
    report = check(model, (2, 5), ledger_ids=False, backward=False)
    assert report.verdict.outcome == "pass", report.lines()
    assert report.blockers == []


def test_the_cli_names_a_bad_dtype_in_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "interop", "check", "torch.nn:Identity", "--input-shape", "2,5",
                           "--input-dtype", "int65"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    assert "int65" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    helped = subprocess.run([sys.executable, "-m", "interop", "check", "--help"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert "--input-dtype" in helped.stdout


# -- 5. lines: no word cut, the operator always named ----------------------------------------------
def test_words_are_cut_at_a_word_boundary_with_an_ellipsis():
    text = "Aidge forward failed (operator X, node 'n'): " + " ".join(f"word{i:03d}" for i in range(200))
    words = _words(text)
    assert words.endswith("…") and len(words) <= WORDS_LIMIT
    assert all(w.startswith("word") and len(w) == 7 for w in words[:-1].split())  # no word cut
    assert _words("short message") == "short message"


def test_the_operator_is_never_a_question_mark(monkeypatch):
    line = Blocker(None, None, None, "outputs_differ", "aidge", "differs", ["model"]).line()
    assert "?" not in line and "operator unknown" in line and "phase unknown" in line
    monkeypatch.setattr(verdict_module, "verify", _fake_verify({
        "BatchNorm2d": Verdict("fail", category="outputs_differ", attribution="aidge", phase="forward",
                               summary="outputs_differ [aidge] output", message="output differs")}))
    monkeypatch.setattr(check_passes, "backward_verdict", lambda *a, **k: Verdict("pass", summary="runs"))
    report = check(torch.nn.Sequential(torch.nn.BatchNorm2d(2)), (2, 2, 3, 3), ledger_ids=False)
    (b,) = report.blockers
    assert b.operator == "BatchNorm2D" and b.operator_from == "leaf type"
    assert all("?" not in line.split(":")[1] for line in report.lines()[1:-1]), report.lines()


# -- 6. the defect id is the ledger's ---------------------------------------------------------------
def test_check_and_the_ledger_give_a_train_mode_batchnorm_the_same_id(capfd):
    """The record a findings run writes for a train-mode BatchNorm's mismatch (its reproducer's first
    diverging node included) gives the ledger's id; check gives its blocker that id (before: check
    computed D-e8185c3d from the verdict alone, the ledger and the table say D-c80900db)."""
    from interop.equivalence.isolation import run_isolated
    from interop.reporting.ledger import build_ledger

    table = json.loads((ROOT / "interop/cases/expected/0.10.1/model.outputs_differ.json").read_text())
    row = next(r for r in table["rows"] if "ResNet:train" in r.get("cases", []))
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(4).train()
    x = torch.randn(2, 4, 6, 6)
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        record = run_isolated(ledger_record, bn, (x,), directory, "tests/models::ResNet_train_like",
                              timeout=300)
    assert record["first_diverging"]["aidge_type"] == "BatchNorm2D"
    entries = build_ledger([record])
    assert [e["id"] for e in entries] == [row["defect"]]  # the ledger's id is the table's
    capfd.readouterr()
    report = check(torch.nn.Sequential(bn), x)
    assert capfd.readouterr() == ("", "")  # the records are built in children, quietly
    forward = [b for b in report.blockers if b.phase == "forward"]
    assert [b.defect_id for b in forward] == [row["defect"]], report.lines()
    assert forward[0].defect_id_how == "the run's record"
    assert forward[0].operator == "BatchNorm2D"
