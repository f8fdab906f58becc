"""What a case learnt on its way that its record should say although nothing failed: today the
differences the oracle called float32 rounding (``precision``: a passing case that passed only
by the float32-error rule, :func:`interop.oracle.precision.within_float32_error`).

``verify``'s check and ``ModelTester`` :func:`note` them; the records plugin opens a collector
around each test (:func:`case_notes`) and writes what it holds into the test's record; a forked
child of :func:`interop.equivalence.isolation.run_isolated` collects its own and sends them back
with its result. Nothing is collected, and :func:`note` costs one attribute read, when no collector
is open (a porter's call). One collector stack per thread."""
from __future__ import annotations

import contextlib
import threading
from typing import Iterable, Iterator

__all__ = ["case_notes", "note", "KINDS"]

#: the kinds of note a record carries (each a list of one-line strings)
KINDS = ("precision",)

_local = threading.local()


@contextlib.contextmanager
def case_notes() -> Iterator[dict[str, list[str]]]:
    """Collect the notes made in this thread inside the block: yields ``{kind: [line, ...]}``."""
    collected: dict[str, list[str]] = {}
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(collected)
    try:
        yield collected
    finally:  # by identity: two collectors holding the same notes are equal dicts
        for k in range(len(stack) - 1, -1, -1):
            if stack[k] is collected:
                del stack[k]
                break


def note(kind: str, lines: Iterable[str]) -> None:
    """Add ``lines`` under ``kind`` (one of :data:`KINDS`) to every collector open in this thread."""
    if kind not in KINDS:
        raise ValueError(f"case_notes.note: unknown kind {kind!r} (one of {KINDS})")
    lines = [str(x) for x in lines]
    if not lines:  # nothing learnt: no empty list in the records
        return
    for collected in getattr(_local, "stack", ()) or ():
        collected.setdefault(kind, []).extend(lines)
