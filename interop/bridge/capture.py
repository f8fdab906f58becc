"""What a failing case's reproducer needs, kept while the case runs: the ONNX graph Aidge was
given, the inputs of its first call and of its latest (the call a failure comes on: a case's
second call may feed other values), the output gradients of its first and latest backward, a
copy of the torch model as it was exported (for torch's expected values), and Aidge's own log.

Off unless a caller turns it on (:func:`start`, the records plugin under ``nox -s report``):
then it listens to the bridge's events (:mod:`interop.bridge.events`; the bridge itself knows
nothing of it) and every ``wrap`` of this process notes its export (:func:`note_export`), its
runner, and every forward and backward of that runner, and Aidge's log goes to a file of
the case instead of nowhere. Nothing here writes a bundle: :func:`failed` hands the capture to
the writer the caller gave (:mod:`interop.reproducers`), once per case, in the
process that saw the failure (the forked case child holds all of the above; its parent holds
none of it). When off, nothing listens: the bridge's events cost it one global read.
"""
from __future__ import annotations

import copy
import dataclasses
import re
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, Callable

from . import events

__all__ = ["Capture", "Entry", "start", "stop", "current", "suspended", "note_export",
           "note_runner", "note_forward", "note_backward", "note_error", "note_factory", "note_onnx", "failed",
           "aidge_log_text"]

@dataclasses.dataclass
class Entry:
    """One ``wrap`` of the case: its export and what ran on it."""

    exported: Any  # ExportedModel
    example_inputs: list  # torch tensors, as exported
    snapshot: Any  # a deep copy of the exported torch module (None: it could not be copied)
    snapshot_error: str | None = None
    backend: str = "cpu"
    first_inputs: list | None = None
    forward_calls: int = 0
    first_grad_outputs: list | None = None
    param_producers: list = dataclasses.field(default_factory=list)
    backward_calls: int = 0
    #: the latest forward's inputs and the latest backward's output gradients, held (not copied: a
    #: copy per call would cost every timed call) with their version counters (:func:`_held`)
    latest_inputs: list | None = None
    latest_grad_outputs: list | None = None

    def failing_call(self) -> tuple[list, int, str]:
        """``(inputs, call, inputs_from)``: the inputs of the call a failure of this wrap came on (its
        latest forward, counted from 1), copied; the first call's when they hold the same values (a
        failure on call 1, or a later call of the same inputs: a defect of Aidge's state), or when
        the latest were changed in place since (``inputs_from`` says so)."""
        first = self.first_inputs if self.first_inputs is not None else self.example_inputs
        label = "first call" if self.first_inputs is not None else "wrap's example inputs"
        call = self.forward_calls
        if self.latest_inputs is None or call <= 1:
            return first, max(call, 1), label
        latest = _unheld(self.latest_inputs)
        if latest is None:
            return first, call, (f"first call (call {call}'s inputs were changed in place after the call: "
                                 "not kept)")
        if len(latest) == len(first) and all(_same_values(a, b) for a, b in zip(latest, first)):
            return first, call, label
        return latest, call, f"call {call}"

    def failing_grad_outputs(self) -> list | None:
        """The latest backward's output gradients (the backward a failure came on), copied; the
        first backward's when the latest were changed in place since."""
        if self.latest_grad_outputs is not None:
            latest = _unheld(self.latest_grad_outputs)
            if latest is not None:
                return latest
        return self.first_grad_outputs


def _held(tensors) -> list:
    """``tensors`` held for a later copy: each (detached, its version counter now). ``detach`` shares
    the version counter, so an in-place change after the call shows (:func:`_unheld`)."""
    return [None if x is None else (x.detach(), x._version) for x in tensors]


def _unheld(held: list) -> list | None:
    """CPU copies of :func:`_held` tensors; None when one was changed in place since it was held."""
    out = []
    for item in held:
        if item is None:
            out.append(None)
            continue
        x, version = item
        if x._version != version:
            return None
        out.append(x.to("cpu", copy=True))
    return out


def _same_values(a, b) -> bool:
    """Same dtype, shape and values (NaN equal to NaN)."""
    if a is None or b is None:
        return a is b
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool((a == b).all())


@dataclasses.dataclass
class Capture:
    directory: Path  # the case's bundle folder (written only on failure)
    case: str
    writer: Callable[["Capture", BaseException], Any] | None
    log_path: Path | None
    tolerance: Any = None  # the case's tolerance policy (interop.oracle.tolerance), None: default
    entries: list = dataclasses.field(default_factory=list)
    runners: dict = dataclasses.field(default_factory=dict)  # id(runner) -> Entry
    written: bool = False
    log_set: bool = False
    #: the entry whose Aidge run raised first (the bridge says so: :func:`note_error`)
    failed_entry: Entry | None = None
    #: called with (capture, entry) once a wrap is exported and again at its first call: what the
    #: parent needs to finish a bundle when the child dies (a crash writes nothing after it)
    pending: Callable[["Capture", "Entry"], Any] | None = None
    #: a case that builds one Aidge node from its aidge_core factory (no wrap): what :func:`note_factory` saw
    factory: dict | None = None
    #: a case that hands Aidge an ONNX model with its own expected outputs (onnx's backend tests, no
    #: torch): what :func:`note_onnx` saw for the data set being run
    onnx: dict | None = None

    def latest(self) -> Entry | None:
        """The wrap a failure belongs to: the one whose Aidge run raised, else the last one used."""
        if self.failed_entry is not None:
            return self.failed_entry
        return self.entries[-1] if self.entries else None


