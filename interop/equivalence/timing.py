"""The one timing routine of the project: synchronised wall-clock measurements and thread
pinning, used by ModelTester, the speed script and the asv benchmarks alike."""
from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, Iterator

import torch

__all__ = ["synchronize", "timed", "measure", "pinned_threads", "thread_count"]


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
