"""Suite-wide settings: threads, where results land, the Aidge backend under test."""
from __future__ import annotations

import os
from pathlib import Path

# One OpenMP thread per process unless the caller asks for more, set here, before anything
# loads Aidge's OpenMP runtime (aidge_core is imported lazily): the operator suite forks a
# child per case, and a child forked from a process whose OpenMP pool has threads waits
# forever on them (measured: every isolated case ran into its 120 s timeout without
# OMP_NUM_THREADS=1). xdist workers and the forked children inherit the setting.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The OpInfo source's ids come from torch's sample generators, and one of them (meshgrid)
# iterates a set of strings: its order follows the string hash seed. pytest-xdist requires
# every worker to collect the same ids, so workers (started after this line) get a fixed seed.
os.environ.setdefault("PYTHONHASHSEED", "0")

RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"
# ModelTester's JSONL log (benchmarks.jsonl) goes to results/ unless the caller says otherwise.
os.environ.setdefault("INTEROP_RESULTS_DIR", str(RESULTS_DIR))


def pytest_configure(config):
    import torch

    threads = os.environ["OMP_NUM_THREADS"]
    if threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))  # torch follows the same count as Aidge
