"""interop._lazy's import lock across a fork. The library imports its heavy modules lazily (on first
access, under one lock) and the suite forks a child per case (interop.equivalence.isolation): a
child forked while another thread of its parent held that lock would wait on it forever at its
own first lazy import. The child makes a new lock, and isolation forks only when no lazy import
is half done in another thread."""
from __future__ import annotations

import os
import threading
import time

import pytest

from interop import _lazy
from interop.equivalence.isolation import fork_available, run_isolated

pytestmark = pytest.mark.skipif(not fork_available(), reason="forks")


def _held_by_another_thread(seconds: float):
    """A thread that holds the lazy-import lock for ``seconds`` (as a first import would);
    returns (thread, event set once it holds the lock)."""
    holding = threading.Event()

    def hold():
        with _lazy.import_lock():
            holding.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert holding.wait(10)
    return thread


def test_a_child_forked_while_another_thread_imports_can_import_lazily():
    thread = _held_by_another_thread(3.0)
    pid = os.fork()  # a bare fork, as any caller's: the child gets a lock of its own
    if pid == 0:
        got = _lazy.import_lock().acquire(timeout=2)
        os._exit(0 if got else 1)
    _, status = os.waitpid(pid, 0)
    thread.join()
    assert os.waitstatus_to_exitcode(status) == 0, "the child's lazy-import lock was still held"


def _lazy_access_in_child() -> bool:
    got = _lazy.import_lock().acquire(timeout=2)
    return got


def test_isolation_forks_only_once_a_lazy_import_in_another_thread_is_done():
    thread = _held_by_another_thread(1.0)
    start = time.monotonic()
    assert run_isolated(_lazy_access_in_child, timeout=60) is True
    assert time.monotonic() - start >= 0.5, "the fork did not wait for the other thread's import"
    thread.join()