_STATE: Capture | None = None
_LOCK = threading.Lock()
_SUBSCRIPTION = None  # this module's listener of the bridge's events, while a capture is on


def _on_event(event) -> None:
    """The bridge's events, noted (:mod:`interop.bridge.events`)."""
    kind = type(event)
    if kind is events.CallMade:
        if event.kind == "forward":
            note_forward(event.runner, event.tensors)
        else:
            note_backward(event.runner, event.tensors)
    elif kind is events.CallFailed:
        note_error(event.runner)
    elif kind is events.GraphExported:
        note_export(event.traced, event.example_inputs, event.exported, event.backend)
    elif kind is events.RunnerMade:
        note_runner(event.runner, event.exported, event.param_producers)


def _listen(on: bool) -> None:
    global _SUBSCRIPTION
    with _LOCK:
        if on and _SUBSCRIPTION is None:
            _SUBSCRIPTION = events.subscribe(_on_event)
        elif not on and _SUBSCRIPTION is not None:
            events.unsubscribe(_SUBSCRIPTION)
            _SUBSCRIPTION = None


class suspended:
    """Nothing in the block is captured (the suite's own warm-up wrap in a worker, which is no case's)."""

    def __enter__(self):
        global _STATE
        self._saved, _STATE = _STATE, None
        return self

    def __exit__(self, *exc):
        global _STATE
        _STATE = self._saved
        return False


def current() -> Capture | None:
    return _STATE


def start(directory: Path, case: str, writer: Callable | None = None, log_path: Path | None = None,
          tolerance: Any = None, pending: Callable | None = None) -> Capture:
    """Capture what the next case's reproducer needs (this process and the children it forks)."""
    global _STATE
    _STATE = Capture(Path(directory), case, writer, Path(log_path) if log_path else None, tolerance,
                     pending=pending)
    _listen(True)
    _route_log(_STATE)
    return _STATE


def stop() -> None:
    """Stop capturing; Aidge's log file is closed (Aidge logs to no file again)."""
    global _STATE
    state, _STATE = _STATE, None
    _listen(False)
    if state is not None and state.log_set:
        core = sys.modules.get("aidge_core")
        if core is not None:
            try:
                core.Log.set_file_name("")
            except Exception:  # noqa: BLE001 - the log is a help, never a failure
                pass


def _route_log(state: Capture) -> None:
    """Aidge's log lines (Notice and above) into the case's log file, once Aidge is imported
    (the console stays quiet: ``quiet_aidge`` lowers the console level only)."""
    if state.log_set or state.log_path is None:
        return
    core = sys.modules.get("aidge_core")
    if core is None:
        return
    try:
        state.log_path.parent.mkdir(parents=True, exist_ok=True)
        state.log_path.write_bytes(b"")
        core.Log.set_file_name(str(state.log_path))
        core.Log.set_file_level(core.Level.Notice)
        state.log_set = True
    except Exception:  # noqa: BLE001
        pass


def note_export(traced, example_inputs, exported, backend: str = "cpu") -> None:
    state = _STATE
    if state is None:
        return
    _route_log(state)
    snapshot, error = None, None
    try:
        with warnings.catch_warnings():  # the case child's own (a copy warns of torch's deprecations)
            warnings.simplefilter("ignore")
            snapshot = copy.deepcopy(traced)
    except Exception as exc:  # noqa: BLE001 - expected values then come from the example inputs
        error = f"{type(exc).__name__}: {exc}"
    entry = Entry(exported, [x.detach().clone() for x in example_inputs], snapshot, error, backend=backend)
    with _LOCK:
        state.entries.append(entry)
    _pending(state, entry)


def _pending(state: Capture, entry: Entry) -> None:
    if state.pending is not None:
        try:
            state.pending(state, entry)
        except Exception:  # noqa: BLE001 - a help for crashes, never a failure of the case
            pass


def _entry_of(exported) -> Entry | None:
    state = _STATE
    if state is None:
        return None
    for entry in reversed(state.entries):
        if entry.exported is exported:
            return entry
    return None


def note_runner(runner, exported, param_producers=()) -> None:
    state = _STATE
    entry = _entry_of(exported)
    if state is None or entry is None:
        return
    entry.param_producers = list(param_producers)
    state.runners[id(runner)] = entry


