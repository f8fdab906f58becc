"""Issue 44: asv result files whose figures are impossible or whose structure is hostile are
named problems (file, key, case) of :func:`interop.reporting.asv_results.load_asv_ratios`,
never a traceback nor a wrong rank."""
from __future__ import annotations

import json

import pytest

from interop.reporting.asv_results import load_asv_ratios

COMMIT = "0123456789abcdef0123456789abcdef01234567"
RATIO = "operators.Forward.track_aidge_torch_ratio"


def _write(tmp_path, results: dict | str, name: str = "py", date=1) -> str:
    path = tmp_path / "machine" / f"{COMMIT[:8]}-{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(results, str):
        path.write_text(results)
    else:
        text = json.dumps({"commit_hash": COMMIT, "env_name": name, "date": date, "results": results})
        path.write_text(text)
    return str(path)


def _row(values: dict) -> list:
    return [list(values.values()), [[repr(c) for c in values]]]


def _case_file(tmp_path, ratio, torch_s=1e-3, aidge_s=2e-3, name="py") -> str:
    return _write(tmp_path, {RATIO: _row({"ReLU_a": ratio, "Tanh_a": 3.0}),
                             "operators.Forward.time_torch": _row({"ReLU_a": torch_s, "Tanh_a": 1e-3}),
                             "operators.Forward.time_aidge": _row({"ReLU_a": aidge_s, "Tanh_a": 3e-3})}, name)


def test_a_ratio_its_own_medians_contradict_is_a_named_problem_not_the_worst_rank(tmp_path):
    # before: 1e300 replaced ModelTester's figure and was ranked the worst slowdown
    path = _case_file(tmp_path, 1e300)
    problems: list[str] = []
    asv = load_asv_ratios(tmp_path, COMMIT[:8], problems=problems)
    assert asv.ratios == {("Tanh_a", "forward"): 3.0}  # ReLU_a keeps its other figures in the report
    (problem,) = problems
    assert problem.startswith(f"{path}: key results.{RATIO}, case 'ReLU_a': the ratio 1e+300 disagrees")
    assert "(time_aidge / time_torch = 2)" in problem


@pytest.mark.parametrize("ratio", [4.51, 19.8, 0.202])  # the medians give 2; AGREEMENT is 10
def test_a_ratio_within_the_agreement_of_its_medians_is_kept(tmp_path, ratio):
    # the ratio benchmark and the quotient of two separately timed benchmarks differ for real
    # (LeNet_eval: 4.51 beside 1.96): only a gross disagreement is refused
    _case_file(tmp_path, ratio)
    problems: list[str] = []
    assert load_asv_ratios(tmp_path, COMMIT[:8], problems=problems).get("ReLU_a", "forward") == ratio
    assert problems == []


def test_a_ratio_without_medians_is_kept():
    from interop.reporting.asv_results import parse_result_file

    problems: list[str] = []
    assert parse_result_file({"results": {RATIO: _row({"ReLU_a": 7.0})}}, "f.json", problems) == \
        {("ReLU_a", "forward"): 7.0}
    assert problems == []


@pytest.mark.parametrize("value, said", [
    (int("9" * 400), "400-digit integer"),  # before: OverflowError out of math.isfinite
    (-2.0, "-2.0"), (0, "0"), ("fast", "'fast'"), (True, "True")])
def test_a_ratio_that_is_no_positive_number_is_named(tmp_path, value, said):
    path = _write(tmp_path, {RATIO: _row({"ReLU_a": value, "Tanh_a": 3.0})})
    problems: list[str] = []
    asv = load_asv_ratios(tmp_path, COMMIT[:8], problems=problems)
    assert asv.ratios == {("Tanh_a", "forward"): 3.0}
    assert problems == [f"{path}: key results.{RATIO}, case 'ReLU_a': the ratio {said} is no finite positive "
                        "number: left out"]


def test_null_and_nan_are_asvs_own_no_figure_and_stay_silent(tmp_path):
    _write(tmp_path, {RATIO: _row({"ReLU_a": None, "ReLU_b": float("nan"), "Tanh_a": 3.0})})
    problems: list[str] = []
    assert load_asv_ratios(tmp_path, COMMIT[:8], problems=problems).ratios == {("Tanh_a", "forward"): 3.0}
    assert problems == []


def test_a_400_digit_date_sorts_first_without_a_traceback(tmp_path):
    _case_file(tmp_path, 2.5, name="a")
    _write(tmp_path, {RATIO: _row({"ReLU_a": 9.0})}, name="b", date=int("9" * 400))
    assert load_asv_ratios(tmp_path, COMMIT[:8]).env == "a"


def test_a_deeply_nested_file_is_a_named_problem_and_the_others_are_read(tmp_path):
    # before: RecursionError out of json.loads, no report
    deep = _write(tmp_path, '{"commit_hash": "%s", "results": %s%s}' % (COMMIT, "[" * 100_000, "]" * 100_000),
                  name="deep")
    _case_file(tmp_path, 2.5, name="good")
    problems: list[str] = []
    asv = load_asv_ratios(tmp_path, COMMIT[:8], problems=problems)
    assert asv.env == "good" and asv.get("ReLU_a", "forward") == 2.5
    (problem,) = problems
    assert problem.startswith(f"asv result file {deep}: nested too deeply")


@pytest.mark.parametrize("text, why", [
    ("{not json", "Expecting property name"),
    (json.dumps({"commit_hash": COMMIT, "results": [1, 2]}), "key results: expected an object, got list"),
    (json.dumps({"commit_hash": COMMIT, "results": {RATIO: [[1.0], 5]}}), f"key results.{RATIO}: params is not"),
    (json.dumps({"commit_hash": COMMIT, "results": {RATIO: "x"}}), f"key results.{RATIO}: not asv's"),
])
def test_a_malformed_file_is_named(tmp_path, text, why):
    path = _write(tmp_path, text)
    problems: list[str] = []
    assert load_asv_ratios(tmp_path, COMMIT[:8], problems=problems) is None
    (problem,) = problems
    assert path in problem and why in problem
