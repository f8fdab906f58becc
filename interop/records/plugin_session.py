"""The records session's settings (:mod:`interop.records.plugin`): where its records go
(:func:`records_directory`), the shard it runs (:func:`session_shard`), whether it is nested in another
session's test (:func:`nested`) and writes reproducers (:func:`reproducers_on`), its backend, the keys
that carry these to xdist's workers and the records through pytest's reports, and the one line that
says a records folder could not be written."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..env import given, read as read_env
from . import shard as _shard
from ..reading import UnsafeInputError


RECORDS_ENV = "INTEROP_RECORDS_DIR"
_WORKER_KEY = "interop_records_dir"
_SESSION_KEY = "interop_records_session"
_SHARD_KEY = "interop_shard"
_DURATIONS_KEY = "interop_shard_durations"
#: the ``user_properties`` entries that carry the records from the process that ran the test to the
#: one that writes (issue 46): the setup report's the case's fields, the teardown report's the record
FIELDS_PROPERTY = "interop_case_fields"
RECORD_PROPERTY = "interop_record"
#: set by a records session's main process for what it starts: a pytest session that finds it
#: (pytester's inner sessions, in-process or not) is nested, and writes records only when given
#: ``--records`` (``PYTEST_CURRENT_TEST`` alone misses an in-process inner session started after
#: another one in the same test: pytest removes the variable at each test's end)
SESSION_ENV = "INTEROP_RECORDS_SESSION"
#: pytest's summary words (the terminal reporter's stats keys) a session's counts keep
COUNTED = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "deselected")


REPRODUCERS_ENV = "INTEROP_REPRODUCERS"


def reproducers_on() -> bool:
    """Whether failing cases leave reproducer bundles (``$INTEROP_REPRODUCERS``; ``nox -s report``
    turns it on, a plain session leaves it off: each bundle costs a few seconds)."""
    return read_env(REPRODUCERS_ENV)


def nested() -> bool:
    """Whether this (main) process is a session started from inside another session's test."""
    return bool(os.environ.get("PYTEST_CURRENT_TEST") or given(SESSION_ENV))


def session_shard(config: pytest.Config) -> tuple[int, int] | None:
    """The shard this session runs: ``--shard K/N``, else ``$INTEROP_SHARD`` for a top-level
    session (an inner session started by a test, pytester's, runs what it is given: the outer
    session's shard is not its own); an xdist worker gets its controller's."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        raw = workerinput.get(_SHARD_KEY) or ""
        return _shard.parse_shard(raw, "--shard") if raw else None
    explicit = config.getoption("--shard", default=None)
    if explicit:
        selected = _shard.parse_shard(explicit, "--shard")
        if not nested():  # with INTEROP_OPINFO_SHARD beside it: a ValueError naming both
            _shard.opinfo_shard(every_source=f"option --shard={explicit!r}")
        return selected
    return None if nested() else _shard.shard_from_env()


def records_directory(config: pytest.Config) -> Path | None:
    """Where this session's records go (see the module docstring), None for none."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        value = workerinput.get(_WORKER_KEY)
        return Path(value) if value else None
    explicit = config.getoption("--records", default=None)
    if explicit:
        return None if explicit == "none" else Path(explicit)
    if nested():
        # started from inside another session's test (pytester): the variables below are the
        # outer session's, and its records are not this session's to write
        return None
    return read_env(RECORDS_ENV) or read_env("INTEROP_RESULTS_DIR")  # a file there: a ValueError naming the variable


def config_backend(config: pytest.Config) -> str:
    """The backend the session tests (``--backend``)."""
    return config.getoption("--backend", default="cpu")


def _records_error(directory: Path, exc: BaseException) -> str:
    """A records folder or file that could not be made or written, in one line naming it."""
    if isinstance(exc, UnsafeInputError):
        return f"interop records: {exc}"
    where = getattr(exc, "filename", None) or directory
    return f"interop records: cannot write {where}: {getattr(exc, 'strerror', None) or exc}"
