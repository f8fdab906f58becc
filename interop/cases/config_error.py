""":class:`ConfigError`, the error of a bad configuration file, in a module of its own so
that every reader of configurations (:mod:`interop.cases.config`, the Aidge benchmark reader
:mod:`interop.cases.aidge_benchmark`) raises the same one without importing the others.
``interop.cases.config.ConfigError`` is the same class."""
from __future__ import annotations

import os

from ..errors import InteropError

__all__ = ["ConfigError"]


class ConfigError(InteropError, ValueError):
    """A bad operator configuration; the message names the file, the case and the key."""

    def __init__(self, message: str, *, file: str | os.PathLike | None = None, case: str | None = None,
                 key: str | None = None, operator: str | None = None):
        self.file = str(file) if file is not None else None
        self.case = case
        self.key = key
        self.operator = operator
        self.reason = message
        where = [self.file or f"operator {operator or '?'} (no file)"]
        if case is not None:
            where.append(f"case {case!r}")
        if key is not None:
            where.append(f"key {key!r}")
        super().__init__(f"{': '.join(where)}: {message}")


# Its public home (the name tracebacks and pickles use): interop.cases.config re-exports it.
ConfigError.__module__ = "interop.cases.config"
