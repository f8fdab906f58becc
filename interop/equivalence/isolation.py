"""Run a function in a forked child process so that a crash inside Aidge (SIGSEGV, SIGABRT,
an abrupt ``exit``, a hang) ends as a Python exception in the caller instead of killing it.

``run_isolated(fn, *args, timeout=60)`` forks; the child runs ``fn(*args)`` and sends back,
through a pipe, either its (picklable) return value or the exception it raised: same type,
same message and attributes, with the child's traceback attached as a note. A child killed
by a signal raises :class:`interop.errors.AidgeCrash` in the parent, whose message reads
``crash: process killed by SIGABRT during compile``. The phase is read from the Python stack
that :mod:`faulthandler` writes when the child receives the fatal signal (a hung child: when the
parent sends it SIGUSR1 at its timeout, before killing it, :func:`_dump_stacks`): the innermost
frame the bridge marks with a phase names it (:func:`interop.bridge.events.crash_phase`:
``_import_graph`` -> import, ``_compile`` -> compile, ``forward``, ``backward``, ``step``, the
ONNX export).

Why fork: torch and Aidge are already imported in the parent, so a child costs a few
milliseconds (measured: see ``tests/unit/test_isolation.py``), and ``fn`` needs no pickling.
Requirements: a POSIX system; the child never touches the parent's threads (pytest-xdist's
I/O thread) and leaves through ``os._exit``. OpenMP (GNU libgomp, used by torch's CPU kernels
and by aidge_backend_cpu, each with its own copy) is not fork-safe: a child forked while the
parent's thread pool has more than one thread waits forever at its first parallel region
(measured: a ``Tensor.clone()`` of 64K floats in the child of a process whose torch had run
one matmul on 2 threads; docs/aidge-notes.md, "Forking after OpenMP"). So both pools are set
to one thread for the instant of the fork (:func:`_single_threaded_fork`) and restored in the
parent right after: the child computes on one thread, the parent keeps its setting.

Memory: each child may grow by at most :func:`memory_bound` bytes of private writable memory over
what it inherited (``RLIMIT_DATA`` set in the child to its ``VmData`` at the fork plus the bound;
the parent is never bound; RLIMIT_DATA rather than RLIMIT_AS: see :func:`_bound_memory`).
``INTEROP_CASE_MEMORY`` sets it (``8G``, ``512M``, a number of bytes; ``0``, ``off`` or ``none``:
no bound); the default is half the machine's physical memory. A leaking case then fails in the
child (an allocation fails: Python's ``MemoryError``, Aidge's ``std::bad_alloc`` through
pybind11, torch's "can't allocate memory") instead of growing until something outside the suite
kills it, and the verdict says memory: an :class:`AidgeCrash` whose message names the bound and
the variable (``memory_bound_hit``), the child's own error quoted. Only a child whose peak
resident memory grew to the bound is called so: one allocation too large for any bound (Aidge's
``std::bad_alloc`` of a wrong shape, an expected failure) stays the error it is. A child that dies
of it anyway (an abort on a failed allocation, the OOM killer) is a crash whose message gives the
child's peak memory beside its bound. Either is placed by the stack at the moment of failure (the
failed allocation's traceback, the dying child's faulthandler dump): in a bridge phase it is
Aidge's; with none, the message says it was the case's own memory, and
:func:`interop.categories.case_memory` makes it a ``case_memory (test strategy)``, no Aidge finding.

Processes: nothing a case starts outlives its child. The child is a subreaper
(``PR_SET_CHILD_SUBREAPER``: a daemon that forked twice stays its descendant) and kills and reaps
every descendant as it ends; a case killed at its timeout has its descendants killed first. The
child leads a process group of its own: when it dies by a signal (a crash, SIGKILL), so that its
own clean-up never runs, the parent kills that group, every process the case started that did not
leave it (a subprocess, a fork, an onnxruntime or Aidge helper). A descendant that left it for a
session of its own (``setsid``) is out of this child's reach once it crashed; under ``nox -s
report`` the run's supervisor, a subreaper as well (:mod:`interop.reporting.supervisor`), kills
and reaps it when the run ends.

The fork path lives here (:func:`run_isolated`, :func:`_single_threaded_fork`, :func:`_child`, the
result sent back through the pipe and rebuilt, the flag :func:`in_isolated_child` reads); the rest, by
what each part does, in :mod:`.isolation_phase` (the phase of a crash or a hang, read from the child's
stack), :mod:`.isolation_memory` (the memory bound) and :mod:`.isolation_processes` (the child's
descendants, its process group, its wait and reaping).
"""
from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import gc
import importlib
import os
import pickle
import resource
import select
import signal as _signal
import sys
import tempfile
import threading
import time
import traceback as _tb
from typing import Any, Callable

