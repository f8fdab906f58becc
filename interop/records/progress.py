"""Progress of a running session, read from its part files: :class:`Progress`.

The records plugin writes a ``collected`` line when a process has collected its tests (each
xdist worker collects them all: the largest count is the session's), with the number of tests of
each file, and a record per finished test; :meth:`Progress.poll` reads what was appended since the
last call (whole lines only) and :meth:`Progress.line` says ``412 / 3,249 tests (13%), 4.2/s, ETA
12 min 54 s by the last run's durations; 3 failed, 120 xfailed so far`` (``nox -s report`` prints
one every :data:`EVERY_S` seconds). Nothing here prints.

How the ETA is computed (:func:`weighted_eta`), and which way the line says:

- **by the last run's durations** when the last complete run (``results/latest``, its
  ``records.jsonl``) timed tests and the records plugin said how many tests of each file this run
  collected. Each test weighs its own duration in the last run plus the fixed cost per test that
  its recorded duration leaves out (:func:`previous_run`: the workers' busy time less the tests'
  durations, over the tests; it is most of a 10-ms test's cost) (a test the last run did not hold:
  the mean of its file there, else the mean of every test there). The work left, per file: the
  durations of the file's tests the last run held that have not ended, scaled down when fewer of
  the file's tests are left than that (a narrower selection, ``-k``), plus the file's mean for each
  test left beyond them, less what the running tests have done: a test running (its ``start``
  line read, no record yet) counts the seconds since it was first seen running, up to its weight.
  The speed: the work done (the weight of the tests ended, plus that of the running ones) since the
  first progress line of the last :data:`WEIGHTED_S` seconds that already knew the collection,
  over those seconds.
  ETA = work left / speed. The speed is this run's, so the workers, the machine and its load are
  in it; the test mix (an architecture test is worth hundreds of operator tests) is in the weights.
- **at the current rate** otherwise (no last run, no per-file counts, the first line after
  collection, nothing weighted ended): the tests left over the tests ended per second in the last
  :data:`RECENT_S` seconds.

What neither sees: tests whose durations changed since the last run (a running test past its
weight counts no more), the load changing, and the last minutes, where fewer workers than there
are have tests left (the speed was measured with all of them busy): the ETA is then short, by up
to the duration of the longest test left.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
import datetime

from .outcome import normalized
from .store import PARTS_DIR
from ..reading import UnsafeInputError, open_confined

__all__ = ["Progress", "EVERY_S", "file_of", "file_means", "previous_durations", "previous_run", "weighted_eta"]

#: seconds between two progress lines of ``nox -s report``
EVERY_S = 30.0
#: the ETA is at the rate of this many last seconds: a suite's slow tail (the architectures, the
#: models) runs at a tenth of its first minutes' rate, and an ETA at the average rate said
#: "35 s" for ten minutes (measured 2026-12-03, nox -s report on a loaded 2-core VM)
RECENT_S = 120.0
#: the weighted ETA's speed is that of this many last seconds: longer than :data:`RECENT_S`, since a
#: single test can weigh a minute
WEIGHTED_S = 600.0
#: the most of the last run's records.jsonl that is read for its durations
PREVIOUS_BYTES = 256 << 20
#: the most a poll reads of one part file (the rest waits for the next poll)
POLL_BYTES = 16 << 20


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def file_of(nodeid: str) -> str:
    """The test file of a node id (``tests/test_x.py::test_y[z]`` -> ``tests/test_x.py``)."""
    return nodeid.split("::", 1)[0]


def previous_durations(run_dir: Path | None) -> dict[str, float]:
    """node id -> duration (s) of each test of the run ``run_dir`` (its ``records.jsonl``) that
    recorded one; {} when there is none or it cannot be read (under the rule of a run's files,
    :func:`interop.reading.open_confined`, at most :data:`PREVIOUS_BYTES`)."""
    return previous_run(run_dir)[0]


def previous_run(run_dir: Path | None) -> tuple[dict[str, float], float]:
    """(:func:`previous_durations`, the fixed cost per test a record's ``duration_s`` leaves out):
    per worker, the time from its first test's start (its first record's ``time`` less its
    duration) to its last record, less its tests' durations; summed over the workers, over the
    tests (0 when the records do not say their worker and time)."""
    if run_dir is None:
        return {}, 0.0
    try:
        root = Path(run_dir).resolve(strict=True)
        with open_confined(root / "records.jsonl", root) as f:
            data = f.read(PREVIOUS_BYTES)
    except (OSError, UnsafeInputError, RuntimeError):
        return {}, 0.0
    out: dict[str, float] = {}
    spans: dict[str, list[float]] = {}  # worker -> [first start, last end, summed durations]
    for raw in data.splitlines():
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("nodeid"), str):
            continue
        duration = rec.get("duration_s")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and 0 <= duration < 1e6:
            out[rec["nodeid"]] = float(duration)
            try:
                end = datetime.datetime.fromisoformat(rec["time"]).timestamp()
            except (KeyError, TypeError, ValueError, OverflowError):
                continue
            worker = str(rec.get("worker") or "main")
            span = spans.setdefault(worker, [end - duration, end, 0.0])
            span[0], span[1], span[2] = min(span[0], end - duration), max(span[1], end), span[2] + duration
    left_out = sum(max(last - first - summed, 0.0) for first, last, summed in spans.values())
    return out, (left_out / len(out) if out and spans else 0.0)


def file_means(durations: dict[str, float]) -> dict[str, float]:
    """file -> the mean of its tests' durations (``durations``: node id -> seconds)."""
    total: dict[str, float] = {}
    count: Counter = Counter()
    for nodeid, duration in durations.items():
        total[file_of(nodeid)] = total.get(file_of(nodeid), 0.0) + duration
        count[file_of(nodeid)] += 1
    return {name: total[name] / count[name] for name in total}


