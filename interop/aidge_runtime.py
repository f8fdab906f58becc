"""One place that imports Aidge and controls its process-wide state (console log level).

Aidge is imported lazily so that the pure-torch parts of the library (the comparator,
the case declarations) work where Aidge is not installed.
"""
from __future__ import annotations

import contextlib
import importlib
import threading
from types import ModuleType

__all__ = ["aidge_core", "aidge_onnx", "aidge_learning", "load_backend", "quiet_aidge"]

_lock = threading.RLock()


def aidge_core() -> ModuleType:
    return importlib.import_module("aidge_core")


def aidge_onnx() -> ModuleType:
    return importlib.import_module("aidge_onnx")


def aidge_learning() -> ModuleType:
    return importlib.import_module("aidge_learning")


def load_backend(backend: str) -> ModuleType:
    """Import the Aidge backend plug-in (``aidge_backend_cpu`` / ``aidge_backend_cuda``)."""
    if backend == "cuda":
        from .tensor_converter import cuda_available  # one probe for the whole library

        ok, reason = cuda_available()
        if not ok:
            from .errors import CudaUnavailableError

            raise CudaUnavailableError(f"backend='cuda' unavailable: {reason}")
    if backend not in ("cpu", "cuda"):
        raise ValueError(f"unknown Aidge backend {backend!r}: expected 'cpu' or 'cuda'")
    return importlib.import_module(f"aidge_backend_{backend}")


@contextlib.contextmanager
def quiet_aidge(verbose: bool = False):
    """Lower Aidge's console log level for the duration of the block, then restore it.

    Aidge prints NOTICE/WARNING lines (and ERROR lines before it throws) straight to the
    process's stdout; errors still reach the caller as exceptions. ``verbose=True`` leaves
    the caller's level untouched.
    """
    if verbose:
        yield
        return
    core = aidge_core()
    with _lock:
        previous = core.Log.get_console_level()
        core.Log.set_console_level(core.Level.Fatal)
        try:
            yield
        finally:
            core.Log.set_console_level(previous)