from .._lazy import import_lock
from ..bridge import capture, events
from ..case_notes import case_notes, note as add_note
from ..exporters import export_routes, note_routes
from ..stages import add_stage_times, collecting, phase_listener, stage, stage_times, while_collecting

from ..errors import InteropError
from .isolation_memory import (_at_bound, _bound_memory, _memory_crash, _out_of_memory, _peak, _status_bytes,
                               _unbound_memory, _vm_data, _with_peak, memory_bound)
from .isolation_phase import _crash, _phase_of_traceback, _signal_name
from .isolation_processes import (_PR_SET_CHILD_SUBREAPER, _descendants, _dump_stacks, _end_descendants, _kill_all,
                                  _prctl, _reap, _wait)

__all__ = ["run_isolated", "IsolatedError", "fork_available", "in_isolated_child"]

_IN_CHILD = False


def _time_the_bridge_phases():
    """While a stage collector is open (the cost profile), the bridge's phases are its stages
    (``export``, ``import``, ``compile``...): :func:`interop.stages.phase_listener` subscribed to
    the bridge's events (:mod:`interop.bridge.events`, a light module), unsubscribed after."""
    handle = events.subscribe(phase_listener)
    return handle.close


while_collecting(_time_the_bridge_phases)


def in_isolated_child() -> bool:
    """Whether this process is a child forked by :func:`run_isolated` (what it changes in its
    memory never reaches the parent)."""
    return _IN_CHILD


class IsolatedError(InteropError):
    """An exception raised in the isolated child that cannot be rebuilt in the parent with
    its own type; the message starts with the child's exception type."""


