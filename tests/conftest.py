"""Suite-wide settings: threads, where results land, the Aidge backend under test."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

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
_STAGING = pytest.StashKey[Path]()
_EXIT = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)  # before the interop plugin reads INTEROP_RESULTS_DIR for its records
def pytest_configure(config):
    import torch

    threads = os.environ["OMP_NUM_THREADS"]
    if threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))  # torch follows the same count as Aidge
    # ModelTester's timings (benchmarks.jsonl) and the records (records.jsonl, session.json):
    # into INTEROP_RESULTS_DIR when the caller sets it (nox -s report: the run's own directory);
    # else this session writes into a staging directory of its own (xdist workers, started after
    # this hook, inherit the variable) whose files replace results/'s when it ends: one session
    # per file, never appended to the previous session's.
    from interop.env import read as read_env  # every INTEROP_* value was checked before this (the plugin)

    if read_env("INTEROP_RESULTS_DIR") is None and not hasattr(config, "workerinput"):
        from interop.equivalence.benchlog import start_session

        staging = start_session(RESULTS_DIR)
        os.environ["INTEROP_RESULTS_DIR"] = str(staging)
        config.stash[_STAGING] = staging


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[_EXIT] = int(exitstatus)


def pytest_unconfigure(config):
    # the session's timings and records replace results/benchmarks.jsonl, records.jsonl and
    # session.json when it ran to its end; an interrupted session leaves them untouched and
    # its own partial files beside them, in results/partial-<session>/ (marked PARTIAL)
    staging = config.stash.get(_STAGING, None)
    if staging is not None:
        from interop.equivalence.benchlog import publish_session

        publish_session(staging, RESULTS_DIR, config.stash.get(_EXIT, 2))
        if os.environ.get("INTEROP_RESULTS_DIR") == str(staging):
            del os.environ["INTEROP_RESULTS_DIR"]
