"""The thread count every benchmark pins torch and Aidge to, recorded with the results."""
from . import harness


def track_threads() -> int:
    """Threads of both frameworks: Aidge's OpenMP runtime follows OMP_NUM_THREADS (set by
    asv.conf.json), torch is pinned to the same count."""
    return harness.pin_threads()


track_threads.unit = "threads"