def fork_available() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def run_isolated(fn: Callable[..., Any], *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` computed in a forked child; returns its result (which must be
    picklable) or raises its exception. A child that dies raises :class:`AidgeCrash`; one
    that runs longer than ``timeout`` seconds is killed and raises :class:`AidgeCrash` with
    ``timed_out=True``. Without ``os.fork`` (Windows) ``fn`` runs in this process."""
    if not fork_available():
        return fn(*args, **kwargs)
    bound = memory_bound()  # a malformed variable: its ValueError, before anything is forked
    # what a child's resident memory starts from: the parent's anonymous memory (fork copies its
    # page tables; a file's pages, libtorch's code, are faulted in again as the child runs)
    resident = _status_bytes("RssAnon", "RssShmem") if bound is not None else 0
    prctl = _prctl()
    timed = collecting()  # the cost profile: the child times its stages, the parent the fork
    started = time.perf_counter() if timed else 0.0
    read_fd, write_fd = os.pipe()
    stack_file = tempfile.TemporaryFile(mode="w+b")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = _single_threaded_fork()
    if pid == 0:  # ---- child: never returns
        os.close(read_fd)
        _child(write_fd, stack_file, fn, args, kwargs, timed, bound, prctl)
    # ---- parent
    os.close(write_fd)
    with contextlib.suppress(OSError):  # the child's own group (it sets it too: whichever runs first)
        os.setpgid(pid, pid)
    try:
        data, timed_out = _read_all(read_fd, timeout, pid)
        if timed_out:
            _dump_stacks(pid, stack_file)  # where it hangs: the phase, as a crash's stack gives it
            _kill_all(_descendants(pid))  # what the hung case started, then the case
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, _signal.SIGKILL)
        status, peak = _wait(pid, AFTER_RESULT_S if data and not timed_out and _capturing() else None)
        pid = 0
        stack_file.seek(0)
        stack = stack_file.read().decode(errors="replace")
    finally:
        os.close(read_fd)
        stack_file.close()
        if pid:  # interrupted (KeyboardInterrupt...): do not leave the child behind
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, _signal.SIGKILL)
                _reap(pid)
    if timed and (timed_out or os.WIFSIGNALED(status) or not data):  # no stages came back: the whole wait
        add_stage_times({"child killed, crashed or hung": time.perf_counter() - started})
    if timed_out:
        raise _crash(f"timed out after {timeout:g} s", stack, signal="SIGKILL", timed_out=True)
    if os.WIFSIGNALED(status) and not data:
        name = _signal_name(os.WTERMSIG(status))
        raise _with_peak(_crash(f"killed by {name}", stack, signal=name), peak - resident, bound)
    if not data:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        raise _with_peak(_crash(f"exited with status {code} without a result", stack), peak - resident, bound)
    kind, payload, routes, stages, notes = pickle.loads(data)
    for what, lines in (notes or {}).items():  # what the child learnt, for the records
        add_note(what, lines)
    if timed:
        child_s = stages.pop("", 0.0)  # the child's time in fn
        add_stage_times(stages)
        add_stage_times({"fork": max(0.0, time.perf_counter() - started - child_s)})
    if routes:  # the export routes the child took, for the records
        note_routes(routes)
    if kind == "ok":
        return payload
    if payload.get("out_of_memory") and bound is not None:
        raise _memory_crash(payload, bound)
    raise _rebuild(payload)


# --------------------------------------------------------------------------------------
_fork_lock = threading.Lock()


def _openmp_runtimes() -> list:
    """The GNU OpenMP runtimes loaded in this process (torch's and aidge_backend_cpu's own
    copies), as ctypes libraries; none where /proc is not readable."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libgomp" in line}
    except OSError:
        return []
    libs = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)  # already loaded: never a new copy
            lib.omp_get_max_threads.restype = ctypes.c_int
            libs.append(lib)
        except (OSError, AttributeError):
            continue
    return libs


def _single_threaded_fork() -> int:
    """``os.fork()`` with every OpenMP pool (torch's and Aidge's) at one thread for the fork,
    restored in the parent afterwards (see the module's docstring). One fork at a time: the
    thread counts are process-wide."""
    with _fork_lock, import_lock():  # no lazy import half done in another thread (interop._lazy)
        torch = sys.modules.get("torch")
        torch_threads = torch.get_num_threads() if torch is not None else 1
        runtimes = [(lib, lib.omp_get_max_threads()) for lib in _openmp_runtimes()]
        if torch is not None and torch_threads != 1:
            torch.set_num_threads(1)
        for lib, _ in runtimes:
            lib.omp_set_num_threads(1)
        # The parent's objects are frozen for the fork: the child's garbage collector never
        # walks them (a full collection in the child took 258 ms in a pytest worker holding the
        # OpInfo samples, and copied every page it touched); the parent unfreezes at once. A
        # caller that froze objects itself keeps them frozen (we neither freeze nor unfreeze).
        freeze = gc.get_freeze_count() == 0
        if freeze:
            gc.freeze()
        pid = os.fork()
        if pid == 0:
            return 0
        if freeze:
            gc.unfreeze()
        if torch is not None and torch_threads != 1:
            torch.set_num_threads(torch_threads)
        for lib, n in runtimes:
            lib.omp_set_num_threads(n)
        return pid


def _child(write_fd: int, stack_file, fn, args, kwargs, timed: bool = False, bound: int | None = None,
           prctl=None) -> None:
    global _IN_CHILD
    _IN_CHILD = True
    status = 0
    failure = None
    with contextlib.suppress(OSError):  # a group of its own: the parent kills it if this child crashes
        os.setpgid(0, 0)
    if prctl is not None:  # the orphans of what the case starts become this child's (see _end_descendants)
        with contextlib.suppress(Exception):
            prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        faulthandler.enable(file=stack_file, all_threads=True)  # the thread inside the bridge names the phase when another dies
        with contextlib.suppress(AttributeError, ValueError, RuntimeError):  # no SIGUSR1 (not POSIX)
            # a hang: the parent asks for every thread's stack before it kills this child at its timeout
            faulthandler.register(_signal.SIGUSR1, file=stack_file, all_threads=True)
        _bound_memory(bound)
        # the memory baseline: peak resident and private writable memory now (``start`` below is the timer's)
        memory_start = (_peak(resource.getrusage(resource.RUSAGE_SELF)), _vm_data()) if bound is not None else None
        routes: list = []
        stages: dict = {}
        notes: dict = {}
        timer = stage_times() if timed else contextlib.nullcontext({})
        try:
            with timer as stages:
                start = time.perf_counter()
                try:
                    with export_routes() as routes, case_notes() as notes, \
                            stage("case code, unnamed"):  # what no inner stage names
                        result = fn(*args, **kwargs)
                finally:
                    stages[""] = time.perf_counter() - start  # the parent's fork time is the rest
                    _unbound_memory()
            payload = ("ok", result, routes, stages, notes)
            try:
                data = pickle.dumps(payload)
            except Exception as exc:
                data = pickle.dumps(("error", _describe(TypeError(
                    f"run_isolated: the result of {getattr(fn, '__name__', fn)!r} cannot be pickled: {exc}")),
                    routes, stages, notes))
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            _unbound_memory()
            info = _describe(exc)
            if _out_of_memory(exc) and _at_bound(memory_start, bound):
                phase, frame = _phase_of_traceback(exc)
                info.update(out_of_memory=True, phase=phase, frame=frame)
            data = pickle.dumps(("error", info, routes, stages, notes))
            failure = exc
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
        os.close(write_fd)  # the parent has the result; what follows is outside the case's timeout
        if failure is not None and _capturing():
            capture.failed(failure)  # the reproducer, written by the process that saw the failure
    except BaseException:  # noqa: BLE001
        status = 70
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(BaseException):
            _end_descendants()
        os._exit(status)


#: how long a child may run after it sent its result (the failing case's reproducer,
#: :mod:`interop.bridge.capture`) before it is killed; the result stands either way
AFTER_RESULT_S = 600.0


def _capturing() -> bool:
    """Whether a reproducer capture is on (:mod:`interop.bridge.capture`: a light module)."""
    return capture.current() is not None


def _read_all(fd: int, timeout: float | None, pid: int | None = None) -> tuple[bytes, bool]:
    """What the child sends, up to the pipe's end or ``timeout``; (data, timed out). With ``pid``
    (where ``os.pidfd_open`` exists) the child's exit ends the read too: a process the case
    started holds the pipe's other end as well (a fork inherits it), and a child that crashed
    left it open, so the end never came before the timeout (or ever, without one)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    chunks = []
    watched = [fd]
    pidfd = None
    if pid is not None and hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(pid)
            watched.append(pidfd)
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select(watched, [], [], wait)
            if not ready:
                return b"".join(chunks), True
            if fd not in ready:  # the child ended: what it wrote is in the pipe already
                while select.select([fd], [], [], 0)[0]:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    chunks.append(chunk)
                return b"".join(chunks), False
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _describe(exc: BaseException) -> dict[str, Any]:
    cls = type(exc)
    state = {}
    for key, value in vars(exc).items():
        try:
            pickle.loads(pickle.dumps(value))
        except Exception:
            continue
        state[key] = value
    args = []
    for a in exc.args:
        try:
            pickle.loads(pickle.dumps(a))
            args.append(a)
        except Exception:
            args.append(repr(a))
    notes = [n for n in getattr(exc, "__notes__", []) if isinstance(n, str)]
    return {
        "module": cls.__module__,
        "qualname": cls.__qualname__,
        "message": str(exc),
        "args": tuple(args),
        "state": state,
        "notes": notes,
        "traceback": "".join(_tb.format_exception(exc)),
    }


def _rebuild(info: dict[str, Any]) -> BaseException:
    """An exception of the child's type, message and attributes (without calling its
    ``__init__``, whose signature is unknown), or :class:`IsolatedError`."""
    exc: BaseException | None = None
    try:
        obj: Any = importlib.import_module(info["module"])
        for part in info["qualname"].split("."):
            obj = getattr(obj, part)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            exc = obj.__new__(obj, *info["args"])
            exc.args = info["args"]
            exc.__dict__.update(info["state"])
            if str(exc) != info["message"]:
                exc = None
    except Exception:
        exc = None
    if exc is None:
        exc = IsolatedError(f"{info['module']}.{info['qualname']}: {info['message']}")
    for note in info["notes"]:
        exc.add_note(note)
    exc.add_note("--- traceback in the isolated child process ---\n" + info["traceback"].rstrip())
    return exc
