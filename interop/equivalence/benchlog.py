"""Where ModelTester's timing records go, and how one test session's records replace the
previous session's, never mixing with them.

- :func:`resolve_log_path`: a relative log name lands under a configured directory
  (``$INTEROP_RESULTS_DIR``), never in whatever the current directory is.
- :func:`append_jsonl`: one locked ``O_APPEND`` write per record, safe with the concurrent
  writers of a pytest-xdist session (workers and the children they fork).
- :func:`start_session` / :func:`finish_session`: a test session writes into a staging
  directory of its own; when it ends, its file replaces the published one in one
  ``os.replace`` (a reader sees the previous session's file or this one's, never a mix and
  never half a file). ``tests/conftest.py`` uses them for ``results/benchmarks.jsonl``.
"""
from __future__ import annotations

import datetime
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from ..env import read as read_env

__all__ = ["RESULTS_ENV", "resolve_log_path", "append_jsonl", "start_session", "finish_session", "session_complete",
           "keep_partial", "publish_session", "SESSION_FILES"]

RESULTS_ENV = "INTEROP_RESULTS_DIR"
#: staging directories of running (or interrupted) sessions, under the results directory
SESSIONS_DIR = ".sessions"


def resolve_log_path(log_file: str | os.PathLike | None, log_dir: str | os.PathLike | None = None) -> Path | None:
    """Where a JSONL log goes: an absolute path as is; a relative one under ``log_dir`` or
    ``$INTEROP_RESULTS_DIR``; ``None`` (nothing written) when neither is configured, so a
    log never lands silently in whatever the current directory happens to be."""
    if log_file is None:
        return None
    path = Path(log_file)
    if path.is_absolute():
        return path
    base = log_dir or read_env(RESULTS_ENV)
    return Path(base) / path if base else None


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line; safe with concurrent writers (one locked O_APPEND write)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(record, sort_keys=True, default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def start_session(results: Path) -> Path:
    """A fresh staging directory for one test session's logs:
    ``<results>/.sessions/<UTC time>-<pid>/`` (created exclusively)."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    staging = Path(results) / SESSIONS_DIR / f"{stamp}-{os.getpid()}"
    staging.parent.mkdir(parents=True, exist_ok=True)
    staging.mkdir()
    return staging


#: what a session publishes: the timings, its records and what it says of itself
SESSION_FILES = ("benchmarks.jsonl", "records.jsonl", "session.json")
#: marks a session's folder kept because the session did not complete
PARTIAL_PREFIX = "partial-"


def session_complete(staging: Path, exitstatus: int) -> tuple[bool, str]:
    """Whether the session in ``staging`` ran to its end: its ``session.json`` says so (the
    records plugin's decision: not interrupted, not stopped early, nothing lost), else pytest's
    exit status (0, 1 or 5). ``(complete, why not)``."""
    meta = Path(staging) / "session.json"
    if meta.exists():
        try:
            data = json.loads(meta.read_text())
            return bool(data.get("complete")), str(data.get("ended") or "")
        except (OSError, ValueError):
            return False, f"{meta}: unreadable"
    if exitstatus in (0, 1, 5):
        return True, ""
    return False, f"pytest exit status {exitstatus}"


def keep_partial(staging: Path, results: Path, why: str) -> Path:
    """An incomplete session: its files stay together, beside the published ones and never
    replacing them, in ``<results>/partial-<staging name>/`` with a ``PARTIAL`` note saying why."""
    target = Path(results) / f"{PARTIAL_PREFIX}{Path(staging).name}"
    (Path(staging) / "PARTIAL").write_text(f"this session did not complete: {why or 'interrupted'}\n"
                                           "its files are partial; results/ keeps the last complete session's\n")
    os.replace(staging, target)
    return target


def publish_session(staging: Path, results: Path, exitstatus: int) -> Path | None:
    """The end of a plain test session (``tests/conftest.py``): a complete session's files
    replace ``results/``'s (:func:`finish_session`); an incomplete one (interrupted, stopped
    early, a test lost) leaves them untouched and keeps its own in ``results/partial-<session>/``
    (:func:`keep_partial`). Returns that folder, None when published or when nothing was written."""
    staging = Path(staging)
    complete, why = session_complete(staging, exitstatus)
    if complete:
        finish_session(staging, results)
        return None
    if any(staging.iterdir()):
        return keep_partial(staging, results, why)
    staging.rmdir()
    return None


def finish_session(staging: Path, results: Path, names: tuple[str, ...] = SESSION_FILES) -> list[Path]:
    """Publish each log of ``staging`` named in ``names`` as ``<results>/<name>``, replacing
    the previous session's file atomically (``os.replace``); a log the session did not
    write leaves the published one as it is. Removes the staging directory when it is
    empty. Returns the published paths. (An incomplete session is not published:
    :func:`keep_partial`.)"""
    published = []
    for name in names:
        source = Path(staging) / name
        if source.exists():
            target = Path(results) / name
            os.replace(source, target)  # same filesystem: one rename, never a partial file
            published.append(target)
    try:
        Path(staging).rmdir()
    except OSError:
        pass  # something else lives there: left for the user to look at
    return published
