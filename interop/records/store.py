"""Where records live and how the parts of one run become its ``records.jsonl``.

A run directory (``results/runs/<run>/`` of ``nox -s report``, the staging directory of a plain
pytest session) holds:

- ``records.d/<session>/<worker>-<pid>.jsonl`` while the run goes: one folder per session (its
  main process's pid and start time), one file per process that runs tests (each xdist
  worker, the controller, a plain session), appended one line at a time with a single
  ``O_APPEND`` write (a process killed mid-run leaves whole lines). A session combines and
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
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable

from ..reading import json_lines

__all__ = ["RECORDS_FILE", "SESSION_FILE", "PARTS_DIR", "SCHEMA", "PartWriter", "combine", "load_run", "RunRecords",
           "write_atomically", "write_run", "now", "records_counts", "check_counts", "COUNTED_OUTCOMES"]

RECORDS_FILE = "records.jsonl"
SESSION_FILE = "session.json"
PARTS_DIR = "records.d"
#: the record format's version (a record of another version is read, and flagged)
SCHEMA = 1
#: the outcomes pytest's summary line counts (its terminal reporter's words)
COUNTED_OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")


def write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file in the same directory and a rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


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


class PartWriter:
    """One process's part file: each :meth:`write` is one ``os.write`` of one JSON line on an
    ``O_APPEND`` descriptor (whole lines even when the process is killed right after)."""

    def __init__(self, directory: Path, name: str, session: str = "session"):
        parts = Path(directory) / PARTS_DIR / session
        parts.mkdir(parents=True, exist_ok=True)
        self.path = parts / f"{name}-{os.getpid()}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, obj: dict[str, Any]) -> None:
        data = (json.dumps(json_safe(obj), sort_keys=True, default=str, allow_nan=False) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

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
        return bool(self.session.get("complete"))


def _read_lines(path: Path, problems: list[str], need_nodeid: bool = True) -> Iterable[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        problems.append(f"{path}: unreadable ({exc.strerror or exc})")
        return
    for number, obj in json_lines(text, str(path), problems):
        if not isinstance(obj, dict) or (need_nodeid and not isinstance(obj.get("nodeid"), str)):
            problems.append(f"{path}:{number}: not a record (a JSON object with a 'nodeid')")
            continue
        yield obj


def _timings(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """ModelTester's timing lines of the run (``benchmarks.jsonl``), by the test that wrote them."""
    from .benchmarks import parse_benchmarks
    from ..reading import UnreadableInput

    log = directory / "benchmarks.jsonl"
    if not log.exists():
        return {}
    try:
        bench = parse_benchmarks(log.read_text(errors="replace"), source=str(log))
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


def _lost(nodeid: str, start: dict[str, Any]) -> dict[str, Any]:
    """The record of a test that started and never ended: its process was killed."""
    return {"schema": SCHEMA, "event": "record", "nodeid": nodeid, "case": start.get("case"),
            "source": start.get("source"), "outcome": "failed", "reports": [], "reported": False,
            "category": "killed", "decided": "run", "phase": None, "attribution": None,
            "error": f"the process running the test ({start.get('worker')}, pid {start.get('pid')}) ended "
                     "without a result: killed from outside (SIGKILL, the OOM killer) or it died",
            "message": "", "signal": None, "worker": start.get("worker"), "pid": start.get("pid"),
            "time": start.get("time")}


def write_run(directory: Path, records: list[dict[str, Any]], session: dict[str, Any]) -> None:
    """``records.jsonl`` (one record a line, in the order given) and ``session.json``, each
    written atomically."""
    write_atomically(Path(directory) / RECORDS_FILE,
                     "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in records))
    write_atomically(Path(directory) / SESSION_FILE, json.dumps(session, indent=2, sort_keys=True, default=str) + "\n")


def _part_files(directory: Path, session_id: str | None) -> list[Path]:
    parts = directory / PARTS_DIR
    if not parts.is_dir():
        return []
    if session_id is not None:
        return sorted((parts / session_id).glob("*.jsonl"))
    return sorted(parts.glob("*/*.jsonl")) + sorted(parts.glob("*.jsonl"))


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
    if previous.exists() and session is None:  # recovering a dead session's parts: keep what was combined
        for rec in _read_lines(previous, problems):
            records[rec["nodeid"]] = rec
    parts = _part_files(directory, session_id)
    for part in parts:
        for obj in _read_lines(part, problems, need_nodeid=False):
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
    timings = _timings(directory)
    for nodeid, rec in records.items():
        if nodeid in timings:
            rec["timings"] = timings[nodeid]
    ordered = [records[k] for k in sorted(records)]
    meta = dict(session) if session is not None else {"complete": False, "ended": "the session did not finish: "
                                                      "no session summary (killed, or it crashed)"}
    if previous.exists() and (directory / SESSION_FILE).exists() and session is None:
        try:
            meta = json.loads((directory / SESSION_FILE).read_text())
        except ValueError:
            pass
    meta["records"] = len(ordered)
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
            folder.rmdir()
        except OSError:
            pass  # another session's parts live there
    return ordered, meta


def records_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """What pytest's summary line counts, counted from the records' per-phase statuses (the
    ``pytest_report_teststatus`` each one kept): an item with a failed call and a failed
    teardown is one ``failed`` and one ``error``, as pytest counts it."""
    counts = {o: 0 for o in COUNTED_OUTCOMES}
    for rec in records:
        reports = rec.get("reports")
        if not isinstance(reports, list) or not reports:
            if rec.get("reported") is not False and rec.get("outcome") in counts:
                counts[rec["outcome"]] += 1
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
    if _part_files(directory, None):
        combine(directory)
    path = directory / RECORDS_FILE
    if not path.exists():
        return None
    problems: list[str] = []
    records = list(_read_lines(path, problems))
    try:
        session = json.loads((directory / SESSION_FILE).read_text())
        if not isinstance(session, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        problems.append(f"{directory / SESSION_FILE}: unreadable ({exc}): the run is taken as incomplete")
        session = {"complete": False}
    problems.extend(session.get("problems") or [])
    return RunRecords(records, session, problems, str(path))


def check_counts(run: RunRecords) -> list[str]:
    """Where the records and pytest's own summary disagree (empty: they agree)."""
    pytest_counts = run.session.get("pytest_counts")
    if not isinstance(pytest_counts, dict):
        return ["session.json holds no pytest counts (the session did not finish)"]
    counted = records_counts(run.records)
    return [f"{o}: {counted.get(o, 0)} recorded, {pytest_counts.get(o, 0)} in pytest's summary"
            for o in COUNTED_OUTCOMES if counted.get(o, 0) != pytest_counts.get(o, 0)]
