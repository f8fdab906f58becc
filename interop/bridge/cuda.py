"""Is there an NVIDIA GPU here? Answered with the standard library only, so that the nox
session deciding whether to build a CUDA environment can ask before installing anything
(the noxfile loads this file by path). The full probe, which imports torch and
aidge_backend_cuda, is :func:`interop.bridge.tensors.cuda_available`."""
from __future__ import annotations

import glob
import os
import shutil

__all__ = ["gpu_absent_reason"]


def gpu_absent_reason(dev: str = "/dev", which=shutil.which, environ=os.environ) -> str | None:
    """None when an NVIDIA GPU looks usable, else a one-line reason why not."""
    if environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={environ['CUDA_VISIBLE_DEVICES']!r} hides every GPU"
    if not glob.glob(os.path.join(dev, "nvidia[0-9]*")):
        return f"no NVIDIA GPU: no {os.path.join(dev, 'nvidia<N>')} device node"
    if which("nvidia-smi") is None:
        return "an NVIDIA device node exists but nvidia-smi (the driver tools) is not on PATH"
    return None
