"""The one supervisor of a report run's child processes (pytest, the timing pass):
:class:`Supervisor` (one stop path for Ctrl-C, SIGTERM and SIGHUP, one wait loop) and
:class:`Watchdog` (what runs when the report process itself dies).

- A child runs in a session of its own (its process group: xdist workers, case children, what
  a case starts), with SIGINT at its default disposition and ``PR_SET_PDEATHSIG`` on Linux
  (:func:`child_setup`).
- Ctrl-C, SIGTERM and SIGHUP are caught from the moment the supervisor is entered. While a child
  runs, each is passed on to the child's group as SIGINT (pytest stops, prints its totals and
  combines its records) and the child gets that signal's grace period (:data:`GRACE_S`, a
  parameter of :class:`Supervisor` and of :meth:`Supervisor.wait`) before its session is killed.
  Before a child starts, a stop signal means it is never started. Inside
  :meth:`Supervisor.interruptible` (the report run's analysis) a stop signal raises
  :class:`Stopped`, so that the caller writes what it can, naming the signal.
- When a wait ends, however it ends, every process of the child's session is killed
  (:func:`kill_session`: its group, and a process that left the group for a group of its own in
  the same session, like a case child): nothing a child started outlives it.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

__all__ = ["GRACE_S", "Stopped", "Supervisor", "Watchdog", "child_setup", "kill_session"]

#: what each stop signal is called in the run's words
SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}
#: seconds a child gets to stop after each stop signal (pytest: its summary and its records)
#: before its session is killed
GRACE_S = {"Ctrl-C": 60.0, "SIGTERM": 60.0, "SIGHUP": 60.0}
#: seconds between two looks at a running child (its end, the deadline, the caller's tick)
POLL_S = 0.5


class Stopped(KeyboardInterrupt):
    """A stop signal (Ctrl-C, SIGTERM, SIGHUP) inside :meth:`Supervisor.interruptible`; ``name``
    says which. A KeyboardInterrupt, so that code that lets a Ctrl-C through lets it through too."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class Supervisor:
    """Ctrl-C, SIGTERM and SIGHUP for the whole report run, and its children's one wait loop.

    ``grace_s``: seconds a child gets after each stop signal (keys of :data:`GRACE_S`; missing
    keys take its values). ``stopped_by``: the first stop signal the run got, in words, or None.
    Outside the main thread no handler can be installed: signals then act as they would without
    the supervisor (a KeyboardInterrupt), the wait loop is the same."""

    def __init__(self, grace_s: Mapping[str, float] | None = None, *, watchdog: "Watchdog | None" = None):
        unknown = set(grace_s or {}) - set(GRACE_S)
        if unknown:
            raise ValueError(f"Supervisor: grace_s keys are {sorted(GRACE_S)}, got {sorted(unknown)}")
        self.grace_s = dict(GRACE_S, **(grace_s or {}))
        self.watchdog = watchdog
        self.stopped_by: str | None = None
        self.proc: subprocess.Popen | None = None
        self._grace_now: Mapping[str, float] | None = None  # the running child's own grace periods
        self._deadline: float | None = None
        self._raising = False
        self._old: dict = {}

    # -- signals ------------------------------------------------------------------------------
    def __enter__(self) -> "Supervisor":
        for sig in SIGNAL_NAMES:
            try:
                self._old[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no handler at all (signals act as before)
                break
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()

    def _handle(self, signum, frame) -> None:
        name = SIGNAL_NAMES.get(signum, str(signum))
        self.stopped_by = self.stopped_by or name
        proc = self.proc
        if proc is not None:
            grace = (self._grace_now or self.grace_s).get(name, GRACE_S.get(name, 0.0))
            deadline = time.monotonic() + grace
            self._deadline = deadline if self._deadline is None else min(self._deadline, deadline)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGINT)
        elif self._raising:
            self._raising = False  # one Stopped: the caller's clean-up is not interrupted again
            raise Stopped(name)

    @contextlib.contextmanager
    def interruptible(self):
        """A stop signal received inside raises :class:`Stopped` (one received before does not:
        the analysis of a stopped run is its report)."""
        self._raising = True
        try:
            yield self
        finally:
            self._raising = False

    # -- children -----------------------------------------------------------------------------
    def start(self, argv: list[str], *, stdout, env: Mapping[str, str], cwd: Path) -> subprocess.Popen | None:
        """``argv`` in a session of its own (:func:`child_setup`), its output to ``stdout``; None
        when the run was asked to stop before (the child is never started)."""
        if self.stopped_by:
            return None
        proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.STDOUT, env=dict(env), cwd=cwd,
                                start_new_session=True, preexec_fn=child_setup(os.getpid()))
        if self.watchdog is not None:
            self.watchdog.guard(proc.pid)
        self.proc = proc
        if self.stopped_by:  # a signal while it started: passed on now
            self._handle(next(s for s, n in SIGNAL_NAMES.items() if n == self.stopped_by), None)
        return proc

    def wait(self, proc: subprocess.Popen, *, grace_s: Mapping[str, float] | None = None,
             tick: Callable[[], None] | None = None, every: float | None = None) -> int:
        """The one wait loop: ``proc``'s exit status. ``grace_s``: this child's grace periods
        (default the supervisor's; 0: killed at the next look). ``tick`` is called every ``every``
        seconds while it runs (the progress line). Its session is killed when the wait ends,
        however it ends: nothing it started outlives it."""
        self.proc = proc
        self._grace_now = None if grace_s is None else dict(self.grace_s, **grace_s)
        if self.stopped_by and self._deadline is None:
            self._deadline = time.monotonic() + (self._grace_now or self.grace_s)[self.stopped_by]
        next_tick = time.monotonic() + (every or 0)
        try:
            while True:
                try:
                    return proc.wait(timeout=POLL_S)
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                if tick is not None and every and now >= next_tick:
                    tick()
                    next_tick = now + every
                if self._deadline is not None and now >= self._deadline:
                    kill_session(proc.pid)
        finally:
            self.proc, self._grace_now, self._deadline = None, None, None
            kill_session(proc.pid)
            if proc.returncode is None:  # left by an exception: reaped all the same
                with contextlib.suppress(Exception):
                    proc.wait(timeout=30)


