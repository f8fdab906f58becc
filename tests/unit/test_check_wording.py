"""``interop check`` speaks a porter's words (issue 58): torch and Aidge, never the suite's
"model1 (...) and model2 (...)" (ModelTester's and verify's messages keep it: other code parses
them); each place a blocker shows quotes its own torch and Aidge values (a leaf's, not the whole
model's), in the text and in the JSON; no line cut inside a word; the operator named, never ``?``."""
from __future__ import annotations

import json

import torch

from interop.check import check
from interop.checking.report import Blocker
from interop.checking.words import WORDS_LIMIT, mismatch_words, porter_words, values_of
from interop.checking import passes as check_passes
from interop.checking.report import _merge
from interop.equivalence import verdict as verdict_module
from interop.equivalence.verdict import Verdict

#: verify's message of a value mismatch, as policy and the comparator write it
MESSAGE = """[verify, call {call}] output differs between model1 (torch) and model2 (AidgeModule) [seed 0]
Tensors are not close at output!

Mismatched elements: {bad} / {total} (100%)
Worst mismatch at index {index}: actual {actual}, expected {expected}
Greatest absolute difference: {abs} at index {index} (over mismatched elements)
Greatest relative difference: 3.174 at index {index} (over mismatched elements)
Tolerance: rtol=1.3e-06, atol=1e-05
attribution: aidge (onnxruntime on the same ONNX model agrees with torch; Aidge does not)"""


def _mismatch(call, index, actual, expected, bad, total):
    message = MESSAGE.format(call=call, index=tuple(index), actual=actual, expected=expected, bad=bad, total=total,
                             abs=abs(actual - expected))
    figures = {"path": "output", "n_mismatched": bad, "n_total": total, "max_abs": abs(actual - expected),
               "max_rel": 3.174, "worst_index": list(index), "worst_actual": actual, "worst_expected": expected,
               "rtol": 1.3e-06, "atol": 1e-05}
    return Verdict("fail", category="outputs_differ", attribution="aidge", phase="forward", mismatch=figures,
                   message=message, summary=f"outputs_differ [aidge] output at call {call} ({bad}/{total} elements, "
                                            f"max abs diff {abs(actual - expected):.3g})")


MODEL = _mismatch(1, (0, 3), 0.12294341, -0.05655183, 4, 4)
LEAF = _mismatch(1, (0, 7, 3, 10), 1.39579, 2.776, 1568, 1568)


def _no_suite_words(text: str) -> None:
    for word in ("model1", "model2", "AidgeModule", "actual", "expected"):
        assert word not in text, (word, text)


def test_the_suite_s_wording_is_said_in_torch_and_aidge():
    assert porter_words("[verify, call 2] grad of weight differs between model1 (torch) and model2 (AidgeModule) "
                        "[seed 7]") == "grad of weight (call 2) differs between torch and Aidge (seed 7):"
    assert porter_words("[ResNet, epoch 1] output differs between model1 (ResNet) and model2 (AidgeModule)") \
        == "[ResNet, epoch 1] output differs between torch and Aidge"
    assert porter_words("Worst mismatch at index (0, 3): actual 0.12, expected -0.05") \
        == "Worst mismatch at index (0, 3): torch -0.05, Aidge 0.12"
    assert porter_words("Shapes do not match at output: actual (2, 3) vs expected (3, 2)") \
        == "Shapes do not match at output: torch (3, 2), Aidge (2, 3)"
    assert porter_words("only in model1: ['a']; only in model2: ['b']") == "only in torch: ['a']; only in Aidge: ['b']"


def test_a_mismatch_quotes_its_own_torch_and_aidge_values():
    words = mismatch_words(LEAF)
    assert words.startswith("output (call 1) differs between torch and Aidge: at output[0, 7, 3, 10], "
                            "torch 2.776, Aidge 1.39579; 1568 of 1568 elements beyond rtol 1.3e-06 / atol 1e-05"), words
    assert "attribution: aidge (onnxruntime on the same ONNX model agrees with torch; Aidge does not)" in words
    _no_suite_words(words)
    assert values_of(LEAF.mismatch, 1) == {
        "at": "output", "call": 1, "index": [0, 7, 3, 10], "torch": 2.776, "Aidge": 1.39579, "mismatched": 1568,
        "elements": 1568, "max_abs": LEAF.mismatch["max_abs"], "max_rel": 3.174, "rtol": 1.3e-06, "atol": 1e-05}
    assert mismatch_words(Verdict("fail", message="output differs")) is None  # no figures: the message's words
    assert values_of({"path": "output", "n_mismatched": None}) is None  # shapes differ: no values to quote


