"""Golden files: a test's outputs stored once, compared on every later run.

A golden reference is two files side by side, neither of which needs pickle::

    <test dir>/golden/<test module>/<name>[<param id>].npz    the tensors (np.savez)
    <test dir>/golden/<test module>/<name>[<param id>].json   what they are (paths, dtypes,
                                                              shapes, torch/numpy versions)

``name`` is the ``@pytest.mark.torch_golden("classifier_v1")`` argument (default: the test
function's name); a parametrised test gets one file per parameter set (``[<param id>]``),
never one file shared by its siblings. ``pytest --torch-update-golden`` (re)writes the
references; without it a missing file fails the test (CI never passes vacuously).

The comparison goes through :func:`interop.oracle.compare_outputs`; tensors that numpy
cannot hold (bfloat16, float8) are stored widened to float32 and their dtype recorded.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
import sys

import numpy as np

from .. import equivalence as compare  # the comparator (interop.equivalence re-exports it)
from ..reading import UnsafeInputError, read_user_json

__all__ = ["GoldenFile", "GoldenMismatch", "GoldenMissing", "golden_path", "flatten_outputs",
           "FORMAT_VERSION"]

FORMAT_VERSION = 1
_UNSAFE = re.compile(r"[^\w.\-\[\]=+,]")


class GoldenMissing(AssertionError):
    """No golden file for this test: run pytest with --torch-update-golden to write it."""


class GoldenMismatch(AssertionError):
    """The output differs from the stored golden reference."""


def golden_path(test_file: Path, name: str, param_id: str | None = None, root: Path | None = None) -> Path:
    """``<root or test dir>/golden/<test module>/<name>[<param id>].npz``."""
    base = (root if root is not None else Path(test_file).parent / "golden") / Path(test_file).stem
    stem = _UNSAFE.sub("_", name) + (f"[{_UNSAFE.sub('_', param_id)}]" if param_id else "")
    return base / f"{stem}.npz"


def flatten_outputs(output: Any, path: str = "output") -> list[tuple[str, Any]]:
    """``(path, leaf)`` for every tensor-like leaf, paths spelled like the comparator's."""
    if compare.is_tensor_like(output):
        return [(path, output)]
    if isinstance(output, dict):
        return [item for k, v in output.items() for item in flatten_outputs(v, f"{path}[{k!r}]")]
    if isinstance(output, (list, tuple)):
        fields = getattr(type(output), "_fields", None)
        return [item for i, v in enumerate(output)
                for item in flatten_outputs(v, f"{path}.{fields[i]}" if fields else f"{path}[{i}]")]
    if output is None:
        return []
    raise TypeError(f"golden files store tensors, arrays and scalars (in tuples/lists/dicts); "
                    f"got {type(output).__qualname__} at {path}")


def _dtype_name(leaf: Any) -> str:
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:
        return np.asarray(leaf).dtype.name
    return str(dtype).replace("torch.", "")


class GoldenFile:
    """One golden reference (``path`` is the ``.npz``; the metadata sits next to it as ``.json``)."""

    def __init__(self, path: Path, *, update: bool = False, test_id: str = "", device: str = ""):
        self.path = Path(path)
        self.meta_path = self.path.with_suffix(".json")
        self.update = update
        self.test_id = test_id
        self.device = device
        self.written = False

    # -- writing ------------------------------------------------------------------
    def write(self, output: Any) -> None:
        leaves = flatten_outputs(output)
        arrays, entries = {}, []
        for i, (path, leaf) in enumerate(leaves):
            arr = np.array(compare.to_numpy(leaf), copy=True, order="C")  # keeps 0-d shapes
            key = f"t{i}"
            arrays[key] = arr
            entries.append({"key": key, "path": path, "dtype": _dtype_name(leaf), "stored_dtype": arr.dtype.name,
                            "shape": list(arr.shape)})
        meta = {"format": FORMAT_VERSION, "test": self.test_id, "device": self.device,
                "versions": _versions(), "entries": entries}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as fh:  # np.savez on a path would append ".npz" to the tmp name
            np.savez(fh, **arrays)
        tmp.replace(self.path)
        self.meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        self.written = True

    # -- reading ------------------------------------------------------------------
    def read(self) -> tuple[dict[str, Any], list[tuple[str, np.ndarray]]]:
        if not self.path.exists() or not self.meta_path.exists():
            missing = [str(p) for p in (self.path, self.meta_path) if not p.exists()]
            raise GoldenMissing(
                f"golden reference missing for {self.test_id or self.path.stem}: {', '.join(missing)}\n"
                "write it with: pytest --torch-update-golden --torch-device=cpu "
                + (self.test_id or ""))

        try:  # the reading policy (interop.reading): a regular file, size and nesting limits
            meta = read_user_json(self.meta_path)
        except UnsafeInputError as exc:
            raise ValueError(str(exc)) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{self.meta_path}: not valid JSON ({exc})") from None
        if not isinstance(meta, dict):
            raise ValueError(f"{self.meta_path}: expected a JSON object, got {type(meta).__name__}")
        entries = meta.get("entries", [])
        if not isinstance(entries, list) or not all(
                isinstance(e, dict) and isinstance(e.get("path"), str) and isinstance(e.get("key"), str)
                and isinstance(e.get("dtype"), str) for e in entries):
            raise ValueError(f"{self.meta_path}: key 'entries' must be a list of objects with string 'path', "
                             f"'key' and 'dtype'")
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{self.meta_path}: key 'format' is {meta.get('format')!r}, "
                             f"this version reads {FORMAT_VERSION}")
        with np.load(self.path, allow_pickle=False) as data:
            arrays = []
            for entry in meta.get("entries", []):
                try:
                    arrays.append((entry["path"], data[entry["key"]]))
                except KeyError as exc:
                    raise ValueError(f"{self.path}: entry {entry!r} refers to a missing key {exc}") from None
        return meta, arrays

    # -- checking -----------------------------------------------------------------
    def check(self, output: Any, rtol: float | None = None, atol: float | None = None) -> None:
        """Compare ``output`` with the stored reference (or store it in update mode)."""
        if self.update:
            self.write(output)
            return
        meta, stored = self.read()
        actual = flatten_outputs(output)
        stored_paths = [p for p, _ in stored]
        actual_paths = [p for p, _ in actual]
        if stored_paths != actual_paths:
            raise GoldenMismatch(
                f"output structure differs from the golden file {self.path}:\n"
                f"  stored: {stored_paths}\n  actual: {actual_paths}\n"
                "if the change is intended, rewrite it with --torch-update-golden")
        problems = []
        for (path, leaf), (_, ref), entry in zip(actual, stored, meta["entries"]):
            expected: Any = ref
            rt, at = rtol, atol
            if rt is None or at is None:  # tolerance of the dtypes as written, not as stored
                d_rt, d_at = compare.default_tolerances(entry["dtype"], _dtype_name(leaf))
                rt = d_rt if rt is None else rt
                at = d_at if at is None else at
            mismatch = compare.compare_tensors(leaf, expected, rt, at, equal_nan=True, path=path)
            if mismatch is not None:
                problems.append(mismatch.message)
        if problems:
            raise GoldenMismatch(
                f"output differs from the golden file {self.path} (written on {meta.get('device') or '?'} "
                f"with {meta.get('versions', {})}):\n\n" + "\n\n".join(problems))


def _versions() -> dict[str, str]:
    versions = {"numpy": np.__version__}
    torch = sys.modules.get("torch")
    if torch is not None:
        versions["torch"] = torch.__version__
    return versions
