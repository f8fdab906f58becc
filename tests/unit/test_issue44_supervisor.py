"""Issue 46 item 4 (and 44): one supervisor for the report run's children
(:mod:`interop.reporting.supervisor`). Each stop signal has its grace period as a parameter; a
child that ignores the passed-on SIGINT is killed when its grace period ends; when a wait ends,
nothing of the child's session is left, a process that took a group of its own included (a case
child); a stop signal before a child starts means it never starts; inside ``interruptible`` a
stop signal raises :class:`Stopped` naming it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from process_watch import running

from interop.reporting.supervisor import GRACE_S, Stopped, Supervisor

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, sessions: Linux")

IGNORES_SIGINT = ("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                  "open('started', 'w').close()\ntime.sleep(120)\n")


def _signal_when(path: Path, sig: int) -> threading.Thread:
    def send():
        while not path.exists():  # the child says when it runs (no timing)
            time.sleep(0.02)
        os.kill(os.getpid(), sig)
    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("sig, name", [(signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP"),
                                       (signal.SIGINT, "Ctrl-C")])
def test_each_stop_signal_has_its_grace_period_then_the_child_is_killed(tmp_path, sig, name):
    with Supervisor({name: 1.0}) as supervisor, open(tmp_path / "out", "w") as out:
        assert supervisor.grace_s[name] == 1.0 and all(supervisor.grace_s[k] == GRACE_S[k] for k in GRACE_S if k != name)
        proc = supervisor.start([sys.executable, "-c", IGNORES_SIGINT], stdout=out, env=os.environ, cwd=tmp_path)
        _signal_when(tmp_path / "started", sig)
        started = time.monotonic()
        code = supervisor.wait(proc)
    assert supervisor.stopped_by == name
    assert code == -signal.SIGKILL  # it ignored the SIGINT passed on: killed after its 1 s
    assert time.monotonic() - started < 60  # not its 120 s


def test_a_wait_leaves_nothing_of_the_childs_session(tmp_path):
    # a grandchild in a process group of its own (as a case child is) is killed with the session
    code = ("import os, subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import os, time; os.setpgid(0, 0); time.sleep(120)'])\n"
            "open('pid', 'w').write(str(child.pid))\n")
    with Supervisor() as supervisor, open(tmp_path / "out", "w") as out:
        proc = supervisor.start([sys.executable, "-c", code], stdout=out, env=os.environ, cwd=tmp_path)
        assert supervisor.wait(proc) == 0
    pid = int((tmp_path / "pid").read_text())
    for _ in range(200):
        if not running(pid):
            break
        time.sleep(0.02)
    assert not running(pid), "a process of the child's session outlived the wait"


def test_a_stop_before_the_start_means_no_start(tmp_path):
    supervisor = Supervisor()
    supervisor.stopped_by = "SIGHUP"  # as its handler does
    assert supervisor.start([sys.executable, "-c", "pass"], stdout=subprocess.DEVNULL, env=os.environ,
                            cwd=tmp_path) is None


def test_a_stop_signal_inside_interruptible_raises_stopped_naming_it():
    with Supervisor() as supervisor:
        with pytest.raises(Stopped) as caught:
            with supervisor.interruptible():
                os.kill(os.getpid(), signal.SIGHUP)
                time.sleep(30)
        assert caught.value.name == "SIGHUP" and supervisor.stopped_by == "SIGHUP"
        # outside it, a stop signal is only remembered
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)


def test_unknown_grace_keys_are_refused():
    with pytest.raises(ValueError, match="grace_s keys"):
        Supervisor({"SIGKILL": 1.0})
