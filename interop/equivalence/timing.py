"""The one timing routine of the project: synchronised wall-clock measurements and thread
pinning, used by ModelTester, the speed script and the asv benchmarks alike; the robust
summary of a series of samples (:class:`PhaseSamples`); :func:`round_sig` for the ratios
that scripts and asv print."""
from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import statistics
import time
from typing import Any, Callable, Iterator

import torch

__all__ = ["synchronize", "timed", "measure", "block_time", "pinned_threads", "thread_count", "round_sig", "PhaseSamples",
           "restored_state"]


def round_sig(x: float, digits: int = 3) -> float:
    """``x`` rounded to ``digits`` significant digits (4.253227378618111 -> 4.25); NaN, inf
    and 0 unchanged."""
    if not isinstance(x, (int, float)) or not math.isfinite(x) or x == 0:
        return x
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def synchronize(cuda: bool) -> None:
    """Wait for queued CUDA work when timing a CUDA run (no-op on CPU)."""
    if cuda and torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn: Callable[[], Any], *, cuda: bool = False) -> tuple[Any, float]:
    """Run ``fn`` once; return (its result, seconds), CUDA synchronised on both ends."""
    synchronize(cuda)
    start = time.perf_counter()
    result = fn()
    synchronize(cuda)
    return result, time.perf_counter() - start


def measure(fn: Callable[[], Any], *, warmup: int = 2, repeat: int = 10, min_time_s: float = 0.0,
            cuda: bool = False) -> list[float]:
    """Warm up, then time ``fn`` ``repeat`` times (more while the total is under ``min_time_s``)."""
    for _ in range(warmup):
        fn()
    samples: list[float] = []
    while len(samples) < repeat or sum(samples) < min_time_s:
        samples.append(timed(fn, cuda=cuda)[1])
        if len(samples) >= 10_000:
            break
    return samples


def block_time(fn: Callable[[], Any], n: int, *, cuda: bool = False,
               clock: Callable[[], float] | None = None) -> float:
    """Seconds per call of ``n`` back-to-back calls of ``fn``, one clock reading around the
    block (CUDA synchronised on both ends): the clock's own cost (tens of nanoseconds) is
    spread over the block instead of added to every microsecond call. ``clock``: the wall
    clock (``time.perf_counter``) unless given."""
    clock = clock or time.perf_counter
    synchronize(cuda)
    start = clock()
    for _ in range(n):
        fn()
    synchronize(cuda)
    return (clock() - start) / n


def thread_count() -> int:
    """Threads both frameworks should use: ``OMP_NUM_THREADS`` when set, else torch's count."""
    env = os.environ.get("OMP_NUM_THREADS")
    return int(env) if env and env.isdigit() and int(env) > 0 else torch.get_num_threads()


@contextlib.contextmanager
def pinned_threads(n: int | None = None) -> Iterator[int]:
    """Give torch the same thread count as Aidge's OpenMP runtime for the block.

    Aidge's CPU kernels follow ``OMP_NUM_THREADS`` (read by OpenMP at start-up); torch is set
    to the same number here and restored afterwards. Yields the count, to be recorded.
    """
    n = n or thread_count()
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(previous)


@contextlib.contextmanager
def restored_state(models, cuda: bool):
    """Restore what extra calls of ``models`` may change: every buffer's value (BatchNorm
    running statistics, ``num_batches_tracked``; written back in place, so an AidgeModule's
    Producers sharing that memory get it too), every parameter's ``.grad`` (the object: a
    backward in between accumulates into fresh tensors) and torch's RNG state (dropout)."""
    buffers, grads = [], []
    for model in models:
        if isinstance(model, torch.nn.Module):
            buffers += [(b, b.detach().clone()) for b in model.buffers()]
            for p in model.parameters():
                grads.append((p, p.grad))
                p.grad = None
    devices = [torch.cuda.current_device()] if cuda and torch.cuda.is_available() else []
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        with torch.no_grad():
            for b, saved in buffers:
                b.copy_(saved)
        for p, g in reversed(grads):  # a parameter shared by both models gets its first saved .grad
            p.grad = g


@dataclasses.dataclass
class PhaseSamples:
    """The timed calls of one phase (forward or backward) of two models: ``model1`` /
    ``model2`` the wall time of each call; ``own2`` Aidge's own share of each model2 call
    (the scheduler time inside it) or None per sample when model2 holds no Aidge module."""

    model1: list[float] = dataclasses.field(default_factory=list)
    model2: list[float] = dataclasses.field(default_factory=list)
    own2: list[float | None] = dataclasses.field(default_factory=list)

    def add(self, which: int, seconds: float, own: float | None = None) -> None:
        """One sample of model ``which`` (1 or 2)."""
        if which == 1:
            self.model1.append(seconds)
        else:
            self.model2.append(seconds)
            self.own2.append(own)

    def total(self, which: int) -> float:
        return sum(self.model1 if which == 1 else self.model2)

    def count(self, which: int) -> int:
        return len(self.model1 if which == 1 else self.model2)

    def stats(self) -> dict[str, Any]:
        """Seconds. ``median1``/``min1``/``mean1`` of model1's calls; ``median2``/``min2``/
        ``mean2`` of Aidge's own time when every model2 sample has one (``timed2 = "aidge
        scheduler"``), else of model2's calls (``timed2 = "model2 call"``); ``call2`` the
        median model2 call; ``bridge2`` the median of (call - Aidge's own time) per model2
        call. ``ratio = median2 / median1`` (the robust figure), ``ratio_min = min2 / min1``;
        ``samples1``/``samples2`` per side, ``samples`` the smaller."""
        keys = ("median1", "median2", "min1", "min2", "mean1", "mean2", "ratio", "ratio_min", "call2", "bridge2",
                "timed2")
        n1, n2 = len(self.model1), len(self.model2)
        out: dict[str, Any] = dict.fromkeys(keys)
        out.update(samples=min(n1, n2), samples1=n1, samples2=n2, stat="median")
        if not n1 or not n2:
            out["samples"] = 0
            return out
        own = all(t is not None for t in self.own2)
        series2 = self.own2 if own else self.model2
        out.update(median1=statistics.median(self.model1), min1=min(self.model1), mean1=statistics.fmean(self.model1),
                   median2=statistics.median(series2), min2=min(series2), mean2=statistics.fmean(series2),
                   call2=statistics.median(self.model2), timed2="aidge scheduler" if own else "model2 call")
        if own:
            out["bridge2"] = statistics.median(c - a for c, a in zip(self.model2, self.own2))
        out["ratio"] = out["median2"] / out["median1"] if out["median1"] > 0 else None
        out["ratio_min"] = out["min2"] / out["min1"] if out["min1"] > 0 else None
        return out
