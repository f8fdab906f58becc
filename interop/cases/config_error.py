""":class:`ConfigError`, the error of a bad configuration file, in a module of its own so
that every reader of configurations (:mod:`interop.cases.config`, the Aidge benchmark reader
:mod:`interop.cases.aidge_benchmark`) raises the same one without importing the others.
``interop.cases.config.ConfigError`` is the same class."""
from __future__ import annotations

import os
import json

from ..errors import InteropError
from ..reading import UnsafeInputError, read_user_json

__all__ = ["ConfigError", "check_input_specs", "load_json_config"]


class ConfigError(InteropError, ValueError):
    """A bad operator configuration; the message names the file, the case and the key."""

    category = "config_error (test strategy)"

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


def load_json_config(path: str | os.PathLike, *, within: str | os.PathLike | None = None, object_pairs_hook=None):
    """The JSON document of a configuration file under the reading policy
    (:func:`interop.reading.read_user_json`), every failure a :class:`ConfigError` naming the
    file (both readers of configurations read through it); the hook's own errors pass."""
    try:
        return read_user_json(path, within=within, object_pairs_hook=object_pairs_hook)
    except UnsafeInputError as exc:
        raise ConfigError(exc.reason, file=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration: {exc.strerror or exc}", file=path) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: byte {exc.object[exc.start]:#04x} at offset {exc.start}",
                          file=path) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", file=path) from exc


def check_input_specs(specs, allowed: frozenset, file, case: str | None, key: str) -> list[dict]:
    """``specs`` (``None``: none) as a list of named input specs whose keys are among
    ``allowed``, else the :class:`ConfigError` naming the file, case and key (both readers
    share this check; each has its own set of keys)."""
    if specs is None:
        return []
    if not isinstance(specs, list):
        raise ConfigError(f"input_specs must be a list of {{{', '.join(sorted(allowed))}}}", file=file, case=case,
                          key=key)
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise ConfigError("every input spec needs a string name", file=file, case=case, key=f"{key}[{i}]")
        unknown = set(spec) - allowed
        if unknown:
            raise ConfigError(f"unknown input spec key(s) {sorted(unknown)} (allowed {sorted(allowed)})",
                              file=file, case=case, key=f"{key}[{i}].{sorted(unknown)[0]}")
    return specs


# Its public home (the name tracebacks and pickles use): interop.cases.config re-exports it.
ConfigError.__module__ = "interop.cases.config"
