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

from .store import PARTS_DIR

__all__ = ["Progress", "EVERY_S"]

#: seconds between two progress lines of ``nox -s report``
EVERY_S = 30.0


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

    def poll(self) -> None:
        parts = self.directory / PARTS_DIR
        for path in sorted(parts.glob("*/*.jsonl")) if parts.is_dir() else []:
            offset = self._offsets.get(path, 0)
            try:
                with path.open("rb") as f:
                    f.seek(offset)
                    data = f.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1  # whole lines only: the writer may be mid-line
            self._offsets[path] = offset + end
            for raw in data[:end].splitlines():
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue
                if obj.get("event") == "collected" and isinstance(obj.get("count"), int):
                    self.collected = max(self.collected or 0, obj["count"])
                elif obj.get("event") == "record":
                    self.outcomes["xpassed" if obj.get("xpass_strict") else str(obj.get("outcome"))] += 1

    def line(self) -> str:
        done = sum(self.outcomes.values())
        elapsed = max(self._clock() - self._started, 1e-9)
        if self.collected is None and not done:
            return f"collecting ({_duration(elapsed)})"
        rate = done / elapsed
        total = self.collected
        head = f"{done:,} / {total:,} tests ({100 * done / total:.0f}%)" if total else f"{done:,} tests"
        eta = f", ETA {_duration((total - done) / rate)}" if total and rate > 0 and done < total else ""
        notable = ", ".join(f"{self.outcomes[o]:,} {o}" for o in ("failed", "error", "xfailed", "xpassed", "skipped")
                            if self.outcomes.get(o))
        return f"{head}, {rate:.1f}/s{eta}" + (f"; {notable} so far" if notable else "")
