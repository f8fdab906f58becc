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
"""
from __future__ import annotations

import contextlib
import faulthandler
import gc
import importlib
import os
import pickle
import re
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
from ..case_notes import case_notes, note as add_note
from ..exporters import export_routes
from ..stages import add_stage_times, collecting, phase_listener, stage, stage_times, while_collecting

from ..categories import AIDGE_PHASES
from ..errors import AidgeCrash, InteropError

__all__ = ["run_isolated", "IsolatedError", "phase_from_stack", "fork_available", "in_isolated_child",
           "memory_bound", "MEMORY_ENV"]

_IN_CHILD = False


def _time_the_bridge_phases():
    """While a stage collector is open (the cost profile), the bridge's phases are its stages
    (``export``, ``import``, ``compile``...): :func:`interop.stages.phase_listener` subscribed to
    the bridge's events (:mod:`interop.bridge.events`, a light module), unsubscribed after."""
    from ..bridge import events

    handle = events.subscribe(phase_listener)
    return handle.close


while_collecting(_time_the_bridge_phases)


def in_isolated_child() -> bool:
    """Whether this process is a child forked by :func:`run_isolated` (what it changes in its
    memory never reaches the parent)."""
    return _IN_CHILD

def _phase_frames(load: bool = True) -> dict[tuple[str, str], str]:
    """``{("bridge/<file>.py", function): phase}``: the frames that name a phase (the innermost one
    wins), as the bridge marks them (:func:`interop.bridge.events.crash_phase`). ``load=False``:
    the marks of the bridge modules this process imported (its own stack: nothing to import)."""
    from ..bridge.events import crash_phase_frames

    return crash_phase_frames(load)


_FRAME_LINE = re.compile(r'File "(?P<file>[^"]+)", line \d+ in (?P<func>\S+)')


class IsolatedError(InteropError):
    """An exception raised in the isolated child that cannot be rebuilt in the parent with
    its own type; the message starts with the child's exception type."""


#: the variable of the memory bound of a case child (:func:`memory_bound`)
MEMORY_ENV = "INTEROP_CASE_MEMORY"
#: what an allocation that failed says (Python, pybind11's std::bad_alloc, torch's CPU allocator, errno 12)
_OUT_OF_MEMORY = re.compile(r"can't allocate memory|Cannot allocate memory|std::bad_alloc|out of memory|"
                            r"DefaultCPUAllocator", re.IGNORECASE)
#: what a memory-bound failure with no Aidge phase on its stack adds (interop.categories.case_memory decides)
_NOT_AIDGE_MEMORY = "; no Aidge phase was running: the case's own memory, not Aidge's"
#: the share of its bound a dead child must have grown by for its death to be called memory's
_NEAR_BOUND = 0.75


def memory_bound() -> int | None:
    """Bytes of memory a case child may add to what it inherits: ``$INTEROP_CASE_MEMORY``
    (``8G``, ``512M``, ``1.5GiB``, bytes; ``0``/``off``/``none``: None, no bound), default half the
    physical memory (None where it is unknown). Anything else is a ValueError naming the variable."""
    from ..env import read

    return read(MEMORY_ENV)  # parsed and defaulted by its declaration (interop.env.VARIABLES)


def _mib(n: float) -> str:
    return f"{n / (1 << 20):,.0f} MiB"


def _status_bytes(*keys: str) -> int:
    """The sum of ``keys`` (``VmData``, ``RssAnon``...) of /proc/self/status in bytes; 0 where /proc
    is not there."""
    total = 0
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in keys:
                    total += int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total


def _vm_data() -> int:
    """This process's private writable memory in bytes (``VmData``, what ``RLIMIT_DATA`` counts)."""
    return _status_bytes("VmData")


def _bound_memory(bound: int | None) -> None:
    """In the child: ``RLIMIT_DATA`` at its private writable memory now (the parent's) plus ``bound``.
    RLIMIT_DATA and not RLIMIT_AS: it counts what malloc, torch and Aidge allocate, and not the
    address space a runtime only reserves (CUDA's, glibc's arenas), which RLIMIT_AS would count
    and which made CUDA fail to start under it."""
    if bound is None:
        return
    size = _vm_data()
    if not size:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = size + bound
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _at_bound(start: tuple[int, int] | None, bound: int | None) -> bool:
    """Whether this child's memory grew to its bound (a leak: its peak resident memory, or its private
    writable memory now, over the child's own baseline ``start``), not one allocation too large for
    any bound (Aidge's std::bad_alloc of a wrong shape stays the Aidge error it is). Both measures:
    a fork inherits its parent's peak, which may lie above what the child then grows to."""
    if not bound or start is None:
        return False
    peak0, data0 = start
    grown = max(_peak(resource.getrusage(resource.RUSAGE_SELF)) - peak0, _vm_data() - data0)
    return grown >= _NEAR_BOUND * bound


def _unbound_memory() -> None:
    """In the child, once ``fn`` ended: the bound lifted (sending the result back must not fail for it)."""
    with contextlib.suppress(ValueError, OSError):
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