def _checked(monkeypatch, model, verdicts):
    def fake(fn, *args, **kwargs):
        return verdicts.get(type(fn).__name__, Verdict("pass", summary="pass"))
    monkeypatch.setattr(verdict_module, "verify", fake)
    monkeypatch.setattr(check_passes, "backward_verdict", lambda *a, **k: Verdict("pass", summary="runs"))
    return check(model, (1, 3, 4, 4), ledger_ids=False)


def test_each_place_quotes_its_own_values_the_leaf_not_the_model_s(monkeypatch):
    """The porter's train-mode CNN, its verdicts stood in for: the whole model's output differs and
    so does the BatchNorm's alone; one blocker (one defect), and its line quotes the model's values
    at ``model`` and the leaf's at ``1 (BatchNorm2d)`` (before: the model's 4 outputs for both, in
    the suite's "model1 (torch) and model2 (AidgeModule)")."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.SiLU(),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4))
    report = _checked(monkeypatch, model, {"Sequential": MODEL, "BatchNorm2d": LEAF})
    forward = [b for b in report.blockers if b.phase == "forward"]
    assert len(forward) == 1, report.lines()
    (b,) = forward
    assert b.where == ["model", "1 (BatchNorm2d)"]
    assert b.operator == "BatchNorm2D" and b.operator_from == "leaf type"
    line = next(line for line in report.lines() if line.strip().startswith("forward:"))
    model_part, leaf_part = line.split("; in 1 (BatchNorm2d): ")
    assert "in model: output (call 1) differs between torch and Aidge: at output[0, 3], torch -0.0565518, " \
           "Aidge 0.122943; 4 of 4 elements" in model_part, line
    assert leaf_part.startswith("output (call 1) differs between torch and Aidge: at output[0, 7, 3, 10], "
                                "torch 2.776, Aidge 1.39579; 1568 of 1568 elements"), line
    assert "?" not in line.split(":")[1]
    for text in report.lines():
        _no_suite_words(text)
    data = report.as_dict()
    _no_suite_words(json.dumps(data))
    (j,) = [x for x in data["blockers"] if x["phase"] == "forward"]
    assert j["values_at"]["1 (BatchNorm2d)"]["torch"] == 2.776 and j["values_at"]["1 (BatchNorm2d)"]["Aidge"] == 1.39579
    assert j["values_at"]["model"]["torch"] == -0.05655183 and j["values_at"]["model"]["Aidge"] == 0.12294341
    assert "torch 2.776, Aidge 1.39579" in j["words_at"]["1 (BatchNorm2d)"]
    bn = next(m for m in data["modules"] if m["type"] == "BatchNorm2d")
    assert (bn["values"]["torch"], bn["values"]["Aidge"], bn["values"]["index"]) == (2.776, 1.39579, [0, 7, 3, 10])
    assert data["verdict"]["values"]["torch"] == -0.05655183


def test_an_identical_leaf_checked_once_does_not_claim_the_first_one_s_values(monkeypatch):
    model = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.ReLU(), torch.nn.BatchNorm2d(3))
    report = _checked(monkeypatch, model, {"BatchNorm2d": LEAF})
    (b,) = report.blockers
    assert b.where == ["0 (BatchNorm2d)", "2 (BatchNorm2d)"]
    assert b.words_at["2 (BatchNorm2d)"].startswith("as 0 (BatchNorm2d)")
    assert list(b.values_at) == ["0 (BatchNorm2d)"]
    line = report.lines()[1]
    assert "in 0 (BatchNorm2d): output (call 1) differs" in line and "; in 2 (BatchNorm2d): as 0 (BatchNorm2d)" in line


def test_places_with_the_same_words_share_one_quote():
    a = Blocker("import", "PRelu", "n1", "unsupported_operator", "aidge", "w", ["model"], defect_id="D-1")
    b = Blocker("import", "PRelu", "n1", "unsupported_operator", "aidge", "w", ["act1"], defect_id="D-1")
    (merged,) = _merge([a, b])
    assert merged.line().endswith("; in model, act1: w")


def test_each_place_s_words_are_cut_at_a_word_boundary():
    long = "attribution: aidge (" + " ".join(f"word{i:03d}" for i in range(200)) + ")"
    verdict = Verdict("fail", category="outputs_differ", attribution="aidge", phase="forward",
                      mismatch=LEAF.mismatch, message=LEAF.message.replace(LEAF.message.splitlines()[-1], long))
    words = mismatch_words(verdict)
    assert words.endswith("…") and len(words) <= WORDS_LIMIT
    assert words.startswith("output (call 1) differs between torch and Aidge: at output[0, 7, 3, 10], torch 2.776")
    last = words[:-1].split()[-1]
    assert last.startswith("word") and len(last) == 7, last  # no word cut
