"""Recorded with ``-n 2 -v`` by ``record.py``: a test that kills its xdist worker (SIGABRT),
as an Aidge crash does when the case is not isolated in a child process, next to one that
passes. Not collected by the main run (its name does not match ``test_*.py``)."""
import os


def test_Abort_interop():
    os.abort()


def test_Fine_interop():
    assert 1 + 1 == 2
