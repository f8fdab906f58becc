"""The suite pins threads itself: the README's filter commands work without OMP_NUM_THREADS
in the environment (issue 12: every isolated case used to wait out its 120 s timeout)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_operator_cases_run_without_omp_num_threads_in_the_environment():
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "PYTEST_XDIST_WORKER",
                                                             "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST")}
    # before: every Conv2D case hung until killed (7 of 7). A hung child is killed at this timeout
    # and its case fails as category hang, so the outcome says it; no assertion on elapsed time
    # (the test ran beside a loaded machine's other work: issue 32)
    env["INTEROP_CASE_TIMEOUT"] = "30"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-rA",
                           "tests/test_operators.py", "-k", "Conv2D_attributes_kernel_square or Conv2D_attributes_stride_2"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout and "hang" not in done.stdout


def test_the_suite_sets_one_thread_when_the_caller_sets_none():
    assert os.environ.get("OMP_NUM_THREADS"), "tests/conftest.py sets OMP_NUM_THREADS"
    import torch

    assert torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])
