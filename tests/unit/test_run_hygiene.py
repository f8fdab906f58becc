"""Replay commands that reproduce from a fresh shell, environment variables validated with
their name, golden-file errors naming the file, analyze_results arguments validated (issue 12)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from interop.equivalence import tester
from interop.equivalence.tester_replay import REPLAY_CONTEXT, replay_command

ROOT = Path(__file__).resolve().parents[2]


def test_replay_carries_the_rootdir_the_environment_and_the_backend(monkeypatch):
    # before: `INTEROP_SEED=1 python -m pytest <id>` answered "ERROR: not found" when the case
    # came from INTEROP_CONFIG_DIR or --backend=cuda
    monkeypatch.setenv("INTEROP_CONFIG_DIR", "/data/my configs")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_operators.py::test_ReLU_interop[ReLU_x] (call)")
    monkeypatch.setitem(REPLAY_CONTEXT, "options", ["--backend=cuda"])
    monkeypatch.setitem(REPLAY_CONTEXT, "rootdir", "/src/interop")
    command = replay_command(7)
    assert command.startswith("cd /src/interop && ")
    assert "INTEROP_CONFIG_DIR='/data/my configs'" in command
    assert command.endswith("INTEROP_SEED=7 python -m pytest --backend=cuda "
                            "'tests/test_operators.py::test_ReLU_interop[ReLU_x]'")


def test_the_plugin_records_the_rootdir_for_replays():
    assert REPLAY_CONTEXT["rootdir"] == str(ROOT)


@pytest.mark.parametrize("value, message", [("abc", "expected a finite number > 0"),
                                            ("-1", "expected a finite number > 0"),
                                            ("nan", "expected a finite number > 0"),
                                            ("inf", "expected a finite number > 0")])
def test_a_bad_case_timeout_names_the_variable(value, message):
    # before: collection broke without naming it (abc); -1 turned every case into a crash
    env = dict(os.environ, INTEROP_CASE_TIMEOUT=value)
    done = subprocess.run([sys.executable, "-c", "import interop.cases.suite"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert f"INTEROP_CASE_TIMEOUT={value!r}: {message}" in done.stderr


def test_a_bad_seed_names_the_variable(monkeypatch):
    # before: every case failed with a bare "invalid literal for int()"
    import torch

    monkeypatch.setenv("INTEROP_SEED", "abc")
    with pytest.raises(ValueError, match=r"INTEROP_SEED='abc': expected an integer"):
        tester.ModelTester(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))


@pytest.mark.parametrize("meta", [{"format": 1, "entries": [{"key": "a"}]}, [1, 2], {"format": 1, "entries": 3}],
                         ids=["entry_without_path", "not_an_object", "entries_not_a_list"])
def test_malformed_golden_metadata_names_the_file(tmp_path, meta):
    # before: a raw KeyError / TypeError without the file name
    from interop.diagnostics.golden import FORMAT_VERSION, GoldenFile

    if isinstance(meta, dict) and "format" in meta:
        meta["format"] = FORMAT_VERSION
    path = tmp_path / "g.npz"
    np.savez(path, a=np.zeros(2))
    path.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=str(path.with_suffix(".json")).replace(".", r"\.")):
        GoldenFile(path).check(np.zeros(2))


@pytest.mark.parametrize("args, message", [(["--worst", "-5"], "--worst must be 0 or more"),
                                           (["--threshold", "nan"], "--threshold must be a positive number")])
def test_analyze_results_validates_its_arguments(tmp_path, args, message):
    # before: --worst -5 printed 11 entries, --threshold nan was accepted
    done = subprocess.run([sys.executable, str(ROOT / "analyze_results.py"), str(ROOT / "tests/unit/data/pytest_quiet.txt"),
                           *args], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and message in done.stderr


def test_analyze_results_bench_alone_without_a_terminal(tmp_path):
    # before: with stdin not a terminal (a script, CI), --bench alone read stdin and failed
    done = subprocess.run([sys.executable, str(ROOT / "analyze_results.py"), "--bench",
                           str(ROOT / "tests/unit/data/benchmarks.jsonl")], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Benchmarks per operator" in done.stdout
