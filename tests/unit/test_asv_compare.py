"""Issue 49, asv output: ``nox -s compare`` shows what changed, each benchmark kind at the factor
the measured noise floor supports (noxfile.py COMPARE_FACTORS, docs/benchmarks.md). Canned
``asv compare --only-changed`` output, no asv run, no timed assertion."""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools import compare_changed  # noqa: E402

FACTORS = {"track_aidge_torch_ratio": 1.5, "time_bridge": 2.5, "time_aidge": 3.0, "time_torch": 3.5}

#: what asv 0.6.6 prints for `asv compare --factor 1.5 --only-changed --sort ratio A B` (tabulate "github")
ASV_OUTPUT = """\
| Change   | Before [aaaaaaaa] <main>   | After [bbbbbbbb]   |   Ratio | Benchmark (Parameter)                                   |
|----------|----------------------------|--------------------|---------|---------------------------------------------------------|
| !        | 1.20±0.01ms                | failed             |     n/a | models.Forward.time_bridge('LeNet_eval')                |
| +        | 2.10±0.05ms                | 7.40±0.1ms         |    3.52 | models.Forward.time_aidge('MobileNetV1_eval')           |
| +        | 1.02±0.05ms                | 2.13±0.01ms        |    2.09 | models.Forward.time_aidge('MobileNetV1_train')          |
| +        | 1.30                       | 2.10               |    1.62 | operators.Forward.track_aidge_torch_ratio('ReLU_rank_2') |
| +        | 11.0±0.1μs                 | 17.1±0.1μs         |    1.55 | operators.Forward.time_torch('ReLU_rank_2')             |
| -        | 3.00±0.1μs                 | 0.95±0.01μs        |    0.32 | operators.Backward.time_bridge('ReLU_rank_2')           |
"""


def test_each_kind_is_kept_over_its_own_factor_only():
    kept, counts = compare_changed.filter_rows(ASV_OUTPUT, FACTORS)
    names = [compare_changed.parse_row(line)["name"] for line in kept]
    assert names == ["models.Forward.time_bridge('LeNet_eval')",          # a new failure: always
                     "models.Forward.time_aidge('MobileNetV1_eval')",      # 3.52 > 3
                     "operators.Forward.track_aidge_torch_ratio('ReLU_rank_2')",  # 1.62 > 1.5
                     "operators.Backward.time_bridge('ReLU_rank_2')"]      # 1/0.32 = 3.1 > 2.5
    # the one-blank-line commit's 2.09x time_aidge and a 1.55x time_torch are within their noise floor
    assert counts["dropped"] == {"time_aidge": 1, "time_torch": 1}


def test_rows_that_are_no_change_are_never_kept():
    text = ("| Change | Before | After | Ratio | Benchmark (Parameter) |\n|---|---|---|---|---|\n"
            "|        | 1.00ms | 9.00ms | ~9.00 | models.Forward.time_aidge('X') |\n"
            "| x      | 1.00ms | 9.00ms |  9.00 | models.Forward.time_aidge('Y') |\n"
            "|        | n/a    | n/a    |   n/a | models.Forward.time_aidge('Z') |\n")
    assert compare_changed.filter_rows(text, FACTORS)[0] == []


def test_the_kind_of_a_row():
    assert compare_changed.kind_of("operators.Forward.time_aidge('ReLU_rank_2')") == "time_aidge"
    assert compare_changed.kind_of("models.Backward.track_aidge_torch_ratio('LeNet_train') [m/env]") == \
        "track_aidge_torch_ratio"


def _noxfile_factors() -> dict:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    (value,) = [ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                and any(getattr(t, "id", None) == "COMPARE_FACTORS" for t in n.targets)]
    return value


def test_compare_never_shows_a_change_the_site_calls_noise():
    """Every kind's factor is at least 1 + asv.conf.json's regressions_threshold of that kind (what the
    site marks), and the noise-floor doc holds the maxima the factors are set above."""
    factors = _noxfile_factors()
    assert set(factors) == set(compare_changed.KINDS)
    lines = (ROOT / "asv.conf.json").read_text().splitlines()
    thresholds = json.loads("\n".join(line for line in lines if not line.lstrip().startswith("//")))["regressions_thresholds"]
    for kind, factor in factors.items():
        site = [t for regex, t in thresholds.items() if re.match(regex, f"models.Forward.{kind}('X')")]
        assert site and factor >= 1 + max(site), kind
    assert factors["track_aidge_torch_ratio"] < min(v for k, v in factors.items() if k.startswith("time_"))
    doc = (ROOT / "docs" / "benchmarks.md").read_text()
    for kind, factor in factors.items():
        assert f"`{kind}` {factor:g}x" in doc, kind


