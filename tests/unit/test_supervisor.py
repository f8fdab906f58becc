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


# ---- a descendant that left for a session of its own (setsid) ---------------------------------
# Before: kill_session reached the child's session only; a grandchild that called os.setsid()
# was in no group nor session the supervisor killed, and ran on after the wait (reparented to
# init when its parent ended). Now the supervising process is a subreaper while it supervises
# (PR_SET_CHILD_SUBREAPER): such an orphan becomes its child, and is killed and reaped when the
# wait ends; one whose parent still runs is found below the child before the kill.
#: a process that leaves for a session of its own, then says so (its pid in ./pids) and sleeps
SETSID_SLEEPER = ("import os, time; os.setsid(); open('pids.tmp', 'w').write(str(os.getpid())); "
                  "os.rename('pids.tmp', 'pids'); time.sleep(300)")
#: the child's wait until the grandchild has left (before: a race with the session's kill)
WAIT_PIDS = "import os, time\nwhile not os.path.exists('pids'):\n    time.sleep(0.01)\n"
#: what the supervised child does with it: (code of the child, whether the child waits to be stopped)
SETSID_SHAPES = {
    # the child starts it and ends: the grandchild is an orphan at once
    "orphaned": ("import subprocess, sys\n"
                 f"p = subprocess.Popen([sys.executable, '-c', {SETSID_SLEEPER!r}])\n" + WAIT_PIDS, False),
    # the child starts it and waits: stopped by SIGTERM (no grace), the grandchild's parent is alive until then
    "parent alive": ("import subprocess, sys, time\n"
                     f"p = subprocess.Popen([sys.executable, '-c', {SETSID_SLEEPER!r}])\n" + WAIT_PIDS
                     + "time.sleep(300)\n", True),
    # a daemon: fork, setsid, fork again, the middle one exits (the great-grandchild's session is a dead pid's)
    "daemon": ("import os, sys, time\n"
               "if os.fork() == 0:\n"
               "    os.setsid()\n"
               "    if os.fork():\n"
               "        os._exit(0)\n"
               "    open('pids.tmp', 'w').write(str(os.getpid()))\n"
               "    os.rename('pids.tmp', 'pids')\n"
               "    time.sleep(300)\n"
               "    os._exit(0)\n"
               "while not os.path.exists('pids'):\n    time.sleep(0.01)\n", False),
}


def _wait_for(path: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.parametrize("shape", sorted(SETSID_SHAPES))
def test_a_descendant_that_called_setsid_is_killed_and_reaped_when_the_wait_ends(tmp_path, shape):
    code, stopped = SETSID_SHAPES[shape]
    with Supervisor({"SIGTERM": 0.0}) as supervisor, open(tmp_path / "out", "w") as out:
        proc = supervisor.start([sys.executable, "-c", code], stdout=out, env=os.environ, cwd=tmp_path)
        if stopped:
            _signal_when(tmp_path / "pids", signal.SIGTERM)
        else:
            _wait_for(tmp_path / "pids")
        supervisor.wait(proc)
    pid = int((tmp_path / "pids").read_text())
    for _ in range(200):
        if not running(pid):
            break
        time.sleep(0.02)
    assert not running(pid), f"a descendant in a session of its own ({shape}) outlived the wait"
    # reaped too: no zombie of it is left with this process
    assert not Path(f"/proc/{pid}").exists() or os.getppid() != pid and \
        Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1] != str(os.getpid())


def test_a_crashed_case_s_setsid_grandchild_dies_when_the_supervised_run_ends(tmp_path):
    # the run's own shape: pytest (here a script) runs a case in a child (run_isolated) that starts a
    # process in a session of its own and dies by SIGKILL; the child's group is killed by its parent,
    # the grandchild is in none of it (interop.equivalence.isolation: "out of reach once the child
    # crashed"): it becomes the supervising process's, which kills it when the wait ends
    code = ("import os, signal, subprocess, sys, time\n"
            "from interop.equivalence.isolation import run_isolated\n"
            "from interop.errors import AidgeCrash\n"
            "def case():\n"
            f"    p = subprocess.Popen([sys.executable, '-c', {SETSID_SLEEPER!r}])\n"
            "    while not os.path.exists('pids'):\n"
            "        time.sleep(0.01)\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "try:\n    run_isolated(case, timeout=120)\nexcept AidgeCrash as exc:\n    print('crash:', exc)\n")
    with Supervisor() as supervisor, open(tmp_path / "out", "w") as out:
        proc = supervisor.start([sys.executable, "-c", code], stdout=out, env=os.environ, cwd=tmp_path)
        assert supervisor.wait(proc) == 0, (tmp_path / "out").read_text()
    assert "crash:" in (tmp_path / "out").read_text()
    pid = int((tmp_path / "pids").read_text())
    for _ in range(200):
        if not running(pid):
            break
        time.sleep(0.02)
    assert not running(pid), "the crashed case's setsid grandchild outlived the supervised run"


def test_the_subreaper_is_on_only_while_a_supervisor_is_entered():
    from interop.reporting import supervisor as module

    before = module.subreaper_state()
    with Supervisor():
        assert module.subreaper_state() is (None if before is None else True)
        with Supervisor():  # nested (or another thread's): still on
            pass
        assert module.subreaper_state() is (None if before is None else True)
    assert module.subreaper_state() == before


def test_the_clean_up_leaves_the_callers_and_other_supervisors_children_alone(tmp_path):
    # what the adoption clean-up must not take for an orphan: a child of the caller that ended
    # unreaped (its exit status is the caller's to read), and a child another supervisor started
    # during this one's wait (a session of its own too)
    caller = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(7)"], start_new_session=True)
    for _ in range(500):  # ended, not reaped: a zombie of this process
        if not running(caller.pid):
            break
        time.sleep(0.01)
    with Supervisor() as first, Supervisor() as second, open(tmp_path / "out", "w") as out:
        short = second.start([sys.executable, "-c", "import time; time.sleep(1)"], stdout=out, env=os.environ,
                             cwd=tmp_path)
        other = first.start([sys.executable, "-c", "import time; time.sleep(120)"], stdout=out, env=os.environ,
                            cwd=tmp_path)
        assert second.wait(short) == 0
        assert running(other.pid), "another supervisor's child was taken for an orphan"
        first._deadline = time.monotonic()  # stopped at once
        assert first.wait(other) == -signal.SIGKILL
    assert caller.wait(timeout=10) == 7  # its status, not reaped by the clean-up
