"""The trend: ``results/history.jsonl`` gains one line per complete findings run, and each report
says what changed since the previous complete run of the same backend, and from one Aidge
release to the next.

A line: the run, its commit and date, the Aidge and torch versions, the backend, the headline
counts and per operator the forward / backward ``[passed, total]`` and the categories of the
others (summed over sources and dtypes). :func:`compare` of two lines: operators newly passing,
newly failing, new or gone, category changes, and the headline with its change ("41 of 55
operators pass forward and backward on cpu, +2 since 1a2b3c4d"). :func:`release_changes`: the
latest line of each Aidge release for a backend, each compared with the release before it
(``nox -s release-matrix`` runs the suites against each installed release).

``results/history.jsonl`` is read one bounded line at a time; a line that is not JSON, or not a
history line, or holds a field of an unexpected type, is named (file and line) and costs only
itself; the file itself must be a regular file inside ``results/`` (a directory, a FIFO, a link
out: a named problem, never a traceback or a hang). A run's lines are appended only once its
report and ``run.json`` are in place (:mod:`.run`): a run killed before has no line.
"""
from __future__ import annotations

import fcntl
import json
import os
import stat
from collections import Counter
from pathlib import Path
from typing import Any

from ..reading import UnsafeInputError, confined, confined_json_lines

__all__ = ["HISTORY_FILE", "history_entry", "load_history", "append_history", "previous_entry", "compare",
           "release_changes", "format_trend", "entry_problem"]

HISTORY_FILE = "history.jsonl"


def _version_key(version: str) -> tuple:
    parts = []
    for piece in str(version).replace("post", ".").replace("-", ".").split("."):
        parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return tuple(parts)


