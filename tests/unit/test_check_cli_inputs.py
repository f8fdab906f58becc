"""``python -m interop check`` answers every bad input with one line naming it (exit 2): never a
traceback, never a hang. Each case runs the CLI in a subprocess under a short timeout, on tiny
factories of a temporary module put on PYTHONPATH."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MODELS = textwrap.dedent('''
    import time

    import torch


    def raises_runtime():
        raise RuntimeError("factory boom")


    def raises_oserror():
        raise OSError("no weights file")


    def raises_keyerror():
        raise KeyError("missing key")


    def sleeps():
        time.sleep(600)
        return torch.nn.ReLU()


    class ForwardRaises(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("forward boom")


    class ForwardSleeps(torch.nn.Module):
        def forward(self, x):
            time.sleep(600)
            return x


    class Chatty(torch.nn.Module):
        def __init__(self):
            super().__init__()
            print("hello from the factory")
            self.act = torch.nn.ReLU()

        def forward(self, x):
            print("hello from forward")
            return self.act(x)
''')


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli_models")
    (folder / "cli_tiny_models.py").write_text(MODELS)
    return folder


def _cli(models: Path, *args: str, limit: float = 90) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(models)]), OMP_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "interop", "check", *args], cwd=models, env=env,
                          capture_output=True, text=True, timeout=limit, stdin=subprocess.DEVNULL)


def _one_line(done: subprocess.CompletedProcess, *words: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("python -m interop check: "), lines
    for word in words:
        assert word in lines[0], lines[0]
    assert done.stdout == "", done.stdout[-2000:]
    return lines[0]


@pytest.mark.parametrize("factory, error", [("raises_runtime", "RuntimeError: factory boom"),
                                            ("raises_oserror", "OSError: no weights file"),
                                            ("raises_keyerror", "KeyError: 'missing key'")])
def test_a_raising_factory_is_the_models_own_error_in_one_line(models, factory, error):
    done = _cli(models, f"cli_tiny_models:{factory}", "--input-shape", "2,3", "--no-backward")
    _one_line(done, f"cli_tiny_models:{factory}", error, "the model's own error")


def test_a_factory_that_sleeps_is_stopped_at_the_timeout(models):
    done = _cli(models, "cli_tiny_models:sleeps", "--input-shape", "2,3", "--timeout", "2", limit=60)
    _one_line(done, "cli_tiny_models:sleeps", "did not finish within 2 s")


def test_a_raising_forward_is_the_models_own_error_not_a_blocker(models):
    done = _cli(models, "cli_tiny_models:ForwardRaises", "--input-shape", "2,3", "--no-backward", "--timeout", "30")
    _one_line(done, "torch forward on 2x3", "RuntimeError: forward boom", "the model's own error")


def test_a_raising_forward_with_no_modules_is_no_blocker_either(models):
    done = _cli(models, "cli_tiny_models:ForwardRaises", "--input-shape", "2,3", "--no-modules", "--timeout", "30")
    _one_line(done, "RuntimeError: forward boom")


def test_a_forward_that_sleeps_is_stopped_at_the_timeout(models):
    done = _cli(models, "cli_tiny_models:ForwardSleeps", "--input-shape", "2,3", "--no-backward", "--timeout", "6",
                limit=60)
    _one_line(done, "torch forward on 2x3", "did not finish within 6 s")


@pytest.mark.parametrize("shape", ["100000,100000,1000", "99999999999999999999999,1"])
def test_a_shape_past_the_memory_estimate_is_refused_by_name(models, shape):
    done = _cli(models, "torch.nn:ReLU", "--input-shape", shape)
    _one_line(done, f"input shape {shape} is too large", "INTEROP_CASE_MEMORY")


@pytest.mark.parametrize("shape", ["0,3", "1,-3"])
def test_a_shape_is_positive_integers(models, shape):
    done = _cli(models, "torch.nn:ReLU", f"--input-shape={shape}")
    _one_line(done, "input shape", shape)


@pytest.mark.parametrize("timeout", ["-5", "nan", "inf", "0"])
def test_a_timeout_is_finite_and_positive(models, timeout):
    done = _cli(models, "torch.nn:ReLU", "--input-shape", "2,3", f"--timeout={timeout}", "--no-backward")
    line = _one_line(done, "--timeout", timeout)
    assert "D-" not in line and "hang" not in line


def test_with_json_stdout_holds_only_the_report(models):
    done = _cli(models, "cli_tiny_models:Chatty", "--input-shape", "2,3", "--json", "--no-backward",
                "--timeout", "60", limit=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)  # nothing before or after it
    assert report["passed"] is True
    assert "hello from the factory" in done.stderr and "hello from forward" in done.stderr
    assert "hello" not in done.stdout


def test_the_library_check_refuses_a_bad_timeout_and_a_huge_shape():
    import torch

    from interop.check import check
    from interop.checking.inputs import ModelError, check_input_size, check_timeout
    from interop.checking.leaves import _leaf_calls_isolated

    for bad in (-5, float("nan"), 0, float("inf"), "x"):
        with pytest.raises(ValueError, match="timeout"):
            check_timeout(bad)
    assert check_timeout(None) is None and check_timeout("2.5") == 2.5
    with pytest.raises(ValueError, match="100000,100000,1000"):
        check_input_size([(100000, 100000, 1000)])
    check_input_size([(1, 3, 224, 224)])
    with pytest.raises(ValueError, match="timeout"):
        check(torch.nn.ReLU(), (2, 3), timeout=float("nan"))

    class Raises(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = torch.nn.ReLU()

        def forward(self, x):
            raise KeyError("no")

    with pytest.raises(ModelError, match="KeyError"):
        _leaf_calls_isolated(Raises(), [torch.ones(2, 3)], 30)
    calls = _leaf_calls_isolated(torch.nn.Sequential(torch.nn.ReLU()), [torch.ones(2, 3)], 30)
    assert [c["path"] for c in calls] == ["0"] and calls[0]["output"].shape == (2, 3)


def test_a_ledger_with_a_wrong_entry_is_refused_in_one_line(models, tmp_path):
    """--ledger's entries are typed (interop.reporting.models.DefectEntry): a wrong one is a usage
    error naming the file, the entry and the key, before any check runs (not a traceback at the end)."""
    ledger = tmp_path / "defects.json"
    ledger.write_text('{"defects": [{"id": "D-0000abcd", "title": 3}]}')
    done = _cli(models, "cli_tiny_models:ForwardRaises", "--input-shape", "2,3", "--ledger", str(ledger))
    _one_line(done, "--ledger", str(ledger), "D-0000abcd", "'title'")
