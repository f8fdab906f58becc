"""Writing a reproducer bundle's files: the ONNX backend-test layout of a graph, its data and its
``repro.py`` (:func:`_write_layout`), ``meta.json`` (:func:`_write_json`), the size bound
(:data:`MAX_MB_ENV`, :func:`_apply_size_bound`), where a test's bundle goes (:func:`bundle_folder`)
and the small helpers every writer shares (tensors as numpy, a failure's one-line text, the
tolerance, the package versions). The layout is described in
:mod:`interop.reproducers`' docstring.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..env import read
from ..oracle.tolerance import tolerance_for
from .script import repro_script

#: a bundle's size bound (MB), beyond which only its reduced graph is kept
MAX_MB_ENV = "INTEROP_REPRO_MAX_MB"
DEFAULT_MAX_MB = 20.0


def max_bundle_bytes() -> int:
    return read(MAX_MB_ENV)  # bytes; declared in interop.env.VARIABLES (default DEFAULT_MAX_MB)


def _c_order(array):
    """A C-ordered copy that keeps the shape (``np.ascontiguousarray`` makes a 0-d array 1-d)."""
    return np.array(array, order="C", copy=True)


def _tensor_file(path: Path, array: np.ndarray, name: str) -> None:
    from onnx import numpy_helper

    path.write_bytes(numpy_helper.from_array(_c_order(array), name).SerializeToString())


def _np(t) -> np.ndarray:
    """A numpy copy of a torch tensor; bfloat16 (numpy has none) as ml_dtypes' bfloat16, the type onnx's
    numpy_helper reads and writes for a BFLOAT16 TensorProto (onnx depends on ml_dtypes)."""
    import torch

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.uint16).numpy().copy().view(ml_dtypes.bfloat16)
    return t.numpy().copy()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:600]


def _write_layout(folder: Path, proto, data_inputs: list[str], inputs: list[np.ndarray], outputs: list[np.ndarray],
                  settings: dict[str, Any], grads: dict[str, Any] | None = None, expected: str = "torch") -> None:
    import onnx

    data = folder / "test_data_set_0"
    data.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(folder / "model.onnx"))
    for k, (name, x) in enumerate(zip(data_inputs, inputs)):
        _tensor_file(data / f"input_{k}.pb", x, name)
    out_names = [o.name for o in proto.graph.output]
    for k, y in enumerate(outputs):
        _tensor_file(data / f"output_{k}.pb", y, out_names[k] if k < len(out_names) else f"output_{k}")
    if grads:
        for k, g in enumerate(grads.get("grad_outputs") or []):
            if g is not None:
                _tensor_file(data / f"grad_output_{k}.pb", g, f"grad_output_{k}")
        for k, g in (grads.get("grad_inputs") or {}).items():
            _tensor_file(data / f"grad_input_{k}.pb", g, f"grad_{data_inputs[k]}" if k < len(data_inputs) else "")
        for k, (name, g) in enumerate(grads.get("grad_params") or []):
            _tensor_file(data / f"grad_param_{k}.pb", g, f"grad_{name}")
    (folder / "repro.py").write_text(repro_script(settings, expected=expected), encoding="utf-8")


def _what(exc: BaseException) -> str:
    phase = getattr(exc, "phase", None)
    text = " ".join(str(exc).split())
    return (f"{phase}: " if phase else "") + f"{type(exc).__name__}: {text}"[:400]


def _rtol_atol(tolerance, outputs: list[np.ndarray]) -> tuple[float, float]:
    dtype = next((o.dtype.name for o in outputs if np.issubdtype(o.dtype, np.floating)), "float32")
    tol = tolerance_for(tolerance, dtype)
    return tol.rtol, tol.atol


def _versions() -> dict[str, str]:
    out = {}
    for name in ("aidge_core", "aidge_backend_cpu", "aidge_onnx", "onnx", "onnxruntime", "torch", "numpy"):
        try:
            out[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            pass
    return out


def _write_json(path: Path, obj: Any) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, sort_keys=True, default=str)
    os.chmod(tmp, 0o644)  # mkstemp's 0600: the bundle is to be shared
    os.replace(tmp, path)


def _apply_size_bound(folder: Path, meta: dict[str, Any]) -> None:
    """Over the bound: the full graph goes, the reduced one stays (the record says which)."""
    limit = max_bundle_bytes()
    full = sum(p.stat().st_size for p in [folder / "model.onnx", *(folder / "test_data_set_0").glob("*.pb")]
               if p.is_file())
    meta["full_bytes"] = full
    if full <= limit:
        return
    for p in [folder / "model.onnx", folder / "repro.py"]:
        p.unlink(missing_ok=True)
    shutil.rmtree(folder / "test_data_set_0", ignore_errors=True)
    meta["full_removed"] = (f"the full graph's bundle ({full / 1e6:.1f} MB) is over the bound "
                            f"(${MAX_MB_ENV}, {limit / 1e6:g} MB): only " +
                            ("the reduced graph is kept" if meta.get("reduced", {}).get("kept") else
                             "this description is kept (no reduced graph reproduces); replay the case with the suite"))


_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def bundle_folder(directory: Path, nodeid: str) -> Path:
    """The folder of a test's bundle in a run: ``reproducers/<test id, filename-safe>``; a long id is
    cut and given a hash of the whole, so that two tests never share one."""
    slug = _SLUG.sub("_", nodeid.split("::", 1)[-1]).strip("_") or "test"
    if len(slug) > 120:
        slug = slug[:100] + "-" + hashlib.sha1(nodeid.encode()).hexdigest()[:12]
    return Path(directory) / "reproducers" / slug
