"""The reader of Aidge's operator benchmark configurations (interop.cases.aidge_benchmark),
the cases made of them (interop.cases.aidge_configs), the operation table and the per-file
CLI. No Aidge or torch needed, except the cross-check against Aidge's own reader."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from interop.cases.aidge_benchmark import (
    InputSpec, installed_config_dir, label_id, read_benchmark_dir, read_benchmark_file)
from interop.cases.aidge_configs import benchmark_cases, file_cases, sized_specs
from interop.cases.aidge_operations import OPERATIONS, unmapped_reason
from interop.cases.aidge_table import main as table_main
from interop.cases.config import ConfigError, OperatorConfig, build_cases

HAVE_CONFIGS = True
try:
    CONFIG_DIR = installed_config_dir()
except ConfigError:  # aidge-benchmark not installed
    HAVE_CONFIGS = False
needs_configs = pytest.mark.skipif(not HAVE_CONFIGS, reason="aidge-benchmark 0.10.1 is not installed")


@needs_configs
def test_all_92_files_load_with_their_cases():
    files = read_benchmark_dir()
    assert len(files) == 92
    cases = [c for f in files for c in f.cases]
    assert len(cases) == 1030
    assert sum(c.negative for c in cases) == 118
    assert len({f.operation for f in files}) == 91


@needs_configs
def test_every_operation_is_mapped_or_says_why_not():
    for f in read_benchmark_dir():
        assert f.operation in OPERATIONS, f"{f.path.name}: {f.operation} missing from the table"
    reasons = {op: unmapped_reason(op, None) for op in OPERATIONS}
    assert all(r is None or len(r) > 40 for r in reasons.values())
    assert unmapped_reason("FancyNewOp", None).startswith("FancyNewOp: operation 'FancyNewOp' is not in")


@needs_configs
def test_case_ids_are_readable_and_unique():
    cases = benchmark_cases(full_size=True)
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    assert "aidge.conv2d_shape_N_4" in ids
    assert "aidge.not_expected_error_non_boolean_input" in ids
    assert all(c.source.startswith("aidge-benchmark/") and c.kind == "aidge_config" for c in cases)


def test_label_ids():
    assert label_id(("shape", "[0]N", "4")) == "shape_N_4"
    assert label_id(("shape", "[weight][0]C_out", "8")) == "shape_weight_C_out_8"
    assert label_id(("asymmetric_padding", "(↑)")) == "asymmetric_padding_upwards_arrow"
    assert label_id(("values", "all_equal", ">0")) == "values_all_equal_gt_0"
    assert label_id(("bias", "2.0")) == "bias_2_0"


@needs_configs
def test_merge_follows_aidge_and_null_removes_an_attribute():
    conv = read_benchmark_file(CONFIG_DIR / "conv2d.json")
    case = next(c for c in conv.cases if c.labels == ("shape", "[0]N", "4"))
    assert case.specs[0] == InputSpec("X", (4, 10, 128, 128), "float32")  # dtype inherited from the base
    assert case.attributes == {"kernel_dims": [3, 3], "stride_dims": [1, 1], "dilation_dims": [1, 1]}
    no_bias = next(c for c in conv.cases if "no_bias" in c.path)
    assert no_bias.specs[-1].omitted
    pool = read_benchmark_file(CONFIG_DIR / "avgpooling2d.json")
    missing = next(c for c in pool.cases if c.labels[-2:] == ("kernel_dims", "missing"))
    assert missing.negative and "kernel_dims" not in missing.attributes
    ceil = read_benchmark_file(CONFIG_DIR / "ceil.json")
    assert any(s.dtype == "float64" and s.data is not None for c in ceil.cases for s in c.specs)
    resize = read_benchmark_file(CONFIG_DIR / "resize.json")
    assert resize.notes and "interpolation_mode" in resize.notes[0]


@needs_configs
def test_reader_agrees_with_aidges_own_reader():
    ab = pytest.importorskip("aidge_benchmark")
    for path in sorted(CONFIG_DIR.glob("*.json")):
        ours = read_benchmark_file(path)
        scheme, default = ab.create_benchmark_from_json(str(path))
        theirs = {tuple(label.split(".")): cfg for label, cfg in scheme}
        assert len(theirs) == len(ours.cases) or any("." in lbl for c in ours.cases for lbl in c.labels), path.name
        for case in ours.cases:
            cfg = theirs.get(case.labels)
            if cfg is None:
                continue  # a label holding a dot ("0.01"): Aidge joins and splits on dots
            full = default.override_with(cfg)
            # Aidge's reader drops a case's null attribute (the base value stays); this one removes it
            removed = {k for k, v in _raw_case(path, case.labels).get("attributes", {}).items() if v is None}
            assert case.attributes == {k: v for k, v in full.attributes.items() if k not in removed}, path.name
            shapes = [tuple(s.shape) if s.shape is not None else tuple(s.data.shape) if s.data is not None else None
                      for s in full.input_specs]
            assert [s.shape for s in case.specs] == shapes, (path.name, case.path)


def _raw_case(path: Path, labels: tuple) -> dict:
    node = json.loads(path.read_text())["test_configurations"]
    for label in labels:
        node = node[label]
    return node


def _write(tmp_path, doc, name="bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_errors_name_the_file_the_case_and_the_key(tmp_path):
    base = {"operation": "ReLUOp", "format": {"name": "Aidge"}}
    with pytest.raises(ConfigError, match=r"bad\.json: key 'extra': unknown top-level key"):
        read_benchmark_file(_write(tmp_path, {**base, "test_configurations": {}, "extra": 1}))
    with pytest.raises(ConfigError, match=r"bad\.json: case 'a\.b': key 'input_specs\.X\.dtype': unknown dtype"):
        read_benchmark_file(_write(tmp_path, {**base, "test_configurations": {"a": {"b": {"input_specs": [
            {"name": "X", "shape": [2], "dtype": "float33"}]}}}}))
    with pytest.raises(ConfigError, match=r"case 'a': key 'a': expected a case"):
        read_benchmark_file(_write(tmp_path, {**base, "test_configurations": {"a": 3}}))
    with pytest.raises(ConfigError, match=r"key 'input_specs\.X\.data': data literal of shape \[2\] given with shape"):
        read_benchmark_file(_write(tmp_path, {**base, "test_configurations": {"c": {"input_specs": [
            {"name": "X", "shape": [3], "data": [1, 2]}]}}}))


def test_cli_table_and_exit_status(tmp_path, capsys):
    good = {"operation": "ReLUOp", "format": {"name": "Aidge", "metadata": {"initializer_rank": 1}},
            "test_configurations": {"zeros": {"input_specs": [{"name": "X", "data": 0, "dtype": "float32"}]},
                                    "error": {"bad": {"input_specs": [{"name": "X", "shape": [2], "dtype": "int8"}]}}}}
    _write(tmp_path, good, "relu.json")
    assert table_main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "relu.json" in out and "torch.relu" in out and "2 cases (1 positive, 1 negative)" in out
    _write(tmp_path, {"operation": "X", "format": {"name": "Aidge"}, "oops": 1}, "zz.json")
    assert table_main([str(tmp_path)]) == 1
    assert "zz.json: key 'oops'" in capsys.readouterr().err
    only_bad = tmp_path / "only_bad"  # no readable file at all: still a table, an error, exit 1
    only_bad.mkdir()
    _write(only_bad, {"operation": "X", "format": {"name": "Aidge"}, "oops": 1}, "zz.json")
    assert table_main([str(only_bad)]) == 1
    captured = capsys.readouterr()
    assert "0 files" in captured.out and "zz.json: key 'oops'" in captured.err


def test_size_policy_reduces_the_batch_and_says_so():
    specs = (InputSpec("X", (128, 32, 64, 64), "float32"),)
    sized, batch, full_only = sized_specs(specs, (0,), 1 << 20)
    assert sized[0].shape == (8, 32, 64, 64) and batch == 8 and full_only is None
    assert sized_specs(specs, (0,), None) == (specs, None, None)
    literal = (InputSpec("X", (2, 2), "float32", data=[[1, 2], [3, 4]]),)
    assert sized_specs(literal, (0,), 1) [1] is None


@needs_configs
def test_reduced_cases_carry_the_batch_in_their_id():
    cases = file_cases(read_benchmark_file(CONFIG_DIR / "avgpooling2d.json"), full_size=False)
    assert "aidge.avgpooling2d_ok_shape_N_128_batch8" in [c.id for c in cases]
    full = file_cases(read_benchmark_file(CONFIG_DIR / "avgpooling2d.json"), full_size=True)
    assert "aidge.avgpooling2d_ok_shape_N_128" in [c.id for c in full]


@needs_configs
def test_build_cases_reads_an_aidge_benchmark_file_through_the_users_config():
    # issue 27: build_cases used to hand a file with Aidge's keys to Aidge's reader (ids
    # aidge.relu_zeros, the user's configuration ignored); the user's OperatorConfig follows the
    # documented layouts. Since issue 45 a flat complete case under test_configurations is a case
    # (it was refused as "neither a case nor a group"): relu.json's 'zeros' is read as one, and its
    # input given as a literal without a shape is refused naming the file, the case and the key,
    # while Aidge's directory keeps its own reader and ids
    with pytest.raises(ConfigError, match=r"relu\.json: case 'zeros': key 'input_specs.X': input spec without a shape"):
        build_cases(OperatorConfig(name="relu", op_class=torch.nn.ReLU, json_path=CONFIG_DIR / "relu.json"))
    assert [c.id for c in file_cases(read_benchmark_file(CONFIG_DIR / "relu.json"))] == ["aidge.relu_zeros"]


def test_modules_import_without_torch():
    code = ("import sys; import interop.cases.aidge_configs, interop.cases.aidge_table; "
            "assert 'torch' not in sys.modules and 'aidge_core' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


@needs_configs
def test_counts_by_operation_are_stable():
    counts = Counter(f.operation for f in read_benchmark_dir())
    assert counts["HardSwishOp"] == 2 and sum(counts.values()) == 92


def test_a_memory_unsafe_entry_takes_a_crash_a_hang_or_a_run_on_garbage():
    from interop.cases.aidge_check import AcceptsInvalidInputError
    from interop.cases.expected_failures import ExpectedAidgeFailure, ExpectedFailure, expected_failure_guard
    from interop.errors import AidgeCrash

    entry = ExpectedFailure("TopK", "forward", "crash", "crash: process ", ("aidge.topk:error_x",),
                            kind="aidge_config", memory_unsafe=True)
    for exc in (AidgeCrash("forward", "crash: process killed by SIGSEGV during compile"),
                AidgeCrash("forward", "crash: process timed out after 10 s during forward", timed_out=True),
                AcceptsInvalidInputError("Aidge accepts invalid input: aidge.topk_error_x ran to the end")):
        with pytest.raises(ExpectedAidgeFailure):
            with expected_failure_guard(entry):
                raise exc
    strict = ExpectedFailure("TopK", "forward", "crash", "crash: process ", ("aidge.topk:error_x",), kind="aidge_config")
    with pytest.raises(AcceptsInvalidInputError):
        with expected_failure_guard(strict):
            raise AcceptsInvalidInputError("Aidge accepts invalid input: aidge.topk_error_x ran to the end")
