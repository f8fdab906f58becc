"""Where the time of a case goes: named stages, timed only when someone collects them.

The suite's cost profile (``benchmarks/case_cost.py``) runs real cases of every source with a
collector active and reads, per case, the seconds spent in each stage (``export``,
``import``, ``compile``, ``aidge forward``, ``torch``, ``fork``...). Without a collector a
stage costs one attribute read (nothing is timed), so the stages stay in the code that the
suites run, and the profile times that very code, not a copy of it.

Times are *exclusive*: a stage entered inside another one is subtracted from the outer one,
so the stages of a case add up to at most its wall time, and the rest is what no stage
names. A forked child (:func:`interop.equivalence.isolation.run_isolated`) collects its own
stages when its parent does and sends them back with its result; the parent adds ``fork``:
its wall time of the call minus the child's time in the function (the fork, the pipe, the
pickling, the wait for the child's exit).

    from interop.stages import stage, stage_times

    with stage_times() as times:        # {stage name: seconds}
        run_opinfo_case(case)

One collector per thread; the library's own calls never start one.
"""
from __future__ import annotations

import contextlib
import threading
from time import perf_counter
from typing import Iterator

__all__ = ["stage", "stage_times", "collecting", "add_stage_times"]

_local = threading.local()


class stage:
    """``with stage("export"):`` adds the block's exclusive seconds to the active collector,
    if any (a plain class: about 0.2 us when nothing collects)."""

    __slots__ = ("name", "_frame")

    def __init__(self, name: str):
        self.name = name
        self._frame = None

    def __enter__(self) -> "stage":
        stack = getattr(_local, "stack", None)
        if stack is not None:
            self._frame = [perf_counter(), 0.0]  # start, time spent in nested stages
            stack.append(self._frame)
        return self

    def __exit__(self, *exc) -> None:
        frame = self._frame
        if frame is None:
            return
        self._frame = None
        elapsed = perf_counter() - frame[0]
        stack = _local.stack
        if stack and stack[-1] is frame:
            stack.pop()
        if stack:
            stack[-1][1] += elapsed
        times = _local.times
        times[self.name] = times.get(self.name, 0.0) + elapsed - frame[1]


def collecting() -> bool:
    """Whether this thread collects stage times now."""
    return getattr(_local, "stack", None) is not None


def add_stage_times(times: dict[str, float]) -> None:
    """Add ``times`` (from a child process) to this thread's collector, if any; the current
    stage, if one is open, does not count them again."""
    stack = getattr(_local, "stack", None)
    if stack is None or not times:
        return
    for name, seconds in times.items():
        _local.times[name] = _local.times.get(name, 0.0) + seconds
    if stack:
        stack[-1][1] += sum(times.values())


@contextlib.contextmanager
def stage_times() -> Iterator[dict[str, float]]:
    """Collect this thread's stage times into the yielded dict for the block (nested
    collectors each see their own block; the outer one resumes afterwards)."""
    previous = (getattr(_local, "stack", None), getattr(_local, "times", None))
    times: dict[str, float] = {}
    _local.stack, _local.times = [], times
    try:
        yield times
    finally:
        _local.stack, _local.times = previous