def _runner_entry(runner) -> tuple[Capture | None, Entry | None]:
    """The capture and the entry of ``runner``'s wrap (None, None when off or not captured)."""
    state = _STATE
    if state is None:
        return None, None
    return state, state.runners.get(id(runner))


def note_forward(runner, inputs) -> None:
    state, entry = _runner_entry(runner)
    if entry is None:
        return
    entry.forward_calls += 1
    if entry.first_inputs is None:
        entry.first_inputs = [x.detach().to("cpu", copy=True) for x in inputs]
        _pending(state, entry)
    else:
        entry.latest_inputs = _held(inputs)
    # the latest entry used is the one a failure belongs to
    if state.entries and state.entries[-1] is not entry:
        state.entries.remove(entry)
        state.entries.append(entry)


def note_error(runner) -> None:
    """``runner``'s Aidge run raised: a failure of the case belongs to its wrap (the first such)."""
    state, entry = _runner_entry(runner)
    if state is not None and state.failed_entry is None:
        state.failed_entry = entry


def note_backward(runner, grad_outputs) -> None:
    _, entry = _runner_entry(runner)
    if entry is None:
        return
    entry.backward_calls += 1
    if entry.first_grad_outputs is None:
        entry.first_grad_outputs = [None if g is None else g.detach().to("cpu", copy=True) for g in grad_outputs]
    else:
        entry.latest_grad_outputs = _held(grad_outputs)


def note_factory(operation: str, attributes: dict, arrays, *, rank: int, dims_from_data: bool, negative: bool,
                 expected=None) -> None:
    """A case that builds one Aidge node from its factory (Aidge's own configurations): the operation,
    its attributes, the ``(name, array)`` inputs, and torch's outputs (none for a negative case)."""
    state = _STATE
    if state is None:
        return
    import numpy as np

    def copy_of(x):
        return None if x is None else np.array(x.detach().cpu() if hasattr(x, "detach") else x, copy=True)

    state.factory = {"operation": operation, "attributes": copy.deepcopy(dict(attributes)),
                     "arrays": [(str(name), copy_of(a)) for name, a in arrays], "rank": int(rank),
                     "dims_from_data": bool(dims_from_data), "negative": bool(negative),
                     "expected": [copy_of(e) for e in expected or ()]}
    _pending(state, None)  # before Aidge runs: what the parent needs if the node kills the process


def note_onnx(model, data_inputs, inputs, expected, *, rtol: float, atol: float, data_set: int = 0,
              expected_from: str = "onnx's backend test") -> None:
    """A case that runs an ONNX ``model`` as it is (onnx's backend tests): its data inputs' names, the
    ``inputs`` of the data set about to run and the ``expected`` outputs that come with it (numpy
    arrays, kept as given), and the tolerance they are compared at. Noted before Aidge runs each
    data set: a failure belongs to the last one noted."""
    state = _STATE
    if state is None:
        return
    _route_log(state)
    state.onnx = {"model": model, "data_inputs": [str(n) for n in data_inputs], "inputs": list(inputs),
                  "expected": list(expected), "rtol": float(rtol), "atol": float(atol), "data_set": int(data_set),
                  "expected_from": expected_from}
    _pending(state, None)  # before Aidge runs: what the parent needs if Aidge kills the process


def failed(exc: BaseException) -> Any:
    """Hand the capture to its writer once (the process that saw ``exc``); the writer's own
    failure is returned as a line, never raised over the case's."""
    state = _STATE
    if state is None or state.written or state.writer is None or not (state.entries or state.factory or state.onnx):
        return None
    state.written = True
    try:
        return state.writer(state, original_error(exc))
    except Exception as err:  # noqa: BLE001
        return f"reproducer not written: {type(err).__name__}: {err}"


def original_error(exc: BaseException) -> BaseException:
    """The error Aidge or the comparator raised, under what the suite wrapped it in (the expected-failure
    guard raises ``ExpectedAidgeFailure(...) from exc``): the first of the cause chain that has a phase."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if getattr(current, "phase", None):
            return current
        seen.add(id(current))
        current = current.__cause__
    return exc


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def aidge_log_text(state: Capture, limit_lines: int = 400) -> str:
    """The case's Aidge log so far, colour codes removed; its first and last ``limit_lines / 2``
    lines when longer (the count of lines left out said between them)."""
    if state.log_path is None or not state.log_path.is_file():
        return ""
    core = sys.modules.get("aidge_core")
    if state.log_set and core is not None:  # flushed by closing, then reopened (Aidge appends)
        try:
            core.Log.set_file_name("")
            core.Log.set_file_name(str(state.log_path))
        except Exception:  # noqa: BLE001
            pass
    lines = _ANSI.sub("", state.log_path.read_text(errors="replace")).splitlines()
    if len(lines) > limit_lines:
        half = limit_lines // 2
        lines = lines[:half] + [f"... {len(lines) - 2 * half} lines left out ..."] + lines[-half:]
    return "\n".join(lines) + ("\n" if lines else "")
