"""Run a function in a forked child process so that a crash inside Aidge (SIGSEGV, SIGABRT,
an abrupt ``exit``, a hang) ends as a Python exception in the caller instead of killing it.

``run_isolated(fn, *args, timeout=60)`` forks; the child runs ``fn(*args)`` and sends back,
through a pipe, either its (picklable) return value or the exception it raised: same type,
same message and attributes, with the child's traceback attached as a note. A child killed
by a signal raises :class:`interop.errors.AidgeCrash` in the parent, whose message reads
``crash: process killed by SIGABRT during compile``. The phase is read from the Python stack
that :mod:`faulthandler` writes when the child receives the fatal signal: the innermost
frame in the bridge (``_import_graph`` -> import, ``_compile`` -> compile, ``forward``,
``backward``, ``step``) or the ONNX exporter names it.

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
"""
from __future__ import annotations

import contextlib
import faulthandler
import gc
import importlib
import os
import pickle
import re
import select
import signal as _signal
import sys
import tempfile
import threading
import time
import traceback as _tb
from typing import Any, Callable

from ..exporters import export_routes
from ..stages import add_stage_times, collecting, stage, stage_times

from ..errors import AidgeCrash, InteropError

__all__ = ["run_isolated", "IsolatedError", "phase_from_stack", "fork_available", "in_isolated_child"]

_IN_CHILD = False


def in_isolated_child() -> bool:
    """Whether this process is a child forked by :func:`run_isolated` (what it changes in its
    memory never reaches the parent)."""
    return _IN_CHILD

#: (file name, function name) of the frames that name a phase; the innermost one wins.
#: (file under interop/bridge/, function) -> the phase a crash in that frame belongs to
_PHASE_FRAMES = {
    ("bridge/onnx_export.py", "export_to_onnx"): "export",
    ("bridge/onnx_export.py", "_export_to_onnx"): "export",  # the body, under the export lock
    ("bridge/graph.py", "_import_graph"): "import",
    ("bridge/graph.py", "_compile"): "compile",
    ("bridge/runner.py", "forward"): "forward",  # the scheduler calls
    ("bridge/runner.py", "_forward"): "forward",
    ("bridge/runner.py", "backward"): "backward",
    ("bridge/module.py", "forward"): "forward",  # AidgeModule, AidgeSGD
    ("bridge/module.py", "backward"): "backward",
    ("bridge/module.py", "_backward"): "backward",
    ("bridge/module.py", "step"): "step",
    ("bridge/single_node.py", "build_node"): "import",  # an Aidge operator built from its factory
    ("bridge/single_node.py", "compile_node"): "compile",
    ("bridge/single_node.py", "run_node"): "forward",
}
_FRAME_LINE = re.compile(r'File "(?P<file>[^"]+)", line \d+ in (?P<func>\S+)')


class IsolatedError(InteropError):
    """An exception raised in the isolated child that cannot be rebuilt in the parent with
    its own type; the message starts with the child's exception type."""


def fork_available() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def phase_from_stack(stack: str) -> tuple[str | None, str | None]:
    """``(phase, innermost frame)`` from a faulthandler dump (most recent call first)."""
    innermost = None
    for m in _FRAME_LINE.finditer(stack):
        base = os.path.basename(m.group("file"))
        if innermost is None:
            innermost = f"{base}:{m.group('func')}"
        parent = os.path.basename(os.path.dirname(m.group("file")))  # "bridge" for the bridge's own files
        phase = _PHASE_FRAMES.get((f"{parent}/{base}", m.group("func")))
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
    timed = collecting()  # the cost profile: the child times its stages, the parent the fork
    started = time.perf_counter() if timed else 0.0
    read_fd, write_fd = os.pipe()
    stack_file = tempfile.TemporaryFile(mode="w+b")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = _single_threaded_fork()
    if pid == 0:  # ---- child: never returns
        os.close(read_fd)
        _child(write_fd, stack_file, fn, args, kwargs, timed)
    # ---- parent
    os.close(write_fd)
    try:
        data, timed_out = _read_all(read_fd, timeout)
        if timed_out:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, _signal.SIGKILL)
        status = _wait(pid, AFTER_RESULT_S if data and not timed_out and _capturing() else None)
        pid = 0
        stack_file.seek(0)
        stack = stack_file.read().decode(errors="replace")
    finally:
        os.close(read_fd)
        stack_file.close()
        if pid:  # interrupted (KeyboardInterrupt...): do not leave the child behind
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, _signal.SIGKILL)
                os.waitpid(pid, 0)
    if timed and (timed_out or os.WIFSIGNALED(status) or not data):  # no stages came back: the whole wait
        add_stage_times({"child killed, crashed or hung": time.perf_counter() - started})
    if timed_out:
        raise _crash(f"timed out after {timeout:g} s", stack, signal="SIGKILL", timed_out=True)
    if os.WIFSIGNALED(status) and not data:
        name = _signal_name(os.WTERMSIG(status))
        raise _crash(f"killed by {name}", stack, signal=name)
    if not data:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        raise _crash(f"exited with status {code} without a result", stack)
    kind, payload, routes, stages = pickle.loads(data)
    if timed:
        child_s = stages.pop("", 0.0)  # the child's time in fn
        add_stage_times(stages)
        add_stage_times({"fork": max(0.0, time.perf_counter() - started - child_s)})
    if routes:  # the export routes the child took, for the records
        from ..exporters import note_routes

        note_routes(routes)
    if kind == "ok":
        return payload
    raise _rebuild(payload)


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
    with _fork_lock:
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


def _child(write_fd: int, stack_file, fn, args, kwargs, timed: bool = False) -> None:
    global _IN_CHILD
    _IN_CHILD = True
    status = 0
    failure = None
    try:
        faulthandler.enable(file=stack_file, all_threads=False)
        routes: list = []
        stages: dict = {}
        timer = stage_times() if timed else contextlib.nullcontext({})
        try:
            with timer as stages:
                start = time.perf_counter()
                try:
                    with export_routes() as routes, stage("case code, unnamed"):  # what no inner stage names
                        result = fn(*args, **kwargs)
                finally:
                    stages[""] = time.perf_counter() - start  # the parent's fork time is the rest
            payload = ("ok", result, routes, stages)
            try:
                data = pickle.dumps(payload)
            except Exception as exc:
                data = pickle.dumps(("error", _describe(TypeError(
                    f"run_isolated: the result of {getattr(fn, '__name__', fn)!r} cannot be pickled: {exc}")),
                    routes, stages))
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            data = pickle.dumps(("error", _describe(exc), routes, stages))
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
        os._exit(status)


#: how long a child may run after it sent its result (the failing case's reproducer,
#: :mod:`interop.bridge.capture`) before it is killed; the result stands either way
AFTER_RESULT_S = 600.0


def _capturing() -> bool:
    """Whether a reproducer capture is on (:mod:`interop.bridge.capture`; not imported: off)."""
    module = sys.modules.get("interop.bridge.capture")
    return module is not None and module.current() is not None


def _wait(pid: int, limit: float | None) -> int:
    """The child's exit status; after ``limit`` seconds (None: no limit) it is killed first."""
    if limit is None:
        return os.waitpid(pid, 0)[1]
    deadline = time.monotonic() + limit
    delay = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, _signal.SIGKILL)
            return os.waitpid(pid, 0)[1]
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _read_all(fd: int, timeout: float | None) -> tuple[bytes, bool]:
    deadline = None if timeout is None else time.monotonic() + timeout
    chunks = []
    while True:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return b"".join(chunks), True
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


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
