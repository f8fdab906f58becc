"""A case child killed at its timeout is placed in the phase it hung in: before killing it, the
parent has the child's faulthandler write every thread's stack (SIGUSR1), read as a crash's stack
is. Before (2026-12-04): a hang had no stack, its error said "outside the bridge's phases" and the
one attribution rule could only say ``unknown``, wherever it hung."""
from __future__ import annotations

import time

import pytest
import torch

from interop.categories import attribution_rule
from interop.equivalence.isolation import fork_available, run_isolated
from interop.errors import AidgeCrash

from isolated_wrap import crash_of_wrapping

pytestmark = pytest.mark.skipif(not fork_available(), reason="run_isolated forks")


class _HangsWhileExported(torch.nn.Module):
    """Its forward, run by torch's exporter inside the bridge's export, never ends."""

    def forward(self, x):
        time.sleep(3600)
        return x + 1


def test_a_hang_is_placed_in_the_phase_it_hung_in_and_attributed_by_the_one_rule():
    hang = crash_of_wrapping(_HangsWhileExported, timeout=20)
    assert hang.timed_out and hang.signal == "SIGKILL"
    assert hang.phase == "export" and "timed out after 20 s during export" in str(hang), str(hang)
    assert "test_isolation_hang.py" in hang.traceback  # the hung stack is kept, the test's forward in it
    assert attribution_rule("hang", hang.phase) == ("export", False)


def test_a_hang_outside_the_bridge_stays_unplaced():
    with pytest.raises(AidgeCrash) as caught:
        run_isolated(time.sleep, 3600, timeout=1)
    assert caught.value.timed_out and caught.value.phase == "unknown"
    assert "outside the bridge's phases" in str(caught.value)
    assert attribution_rule("hang", None)[0] == "unknown"
