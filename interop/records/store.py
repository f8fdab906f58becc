"""Where records live and how the parts of one run become its ``records.jsonl``.

A run directory (``results/runs/<run>/`` of ``nox -s report``, the staging directory of a plain
pytest session) holds:

- ``records.d/<session>/main-<pid>.jsonl`` while the run goes: one folder per session (its
  main process's pid and start time), one file written by the session's main process (a plain
  session's, the xdist controller: a worker's records reach it in pytest's reports,
  :mod:`interop.records.plugin`), appended one line at a time with a single ``O_APPEND`` write
  (a process killed mid-run leaves whole lines). Runs before 2026-12-04 have one file per
  process that ran tests (``<worker>-<pid>.jsonl``): they are read the same way. A session combines and
  removes its own folder only: two sessions given one directory never destroy each other's
  parts (measured: the unit tests' inner sessions did, in a full run). A ``start`` line
  precedes each test, its record follows it.
- ``records.jsonl`` and ``session.json`` when it ends (:func:`combine`): every record, the
  last one per test, sorted by node id, and what the session says of itself (pytest's own
  counts, exit status, interrupted, shard, versions, complete or not). A test that started
  but has no record (its process was killed) gets one of category ``killed``; the session
  is then incomplete. Both files are written under a temporary name and renamed; the parts
  are removed only after.

:func:`load_run` reads a directory back (combining first when the run died before it could);
bad lines are listed with file and line, never a traceback.

Every file read, written or deleted here lies inside the run directory, is a regular file and no
folder on the way is a link leading out (:func:`interop.reading.confined`): a ``records.d/<session>``
link to another folder is named as a problem, and its files are neither read nor removed; a
``records.jsonl`` that is a link, a FIFO or a directory is named, never followed, never a hang.
Files are read one bounded line at a time. A record or a ``session.json`` field of the wrong type
is named (file, line, key) and costs only itself.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable

from .model import checked, problem_of as record_problem, written
from .outcome import pytest_outcome
from ..reading import TYPE_WORDS as _TYPE_WORDS
from ..reading import (MAX_LOG_BYTES, UnsafeInputError, confined, confined_json_lines, read_confined,
                       read_confined_json)
from ..reading import UnreadableInput
from .benchmarks import parse_benchmarks

__all__ = ["RECORDS_FILE", "SESSION_FILE", "PARTS_DIR", "SCHEMA", "PartWriter", "combine", "load_run", "RunRecords",
           "write_atomically", "write_run", "now", "line_of", "records_counts", "check_counts", "COUNTED_OUTCOMES",
           "record_problem", "checked_session", "MAX_SESSION_BYTES", "outcome_of_reports",
           "record_disagreement", "disagreements"]

RECORDS_FILE = "records.jsonl"
SESSION_FILE = "session.json"
PARTS_DIR = "records.d"
#: the record format's version (a record of another version is read, and flagged)
SCHEMA = 1
#: the outcomes pytest's summary line counts (its terminal reporter's words)
COUNTED_OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")


#: the largest session.json read (it lists the lost tests and the problems: 30,000 node ids are ~3 MB)
MAX_SESSION_BYTES = 64 << 20
#: the largest records.jsonl read: 256 MiB (the default suite's 3,734 records were 5.0 MB on
#: 2026-12-03, ~1.3 kB each: the limit is ~50 times that); a larger file is refused unread, named
MAX_RECORDS_BYTES = 256 << 20


def write_atomically(path: Path, text: str, root: Path | None = None) -> None:
    """``text`` into ``path`` through a temporary file in the same directory and a rename. The
    temporary is created exclusively and never through a link (a link planted under its name
    is removed, never followed); ``root``: the folder ``path`` must lie in
    (:func:`interop.reading.confined`: :class:`~interop.reading.UnsafeInputError` naming it
    otherwise, before anything is written)."""
    path = Path(path)
    if root is not None:
        confined(path.parent, root, kind="dir")
        if os.path.lexists(path):
            confined(path, root)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o644)
    except FileExistsError:  # a temporary left by a killed writer of this pid, or something planted
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk: say which file could not be written
            exc.filename = str(path)
        raise


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float as the string ``"nan"`` / ``"inf"`` / ``"-inf"`` (a
    mismatch's worst element can be NaN; strict JSON has no NaN), tuples as lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def line_of(obj: dict[str, Any]) -> str:
    """``obj`` as a record's JSON line, without its newline (strict JSON: non-finite floats as
    strings, :func:`json_safe`; keys sorted)."""
    return json.dumps(json_safe(obj), sort_keys=True, default=str, allow_nan=False)


class PartWriter:
    """One process's part file: each :meth:`write` is one ``os.write`` of one JSON line on an
    ``O_APPEND`` descriptor (whole lines even when the process is killed right after)."""

    def __init__(self, directory: Path, name: str, session: str = "session"):
        base = Path(directory) / PARTS_DIR
        # records.d a link out: refused by name before anything is made (mkdir followed it, and
        # made the session's folder outside)
        confined(base, directory, kind="dir", missing_ok=True)
        base.mkdir(parents=True, exist_ok=True)
        confined(base, directory, kind="dir")
        parts = base / session
        confined(parts, directory, kind="dir", missing_ok=True)
        parts.mkdir(exist_ok=True)
        confined(parts, directory, kind="dir")  # records.d/<session> a link out: refused, by name
        self.path = parts / f"{name}-{os.getpid()}.jsonl"
        if os.path.lexists(self.path):
            confined(self.path, directory)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                           | getattr(os, "O_NONBLOCK", 0), 0o644)

    def write(self, obj: dict[str, Any] | str) -> None:
        """``obj`` as one line (:func:`line_of`); a string is a line already made (a worker's, carried
        in its report): written as it is, with its newline."""
        data = ((obj if isinstance(obj, str) else line_of(obj)).rstrip("\n") + "\n").encode()
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:  # a full disk: name the file
            if exc.filename is None:
                exc.filename = str(self.path)
            raise

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclasses.dataclass
class RunRecords:
    """One run read back: its records, what its session said, and the lines that could not be read."""

    records: list[dict[str, Any]]
    session: dict[str, Any]
    problems: list[str]
    source: str

    @property
    def complete(self) -> bool:
        return self.session.get("complete") is True


_STR = (str, type(None))


def _type_name(kinds: tuple) -> str:
    """session.json's field types in the typed record's words (``a string or null``)."""
    return " or ".join(_TYPE_WORDS.get(k, k.__name__) for k in kinds)


def _of_type(value: Any, kinds: tuple) -> bool:
    """``isinstance``, except that true/false is not an integer unless ``kinds`` says bool."""
    return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def _read_lines(path: Path, problems: list[str], need_nodeid: bool = True,
                root: Path | None = None) -> Iterable[dict[str, Any]]:
    """The records (and part lines) of ``path``, each validated through the typed record
    (:func:`interop.records.model.checked`: a field of the wrong type is named with the file, the
    line and the key, and costs only its line), its outcome said once (a strict XPASS of a run
    before 2026-12-04 said "failed")."""
    for number, obj in confined_json_lines(path, Path(path).parent if root is None else root, problems):
        try:
            rec = checked(obj, need_nodeid)
        except ValueError as exc:
            problems.append(f"{path}:{number}: {exc}: skipped")
            continue
        yield rec


#: the types of session.json's fields (a list of kinds; None among them: null allowed)
_SESSION_TYPES: dict[str, tuple] = {
    "complete": (bool,), "interrupted": (bool,), "ended": _STR, "started": _STR, "finished": _STR,
    "combined": _STR, "shard": _STR, "backend": _STR, "exitstatus": (int, type(None)), "records": (int,),
    "pytest_counts": (dict, type(None)), "versions": (dict,), "problems": (list,), "lost": (list,),
    "args": (list,), "collected": (int, type(None)), "settings": (dict,),
}
#: what a field of the wrong type is taken as (and "complete" is then False: the run is not known to be whole)
_SESSION_DEFAULTS = {"complete": False, "pytest_counts": None, "versions": {}, "problems": [], "lost": [],
                     "args": [], "shard": None, "backend": None, "settings": {}}


def checked_session(session: Any, where: str, problems: list[str]) -> dict[str, Any]:
    """``session`` (a session.json document) with every field of the wrong type named in
    ``problems`` (``where: key 'k': ...``) and replaced: ``complete`` is then False (``"no"`` is
    not a complete run), the counts absent, the versions empty."""
    if not isinstance(session, dict):
        problems.append(f"{where}: not a JSON object (got {type(session).__name__}): the run is taken as incomplete")
        return {"complete": False, "ended": f"{where} unreadable"}
    out = dict(session)
    for key, kinds in _SESSION_TYPES.items():
        value = out.get(key)
        if key not in out or _of_type(value, kinds):
            continue
        problems.append(f"{where}: key {key!r}: {_type_name(kinds)}, got {type(value).__name__} ({value!r:.60})"
                        + (": the run is taken as incomplete" if key == "complete" else ""))
        out[key] = _SESSION_DEFAULTS.get(key)
        if key in ("complete", "pytest_counts"):
            out["complete"] = False
    counts = out.get("pytest_counts")
    if isinstance(counts, dict):
        bad = [k for k, v in counts.items() if not _of_type(v, (int,)) or v < 0]
        if bad:
            problems.append(f"{where}: key 'pytest_counts': {bad[0]!r} is not a count (a non-negative integer)")
            out["pytest_counts"], out["complete"] = None, False
    versions = out.get("versions")
    if isinstance(versions, dict) and not all(isinstance(v, str) for v in versions.values()):
        problems.append(f"{where}: key 'versions': version strings only")
        out["versions"] = {k: v for k, v in versions.items() if isinstance(v, str)}
    if not all(isinstance(p, str) for p in out.get("problems") or []):
        out["problems"] = [str(p) for p in out["problems"]]
    return out


def _read_session(directory: Path, problems: list[str]) -> dict[str, Any] | None:
    """session.json of ``directory``, checked (:func:`checked_session`); None when it cannot be read
    (named in ``problems``)."""
    path = directory / SESSION_FILE
    try:
        doc = read_confined_json(path, directory, max_bytes=MAX_SESSION_BYTES)
    except (OSError, ValueError) as exc:  # UnsafeInputError, JSONDecodeError, UnicodeDecodeError are ValueErrors
        problems.append(f"{path}: unreadable ({getattr(exc, 'strerror', None) or exc}): the run is taken as incomplete")
        return None
    return checked_session(doc, str(path), problems)


def _timings(directory: Path, problems: list[str]) -> dict[str, list[dict[str, Any]]]:
    """ModelTester's timing lines of the run (``benchmarks.jsonl``), by the test that wrote them."""
    log = directory / "benchmarks.jsonl"
    if not os.path.lexists(log):
        return {}
    try:
        bench = parse_benchmarks(read_confined(log, directory, max_bytes=MAX_LOG_BYTES).decode("utf-8", "replace"),
                                 source=str(log))
    except (UnsafeInputError, OSError) as exc:
        problems.append(f"{exc}: its timings are not read")
        return {}
    except UnreadableInput:
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    keep = ("ratio", "median1", "median2", "samples1", "samples2", "samples", "bridge2", "timed2")
    for rec in bench.records:
        if isinstance(rec.get("test"), str):
            out.setdefault(rec["test"], []).append({
                "name": rec["name"],
                **{phase: {k: rec[phase].get(k) for k in keep if k in rec[phase]}
                   for phase in ("forward", "backward") if isinstance(rec.get(phase), dict)}})
    return out


