"""Issue 44: nothing a case starts outlives its child (interop.equivalence.isolation). Before: a
callable that started a long-lived process left it running after ``verify`` returned (8
processes after one verify). Now the child, a subreaper, kills and reaps its descendants as it
ends (a daemon that forked twice included), and a case killed at its timeout has its
descendants killed first."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_watch import SLEEPER, gone, running

from interop.equivalence import isolation
from interop.equivalence.isolation import run_isolated
from interop.errors import AidgeCrash

pytestmark = pytest.mark.skipif(not (isolation.fork_available() and os.path.isdir("/proc/self")),
                                reason="fork and /proc (Linux)")

DAEMON = [sys.executable, "-c", "import os, sys, time\nif os.fork():\n    sys.exit(0)\nos.setsid()\n"
          "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\nos.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
          "time.sleep(300)"]


def _wait_for(path: Path) -> str:
    while not path.exists():  # the daemon says when it runs (no timing)
        time.sleep(0.01)
    return path.read_text()


def test_what_a_case_starts_never_outlives_it(tmp_path):
    pids = tmp_path / "pids"

    def starts_processes():
        sleeper = subprocess.Popen(SLEEPER)
        subprocess.run([*DAEMON, str(tmp_path / "daemon")], check=True)  # its parent exits at once
        daemon = _wait_for(tmp_path / "daemon")
        pids.write_text(f"{sleeper.pid} {daemon}")
        return "done"

    assert run_isolated(starts_processes, timeout=60) == "done"
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    assert gone(started), [p for p in started if running(p)]


def test_a_hung_case_has_what_it_started_killed_too(tmp_path):
    pid_file = tmp_path / "pid"

    def hangs():
        sleeper = subprocess.Popen(SLEEPER)
        pid_file.write_text(str(sleeper.pid))
        time.sleep(300)

    with pytest.raises(AidgeCrash) as caught:
        run_isolated(hangs, timeout=3)
    assert caught.value.timed_out
    assert gone([int(pid_file.read_text())])
