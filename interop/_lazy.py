"""Lazy attributes of a package: ``__getattr__`` / ``__dir__`` that import a public name's
module on first access (so importing the package stays cheap: no torch, no Aidge)."""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Iterable, Mapping


def lazy_attributes(package: str, exports: Mapping[str, str], submodules: Iterable[str] = ()
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a public name to the
    (dotted, relative) module defining it; ``submodules`` are reachable as attributes."""
    submodules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(f".{exports[name]}", package), name)
            vars(sys.modules[package])[name] = value  # later accesses skip this hook
            return value
        if name in submodules:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports) | submodules)

    return __getattr__, __dir__