#: the fields of a test's case a record carries, written from the case object by the process that
#: runs it (:func:`interop.records.plugin.case_fields`), in its ``start`` line too: a test whose
#: process died gets them from there (issue 46: never parsed back from its id)
CASE_FIELDS = ("case", "source", "kind", "operator", "torch_op", "label", "aidge_types", "config_file", "case_key",
               "backend", "dtype", "phases")


def _case_fields_of(start: dict[str, Any]) -> dict[str, Any]:
    return {k: start[k] for k in CASE_FIELDS if start.get(k) is not None}


def _lost(nodeid: str, start: dict[str, Any]) -> dict[str, Any]:
    """The record of a test that started and never ended: its process was killed (built through
    the typed record, :func:`interop.records.model.written`)."""
    return written({"schema": SCHEMA, "event": "record", "nodeid": nodeid, "case": None, "source": None,
            **_case_fields_of(start), "outcome": "failed", "reports": [], "reported": False,
            "category": "killed", "decided": "run", "phase": None, "attribution": None,
            "error": "the process running the test"
                     + (f" ({start.get('worker')}, pid {start.get('pid')})" if start.get("worker") else "")
                     + " ended without a result: killed from outside (SIGKILL, the OOM killer) or it died",
            "message": "", "signal": None, "worker": start.get("worker"), "pid": start.get("pid"),
            "time": start.get("time")})


