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
  the same session, like a case child), and every process below the child (read from /proc
  before the kill): nothing a child started outlives it.
- A process that left the child's session for a session of its own (``setsid``, a daemon) is in
  no group nor session the supervisor kills, and once its parent ends it is reparented: while a
  supervisor is entered, this process is a *subreaper* on Linux (``PR_SET_CHILD_SUBREAPER``,
  restored when the last supervisor exits), so such an orphan becomes this process's child
  instead of init's; when a wait ends, every such adopted process (a child of this process it did
  not start, in a session other than this process's) is killed and reaped. A case child that
  crashed after starting one (:mod:`interop.equivalence.isolation` cannot reach it then) is
  covered so. Not covered: the report process itself killed by SIGKILL (the orphans go to init;
  the watchdog kills the sessions it was told of, not them), and systems without the flag.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Mapping

__all__ = ["GRACE_S", "Stopped", "Supervisor", "Watchdog", "child_setup", "kill_session", "subreaper_state"]

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
        self._reaping = False  # this supervisor holds the subreaper on (_subreaper_on)
        self._before: set[int] = set()  # this process's children when the running child started

    # -- signals ------------------------------------------------------------------------------
    def __enter__(self) -> "Supervisor":
        self._reaping = _subreaper_on()
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
        if self._reaping:
            self._reaping = False
            _subreaper_off()

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
        # zombies too: a caller's child that ended unreaped is the caller's to reap, never this one's
        self._before = {pid for pid, ppid, _, _ in _processes(zombies=True) if ppid == os.getpid()}
        proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.STDOUT, env=dict(env), cwd=cwd,
                                start_new_session=True, preexec_fn=child_setup(os.getpid()))
        _own(proc.pid)
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
            below = _descendants(proc.pid)  # before the kill: one that left the session is still below its parent
            kill_session(proc.pid)
            _kill(below)
            if proc.returncode is None:  # left by an exception: reaped all the same
                with contextlib.suppress(Exception):
                    proc.wait(timeout=30)
            if self._reaping or _REAPER["users"]:  # orphans come to this process because a supervisor asked
                self._end_adopted(proc.pid)
            _own(proc.pid, False)

    def _end_adopted(self, child: int) -> None:
        """Kill and reap the processes this process adopted as a subreaper: its children that it
        did not start (not there when ``child`` started, not ``child``, no supervisor's child nor
        watchdog of any thread) and that are in a session other than its own (the caller's own
        children share its session; an orphan of the child's tree never does). Their own
        descendants are killed with them (they come back adopted in turn, until none is left).
        The one process this cannot tell from an orphan: a child that another thread of the caller
        starts in a session of its own, by other means than a supervisor, during the wait."""
        me, mine = os.getpid(), os.getsid(0)
        keep = self._before | {child}
        if self.watchdog is not None:
            keep.add(self.watchdog.proc.pid)
        for _ in range(100):
            with _REAPER_LOCK:
                owned = set(_OWNED)
            adopted = [pid for pid, ppid, sid, _ in _processes(zombies=True)
                       if ppid == me and pid not in keep and pid not in owned and sid != mine]
            if not adopted:
                return
            for pid in adopted:
                _kill([pid, *_descendants(pid)])
            for pid in adopted:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)


def kill_session(sid: int, sig: int = signal.SIGKILL) -> None:
    """``sig`` to process group ``sid`` and to every other process of session ``sid`` (read from
    /proc where there is one: a case child that took a group of its own is in the session still)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sid, sig)
    _kill(_session_members(sid), sig)


def _kill(pids: list[int], sig: int = signal.SIGKILL) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _processes(zombies: bool = False) -> list[tuple[int, int, int, str]]:
    """(pid, ppid, session, state) of every process but this one, read from /proc (none where
    there is no /proc); zombies only when asked (they are reaped, never killed)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    out = []
    me = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            # after the name: state, ppid, pgrp, session
            state, ppid, sid = fields[0].decode(), int(fields[1]), int(fields[3])
        except (OSError, IndexError, ValueError):
            continue
        if zombies or state not in ("Z", "X"):
            out.append((int(entry), ppid, sid, state))
    return out


def _session_members(sid: int) -> list[int]:
    return [pid for pid, _, session, _ in _processes() if session == sid]


def _descendants(pid: int) -> list[int]:
    """The living processes below ``pid`` (its children, theirs, ...), whatever their session."""
    children: dict[int, list[int]] = {}
    for kid, ppid, _, _ in _processes():
        children.setdefault(ppid, []).append(kid)
    out, todo = [], [pid]
    while todo:
        for kid in children.get(todo.pop(), []):
            if kid not in out:
                out.append(kid)
                todo.append(kid)
    return out


#: prctl(2): the orphans of a subreaper's descendants become its children (not init's)
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37
_REAPER_LOCK = threading.Lock()
_REAPER = {"users": 0, "before": 0}  # supervisors entered now; the flag before the first of them
_OWNED: set[int] = set()  # children any supervisor or watchdog of this process started and still holds


def _own(pid: int, held: bool = True) -> None:
    with _REAPER_LOCK:
        (_OWNED.add if held else _OWNED.discard)(pid)


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def subreaper_state() -> bool | None:
    """Whether this process is a subreaper now (``PR_GET_CHILD_SUBREAPER``); None where that
    cannot be read (not Linux)."""
    prctl = _libc_prctl()
    if prctl is None:
        return None

    flag = ctypes.c_int(0)
    if prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) != 0:
        return None
    return bool(flag.value)


def _subreaper_on() -> bool:
    """This process a subreaper while at least one supervisor is entered (counted: nested
    supervisors, other threads'); True when this call counts as one of them (undo with
    :func:`_subreaper_off`), False where the flag is not there."""
    with _REAPER_LOCK:
        if _REAPER["users"] == 0:
            before = subreaper_state()
            if before is None:
                return False
            prctl = _libc_prctl()
            if not before and prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                return False
            _REAPER["before"] = int(before)
        _REAPER["users"] += 1
        return True


def _subreaper_off() -> None:
    """The flag as it was before the first supervisor, once the last one exits (the caller's
    process is left as it was found)."""
    with _REAPER_LOCK:
        _REAPER["users"] -= 1
        if _REAPER["users"] == 0 and not _REAPER["before"]:
            prctl = _libc_prctl()
            if prctl is not None:
                prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


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
        _own(self.proc.pid)  # never taken for an orphan by a supervisor's clean-up

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
        if self.proc.returncode is not None:
            _own(self.proc.pid, False)


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