def _out_of_memory(exc: BaseException, follow: bool = True) -> bool:
    """Whether ``exc`` (or, with ``follow``, what it was raised from) is an allocation that failed."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, MemoryError) or _OUT_OF_MEMORY.search(str(exc)[:2000]):
            return True
        if not follow:
            return False
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _phase_of_traceback(exc: BaseException) -> tuple[str | None, str | None]:
    """``(phase, innermost frame)`` of the stack on which an allocation failed, from a raised
    exception: the phase of the innermost bridge frame (as :func:`phase_from_stack`) and the
    innermost frame as ``file.py:function``. The stack is that of the exception and of what it was
    raised from, down to the deepest failed allocation of the chain (the bridge's AidgeError raised
    ``from`` Aidge's ``std::bad_alloc``: the allocation failed where the inner one was raised)."""
    chain, seen = [], exc
    while seen is not None and len(chain) < 8:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    failed = max((i for i, e in enumerate(chain) if _out_of_memory(e, follow=False)), default=0)
    phase, innermost = None, None
    frames = _phase_frames(load=False)  # this process's own stack (a child at its memory bound)
    for link in chain[:failed + 1]:  # outermost first: each one's frames lie below the previous one's
        for frame in _tb.extract_tb(link.__traceback__):
            base = os.path.basename(frame.filename)
            parent = os.path.basename(os.path.dirname(frame.filename))
            phase = frames.get((f"{parent}/{base}", frame.name), phase)
            innermost = f"{base}:{frame.name}"
    return phase, innermost


def _memory_crash(info: dict[str, Any], bound: int) -> AidgeCrash:
    """The crash of a child whose allocation failed at its bound, placed by the failed allocation's
    stack (``info["phase"]``: in an Aidge phase it is Aidge's; outside one, the case's own memory,
    :func:`interop.categories.case_memory`)."""
    phase = info.get("phase") or "unknown"
    where = f"during {phase}" if info.get("phase") else "outside the bridge's phases"
    if info.get("frame"):
        where += f" (innermost Python frame {info['frame']})"
    owner = "" if phase in AIDGE_PHASES else _NOT_AIDGE_MEMORY
    message = (f"crash: process ran out of memory {where}: the case child reached its memory bound "
               f"({_mib(bound)} over what it inherited; {MEMORY_ENV} sets it, 0 turns it off){owner}: "
               f"{info['qualname']}: {info['message'][:300]}")
    crash = AidgeCrash(phase, message, traceback=info.get("traceback", ""))
    crash.memory_bound_hit = True
    return crash


#: prctl(2)'s PR_SET_CHILD_SUBREAPER: the orphans of a process's descendants become its children
_PR_SET_CHILD_SUBREAPER = 36
_PRCTL: list = []  # [prctl or None], looked up once in the parent (nothing is imported in a child)


def _prctl():
    if not _PRCTL:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

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


def fork_available() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def phase_from_stack(stack: str) -> tuple[str | None, str | None]:
    """``(phase, innermost frame)`` from a faulthandler dump (most recent call first)."""
    innermost, frames = None, None
    for m in _FRAME_LINE.finditer(stack):
        base = os.path.basename(m.group("file"))
        if innermost is None:
            innermost = f"{base}:{m.group('func')}"
        parent = os.path.basename(os.path.dirname(m.group("file")))  # "bridge" for the bridge's own files
        if frames is None:
            frames = _phase_frames()
        phase = frames.get((f"{parent}/{base}", m.group("func")))
        if phase:
            return phase, innermost
    return None, innermost


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
        from ..exporters import note_routes

        note_routes(routes)
    if kind == "ok":
        return payload
    if payload.get("out_of_memory") and bound is not None:
        raise _memory_crash(payload, bound)
    raise _rebuild(payload)


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


def _with_peak(crash: AidgeCrash, grown: int, bound: int | None) -> AidgeCrash:
    """A dead child's crash with its memory beside its bound: near the bound, the death is called
    memory's (``memory_bound_hit``), with the variable that sets it."""
    if bound is None or grown < _NEAR_BOUND * bound:  # far from it: the crash's words stay as they are
        return crash
    note = (f"memory: the case child grew by {_mib(grown)} at its peak (resident), its bound is {_mib(bound)} "
            f"({MEMORY_ENV}, 0 turns it off): it died at its memory bound, most likely of it"
            f"{'' if crash.phase in AIDGE_PHASES else _NOT_AIDGE_MEMORY}")
    crash = AidgeCrash(crash.phase, f"{crash.aidge_message}; {note}", signal=crash.signal,
                       timed_out=crash.timed_out, traceback=crash.traceback)
    crash.memory_bound_hit = True
    return crash


# --------------------------------------------------------------------------------------
_fork_lock = threading.Lock()


def _openmp_runtimes() -> list:
    """The GNU OpenMP runtimes loaded in this process (torch's and aidge_backend_cpu's own
    copies), as ctypes libraries; none where /proc is not readable."""
    import ctypes

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
            from ..bridge import capture

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
    from ..bridge import capture

    return capture.current() is not None


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


def _peak(usage) -> int:
    """ru_maxrss in bytes (kilobytes on Linux, bytes on macOS)."""
    return int(usage.ru_maxrss) * (1 if sys.platform == "darwin" else 1024)


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


def _signal_name(signum: int) -> str:
    try:
        return _signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _crash(what: str, stack: str, *, signal: str | None = None, timed_out: bool = False) -> AidgeCrash:
    phase, frame = phase_from_stack(stack)
    where = f"during {phase}" if phase else "outside the bridge's phases"
    message = f"crash: process {what} {where}"
    if frame:
        message += f" (innermost Python frame {frame})"
    tb = f"Python stack of the child when it died:\n{stack.strip()}" if stack.strip() else ""
    return AidgeCrash(phase or "unknown", message, signal=signal, timed_out=timed_out, traceback=tb)


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
