"""Where the time of a case goes: named stages, timed only when someone collects them.

The suite's cost profile (``tools/case_cost.py``) runs real cases of every source with a
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

One collector per thread; the library's own calls never start one. The bridge's own parts
(``export``, ``import``, ``compile``...) are not stages it opens: it emits phase events
(:mod:`interop.bridge.events`), which :func:`phase_listener` times as stages of the same names,
subscribed while a collector is open by the suite (:mod:`interop.equivalence.isolation` wires it
with :func:`while_collecting`): this module knows no emitter, the bridge no collector.
"""
from __future__ import annotations

import contextlib
import os
import threading
from time import perf_counter
from typing import Callable, Iterator

__all__ = ["stage", "stage_times", "collecting", "add_stage_times", "phase_listener", "while_collecting"]

_local = threading.local()
#: collectors open in this process (all threads), and the stop functions of the stage sources started
_COLLECTING = {"collectors": 0, "stops": []}
#: the sources of stages from outside this module, started while a collector is open (:func:`while_collecting`)
_SOURCES: list[Callable[[], Callable[[], None]]] = []
_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):  # a forked child collects on (interop.equivalence.isolation)
    os.register_at_fork(after_in_child=lambda: globals().__setitem__("_LOCK", threading.Lock()))


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


def phase_listener(event) -> None:
    """A listener of named phases (the bridge's ``PhaseEntered`` / ``PhaseLeft`` events,
    :mod:`interop.bridge.events`): each phase timed as a stage of its name in the emitting
    thread's collector, if it has one. What the suite subscribes while it collects
    (:func:`while_collecting`); this module knows no emitter."""
    if getattr(_local, "stack", None) is None:
        return
    opened = _local.phases
    kind = type(event).__name__
    if kind == "PhaseEntered":
        opened.append(stage(event.name).__enter__())
    elif kind == "PhaseLeft" and opened and opened[-1].name == event.name:
        opened.pop().__exit__(None, None, None)


def while_collecting(start: Callable[[], Callable[[], None]]) -> None:
    """A source of stages from outside: ``start()`` is called when the process's first collector
    opens (at once if one is open), and the function it returns when the last one closes (the
    suite subscribes :func:`phase_listener` to the bridge's events so: nothing listens otherwise)."""
    with _LOCK:
        _SOURCES.append(start)
        if _COLLECTING["collectors"] > 0:
            _COLLECTING["stops"].append(start())


def _collectors(delta: int) -> None:
    """One more (``+1``) or one fewer (``-1``) collector open: the sources started with the first,
    stopped with the last."""
    with _LOCK:
        _COLLECTING["collectors"] += delta
        if delta > 0 and _COLLECTING["collectors"] == 1:
            _COLLECTING["stops"] = [start() for start in _SOURCES]
        elif delta < 0 and _COLLECTING["collectors"] == 0:
            stops, _COLLECTING["stops"] = _COLLECTING["stops"], []
            for stop in stops:
                stop()


@contextlib.contextmanager
def stage_times() -> Iterator[dict[str, float]]:
    """Collect this thread's stage times into the yielded dict for the block (nested
    collectors each see their own block; the outer one resumes afterwards)."""
    previous = (getattr(_local, "stack", None), getattr(_local, "times", None), getattr(_local, "phases", None))
    times: dict[str, float] = {}
    _collectors(+1)
    _local.stack, _local.times, _local.phases = [], times, []
    try:
        yield times
    finally:
        _local.stack, _local.times, _local.phases = previous
        _collectors(-1)