def weighted_eta(files: dict[str, int], ended: dict[str, int], known_left: dict[str, tuple[float, int]],
                 means: dict[str, float], weight_per_s: float, running: float = 0.0) -> float | None:
    """Seconds left. ``files``: tests collected per file; ``ended``: tests ended per file;
    ``known_left``: per file, (the summed last-run durations, the number) of its tests the last run
    held that have not ended; ``means``: the last run's mean test duration per file (a file it
    lacks: the mean of the means); ``weight_per_s``: the last-run seconds this run ends a second.
    A file's work left is its known tests' durations, scaled by (tests left / known tests left)
    when fewer are left than known, plus its mean for each test left beyond the known ones; less
    ``running`` (the work the running tests have done). None when it cannot say (no last run, no
    speed)."""
    if not means or weight_per_s <= 0:
        return None
    fallback = sum(means.values()) / len(means)
    work = 0.0
    for name, collected in files.items():
        left = max(collected - ended.get(name, 0), 0)
        known, known_n = known_left.get(name, (0.0, 0))
        if known_n >= left:
            work += known * left / known_n if known_n else 0.0
        else:
            work += known + (left - known_n) * means.get(name, fallback)
    return max(work - running, 0.0) / weight_per_s


def _default_previous(directory: Path) -> Path | None:
    """``results/latest`` of a run directory ``results/runs/<run>`` (the last complete run)."""
    directory = Path(directory)
    return directory.parent.parent / "latest" if directory.parent.name == "runs" else None


