"""A case's torch/Aidge pair ready to time (:class:`Pair`, for :mod:`interop.reporting.bench_harness`,
asv's harness): its calls, and the Aidge/torch ratio measured in rounds of interleaved blocks
(:data:`RATIO_BUDGET_S` and the figures beside it); torch pinned to the thread count Aidge's OpenMP
runtime uses (:func:`pin_threads`).

Absolute imports, and none newer than the harness's own: ``benchmarks/harness.py`` loads the
harness by its path, with this file beside it, where the installed interop is another commit's
(asv benchmarking an earlier commit)."""
from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Callable

import torch

from interop.equivalence import timing


#: seconds of calls (both sides) behind one Aidge/torch ratio, in rounds of a torch block and an
#: Aidge block of about RATIO_BLOCK_S each (docs/noise-floor.md: measured, these rounds keep the
#: ratio of one case within 1.06-1.11x over fresh processes, where 5 blocks of 40 ms per side
#: spread 1.08-1.40x)
RATIO_BUDGET_S = 0.4
RATIO_BLOCK_S = 0.002
RATIO_MIN_ROUNDS = 10
RATIO_MAX_ROUNDS = 100


# ---------------------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------------------
def pin_threads() -> int:
    """Give torch the thread count Aidge's OpenMP runtime uses; returns it."""
    n = timing.thread_count()
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


@dataclasses.dataclass
class Pair:
    """One case, one phase, ready to time; each call runs the phase once (CUDA-synchronised
    on the cuda backend):

    - ``torch_call``: the torch module on torch tensors (forward), or
      ``torch.autograd.backward`` through a retained graph (backward);
    - ``aidge_call``: Aidge itself, timed the way torch is: the scheduler's
      ``forward(False, inputs)`` on inputs already held in Aidge tensors, or its
      ``backward()`` with the output gradients already set. Nothing else runs inside it (no
      conversion, no copy, no Python frame: a ``functools.partial`` of the bound method);
      this is ``time_aidge`` and the numerator of the Aidge/torch ratio;
    - ``bridge_call``: what a user of ``wrap`` pays end to end: the full
      :class:`~interop.bridge.AidgeModule` call (input copy, the scheduler, output copy) for
      ``forward``; for ``backward`` one training step through it (that forward, then the
      backward through its autograd node, gradients handed back to torch), since Aidge needs
      a fresh forward before each backward: ``time_bridge``. The bridge's share of a
      backward is ``time_bridge(backward) - time_aidge(forward) - time_aidge(backward)``.
    """

    case_id: str
    phase: str
    backend: str
    threads: int
    torch_call: Callable[[], Any]
    aidge_call: Callable[[], Any]
    bridge_call: Callable[[], Any] | None = None
    #: the AidgeModule behind both Aidge calls
    module: Any = None

    @property
    def cuda(self) -> bool:
        return self.backend == "cuda"

    def ratio(self, budget_s: float = RATIO_BUDGET_S) -> float:
        """Aidge/torch: the median, over rounds, of one round's ratio, rounded to 3 significant
        digits. A round times a block of torch calls, then a block of Aidge calls (each block
        about :data:`RATIO_BLOCK_S` long, one clock reading per block, so that the clock's own
        cost stays out of microsecond cases), and divides the two per-call times: both sides of
        one round run within milliseconds of each other, so the CPU's own speed drift
        (docs/noise-floor.md) cancels in each round's ratio; :data:`RATIO_MIN_ROUNDS` to
        :data:`RATIO_MAX_ROUNDS` rounds, as many as ``budget_s`` allows."""
        rounds = self.ratio_rounds(budget_s)
        # asv prints and stores a track_ value as returned: 3 significant digits, not 4.253227378618111
        return timing.round_sig(statistics.median(a / t for t, a in rounds), 3)

    def ratio_rounds(self, budget_s: float = RATIO_BUDGET_S, clock: Callable[[], float] | None = None
                     ) -> list[tuple[float, float]]:
        """The rounds behind :meth:`ratio`: (torch's, Aidge's) seconds per call in each, on
        ``clock`` (the wall clock unless given: the report's timing pass reads the thread's
        CPU time)."""
        pin_threads()
        cuda = self.cuda
        calls = (self.torch_call, self.aidge_call)
        for call in calls:
            timing.measure(call, warmup=3, repeat=0, cuda=cuda)
        once = [min(timing.measure(call, warmup=0, repeat=3, cuda=cuda)) for call in calls]
        counts = [max(1, int(RATIO_BLOCK_S / max(t, 1e-7))) for t in once]
        round_s = sum(n * t for n, t in zip(counts, once))
        rounds = max(RATIO_MIN_ROUNDS, min(RATIO_MAX_ROUNDS, int(budget_s / max(round_s, 1e-9))))
        out = []
        for _ in range(rounds):
            torch_s = timing.block_time(self.torch_call, counts[0], cuda=cuda, clock=clock)
            aidge_s = timing.block_time(self.aidge_call, counts[1], cuda=cuda, clock=clock)
            out.append((torch_s, aidge_s))
        return out
