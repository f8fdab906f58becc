"""A fatal signal on a thread other than the one running the bridge is still placed in the bridge's
phase: the child's faulthandler dumps every thread, so the thread inside the bridge names the phase.

Seen in a full run (2026-12-04): Aidge's AvgPool1d train SIGSEGV came on one of OpenMP's worker
threads, which hold no Python frame; with the faulting thread's stack alone the crash read
"outside the bridge's phases" and no phase, while its table row quotes "during forward" (the same
crash on the main thread), so the strict row failed that run instead of xfailing."""
from __future__ import annotations

import signal
import threading

import pytest
import torch

from interop.equivalence.isolation import fork_available

from isolated_wrap import crash_of_wrapping

pytestmark = pytest.mark.skipif(not fork_available(), reason="run_isolated forks")


class _DiesOnAnotherThread(torch.nn.Module):
    """Its forward, run by torch's exporter inside the bridge's export, has a second thread kill
    itself with SIGSEGV (as an OpenMP worker dies inside a kernel) while this thread waits."""

    def forward(self, x):
        worker = threading.Thread(target=lambda: signal.pthread_kill(threading.get_ident(), signal.SIGSEGV))
        worker.start()
        worker.join()
        return x + 1


def test_a_crash_on_another_thread_is_placed_in_the_phase_the_bridge_was_in():
    crash = crash_of_wrapping(_DiesOnAnotherThread, timeout=300)
    assert crash.signal == "SIGSEGV"
    assert crash.phase == "export", str(crash)
    assert "during export" in str(crash), str(crash)
