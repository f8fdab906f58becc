"""What the bridge tells whoever listens: a few typed events, emitted by ``wrap`` and by the
modules it returns, and nothing else. The bridge knows nobody who listens: the suite's
instruments (the reproducer capture, :mod:`interop.bridge.capture`; the stage timings,
:mod:`interop.stages`) subscribe from outside while they are on, and unsubscribe after.

    from interop.bridge import events

    handle = events.subscribe(print)     # called with every event, in the emitting thread
    ...
    events.unsubscribe(handle)

The events (frozen dataclasses):

- :class:`PhaseEntered` / :class:`PhaseLeft` (``name``): a named part of ``wrap`` begins and
  ends (``export``, ``export: value check``, ``torch``, ``import``, ``import: known defects``,
  ``compile``, ``module setup``: the stage names of :mod:`interop.stages`). Nested, in order, in
  one thread; a phase whose start nobody heard is not said to end.
- :class:`GraphExported` (``exported``, ``traced``, ``example_inputs``, ``backend``): a route of
  ``wrap`` exported its graph, before Aidge sees it.
- :class:`RunnerMade` (``runner``, ``exported``, ``param_producers``): the module of that export
  has its Aidge runner.
- :class:`CallMade` (``runner``, ``kind``: ``"forward"`` | ``"backward"``, ``tensors``: the
  inputs, or the output gradients): a call of the runner, before Aidge runs.
- :class:`CallFailed` (``runner``): Aidge's run of that call raised (or its outputs were refused).

Cost: nobody listening, an emitting place reads one global (:data:`listening`) and builds no
event; a porter of the bridge pays nothing else. Listeners are called in the order they
subscribed; one that raises is not the bridge's failure (its exception is dropped).

Crash phases: the phase a crash in the bridge belongs to is read from the stack the dying
process leaves (:mod:`interop.equivalence.isolation`), by the frames of the functions the bridge
marks with :func:`crash_phase`; :func:`crash_phase_frames` is that table.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
import threading
from typing import Any, Callable

__all__ = ["PhaseEntered", "PhaseLeft", "GraphExported", "RunnerMade", "CallMade", "CallFailed", "Event",
           "subscribe", "unsubscribe", "emit", "phase", "listening", "crash_phase", "mark_crash_phases",
           "crash_phase_frames"]


@dataclasses.dataclass(frozen=True)
class PhaseEntered:
    name: str


@dataclasses.dataclass(frozen=True)
class PhaseLeft:
    name: str


@dataclasses.dataclass(frozen=True)
class GraphExported:
    exported: Any  # interop.bridge.onnx_export.ExportedModel
    traced: Any  # the torch module exported (the model, or its call binding)
    example_inputs: Any  # torch tensors, as exported
    backend: str = "cpu"


@dataclasses.dataclass(frozen=True)
class RunnerMade:
    runner: Any  # interop.bridge.runner._GraphRunner
    exported: Any
    param_producers: tuple = ()


@dataclasses.dataclass(frozen=True)
class CallMade:
    runner: Any
    kind: str  # "forward" | "backward"
    tensors: Any  # the inputs (forward), the output gradients (backward)


@dataclasses.dataclass(frozen=True)
class CallFailed:
    runner: Any


Event = PhaseEntered | PhaseLeft | GraphExported | RunnerMade | CallMade | CallFailed

#: the listeners, as a tuple replaced whole under :data:`_LOCK` (an emit reads it once, no lock);
#: empty: nobody listens (the one global an emitting place reads)
listening: tuple = ()
_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):  # a child forked while another thread subscribed can subscribe
    os.register_at_fork(after_in_child=lambda: globals().__setitem__("_LOCK", threading.Lock()))


class _Handle:
    """What :func:`subscribe` returns: :func:`unsubscribe` takes it (or its ``close()``)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn

    def close(self) -> None:
        unsubscribe(self)

    def __repr__(self) -> str:
        return f"<events subscription {getattr(self.fn, '__qualname__', self.fn)!r}>"