def history_entry(run: str, session: dict[str, Any], matrix: dict[str, Any], commit: str | None,
                  backend: str) -> dict[str, Any]:
    operators: dict[str, dict[str, Any]] = {}
    for cell in matrix["cells"]:
        if cell["backend"] != backend:
            continue
        entry = operators.setdefault(cell["operator"], {"forward": [0, 0], "backward": [0, 0], "categories": Counter()})
        entry[cell["phase"]][0] += cell["passed"]
        entry[cell["phase"]][1] += cell["total"]
        entry["categories"].update(cell["categories"])
    status = matrix["operators"].get(backend, {})
    ran = [op for op, e in status.items() if e["forward"] is not None]
    versions = session.get("versions") or {}
    cases = sum(cell["total"] for cell in matrix["cells"] if cell["backend"] == backend and cell["phase"] == "forward")
    return {"run": run, "commit": commit, "date": session.get("finished") or session.get("combined"),
            "backend": backend, "aidge": versions.get("aidge_core"), "torch": versions.get("torch"),
            "shard": session.get("shard"), "cases": cases, "operators_total": len(ran),
            "operators_passing": sum(1 for op in ran if status[op]["passes"]),
            "passing": sorted(op for op in ran if status[op]["passes"]),
            "operators": {op: dict(e, categories=dict(sorted(e["categories"].items())))
                          for op, e in sorted(operators.items())}}


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def entry_problem(obj: Any) -> str | None:
    """Why ``obj`` is not a history line the trend can compare with (naming the key), or None."""
    if not isinstance(obj, dict):
        return f"not a history line (a JSON object), got {type(obj).__name__}"
    for key in ("run", "backend"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            return f"not a history line: key {key!r}: a non-empty string"
    if not isinstance(obj.get("operators"), dict):
        return "not a history line: key 'operators': an object"
    for key in ("operators_passing", "operators_total"):
        if not _count(obj.get(key)):
            return f"key {key!r}: a count (a non-negative integer), got {type(obj.get(key)).__name__}"
    for key in ("commit", "aidge", "torch", "shard", "date"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            return f"key {key!r}: a string or null, got {type(obj[key]).__name__}"
    if obj.get("cases") is not None and not _count(obj["cases"]):
        return f"key 'cases': a count or null, got {type(obj['cases']).__name__}"
    if "passing" in obj and not (isinstance(obj["passing"], list) and all(isinstance(p, str) for p in obj["passing"])):
        return "key 'passing': a list of operator names"
    for op, entry in obj["operators"].items():
        if not isinstance(entry, dict):
            return f"key 'operators.{op}': an object, got {type(entry).__name__}"
        for phase in ("forward", "backward"):
            pair = entry.get(phase)
            if pair is not None and not (isinstance(pair, list) and len(pair) == 2 and all(map(_count, pair))):
                return f"key 'operators.{op}.{phase}': [passed, total], two counts"
        categories = entry.get("categories")
        if categories is not None and not (isinstance(categories, dict) and all(map(_count, categories.values()))):
            return f"key 'operators.{op}.categories': an object of counts"
    return None


def load_history(path: Path, root: Path | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Its lines, and one ``file:line: why`` per line that is not one (or one ``file: why`` when
    the file itself may not be read: a directory, a FIFO, a link; ``root``: the folder it must
    lie in, default its own)."""
    entries: list[dict[str, Any]] = []
    problems: list[str] = []
    path = Path(path)
    if not os.path.lexists(path):
        return entries, problems
    for number, obj in confined_json_lines(path, path.parent if root is None else root, problems):
        why = entry_problem(obj)
        if why:
            problems.append(f"{path}:{number}: {why}: skipped")
            continue
        entries.append(obj)
    return entries, problems


def append_history(path: Path, entry: dict[str, Any], root: Path | None = None) -> None:
    """One line appended (one locked ``O_APPEND`` write: safe beside other runs), to a regular
    file inside ``root`` (default: its folder) only: :class:`~interop.reading.UnsafeInputError`
    naming it otherwise (a directory, a FIFO: never a hang; a link: never followed)."""
    path = Path(path)
    root = path.parent if root is None else Path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    confined(path, root, missing_ok=True)
    data = (json.dumps(entry, sort_keys=True, default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeInputError(path, "not a regular file (it changed after it was checked)")
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)  # the lock goes with it


def previous_entry(entries: list[dict[str, Any]], backend: str, *, before_run: str | None = None,
                   shard: Any = None, aidge: Any = None) -> dict[str, Any] | None:
    """The last line of ``backend``, the same shard and the same Aidge release, other than
    ``before_run``'s (another release is :func:`release_changes`' comparison)."""
    for entry in reversed(entries):
        if (entry.get("backend") == backend and entry.get("run") != before_run and entry.get("shard") == shard
                and (aidge is None or entry.get("aidge") in (None, aidge))):
            return entry
    return None


def _ok(e: dict[str, Any], phase: str) -> bool | None:
    passed, total = (e.get(phase) or [0, 0])[:2]
    return None if not total else passed == total


def _passes(e: dict[str, Any]) -> bool:
    return _ok(e, "forward") is True and _ok(e, "backward") in (True, None)


def compare(previous: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    head = (f"{current['operators_passing']} of {current['operators_total']} operators pass forward and backward "
            f"on {current['backend']}")
    if previous is None:
        return {"headline": head, "since": None}
    before, now = previous.get("operators") or {}, current["operators"]
    newly_passing = sorted(op for op in now if _passes(now[op]) and op in before and not _passes(before[op]))
    newly_failing = sorted(op for op in now if not _passes(now[op]) and op in before and _passes(before[op]))
    changes = []
    for op in sorted(set(now) & set(before)):
        a, b = before[op].get("categories") or {}, now[op].get("categories") or {}
        if a != b:
            changes.append({"operator": op, "before": a, "after": b})
    delta = current["operators_passing"] - int(previous.get("operators_passing") or 0)
    since = (previous.get("commit") or previous.get("run") or "?")[:8]
    unlike = None
    if previous.get("cases") is not None and previous.get("cases") != current.get("cases"):
        unlike = (f"the previous run held {previous['cases']} case(s), this one {current.get('cases')}: "
                  "not the same selection, compare with care")
    return {"headline": f"{head}, {delta:+d} since {since}", "since": previous.get("run"), "unlike": unlike,
            "since_commit": previous.get("commit"), "newly_passing": newly_passing, "newly_failing": newly_failing,
            "new_operators": sorted(set(now) - set(before)), "gone_operators": sorted(set(before) - set(now)),
            "category_changes": changes}


def release_changes(entries: list[dict[str, Any]], backend: str) -> list[dict[str, Any]]:
    """The latest unsharded line of each Aidge release on ``backend``, oldest release first, each
    compared with the release before it."""
    latest: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get("backend") == backend and entry.get("aidge") and not entry.get("shard"):
            latest[str(entry["aidge"])] = entry
    order = sorted(latest, key=_version_key)
    out = []
    for older, newer in zip(order, order[1:]):
        diff = compare(latest[older], latest[newer])
        diff["headline"] = (f"Aidge {older} -> {newer}: {latest[newer]['operators_passing']} of "
                            f"{latest[newer]['operators_total']} operators pass on {backend} "
                            f"({latest[newer]['operators_passing'] - latest[older]['operators_passing']:+d})")
        out.append(dict(diff, older=older, newer=newer))
    return out


def format_trend(trend: dict[str, Any] | None, releases: list[dict[str, Any]] = ()) -> list[str]:
    if not trend and not releases:
        return []
    out = ["", "== Trend =="]
    if trend:
        out.append(f"  {trend['headline']}")
        if trend.get("since") is None:
            out.append("  (no earlier complete run of this backend, shard and Aidge release in results/history.jsonl)")
        else:
            out.append(f"  compared with run {trend['since']}")
        if trend.get("unlike"):
            out.append(f"  ⚠️ {trend['unlike']}")
        for key, label in (("newly_passing", "newly passing"), ("newly_failing", "NEWLY FAILING"),
                           ("new_operators", "new"), ("gone_operators", "gone")):
            if trend.get(key):
                out.append(f"  {label}: {', '.join(trend[key])}")
        for change in trend.get("category_changes") or []:
            out.append(f"  {change['operator']}: {change['before'] or 'none'} -> {change['after'] or 'none'}")
    for rel in releases:
        out.append(f"  {rel['headline']}")
        if rel.get("unlike"):
            out.append(f"      ⚠️ {rel['unlike']}")
        for key, label in (("newly_passing", "newly passing"), ("newly_failing", "newly failing")):
            if rel.get(key):
                out.append(f"      {label}: {', '.join(rel[key])}")
        for change in rel.get("category_changes") or []:
            out.append(f"      {change['operator']}: {change['before'] or 'none'} -> {change['after'] or 'none'}")
    return out
