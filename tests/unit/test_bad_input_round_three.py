"""Bad input costs only itself, round three (issue 34): deeply nested files, FIFOs and symbolic
links in a configuration directory, huge shapes at batch 1, impossible values read without
error, impossible environment values, deeply nested golden sidecars, oversized files. Each
held by the one reading policy (:mod:`interop.reading`) or the reader that validates."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interop.cases.aidge_benchmark import InputSpec, read_benchmark_file
from interop.cases.aidge_configs import sized_specs
from interop.cases.config import ConfigError, load_config_file
from interop.env import read
from interop.reading import MAX_FILE_BYTES, UnsafeInputError, loads_json, read_user_bytes

ROOT = Path(__file__).resolve().parents[2]


def _relu(cases: dict | None = None) -> dict:
    return {"operation": "ReLUOp", "format": {"name": "Aidge", "metadata": {"initializer_rank": 1}},
            "test_configurations": cases or {"small": {"attributes": {}, "input_specs": [
                {"name": "X", "shape": [2, 3], "dtype": "float32"}]}}}


def _nested(levels: int) -> str:
    return '{"operation": "ReLUOp", "format": {"name": "Aidge"}, "test_configurations": {"a": ' + \
        "[" * levels + "]" * levels + "}}"


def _pytest(*args, timeout=240, env=None) -> subprocess.CompletedProcess:
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    run_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
                          cwd=ROOT, env=run_env, capture_output=True, text=True, timeout=timeout)


# -- nesting -----------------------------------------------------------------------------------
@pytest.mark.parametrize("levels", [100, 990, 5000])
def test_a_deeply_nested_configuration_is_a_config_error_naming_the_file(tmp_path, levels):
    path = tmp_path / "deep.json"
    path.write_text(_nested(levels))
    with pytest.raises(ConfigError, match=r"deep\.json: nested") as info:
        read_benchmark_file(path)
    assert info.value.file == str(path)  # before: a raw RecursionError naming no file
    with pytest.raises(ConfigError, match=r"deep\.json: nested"):
        load_config_file(path)


def test_a_deep_data_literal_is_a_config_error(tmp_path):
    path = tmp_path / "deepdata.json"
    path.write_text(json.dumps(_relu({"c": {"input_specs": [{"name": "X", "data": 0}]}})).replace(
        '"data": 0', '"data": ' + "[" * 3000 + "1" + "]" * 3000))
    with pytest.raises(ConfigError, match="nested"):
        read_benchmark_file(path)


def test_a_deep_file_costs_only_itself_in_a_pytest_run(tmp_path):
    (tmp_path / "deep.json").write_text(_nested(990))
    (tmp_path / "relu_mine.json").write_text(json.dumps(_relu()))
    done = _pytest("-q", "tests/test_operators.py", "tests/test_aidge_configs.py", "--aidge-configs", str(tmp_path),
                   "-k", "ReLU_rank_2 or aidge.deep or aidge.relu_mine")
    # before: collection failed with a RecursionError and no selected case ran
    assert "1 failed" in done.stdout and "2 passed" in done.stdout, done.stdout[-3000:]
    assert "deep.json: nested" in done.stdout


# -- FIFOs, devices, directories, links ----------------------------------------------------------
def test_a_fifo_in_the_directory_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "relu_mine.json").write_text(json.dumps(_relu()))
    done = _pytest("--collect-only", "-q", "tests/test_aidge_configs.py", "--aidge-configs", str(tmp_path),
                   timeout=120)  # before: hung forever (killed by `timeout 60`)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "aidge.pipe_config_error" in done.stdout and "aidge.relu_mine_small" in done.stdout
    with pytest.raises(ConfigError, match=r"pipe\.json: a FIFO \(named pipe\), not a regular file"):
        read_benchmark_file(tmp_path / "pipe.json")


def test_the_aidge_table_does_not_hang_on_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    done = subprocess.run([sys.executable, "-m", "interop.cases.aidge_table", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert "pipe.json" in done.stdout + done.stderr and "FIFO" in done.stdout + done.stderr


def test_a_directory_named_like_a_file_is_refused(tmp_path):
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ConfigError, match=r"dir\.json: a directory, not a regular file"):
        read_benchmark_file(tmp_path / "dir.json")


def test_a_symlink_out_of_the_directory_is_refused_naming_the_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.json"
    secret.write_text('{"private_key_name": 1}')
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "link.json").symlink_to(secret)
    (configs / "inside.json").symlink_to(configs / "real.txt")
    (configs / "real.txt").write_text(json.dumps(_relu()))
    with pytest.raises(ConfigError) as info:
        read_benchmark_file(configs / "link.json", within=configs)
    text = str(info.value)
    assert "link.json: a symbolic link to a file outside" in text
    assert "private_key_name" not in text  # before: the outside file was read and its keys quoted
    assert read_benchmark_file(configs / "inside.json", within=configs).operation == "ReLUOp"  # inside: followed


def test_a_file_above_the_size_limit_is_refused_before_reading(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no time spent writing
    with pytest.raises(ConfigError, match=r"big\.json: 8,388,609 bytes, above the limit of 8,388,608"):
        read_benchmark_file(path)


def test_the_reading_policy_directly(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text('{"a": [1, 2]}')
    assert loads_json(read_user_bytes(path), path) == {"a": [1, 2]}
    with pytest.raises(UnsafeInputError, match="nested more than 3 levels"):
        loads_json('{"a": [[[1]]]}', path, max_depth=3)
    with pytest.raises(UnsafeInputError, match="refuses to read"):
        loads_json('{"n": ' + "1" * 5000 + "}", path)


# -- values validated at read time -----------------------------------------------------------------
@pytest.mark.parametrize("data, why", [([[1, 2], [3]], "ragged at depth 1"), ([["a", "b"]], "'a' at depth 2"),
                                       ([1, [2]], "mixes lists and numbers")])
def test_bad_data_literals_are_refused_with_their_key(tmp_path, data, why):
    path = tmp_path / "data.json"
    path.write_text(json.dumps(_relu({"c": {"input_specs": [{"name": "X", "data": data}]}})))
    with pytest.raises(ConfigError, match=why) as info:
        read_benchmark_file(path)
    assert info.value.key == "input_specs.X.data" and info.value.case == "c"


def test_special_values_as_strings_are_numbers(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(_relu({"c": {"input_specs": [{"name": "X", "data": ["nan", "inf", 1.5]}]}})))
    assert read_benchmark_file(path).cases[0].specs[0].shape == (3,)  # as Aidge's own files write them


@pytest.mark.parametrize("dims", [[-3, 3], ["3", "3"], [], 3])
def test_bad_kernel_dims_of_a_positive_case_are_refused(tmp_path, dims):
    doc = {"operation": "AvgPooling2DOp", "format": {"name": "Aidge"}, "test_configurations": {"k": {
        "attributes": {"kernel_dims": dims}, "input_specs": [{"name": "X", "shape": [1, 1, 8, 8]}]}}}
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match="kernel_dims must be a non-empty list of positive integers") as info:
        read_benchmark_file(path)
    assert info.value.key == "attributes.kernel_dims"


def test_a_negative_case_keeps_its_invalid_attributes(tmp_path):
    doc = {"operation": "AvgPooling2DOp", "format": {"name": "Aidge"}, "test_configurations": {"error": {"neg": {
        "attributes": {"kernel_dims": [-3, 3]}, "input_specs": [{"name": "X", "shape": [1, 1, 8, 8]}]}}}}
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(doc))
    case = read_benchmark_file(path).cases[0]
    assert case.negative and case.attributes["kernel_dims"] == [-3, 3]  # Aidge must reject it


# -- the size policy at batch 1 ----------------------------------------------------------------------
def test_the_element_budget_applies_at_batch_1():
    huge = (InputSpec("X", (1, 3, 100000, 100000), "float32"),)
    specs, batch, full_only = sized_specs(huge, (0,), 1 << 20)
    # before: returned early at batch 1, and the case ran at full size (Unable to allocate 224. GiB)
    assert batch is None and full_only and "runs at full size only" in full_only
    small = (InputSpec("X", (1, 3, 600, 600), "float32"),)  # 1.08M elements: above the budget, within the limit
    assert sized_specs(small, (0,), 1 << 20) == (small, None, None)


# -- environment values ----------------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["inf", "1e309", "-inf", "nan", "0", "-5", "abc"])
def test_impossible_numbers_in_the_environment_name_the_variable(monkeypatch, raw):
    monkeypatch.setenv("INTEROP_CASE_TIMEOUT", raw)
    with pytest.raises(ValueError, match=r"INTEROP_CASE_TIMEOUT=.*expected a finite number > 0"):
        read("INTEROP_CASE_TIMEOUT")


@pytest.mark.parametrize("raw", ["abc", "-5", "0", "1.5"])
def test_the_element_budget_variable_is_validated_when_read(raw):
    done = subprocess.run([sys.executable, "-c", "import interop.cases.aidge_configs"], cwd=ROOT,
                          env=dict(os.environ, INTEROP_AIDGE_ELEMENT_BUDGET=raw), capture_output=True, text=True)
    # before: abc was a raw ValueError ("invalid literal for int()"), -5 skipped every case
    assert done.returncode != 0
    assert f"INTEROP_AIDGE_ELEMENT_BUDGET='{raw}': expected an integer > 0" in done.stderr


def test_switches_in_the_environment_are_validated(monkeypatch):
    monkeypatch.setenv("INTEROP_ISOLATE", "ture")
    with pytest.raises(ValueError, match="INTEROP_ISOLATE='ture': expected one of 1, true"):
        read("INTEROP_ISOLATE")
    monkeypatch.setenv("INTEROP_ISOLATE", "Off")
    assert read("INTEROP_ISOLATE") is False


# -- golden files ------------------------------------------------------------------------------------
def test_a_deeply_nested_golden_sidecar_names_the_file(tmp_path):
    from interop.diagnostics.golden import GoldenFile

    golden = GoldenFile(tmp_path / "case.npz", test_id="t")
    golden.path.write_bytes(b"")
    golden.meta_path.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(ValueError, match=r"case\.json: nested"):  # before: a raw RecursionError
        golden.read()
