"""Watching processes from the tests of process supervision (issue 44): whether a pid still
runs (a zombie does not count), and waiting a bounded while for pids to be gone. Linux only
(/proc), as the tests that import it say with their own skip."""
from __future__ import annotations

import sys
import time
from pathlib import Path

#: a child that lives five minutes unless something kills it
SLEEPER = [sys.executable, "-c", "import time; time.sleep(300)"]


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def gone(pids: list[int]) -> bool:
    for _ in range(200):  # SIGKILL is sent by now; the exit itself may take a moment
        if not any(running(p) for p in pids):
            return True
        time.sleep(0.02)
    return False
