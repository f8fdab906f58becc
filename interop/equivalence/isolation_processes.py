"""The processes of a case child (:func:`interop.equivalence.isolation.run_isolated`): the subreaper
switch, its descendants found, killed and reaped as it ends, the parent's wait for it and its reaping
(its process group killed first), and a hung child's stacks asked for before it is killed (see
:mod:`interop.equivalence.isolation`'s docstring, "Processes")."""
from __future__ import annotations

import contextlib
import os
import signal as _signal
import sys
import time
import ctypes

from .isolation_memory import _peak


#: prctl(2)'s PR_SET_CHILD_SUBREAPER: the orphans of a process's descendants become its children
_PR_SET_CHILD_SUBREAPER = 36
_PRCTL: list = []  # [prctl or None], looked up once in the parent (nothing is imported in a child)


def _prctl():
    if not _PRCTL:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                fn = None
        _PRCTL.append(fn)
    return _PRCTL[0]


def _descendants(pid: int) -> list[int]:
    """The living descendants of ``pid`` (read from /proc; none where it is not there)."""
    parents: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] not in ("Z", "X"):
            parents.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for kid in parents.get(todo.pop(), []):
            if kid not in out:
                out.append(kid)
                todo.append(kid)
    return out


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, _signal.SIGKILL)


def _end_descendants() -> None:
    """In the child, as it ends: every process the case started, and theirs, killed and reaped (a
    callable that started a long-lived process left it running after ``verify`` returned). The
    child is a subreaper (:func:`_child`): an orphan of its descendants, a daemon that forked
    twice, is its child too. One ``waitpid`` when there is none (the usual case)."""
    for _ in range(200):
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no descendant left
        except OSError:
            return
        if done:
            continue
        _kill_all(_descendants(os.getpid()))
        time.sleep(0.005)


def _wait(pid: int, limit: float | None) -> tuple[int, int]:
    """(the child's exit status, its peak resident memory in bytes); after ``limit`` seconds
    (None: no limit) it is killed first. Reaped by :func:`_reap`."""
    if limit is not None:
        deadline = time.monotonic() + limit
        delay = 0.0005
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, _signal.SIGKILL)
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    return _reap(pid)


def _reap(pid: int) -> tuple[int, int]:
    """The ended child's (exit status, peak resident memory in bytes). Before it is reaped (while
    its pid, its group's id, cannot be anyone else's), its process group is killed: what the case
    started and left there when the child died before its own clean-up (a crash, a kill, an
    interruption; nothing is left when it ended on its own)."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    with contextlib.suppress(OSError):
        os.killpg(pid, _signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    return status, _peak(usage)


#: how long a hung child is given to write its threads' stacks before it is killed
DUMP_WAIT_S = 2.0


def _dump_stacks(pid: int, stack_file) -> None:
    """Have a hung child write every thread's Python stack (``faulthandler`` answers SIGUSR1 from
    its signal handler, even while a thread is stuck in C++), and wait until it has (the file grew,
    then stayed the same for 50 ms) or :data:`DUMP_WAIT_S` passed. Before this, a hang had no stack:
    its record said "outside the bridge's phases", attribution ``unknown``, wherever it hung."""
    try:
        size = os.fstat(stack_file.fileno()).st_size
        os.kill(pid, _signal.SIGUSR1)
    except (OSError, AttributeError):
        return
    start, deadline, settled = size, time.monotonic() + DUMP_WAIT_S, 0
    while time.monotonic() < deadline and settled < 5:
        time.sleep(0.01)
        now = os.fstat(stack_file.fileno()).st_size
        settled = settled + 1 if now == size and now > start else 0
        size = now