def write_run(directory: Path, records: list[dict[str, Any]], session: dict[str, Any]) -> None:
    """``records.jsonl`` (one record a line, in the order given) and ``session.json``, each
    written atomically."""
    write_atomically(Path(directory) / RECORDS_FILE,
                     "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in records), root=directory)
    write_atomically(Path(directory) / SESSION_FILE, json.dumps(session, indent=2, sort_keys=True, default=str) + "\n",
                     root=directory)


def _part_files(directory: Path, session_id: str | None, refused: list[str] | None = None) -> list[Path]:
    """The part files of ``directory`` (of one session, or all) the rule lets the tools read and
    remove (:func:`interop.reading.confined`); each other one (a link out, a FIFO...) adds
    ``path: why`` to ``refused``: it is neither read nor removed."""
    parts = directory / PARTS_DIR
    if not os.path.lexists(parts):
        return []
    try:
        confined(parts, directory, kind="dir")
    except (UnsafeInputError, OSError) as exc:
        if refused is not None:
            refused.append(f"{exc}: its part files are neither read nor removed")
        return []
    if session_id is not None:
        found = sorted((parts / session_id).glob("*.jsonl"))
    else:
        found = sorted(parts.glob("*/*.jsonl")) + sorted(parts.glob("*.jsonl"))
    out = []
    for path in found:
        try:
            out.append(confined(path, directory))
        except FileNotFoundError:
            continue  # removed meanwhile (its session combined it)
        except (UnsafeInputError, OSError) as exc:
            if refused is not None:
                refused.append(f"{exc}: neither read nor removed")
    return out


def combine(directory: Path, session: dict[str, Any] | None = None,
            session_id: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Combine the parts of ``directory`` into ``records.jsonl`` + ``session.json`` (atomically;
    the parts are removed after). ``session``: what the session knows of itself (None when
    the session died and someone else combines: it is then incomplete). ``session_id``: combine
    that session's parts only (None: every part left in the directory). Returns both."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)  # a session that ran no test still says so
    problems: list[str] = []
    records: dict[str, dict[str, Any]] = {}
    starts: dict[str, dict[str, Any]] = {}
    previous = directory / RECORDS_FILE
    if os.path.lexists(previous) and session is None:  # recovering a dead session's parts: keep what was combined
        for rec in _read_lines(previous, problems, root=directory):
            records[rec["nodeid"]] = rec
    refused: list[str] = []
    parts = _part_files(directory, session_id, refused)
    problems.extend(refused)
    for part in parts:
        for obj in _read_lines(part, problems, need_nodeid=False, root=directory):
            if obj.get("event") == "collected":
                continue
            if not isinstance(obj.get("nodeid"), str):
                problems.append(f"{part}: a line without a 'nodeid' (not a record)")
                continue
            if obj.get("event") == "start":
                starts[obj["nodeid"]] = obj
            elif obj.get("event") == "record":
                old = records.get(obj["nodeid"])
                if old is None or str(obj.get("time", "")) >= str(old.get("time", "")):
                    records[obj["nodeid"]] = obj
    lost = []
    for nodeid, start in starts.items():
        rec = records.get(nodeid)
        if rec is None or str(rec.get("time", "")) < str(start.get("time", "")):
            records[nodeid] = _lost(nodeid, start)
            lost.append(nodeid)
        else:  # the controller's record of a test whose xdist worker died: its case's fields from the start line
            for key, value in _case_fields_of(start).items():
                if rec.get(key) is None:
                    rec[key] = value
    timings = _timings(directory, problems)
    for nodeid, rec in records.items():
        if nodeid in timings:
            rec["timings"] = timings[nodeid]
    ordered = [records[k] for k in sorted(records)]
    meta = dict(session) if session is not None else {"complete": False, "ended": "the session did not finish: "
                                                      "no session summary (killed, or it crashed)"}
    if os.path.lexists(previous) and os.path.lexists(directory / SESSION_FILE) and session is None:
        meta = _read_session(directory, problems) or meta
    meta["records"] = len(ordered)
    if refused:
        meta["complete"] = False
        meta["ended"] = f"{meta.get('ended')}; part files the tools may not read: {'; '.join(refused)}"
    if lost:
        meta["complete"] = False
        meta["lost"] = sorted(set(meta.get("lost", [])) | set(lost))
    if problems:
        meta["problems"] = problems
    meta.setdefault("combined", now())
    write_run(directory, ordered, meta)
    for part in parts:
        part.unlink(missing_ok=True)
    for folder in sorted({p.parent for p in parts}, key=lambda p: -len(p.parts)) + [directory / PARTS_DIR]:
        try:
            confined(folder, directory, kind="dir")
            folder.rmdir()
        except (OSError, UnsafeInputError):
            pass  # another session's parts live there (or a link: never removed)
    return ordered, meta


def records_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """What pytest's summary line counts, counted from the records' per-phase statuses (the
    ``pytest_report_teststatus`` each one kept): an item with a failed call and a failed
    teardown is one ``failed`` and one ``error``, as pytest counts it."""
    counts = {o: 0 for o in COUNTED_OUTCOMES}
    for rec in records:
        reports = rec.get("reports")
        if not isinstance(reports, list) or not reports:
            if rec.get("reported") is not False and pytest_outcome(rec) in counts:
                counts[pytest_outcome(rec)] += 1
            continue
        for entry in reports:
            status = entry.get("status") if isinstance(entry, dict) else None
            if status in counts:
                counts[status] += 1
    return counts


def load_run(directory: Path) -> RunRecords | None:
    """The records of one run directory (combined now when the run left only parts); None
    when it has neither."""
    directory = Path(directory)
    refused: list[str] = []
    if _part_files(directory, None, refused):
        combine(directory)
    path = directory / RECORDS_FILE
    if not os.path.lexists(path):
        return None
    problems: list[str] = []
    try:
        size = confined(path, directory).stat().st_size
        if size > MAX_RECORDS_BYTES:  # read whole, a 1 GB file of records took 6.2 GB and failed after 181 s
            raise UnsafeInputError(path, f"{size:,} bytes, above the limit of {MAX_RECORDS_BYTES:,} bytes for "
                                         "records (interop.records.store.MAX_RECORDS_BYTES)")
    except (UnsafeInputError, OSError) as exc:
        problems.append(f"{exc}: not read")
        return RunRecords([], {"complete": False, "ended": f"{path} is not a file the tools may read"},
                          problems + refused, str(path))
    records = list(_read_lines(path, problems, root=directory))
    session = _read_session(directory, problems)
    if session is None:
        session = {"complete": False, "ended": f"{directory / SESSION_FILE} unreadable"}
    problems.extend(session.get("problems") or [])
    if refused:
        problems.extend(refused)
        session = dict(session, complete=False, ended=f"part files the tools may not read: {'; '.join(refused)}")
    return RunRecords(records, session, problems, str(path))


def check_counts(run: RunRecords) -> list[str]:
    """Where the records and pytest's own summary disagree (empty: they agree)."""
    pytest_counts = run.session.get("pytest_counts")
    if not isinstance(pytest_counts, dict):
        return ["session.json holds no pytest counts (the session did not finish)"]
    counted = records_counts(run.records)
    return [f"{o}: {counted.get(o, 0)} recorded, {pytest_counts.get(o, 0)} in pytest's summary"
            for o in COUNTED_OUTCOMES if counted.get(o, 0) != pytest_counts.get(o, 0)]


def outcome_of_reports(rec: dict[str, Any]) -> str | None:
    """The outcome a record's per-phase statuses (``reports``) make it, derived as the plugin derives
    it when it writes the record (:func:`interop.records.plugin._outcome`: the first status other than
    passed, else passed; none at all: error), a strict XPASS said once
    (:func:`interop.records.outcome.outcome_of`: ``xpassed``). None when the record holds no
    ``reports`` list (then only its session's counts bind it, :func:`check_counts`)."""
    reports = rec.get("reports")
    if not isinstance(reports, list):
        return None
    if any(isinstance(r, dict) and r.get("xpass_strict") for r in reports):
        return "xpassed"
    statuses = [r.get("status") for r in reports if isinstance(r, dict) and r.get("status")]
    return next((str(s) for s in statuses if s != "passed"), "passed" if statuses else "error")


def record_disagreement(rec: dict[str, Any]) -> str | None:
    """Where a record's fields disagree with each other (``key 'outcome': ...``), or None: its
    ``outcome`` against the outcome its per-phase statuses make it (:func:`outcome_of_reports`), its
    ``xpass_strict`` against theirs. A record without statuses (``reports: []``) is an error, or, when
    pytest never reported it (``reported: false``: its process was killed), a failure."""
    derived = outcome_of_reports(rec)
    if derived is None:
        return None
    said = rec.get("outcome")
    reports = rec["reports"]
    if not reports and (said == "error" or (said == "failed" and rec.get("reported") is False)):
        return None
    strict = any(isinstance(r, dict) and r.get("xpass_strict") for r in reports)
    if bool(rec.get("xpass_strict")) != strict:
        return (f"key 'xpass_strict': {rec.get('xpass_strict')!r}, but its per-phase statuses (key 'reports') "
                f"{'say' if strict else 'do not say'} a strict XPASS")
    if said != derived:
        shown = [r.get("status") for r in reports if isinstance(r, dict)]
        return f"key 'outcome': {said!r}, but its per-phase statuses (key 'reports': {shown!r}) make it {derived!r}"
    return None


def disagreements(run: RunRecords, where: str) -> list[str]:
    """Where the run's records disagree with themselves (:func:`record_disagreement`, one line per
    record: ``where: nodeid: key ...``) or with its session's counts (``where: session.json: key
    'pytest_counts': ...``, :func:`check_counts`; a session without counts is incomplete, not
    contradicted). Empty: what the run reports is what its records prove."""
    out = []
    for rec in run.records:
        said = record_disagreement(rec)
        if said:
            out.append(f"{where}: {rec.get('nodeid')}: {said}")
    if isinstance(run.session.get("pytest_counts"), dict):
        out += [f"{where}: {SESSION_FILE}: key 'pytest_counts': {line}" for line in check_counts(run)]
    return out