def kill_session(sid: int, sig: int = signal.SIGKILL) -> None:
    """``sig`` to process group ``sid`` and to every other process of session ``sid`` (read from
    /proc where there is one: a case child that took a group of its own is in the session still)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sid, sig)
    for pid in _session_members(sid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _session_members(sid: int) -> list[int]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    out = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the name: state, ppid, pgrp, session
        if len(fields) > 3 and fields[0] not in (b"Z", b"X") and int(fields[3]) == sid:
            out.append(int(entry))
    return out


#: prctl(2)'s PR_SET_PDEATHSIG: the signal the kernel sends a process when its parent dies
_PR_SET_PDEATHSIG = 1


def child_setup(parent: int):
    """What runs in a child's process before it starts: SIGINT at its default disposition (a
    process started with SIGINT ignored, a background job of a non-interactive shell, passes the
    ignoring on through exec: the Ctrl-C passed on to pytest did nothing, and an interrupted run
    was called complete), and on Linux ``PR_SET_PDEATHSIG`` = SIGKILL: the kernel kills it the
    moment this process dies, however it dies; a parent already gone by then kills it at once.
    That reaches the child alone, not its session: :class:`Watchdog` kills the session."""
    prctl = None
    if sys.platform.startswith("linux"):  # looked up here: nothing is imported in the forked child
        try:
            import ctypes

            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            prctl = None

    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return setup


class Watchdog:
    """A small process that outlives this one by design: it reads a pipe that only this process
    holds; when the pipe ends without the word ``done`` (this process was killed by SIGKILL, the
    OOM killer, or crashed), it kills the sessions it was told of (pytest with its xdist workers
    and case children, the timing pass) and runs ``then`` (``module:function``, called with
    ``args``: the report run's salvage, which writes the report of what the run left). Why not only
    ``PR_SET_PDEATHSIG`` (:func:`child_setup`): it reaches the direct child alone. Why not a thread
    or a handler: SIGKILL runs no code in the process it kills. The watchdog is in a session of its
    own (a Ctrl-C or a hang-up of the terminal never reaches it) and ends as soon as it reads
    ``done``."""

    def __init__(self, cwd: Path, then: str, args: list[str]):
        read_fd, self._fd = os.pipe()
        os.set_inheritable(read_fd, False)
        package_root = str(Path(__file__).resolve().parents[2])  # where ``interop`` is imported from
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root,
                                                                      os.environ.get("PYTHONPATH")])))
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", _WATCHDOG_CODE, __file__, then, *args], stdin=read_fd,
                                         stdout=subprocess.DEVNULL, cwd=cwd, env=env, start_new_session=True)
        finally:
            os.close(read_fd)

    def _say(self, line: str) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.write(self._fd, (line + "\n").encode())

    def guard(self, sid: int) -> None:
        """Kill session ``sid`` if this process dies."""
        self._say(f"group {sid}")

    def done(self) -> None:
        """This process finished on its own: the watchdog ends."""
        self._say("done")
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)


#: the watchdog's program (:class:`Watchdog`): standard library only until it has a run to report
_WATCHDOG_CODE = """
import importlib, os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
groups, data = [], b""
while True:
    try:
        chunk = os.read(0, 4096)
    except InterruptedError:
        continue
    if not chunk:
        break
    data += chunk
    *lines, data = data.split(b"\\n")
    for line in lines:
        word, _, arg = line.decode().partition(" ")
        if word == "done":
            sys.exit(0)
        if word == "group":
            groups.append(int(arg))
# this file's kill_session, loaded by its path: importing the package first would delay the kill
import importlib.util
spec = importlib.util.spec_from_file_location("_interop_run_supervisor", sys.argv[1])
supervisor = importlib.util.module_from_spec(spec)
spec.loader.exec_module(supervisor)
for sid in groups:
    supervisor.kill_session(sid)
module, _, function = sys.argv[2].partition(":")
sys.exit(getattr(importlib.import_module(module), function)(*sys.argv[3:]))
"""