def subscribe(fn: Callable[[Any], Any]) -> _Handle:
    """Call ``fn(event)`` for every event from now on (in the emitting thread); returns the
    handle :func:`unsubscribe` takes."""
    global listening
    handle = _Handle(fn)
    with _LOCK:
        listening = listening + (handle,)
    return handle


def unsubscribe(handle: _Handle) -> None:
    """Stop calling ``handle``'s listener (nothing when it no longer listens)."""
    global listening
    with _LOCK:
        listening = tuple(h for h in listening if h is not handle)


def emit(event: Any) -> None:
    """Hand ``event`` to every listener (a listener's failure is dropped: never the bridge's)."""
    for handle in listening:
        try:
            handle.fn(event)
        except Exception:  # noqa: BLE001 - an instrument's failure is never the bridge's
            pass


class phase:
    """``with phase("export"):`` emits :class:`PhaseEntered` and :class:`PhaseLeft` around the
    block when someone listens (nothing otherwise: one global read)."""

    __slots__ = ("name", "_told")

    def __init__(self, name: str):
        self.name = name
        self._told = False

    def __enter__(self) -> "phase":
        if listening:
            self._told = True
            emit(PhaseEntered(self.name))
        return self

    def __exit__(self, *exc) -> None:
        if self._told:
            self._told = False
            emit(PhaseLeft(self.name))


# -- crash phases ------------------------------------------------------------
#: ("bridge/<file>.py", function name) -> the phase a crash in that frame belongs to
_CRASH_FRAMES: dict[tuple[str, str], str] = {}
#: the bridge's modules that mark crash phases (imported by :func:`crash_phase_frames`)
_MARKING_MODULES = ("onnx_export", "graph", "runner", "module", "single_node")
_LOADED: list = []


def _frame_key(filename: str, function: str) -> tuple[str, str]:
    return f"{os.path.basename(os.path.dirname(filename))}/{os.path.basename(filename)}", function


def crash_phase(name: str, *functions: str) -> Callable:
    """Mark a function of the bridge: a crash while its frame is on the stack (the innermost such
    frame wins) happened during ``name``. The function is returned as it is (no wrapper, no cost).
    ``functions``: other function names of the same file marked alike (the decorated function's
    name is always one)."""

    def mark(fn):
        code = getattr(fn, "__code__", None) or fn.__func__.__code__
        for function in (code.co_name, *functions):
            _CRASH_FRAMES[_frame_key(code.co_filename, function)] = name
        return fn

    return mark


def mark_crash_phases(filename: str, phases: dict[str, str]) -> None:
    """Mark the functions of ``filename`` (a module's ``__file__``) by name: ``{function: phase}``
    (for a module whose functions are not decorated)."""
    for function, name in phases.items():
        _CRASH_FRAMES[_frame_key(filename, function)] = name


def crash_phase_frames(load: bool = True) -> dict[tuple[str, str], str]:
    """``{("bridge/<file>.py", function): phase}``: every frame the bridge marks
    (:func:`crash_phase`), a copy. ``load``: its marking modules are imported first (a process
    reading another's stack); without, the marks of the modules this process imported (a frame
    of a module on this process's stack: that module is imported, its marks are here)."""
    if load and not _LOADED:
        for module in _MARKING_MODULES:
            try:
                importlib.import_module(f"{__package__}.{module}")
            except Exception:  # noqa: BLE001 - a module that cannot be imported marks nothing
                pass
        _LOADED.append(True)
    return dict(_CRASH_FRAMES)


# Aidge as an ONNX backend (onnx_backend.py, whose functions are not decorated): its frames by name
mark_crash_phases(os.path.join(os.path.dirname(__file__), "onnx_backend.py"),
                  {"import_model": "import", "_compile": "compile", "_forward": "forward"})
