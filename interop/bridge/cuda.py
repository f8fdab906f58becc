"""The CUDA probes of the library, all in this module.

* :func:`gpu_absent_reason`: is there an NVIDIA GPU here? Answered with the standard
  library only, so that the nox session deciding whether to build a CUDA environment can
  ask before installing anything (the noxfile loads this file by path).
* :func:`cuda_available` / :func:`require_cuda`: the full probe, which imports torch,
  ``aidge_core`` and ``aidge_backend_cuda`` inside the call (never when this module is
  loaded, so loading it by path stays standard-library only): can torch CUDA tensors be
  exchanged with Aidge? ``load_backend("cuda")``, the tensor converter, the pytest plugin
  and the inference contract all ask it.
"""
from __future__ import annotations

import functools
import glob
import importlib.util
import json
import os
import select
import shutil
import signal
import sys
import time

__all__ = ["gpu_absent_reason", "cuda_available", "require_cuda"]


def gpu_absent_reason(dev: str = "/dev", which=shutil.which, environ=os.environ) -> str | None:
    """None when an NVIDIA GPU looks usable, else a one-line reason why not."""
    if environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={environ['CUDA_VISIBLE_DEVICES']!r} hides every GPU"
    if not glob.glob(os.path.join(dev, "nvidia[0-9]*")):
        return f"no NVIDIA GPU: no {os.path.join(dev, 'nvidia<N>')} device node"
    if which("nvidia-smi") is None:
        return "an NVIDIA device node exists but nvidia-smi (the driver tools) is not on PATH"
    return None


@functools.lru_cache(maxsize=None)
def cuda_available() -> tuple[bool, str]:
    """Whether torch CUDA tensors can be exchanged with Aidge, and why (not).

    Returns ``(True, description)`` or ``(False, reason)``; the reason names every missing
    piece (``aidge_backend_cuda`` not installed, no CUDA device, ...). Cached; never
    raises, and never imports ``aidge_backend_cuda`` when it is not installed.

    The probe initialises CUDA (the driver, torch's runtime, Aidge's tensors), and a process that
    has done so can no longer fork a child that uses CUDA: in the child Aidge fails with "Cuda
    failure: initialization error (3)" and torch with "Cannot re-initialize CUDA in forked
    subprocess" (measured on an H200, 2026-12-04: 469 of 523 operator cases on ``--backend=cuda``,
    whose cases run in forked children). So where this process can fork and has not initialised
    CUDA yet, the probe runs in a forked child of its own (:func:`_probe_in_a_child`).
    """
    if _fork_keeps_cuda_usable():
        return _probe_in_a_child()
    return _probe()


def _fork_keeps_cuda_usable() -> bool:
    """Whether this process can fork and has not initialised torch's CUDA (a process that has
    cannot give its children a usable CUDA anyway: the probe then runs here)."""
    if not hasattr(os, "fork") or sys.platform == "win32":
        return False
    torch = sys.modules.get("torch")
    return not (torch is not None and torch.cuda.is_initialized())


#: seconds the probe's child may take (a driver's first initialisation can take seconds)
PROBE_TIMEOUT_S = 120.0


def _probe_in_a_child() -> tuple[bool, str]:
    """:func:`_probe` in a forked child; its answer comes back through a pipe (a child that dies
    or stays past :data:`PROBE_TIMEOUT_S` is the reason)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: probe, answer, leave without running the parent's clean-up
        try:
            os.close(read_fd)
            try:
                answer = _probe()
            except BaseException as exc:  # noqa: BLE001 - the parent gets it as the reason
                answer = (False, f"the CUDA probe raised {type(exc).__name__}: {exc}")
            os.write(write_fd, json.dumps(list(answer)).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    data, deadline = b"", time.monotonic() + PROBE_TIMEOUT_S
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read_fd)
        _, status = os.waitpid(pid, 0)
    try:
        ok, reason = json.loads(data.decode())
        return bool(ok), str(reason)
    except ValueError:
        how = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exit status {os.WEXITSTATUS(status)}")
        return False, f"the CUDA probe's child gave no answer ({how}; timeout {PROBE_TIMEOUT_S:g} s)"


def _probe() -> tuple[bool, str]:
    """The probe itself (see :func:`cuda_available`), in this process."""
    import torch

    missing = []
    try:
        cuda_spec = importlib.util.find_spec("aidge_backend_cuda")
    except (ImportError, ValueError):
        cuda_spec = None
    if cuda_spec is None:
        missing.append("aidge_backend_cuda is not installed")
    try:
        torch_cuda = bool(torch.cuda.is_available())
    except Exception as exc:  # a broken driver must not crash the probe
        torch_cuda = False
        missing.append(f"torch.cuda.is_available() failed: {exc}")
    else:
        if not torch_cuda:
            cuda_build = torch.version.cuda
            missing.append(
                "no CUDA device: torch.cuda.is_available() is False"
                + ("" if cuda_build else f" (torch {torch.__version__} is a CPU-only build)")
            )
    if missing:
        return False, "; ".join(missing)
    try:
        importlib.import_module("aidge_backend_cuda")
    except Exception as exc:
        return False, f"aidge_backend_cuda failed to import: {type(exc).__name__}: {exc}"
    import aidge_core
    import numpy as np

    try:
        backends = set(aidge_core.Tensor.get_available_backends())
    except Exception as exc:
        return False, f"cannot list Aidge backends: {exc}"
    if "cuda" not in backends:
        return False, f"Aidge has no 'cuda' tensor backend registered (has {sorted(backends)})"
    try:  # the first real CUDA use is where a driver/runtime mismatch shows up
        probe = aidge_core.Tensor(np.zeros((1,), dtype=np.float32))
        probe.set_backend("cuda", 0)
        probe.set_backend("cpu", 0)
    except Exception as exc:
        return False, f"Aidge CUDA backend unusable: {type(exc).__name__}: {exc}"
    return True, (
        f"torch {torch.__version__} sees {torch.cuda.device_count()} CUDA device(s); "
        "aidge_backend_cuda imported and probed"
    )


def require_cuda() -> None:
    """Raise ``RuntimeError`` with the reason from :func:`cuda_available` if CUDA is unusable."""
    ok, reason = cuda_available()
    if not ok:
        from ..errors import CudaUnavailableError

        raise CudaUnavailableError(f"CUDA tensors cannot be exchanged with Aidge: {reason}")
