"""One place that imports Aidge and controls its process-wide state (console log level).

Aidge is imported lazily so that the pure-torch parts of the library (the comparator,
the case declarations) work where Aidge is not installed.
"""
from __future__ import annotations

import ctypes
import threading
from types import ModuleType

from .._lazy import quiet_import
# every backend ``wrap`` accepts: Aidge's Python CPU and CUDA backends, and Aidge's generated
# C++ export compiled on this host (:mod:`interop.bridge.export_cpp`)
from ..backends import BACKENDS
from ..errors import CudaUnavailableError
from .cuda import cuda_available  # one probe for the whole library

__all__ = ["BACKENDS", "aidge_core", "aidge_onnx", "aidge_learning", "load_backend", "quiet_aidge", "aidge_log_lock"]

#: held while Aidge's process-wide console level is lowered (quiet_aidge)
aidge_log_lock = threading.RLock()


def aidge_core() -> ModuleType:
    core = quiet_import("aidge_core")
    if not hasattr(core.Tensor, "from_data_ptr"):
        _add_copying_from_data_ptr(core)
    return core


def _add_copying_from_data_ptr(core: ModuleType) -> None:
    """Compatibility shim for Aidge < 0.10 (benchmarked by the asv release matrix), whose
    ``Tensor`` has no ``from_data_ptr``: a CPU stand-in that *copies* the memory instead of
    sharing it (enough for the bridge, which hands inputs to Aidge; the zero-copy promise
    of :func:`interop.bridge.tensors.torch_tensor_to_aidge` does not hold there)."""
    import numpy as np

    def from_data_ptr(dims, ptr, dtype, backend="cpu", device=0):
        if backend != "cpu":
            raise NotImplementedError(f"aidge_core {getattr(core, '__version__', '< 0.10')}: no from_data_ptr "
                                      f"for backend {backend!r}")
        np_dtype = np.dtype(str(dtype).rsplit(".", 1)[-1])
        count = int(np.prod(dims, dtype=np.int64))
        view = np.frombuffer((ctypes.c_char * (count * np_dtype.itemsize)).from_address(ptr), dtype=np_dtype)
        return core.Tensor(np.array(view.reshape(dims)))

    core.Tensor.from_data_ptr = staticmethod(from_data_ptr)


def aidge_onnx() -> ModuleType:
    return quiet_import("aidge_onnx")


def aidge_learning() -> ModuleType:
    return quiet_import("aidge_learning")


def load_backend(backend: str) -> ModuleType:
    """Import the Aidge backend plug-in (``aidge_backend_cpu`` / ``aidge_backend_cuda``; for
    ``export_cpp``, ``aidge_export_cpp`` and the CPU backend)."""
    if backend == "cuda":
        ok, reason = cuda_available()
        if not ok:
            raise CudaUnavailableError(f"backend='cuda' unavailable: {reason}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown Aidge backend {backend!r}: expected one of {BACKENDS}")
    if backend == "export_cpp":
        # the export generates and compiles C++ (aidge_export_cpp's kernels), and imports
        # and runs the graph on the cpu backend while it adapts it
        quiet_import("aidge_export_cpp")
        backend = "cpu"
    return quiet_import(f"aidge_backend_{backend}")


class quiet_aidge:
    """Lower Aidge's console log level for the duration of the block, then restore it.

    Aidge prints NOTICE/WARNING lines (and ERROR lines before it throws) straight to the
    process's stdout; errors still reach the caller as exceptions. ``verbose=True`` leaves
    the caller's level untouched.

    A plain class rather than a generator-based context manager: the bridge enters one on
    every forward and backward (about 1 us per use instead of 4). One instance may be
    entered again, nested or later: the levels it replaced are kept on a stack.
    """

    __slots__ = ("_enabled", "_previous", "_log", "_fatal")

    def __init__(self, verbose: bool = False):
        self._enabled = not verbose
        self._previous: list = []
        self._log = self._fatal = None

    def __enter__(self) -> "quiet_aidge":
        if self._enabled:
            if self._log is None:
                core = aidge_core()
                self._log, self._fatal = core.Log, core.Level.Fatal
            aidge_log_lock.acquire()
            try:
                self._previous.append(self._log.get_console_level())
                self._log.set_console_level(self._fatal)
            except BaseException:
                aidge_log_lock.release()
                raise
        return self

    def __exit__(self, *exc) -> bool:
        if self._enabled:
            try:
                self._log.set_console_level(self._previous.pop())
            finally:
                aidge_log_lock.release()
        return False
