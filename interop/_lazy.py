"""Lazy attributes of a package: ``__getattr__`` / ``__dir__`` that import a public name's
module on first access (so importing the package stays cheap: no torch, no Aidge)."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
import warnings
from typing import Any, Callable, Iterable, Mapping

_IMPORT_LOCK = threading.RLock()
if hasattr(os, "register_at_fork"):
    # A child forked while another thread of its parent held this lock (a first access importing a
    # module) would wait on it forever at its own first lazy import: the holder does not exist in
    # the child. interop.equivalence.isolation forks a child per case, and interop.bridge imports
    # lazily, so the child makes a new one.
    os.register_at_fork(after_in_child=lambda: globals().__setitem__("_IMPORT_LOCK", threading.RLock()))


def import_lock() -> threading.RLock:
    """The lock every first access of a lazy name imports under: held, no such import is half done
    in another thread (interop.equivalence.isolation forks under it, so a child never inherits a
    module another thread was still importing: that module's lock would never be released)."""
    return _IMPORT_LOCK


def quiet_import(name: str, package: str | None = None):
    """``importlib.import_module`` that leaves the caller's warning filters as they were:
    third-party packages add filters when first imported (requests and urllib3 through
    aidge_core: 4; protobuf through onnx: 4), and the library is imported lazily, so the
    first ``wrap()`` used to change ``warnings.filters`` for the whole process. Filters set
    by another thread during such a first import are undone with them (one import at a time)."""
    module = sys.modules.get(importlib.util.resolve_name(name, package) if name.startswith(".") else name)
    if module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False):
        return module  # imported already (and not still being imported by another thread)
    with _IMPORT_LOCK, warnings.catch_warnings():
        return importlib.import_module(name, package)


def lazy_attributes(package: str, exports: Mapping[str, str], submodules: Iterable[str] = ()
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a public name to the
    (dotted, relative) module defining it; ``submodules`` are reachable as attributes."""
    submodules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(quiet_import(f".{exports[name]}", package), name)
            vars(sys.modules[package])[name] = value  # later accesses skip this hook
            return value
        if name in submodules:
            return quiet_import(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports) | submodules)

    return __getattr__, __dir__
