"""Progress of a running session, read from its part files: :class:`Progress`.

The records plugin writes a ``collected`` line when a process has collected its tests (each
xdist worker collects them all: the largest count is the session's) and a record per finished
test; :meth:`Progress.poll` reads what was appended since the last call (whole lines only) and
:meth:`Progress.line` says ``412 / 3,249 tests (13%), 4.2/s, ETA 12 min 54 s; 3 failed, 120
xfailed so far`` (``nox -s report`` prints one every :data:`EVERY_S` seconds). Nothing here
prints.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from .outcome import outcome_of
from .store import PARTS_DIR

__all__ = ["Progress", "EVERY_S"]

#: seconds between two progress lines of ``nox -s report``
EVERY_S = 30.0
#: the ETA is at the rate of this many last seconds: a suite's slow tail (the architectures, the
#: models) runs at a tenth of its first minutes' rate, and an ETA at the average rate said
#: "35 s" for ten minutes (measured 2026-12-03, nox -s report on a loaded 2-core VM)
RECENT_S = 120.0
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


class Progress:
    def __init__(self, directory: Path, clock=time.monotonic):
        self.directory = Path(directory)
        self._clock = clock
        self._started = clock()
        self._offsets: dict[Path, int] = {}
        self.collected: int | None = None
        self.outcomes: Counter = Counter()
        self._seen: list[tuple[float, int]] = []  # (clock, tests done) at each line()

    def poll(self) -> None:
        """Read what the part files gained since the last call. Under the rule of the run's files
        (:func:`interop.reading.confined`): a FIFO, a link or a directory among them is passed over
        (a FIFO hung the report process), at most :data:`POLL_BYTES` a file a call, and a line that is
        not a JSON object is skipped (one such line, a test's doing, ended the report in a traceback)."""
        from ..reading import UnsafeInputError, open_confined

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
                if not isinstance(obj, dict):
                    continue
                if obj.get("event") == "collected" and isinstance(obj.get("count"), int):
                    self.collected = max(self.collected or 0, obj["count"])
                elif obj.get("event") == "record":
                    self.outcomes[outcome_of(obj)] += 1

    def line(self) -> str:
        """``done / total tests (pct), rate/s, ETA ...; outcomes so far``: the rate and the ETA
        are those of the last :data:`RECENT_S` seconds (the whole run's until then)."""
        done = sum(self.outcomes.values())
        now = self._clock()
        elapsed = max(now - self._started, 1e-9)
        if self.collected is None and not done:
            return f"collecting ({_duration(elapsed)})"
        self._seen.append((now, done))
        recent = [(t, d) for t, d in self._seen[:-1] if t >= now - RECENT_S]
        since, done_then = (recent[0] if recent else self._seen[-2] if len(self._seen) > 1
                            else (self._started, 0))
        rate = (done - done_then) / max(now - since, 1e-9)
        total = self.collected
        head = f"{done:,} / {total:,} tests ({100 * done / total:.0f}%)" if total else f"{done:,} tests"
        eta = ""
        if total and done < total:
            eta = (f", ETA {_duration((total - done) / rate)}" if rate > 0
                   else f", no test ended in the last {_duration(now - since)}")
        notable = ", ".join(f"{self.outcomes[o]:,} {o}" for o in ("failed", "error", "xfailed", "xpassed", "skipped")
                            if self.outcomes.get(o))
        return f"{head}, {rate:.1f}/s{eta}, {_duration(elapsed)} in" + (f"; {notable} so far" if notable else "")