class Progress:
    """``previous``: the run whose durations weigh the ETA (default: ``results/latest`` when
    ``directory`` is ``results/runs/<run>``; None: the current rate only)."""

    def __init__(self, directory: Path, clock=time.monotonic, previous: Path | None | str = "latest"):
        self.directory = Path(directory)
        self._clock = clock
        self._started = clock()
        self._offsets: dict[Path, int] = {}
        self.collected: int | None = None
        #: tests per file of the largest collection (None: the plugin did not say)
        self.files: dict[str, int] | None = None
        self.outcomes: Counter = Counter()
        #: tests ended per file, and their weight (the last run's durations)
        self.ended: Counter = Counter()
        self._weight_done = 0.0
        #: the last run's duration of each test (node id), and each file's mean
        self.durations, overhead = previous_run(_default_previous(self.directory) if previous == "latest" else previous)
        #: each test's weight is its duration plus the fixed cost per test the records leave out
        self.overhead = overhead
        self.durations = {nodeid: duration + overhead for nodeid, duration in self.durations.items()}
        self.means = file_means(self.durations)
        self._overall = sum(self.durations.values()) / len(self.durations) if self.durations else 0.0
        #: per file: (summed durations, number) of the last run's tests that have not ended in this one
        self.known_left: dict[str, tuple[float, int]] = {}
        for nodeid, duration in self.durations.items():
            total, n = self.known_left.get(file_of(nodeid), (0.0, 0))
            self.known_left[file_of(nodeid)] = (total + duration, n + 1)
        self._ended_ids: set[str] = set()
        #: node id -> clock of the poll that read its ``start`` line (tests running, no record yet)
        self._running: dict[str, float] = {}
        # (clock, tests done, weight done, collection known) at each line()
        self._seen: list[tuple[float, int, float, bool]] = []
        self._running_at_line = 0.0

    def _ended(self, nodeid: str) -> None:
        """Count one test's end: its file, and its weight (its duration in the last run)."""
        name = file_of(nodeid)
        self.ended[name] += 1
        self._running.pop(nodeid, None)
        if nodeid in self._ended_ids:  # a rerun of a test: no second weight
            return
        self._ended_ids.add(nodeid)
        if nodeid in self.durations:
            duration = self.durations[nodeid]
            total, n = self.known_left[name]
            self.known_left[name] = (max(total - duration, 0.0), n - 1)
            self._weight_done += duration
        elif self.durations:
            self._weight_done += self.means.get(name, self._overall)

    def _running_work(self, now: float) -> float:
        """The work the running tests have done: each, the seconds since its start was read, up
        to its weight (its duration in the last run)."""
        if not self.durations:
            return 0.0
        return sum(min(now - seen, self.durations.get(nodeid, self.means.get(file_of(nodeid), self._overall)))
                   for nodeid, seen in self._running.items())

    def poll(self) -> None:
        """Read what the part files gained since the last call. Under the rule of the run's files
        (:func:`interop.reading.confined`): a FIFO, a link or a directory among them is passed over
        (a FIFO hung the report process), at most :data:`POLL_BYTES` a file a call, and a line that is
        not a JSON object is skipped (one such line, a test's doing, ended the report in a traceback)."""
        parts = self.directory / PARTS_DIR
        for path in sorted(parts.glob("*/*.jsonl")) if parts.is_dir() else []:
            offset = self._offsets.get(path, 0)
            try:
                with open_confined(path, self.directory) as f:
                    f.seek(offset)
                    data = f.read(POLL_BYTES)
            except (OSError, UnsafeInputError):
                continue
            end = data.rfind(b"\n") + 1  # whole lines only: the writer may be mid-line
            if not end and len(data) >= POLL_BYTES:  # one line longer than a poll reads: passed over
                end = len(data)
                data = b""
            self._offsets[path] = offset + end
            for raw in data[:end].splitlines():
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(obj, dict):
                    self.take(obj)

    def take(self, obj: dict) -> None:
        """Count one part line (a JSON object) as :meth:`poll` read it, at the clock's time now: a
        ``collected`` line, a ``start`` line, or a ``record`` (``tools/progress_eta.py
        --replay`` feeds a finished run's lines through it on a simulated clock)."""
        if obj.get("event") == "collected" and isinstance(obj.get("count"), int):
            if obj["count"] >= (self.collected or 0):
                files = obj.get("files")
                if isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, int)
                                                   for k, v in files.items()):
                    self.files = files
            self.collected = max(self.collected or 0, obj["count"])
        elif obj.get("event") == "start" and isinstance(obj.get("nodeid"), str):
            if obj["nodeid"] not in self._ended_ids:
                self._running.setdefault(obj["nodeid"], self._clock())
        elif obj.get("event") == "record":
            self.outcomes[str(normalized(obj).get("outcome"))] += 1  # a part line read through the one rule
            if isinstance(obj.get("nodeid"), str):
                self._ended(obj["nodeid"])

    def _since(self, now: float, window: float) -> tuple[float, int, float, bool]:
        """(clock, done, weight done, collection known) at the first line() of the last ``window``
        seconds (before this one), else at the line before, else at the start."""
        recent = [s for s in self._seen[:-1] if s[0] >= now - window]
        return recent[0] if recent else self._seen[-2] if len(self._seen) > 1 else (self._started, 0, 0.0, False)

    def eta(self) -> tuple[float | None, str]:
        """(seconds left or None, how: ``"by the last run's durations"`` or ``"at the current
        rate"``) as of the last :meth:`line`; see the module's docstring."""
        if not self._seen:
            return None, "at the current rate"
        now, done, weight, _ = self._seen[-1]
        if self.files and self.durations:
            # the speed from a line that knew the collection: the seconds before it (imports,
            # collection) ended no test and are not this run's speed
            base = [s for s in self._seen[:-1] if s[3] and s[0] >= now - WEIGHTED_S] or \
                [s for s in self._seen[:-1] if s[3]][-1:]
            if base:
                since, _, weight_then, _ = base[0]
                left = weighted_eta(self.files, self.ended, self.known_left, self.means,
                                    (weight - weight_then) / max(now - since, 1e-9), self._running_at_line)
                if left is not None:
                    return left, "by the last run's durations"
        since, done_then, _, _ = self._since(now, RECENT_S)
        rate = (done - done_then) / max(now - since, 1e-9)
        total = self.collected or 0
        return ((total - done) / rate if rate > 0 else None), "at the current rate"

    def line(self) -> str:
        """``done / total tests (pct), rate/s, ETA ... by|at ...; outcomes so far``: the rate is that
        of the last :data:`RECENT_S` seconds (the whole run's until then); the ETA is computed as the
        module's docstring says, and the line says which way."""
        done = sum(self.outcomes.values())
        now = self._clock()
        elapsed = max(now - self._started, 1e-9)
        if self.collected is None and not done:
            return f"collecting ({_duration(elapsed)})"
        self._running_at_line = self._running_work(now)
        self._seen.append((now, done, self._weight_done + self._running_at_line, self.collected is not None))
        since, done_then, _, _ = self._since(now, RECENT_S)
        rate = (done - done_then) / max(now - since, 1e-9)
        total = self.collected
        head = f"{done:,} / {total:,} tests ({100 * done / total:.0f}%)" if total else f"{done:,} tests"
        eta = ""
        if total and done < total:
            left, how = self.eta()
            eta = (f", ETA {_duration(left)} {how}" if left is not None
                   else f", no test ended in the last {_duration(now - since)}")
        notable = ", ".join(f"{self.outcomes[o]:,} {o}" for o in ("failed", "error", "xfailed", "xpassed", "skipped")
                            if self.outcomes.get(o))
        return f"{head}, {rate:.1f}/s{eta}, {_duration(elapsed)} in" + (f"; {notable} so far" if notable else "")
