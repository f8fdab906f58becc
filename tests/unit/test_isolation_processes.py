"""Nothing a case starts outlives its child (:mod:`interop.equivalence.isolation`; issue 44).

- The child, a subreaper, kills and reaps its descendants as it ends (a daemon that forked twice
  included), and a case killed at its timeout has its descendants killed first. Before: a callable
  that started a long-lived process left it running after ``verify`` returned (8 processes after
  one verify).
- Even when the child itself dies by a signal (a crash, SIGKILL) and its own clean-up
  (:func:`interop.equivalence.isolation._end_descendants`) never runs: the child leads a process
  group of its own and the parent kills that group before it reaps the child. Before: the child's
  subprocess (or fork) was left running, reparented to init, after ``run_isolated`` raised its
  AidgeCrash."""
from __future__ import annotations

import os
import signal
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


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT])
def test_what_a_crashing_case_started_dies_with_it(tmp_path, sig):
    pids = tmp_path / "pids"

    def starts_then_crashes():
        sleeper = subprocess.Popen(SLEEPER)  # an onnxruntime or Aidge helper, a subprocess the case started
        forked = os.fork()  # a fork without exec (multiprocessing's way)
        if forked == 0:
            time.sleep(300)
            os._exit(0)
        pids.write_text(f"{sleeper.pid} {forked}")
        os.kill(os.getpid(), sig)
        time.sleep(60)

    with pytest.raises(AidgeCrash) as caught:
        run_isolated(starts_then_crashes, timeout=120)
    assert f"killed by {signal.Signals(sig).name}" in str(caught.value)
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    assert gone(started), [p for p in started if running(p)]


def test_an_interrupted_parent_leaves_nothing_of_the_case_behind(tmp_path):
    # the parent's wait interrupted (a Ctrl-C in the pytest worker): the child is killed, and
    # what it started with it
    pids = tmp_path / "pids"

    def starts_and_waits():
        sleeper = subprocess.Popen(SLEEPER)
        pids.write_text(str(sleeper.pid))
        time.sleep(300)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 3.0)
        with pytest.raises(KeyboardInterrupt):
            run_isolated(starts_and_waits, timeout=120)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert pids.exists(), "the case did not start its subprocess within 3 s"
    assert gone([int(pids.read_text())])


def test_the_case_child_leads_its_own_process_group():
    assert run_isolated(lambda: os.getpgid(0) == os.getpid()) is True
