"""Where a case child crashed or hung (:func:`interop.equivalence.isolation.run_isolated`): the phase
read from the faulthandler stack it wrote (:func:`phase_from_stack`) or from the traceback of a failed
allocation, by the frames the bridge marks (:func:`interop.bridge.events.crash_phase`), and the
:class:`~interop.errors.AidgeCrash` that names it."""
from __future__ import annotations

import os
import re
import signal as _signal
import traceback as _tb

from ..errors import AidgeCrash
from .isolation_memory import _out_of_memory
from ..bridge.events import crash_phase_frames


_FRAME_LINE = re.compile(r'File "(?P<file>[^"]+)", line \d+ in (?P<func>\S+)')


def _phase_frames(load: bool = True) -> dict[tuple[str, str], str]:
    """``{("bridge/<file>.py", function): phase}``: the frames that name a phase (the innermost one
    wins), as the bridge marks them (:func:`interop.bridge.events.crash_phase`). ``load=False``:
    the marks of the bridge modules this process imported (its own stack: nothing to import)."""
    return crash_phase_frames(load)


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
