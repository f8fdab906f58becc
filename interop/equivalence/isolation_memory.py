"""The memory bound of a case child (:func:`interop.equivalence.isolation.run_isolated`): the variable
that sets it (:func:`memory_bound`), ``RLIMIT_DATA`` set in the child and lifted once ``fn`` ended, whether
an error is a failed allocation and whether the child had grown to its bound, its peak memory, and the
crash a child at its bound raises (see :mod:`interop.equivalence.isolation`'s docstring, "Memory")."""
from __future__ import annotations

import contextlib
import re
import resource
import sys
from typing import Any

from ..categories import AIDGE_PHASES
from ..errors import AidgeCrash
from ..env import read


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


def _peak(usage) -> int:
    """ru_maxrss in bytes (kilobytes on Linux, bytes on macOS)."""
    return int(usage.ru_maxrss) * (1 if sys.platform == "darwin" else 1024)