#: the whole table (no --only-changed): the ratio rows' check reads the time rows of their case. The
#: figures of LeNet_eval are a one-blank-line commit's at load 7-8 (docs/noise-floor.md): the ratio
#: moved 2.68x while the times of Aidge and torch moved together
WHOLE_TABLE = """\
| Change   | Before [aaaaaaaa] <main>   | After [bbbbbbbb]   |   Ratio | Benchmark (Parameter)                                   |
|----------|----------------------------|--------------------|---------|---------------------------------------------------------|
| -        | 3.48                       | 1.30               |    0.37 | models.Forward.track_aidge_torch_ratio('LeNet_eval')    |
|          | 1.20±0.1ms                 | 1.50±0.2ms         |   ~1.25 | models.Forward.time_aidge('LeNet_eval')                 |
| +        | 300±10μs                   | 520±30μs           |    1.73 | models.Forward.time_torch('LeNet_eval')                 |
| +        | 1.30                       | 2.60               |    2.00 | operators.Forward.track_aidge_torch_ratio('ReLU_rank_2') |
| +        | 10.0±0.1μs                 | 21.0±0.1μs         |    2.10 | operators.Forward.time_aidge('ReLU_rank_2')             |
|          | 11.0±0.1μs                 | 11.5±0.1μs         |    1.05 | operators.Forward.time_torch('ReLU_rank_2')             |
| +        | 0.200                      | 0.400              |    2.00 | operators.Backward.track_aidge_torch_ratio('ReLU_rank_2') |
|          | 10.0±0.1μs                 | failed             |     n/a | operators.Backward.time_aidge('ReLU_rank_2')            |
"""


def test_a_ratio_row_counts_only_where_the_time_rows_repeat_it():
    kept, counts = compare_changed.filter_rows(WHOLE_TABLE, FACTORS)
    names = [compare_changed.parse_row(line)["name"] for line in kept]
    assert names == ["operators.Forward.track_aidge_torch_ratio('ReLU_rank_2')",   # times: 2.10 / 1.05 = 2.0 > 1.5
                     "operators.Backward.track_aidge_torch_ratio('ReLU_rank_2')"]  # no time row to ask: kept
    # the blank-line commit's 3.48 -> 1.30: the times say 1.25 / 1.73 = 0.72, not under 1 / 1.5
    ((line, ratio, implied),) = counts["unconfirmed"]
    assert compare_changed.parse_row(line)["name"] == "models.Forward.track_aidge_torch_ratio('LeNet_eval')"
    assert (ratio, implied) == (0.37, 0.723)
    assert counts["dropped"] == {"time_aidge": 1, "time_torch": 1}  # 2.10 within 3, 1.73 within 3.5
    # the time rows must move the same way: an opposite move does not confirm
    opposite = WHOLE_TABLE.replace("|    2.10 | operators.Forward.time_aidge", "|    0.40 | operators.Forward.time_aidge")
    kept, counts = compare_changed.filter_rows(opposite, FACTORS)
    assert [compare_changed.parse_row(line)["name"] for line in kept] == \
        ["operators.Backward.track_aidge_torch_ratio('ReLU_rank_2')"]
    assert len(counts["unconfirmed"]) == 2


def test_without_the_check_every_ratio_row_over_its_factor_is_kept():
    kept, counts = compare_changed.filter_rows(WHOLE_TABLE, FACTORS, confirm=False)
    assert len(kept) == 3 and counts["unconfirmed"] == []


def test_the_script_prints_the_unconfirmed_rows_apart(tmp_path, capsys):
    saved = tmp_path / "asv_compare.txt"
    saved.write_text(WHOLE_TABLE)
    args = ["A", "B", "--asv-output", str(saved)] + [f"--factor={k}={v}" for k, v in FACTORS.items()]
    assert compare_changed.main(args) == 0
    out = capsys.readouterr().out
    changed, _, rest = out.partition("Ratio rows over 1.5x")
    assert "LeNet_eval" not in changed and "models.Forward.track_aidge_torch_ratio('LeNet_eval'): ratio 0.37, " \
        "time rows 0.723" in rest
    assert "ratio rows the time rows did not repeat: 1; time rows with overlapping spreads: 0" in out


def test_a_time_row_counts_only_where_the_two_spreads_part():
    """The one-blank-line commit benchmarked at load 12-20 (2026-12-03, docs/noise-floor.md): asv's
    test passed two time_bridge rows at 4-5x whose samples spread over more than their medians."""
    text = ("| Change | Before | After | Ratio | Benchmark (Parameter) |\n|---|---|---|---|---|\n"
            "| -      | 559±2000μs | 131±100μs | 0.23 | operators.Backward.time_bridge('Hardsigmoid_rank_4') |\n"
            "| +      | 1.00±0.1ms | 3.20±0.2ms | 3.20 | models.Forward.time_bridge('LeNet_eval') |\n")
    kept, counts = compare_changed.filter_rows(text, FACTORS)
    assert [compare_changed.parse_row(line)["name"] for line in kept] == ["models.Forward.time_bridge('LeNet_eval')"]
    assert [compare_changed.parse_row(line)["name"] for line in counts["overlapping"]] == \
        ["operators.Backward.time_bridge('Hardsigmoid_rank_4')"]
    assert len(compare_changed.filter_rows(text, FACTORS, confirm=False)[0]) == 2
    assert compare_changed.spread("559±2000μs") == pytest.approx((-1.441e-3, 2.559e-3))
    assert compare_changed.spread("1.30") is None and compare_changed.spread("failed") is None
